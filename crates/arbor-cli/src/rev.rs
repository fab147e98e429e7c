//! Revisions: how a command names a commit, as Git users expect. A full hash (hex or `Co…`),
//! a head name (`main`), a unique prefix of a hash (4 characters or more, hex or `Co…`), each
//! optionally followed by `~N` (N first parents back; `~` alone is `~1`).

use arbor::{Hash, Store};

use crate::error::{CliError, CliResult};

/// A hash prefix shorter than this is only ever a head name, as in Git.
const MIN_PREFIX: usize = 4;

/// Candidates listed when a prefix is ambiguous.
const MAX_LISTED: usize = 10;

/// A revision as written on the command line, resolved against a store by [`Rev::resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rev {
    /// What the revision starts from.
    base: Base,
    /// First parents to go back from there.
    back: u64,
    /// The text given, for messages.
    text: String,
}

/// The commit a revision starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Base {
    /// A full hash.
    Hash(Hash),
    /// A head name or a hash prefix.
    Name(String),
}

/// Clap value parser for revisions: `HASH`, `HEAD_NAME` or `PREFIX`, then any `~N`.
pub fn parse_rev(text: &str) -> Result<Rev, String> {
    let text = text.trim();
    let (base, suffix) = text.split_at(text.find('~').unwrap_or(text.len()));
    if base.is_empty() {
        return Err(format!("'{text}' names no commit: give a head name, a hash or a hash prefix"));
    }
    if base.contains(char::is_whitespace) {
        return Err(format!("'{text}' is not a revision (it has spaces)"));
    }
    let mut back = 0u64;
    for part in suffix.split('~').skip(1) {
        let n = if part.is_empty() {
            1
        } else {
            part.parse::<u64>().map_err(|_| format!("'{text}': expected a number of steps back after '~'"))?
        };
        back = back.checked_add(n).ok_or_else(|| format!("'{text}': too many steps back"))?;
    }
    let base = match Hash::parse(base) {
        Ok(h) => Base::Hash(h),
        Err(_) => Base::Name(base.to_string()),
    };
    Ok(Rev { base, back, text: text.to_string() })
}

impl Rev {
    /// The commit this revision names in `store`. An unknown one fails (exit 1) saying why,
    /// an ambiguous prefix is a usage error (exit 2) listing the candidates.
    pub fn resolve(&self, store: &Store) -> CliResult<Hash> {
        let mut at = match &self.base {
            Base::Hash(h) if store.contains(h) => *h,
            // The store says why: unknown, or dropped by a garbage collection.
            Base::Hash(h) => {
                return Err(CliError::failed(
                    store.commit_info(h).err().map_or(format!("unknown commit {h}"), |e| e.to_string()),
                ))
            }
            Base::Name(name) => self.named(store, name)?,
        };
        for step in 0..self.back {
            let info = store.commit_info(&at)?;
            at = match info.parents.first() {
                Some(p) if store.contains(p) => *p,
                Some(p) => {
                    return Err(CliError::failed(format!(
                        "{}: the history in this store stops after {step} steps back (parent {p} is not in it)",
                        self.text
                    )))
                }
                None => {
                    return Err(CliError::failed(format!(
                        "{}: the history has only {step} steps back ({at} has no parent)",
                        self.text
                    )))
                }
            };
        }
        Ok(at)
    }

    /// A head of that name, else the one commit whose hash starts with it.
    fn named(&self, store: &Store, name: &str) -> CliResult<Hash> {
        if let Some(h) = store.head(name) {
            return Ok(h);
        }
        let hex = name.len() >= MIN_PREFIX && name.bytes().all(|b| b.is_ascii_hexdigit());
        let base58 = name.len() >= 2 + MIN_PREFIX && name.starts_with("Co");
        if !hex && !base58 {
            // What looks like a hash prefix, only too short, is told the minimum.
            let short_hex = !name.is_empty() && name.bytes().all(|b| b.is_ascii_hexdigit());
            let hint = if short_hex {
                format!(" (a hex hash prefix needs at least {MIN_PREFIX} digits)")
            } else if name.starts_with("Co") {
                format!(" (a `Co…` hash prefix needs at least {MIN_PREFIX} characters after `Co`)")
            } else {
                String::new()
            };
            return Err(CliError::failed(format!("unknown revision '{name}': no head of that name{hint}")));
        }
        let lower = name.to_ascii_lowercase();
        let matches: Vec<Hash> = store
            .commits()
            .into_iter()
            .filter(|h| (hex && h.to_hex().starts_with(&lower)) || (base58 && h.to_string().starts_with(name)))
            .collect();
        match matches.as_slice() {
            [one] => Ok(*one),
            [] => Err(CliError::failed(format!(
                "unknown revision '{name}': no head of that name and no commit hash starts with it"
            ))),
            many => {
                let listed: Vec<String> =
                    many.iter().take(MAX_LISTED).map(|h| format!("  {h}  {}", h.to_hex())).collect();
                let more = if many.len() > MAX_LISTED {
                    format!("\n  … and {} more", many.len() - MAX_LISTED)
                } else {
                    String::new()
                };
                Err(CliError::usage(format!(
                    "ambiguous revision '{name}': {} commits start with it:\n{}{more}",
                    many.len(),
                    listed.join("\n")
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_suffixes() {
        let r = parse_rev("main~2~~3").unwrap();
        assert_eq!((r.base, r.back), (Base::Name("main".into()), 6));
        let h = Hash([7; 32]);
        assert_eq!(parse_rev(&h.to_hex()).unwrap().base, Base::Hash(h));
        assert_eq!(parse_rev(&format!("{h}~1")).unwrap().back, 1);
        assert!(parse_rev("~2").is_err());
        assert!(parse_rev("main~x").is_err());
        assert!(parse_rev("a b").is_err());
    }
}
