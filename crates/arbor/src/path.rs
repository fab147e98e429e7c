//! Paths: sequences of non-empty byte-string steps.

use smallvec::SmallVec;

use crate::error::{Error, Result};

/// One step of a path: a non-empty byte string (Tezos `Context.key` element).
///
/// Stored inline up to 46 bytes, which covers the hex contract ids (42-44 characters) and the
/// decimal segments that dominate Tezos paths, so cloning a directory's entries rarely
/// allocates (measured: 22 bytes inline spilled most ids and cost ~7% of replay time).
pub type Step = SmallVec<[u8; 46]>;

/// Splits a `/`-separated path into steps, ignoring a leading or trailing `/`.
///
/// `""` and `"/"` are the empty path (the root). An empty step in the middle
/// (`a//b`) is an error, as Tezos keys never have one.
pub fn parse_path(text: &str) -> Result<Vec<Step>> {
    let trimmed = text.strip_prefix('/').unwrap_or(text);
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    if trimmed.is_empty() {
        return Ok(Vec::new());
    }
    trimmed
        .split('/')
        .enumerate()
        .map(
            |(index, s)| {
                if s.is_empty() {
                    Err(Error::EmptyStep { index })
                } else {
                    Ok(Step::from_slice(s.as_bytes()))
                }
            },
        )
        .collect()
}

/// Checks that every step of a path is non-empty.
pub(crate) fn check_path<S: AsRef<[u8]>>(path: &[S]) -> Result<()> {
    match path.iter().position(|s| s.as_ref().is_empty()) {
        Some(index) => Err(Error::EmptyStep { index }),
        None => Ok(()),
    }
}

/// Renders steps as a `/`-separated path, escaping non-UTF-8 steps as hex.
pub fn display_path<S: AsRef<[u8]>>(path: &[S]) -> String {
    let mut out = String::new();
    for (i, s) in path.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        match std::str::from_utf8(s.as_ref()) {
            Ok(text) => out.push_str(text),
            Err(_) => {
                out.push_str("0x");
                for b in s.as_ref() {
                    out.push_str(&format!("{b:02x}"));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_empty_steps() {
        assert!(parse_path("").unwrap().is_empty());
        assert!(parse_path("/").unwrap().is_empty());
        let p = parse_path("/data/contracts/global_counter").unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(&p[2][..], b"global_counter");
        assert!(matches!(parse_path("a//b"), Err(Error::EmptyStep { index: 1 })));
        assert!(matches!(check_path(&[b"a".as_slice(), b""]), Err(Error::EmptyStep { index: 1 })));
    }
}
