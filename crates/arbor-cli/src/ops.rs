//! The operation language `arbor commit` reads from standard input:
//! `add PATH VALUE` and `remove PATH`, one a line.

use std::io::{BufRead, Read};

use arbor::Step;

use crate::common::path_error;
use crate::error::{CliError, CliResult};
use crate::hex;

/// One change to apply to the parent tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Put `value` at `path`, replacing whatever is there.
    Add {
        /// Where, as non-empty steps.
        path: Vec<Step>,
        /// The value's bytes.
        value: Vec<u8>,
    },
    /// Remove whatever is at `path`.
    Remove {
        /// Where, as non-empty steps.
        path: Vec<Step>,
    },
}

/// How the VALUE of an `add` line is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueSyntax {
    /// One token of hex digits, optionally prefixed by `0x` (`0x` alone is the empty value).
    Hex,
    /// The rest of the line after the one separator following the path, verbatim as UTF-8.
    Text,
}

/// An operation with its 1-based line number, so later failures can still name the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numbered {
    /// Line number in the input, from 1.
    pub line: usize,
    /// The operation.
    pub op: Op,
}

/// Room a line has beside its value: the operation, the path and separators. A longer path is
/// refused rather than read on without bound.
pub const MAX_LINE_OVERHEAD: usize = 1 << 20;

/// Parses a whole input, stopping at the first malformed line with a usage error (exit 2)
/// naming it. Everything is parsed before anything is written, so bad input commits nothing.
///
/// Lines are read one at a time and none beyond what a value of `max_value` bytes needs, so
/// an oversized value is refused as soon as it passes the limit, not after it was read whole.
pub fn parse(mut input: impl BufRead, syntax: ValueSyntax, max_value: usize) -> CliResult<Vec<Numbered>> {
    let value_chars = match syntax {
        ValueSyntax::Hex => max_value.saturating_mul(2).saturating_add(2),
        ValueSyntax::Text => max_value,
    };
    let line_limit = value_chars.saturating_add(MAX_LINE_OVERHEAD);
    let mut ops = Vec::new();
    let mut buf = Vec::new();
    for line in 1.. {
        buf.clear();
        let limit = u64::try_from(line_limit).unwrap_or(u64::MAX).saturating_add(1);
        if input.by_ref().take(limit).read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        if buf.len() > line_limit {
            return Err(CliError::usage(format!("line {line}: {}", too_long(&buf, max_value))));
        }
        let raw = buf.strip_suffix(b"\n").unwrap_or(&buf);
        // Tolerate CRLF files: a hex token ending in '\r' would otherwise be "bad hex".
        // The price is that a text value cannot end with '\r'.
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = std::str::from_utf8(raw).map_err(|_| CliError::usage(format!("line {line}: not valid UTF-8")))?;
        match parse_line(text, syntax) {
            Ok(Some(op)) => {
                if let Op::Add { value, .. } = &op {
                    if value.len() > max_value {
                        let e = arbor::Error::ValueTooLarge { len: value.len(), max: max_value };
                        return Err(CliError::usage(format!("line {line}: {e}")));
                    }
                }
                ops.push(Numbered { line, op })
            }
            Ok(None) => {}
            Err(why) => return Err(CliError::usage(format!("line {line}: {why}"))),
        }
    }
    Ok(ops)
}

/// Why a line that passed the length limit is refused, from what was read of it.
fn too_long(start: &[u8], max_value: usize) -> String {
    let text = String::from_utf8_lossy(start);
    let path_done = next_token(&text).and_then(|(_, rest)| next_token(rest)).is_some_and(|(_, rest)| !rest.is_empty());
    if path_done {
        format!("value exceeds the maximum of {max_value} bytes (refused before reading it whole)")
    } else {
        format!("path longer than the {MAX_LINE_OVERHEAD} bytes a line may spend beside its value")
    }
}

/// Parses one line: `None` for blank and comment lines, else the operation or why not.
pub fn parse_line(line: &str, syntax: ValueSyntax) -> Result<Option<Op>, String> {
    let Some((op, rest)) = next_token(line) else { return Ok(None) };
    if op.starts_with('#') {
        return Ok(None);
    }
    if op != "add" && op != "remove" {
        return Err(format!("unknown operation '{op}' (expected 'add' or 'remove')"));
    }
    let Some((path_text, rest)) = next_token(rest) else { return Err(format!("missing path after '{op}'")) };
    let path = arbor::parse_path(path_text).map_err(|e| path_error(path_text, &e))?;
    if path.is_empty() {
        return Err(format!("empty path '{path_text}': '{op}' needs at least one step"));
    }
    if op == "remove" {
        if let Some((extra, _)) = next_token(rest) {
            return Err(format!("unexpected '{extra}' after the path of 'remove'"));
        }
        return Ok(Some(Op::Remove { path }));
    }
    let value = match syntax {
        ValueSyntax::Text => {
            // `rest` starts with the separator after the path; what follows it is the value,
            // spaces included, so an empty text value is `add PATH ` with a trailing space.
            let mut chars = rest.chars();
            match chars.next() {
                Some(_) => chars.as_str().as_bytes().to_vec(),
                None => return Err(format!("missing value after path '{path_text}'")),
            }
        }
        ValueSyntax::Hex => {
            let Some((token, after)) = next_token(rest) else {
                return Err(format!("missing value after path '{path_text}'"));
            };
            if let Some((extra, _)) = next_token(after) {
                return Err(format!("unexpected '{extra}' after the value (use --text for values with spaces)"));
            }
            hex::decode(token).map_err(|e| format!("bad hex value '{token}': {e}"))?
        }
    };
    Ok(Some(Op::Add { path, value }))
}

/// Splits off the first space- or tab-separated token; the rest keeps its leading separator.
fn next_token(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start_matches([' ', '\t']);
    if s.is_empty() {
        return None;
    }
    let end = s.find([' ', '\t']).unwrap_or(s.len());
    Some(s.split_at(end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(steps: &[&str]) -> Vec<Step> {
        steps.iter().map(|s| Step::from_slice(s.as_bytes())).collect()
    }

    fn err(line: &str, syntax: ValueSyntax) -> String {
        parse_line(line, syntax).unwrap_err()
    }

    #[test]
    fn parses_operations() {
        assert_eq!(
            parse_line("add a/b 3030", ValueSyntax::Hex).unwrap(),
            Some(Op::Add { path: path(&["a", "b"]), value: b"00".to_vec() })
        );
        assert_eq!(
            parse_line("  add\ta 0x", ValueSyntax::Hex).unwrap(),
            Some(Op::Add { path: path(&["a"]), value: vec![] })
        );
        assert_eq!(parse_line("remove a/b", ValueSyntax::Hex).unwrap(), Some(Op::Remove { path: path(&["a", "b"]) }));
        assert_eq!(
            parse_line("add k hello  world ", ValueSyntax::Text).unwrap(),
            Some(Op::Add { path: path(&["k"]), value: b"hello  world ".to_vec() })
        );
        assert_eq!(
            parse_line("add k ", ValueSyntax::Text).unwrap(),
            Some(Op::Add { path: path(&["k"]), value: vec![] })
        );
        assert_eq!(parse_line("", ValueSyntax::Hex).unwrap(), None);
        assert_eq!(parse_line("   \t", ValueSyntax::Hex).unwrap(), None);
        assert_eq!(parse_line("# add a zz", ValueSyntax::Hex).unwrap(), None);
        assert_eq!(parse_line("#comment", ValueSyntax::Text).unwrap(), None);
    }

    #[test]
    fn rejects_malformed_lines() {
        assert!(err("put a 00", ValueSyntax::Hex).contains("unknown operation 'put'"));
        assert!(err("add a zz", ValueSyntax::Hex).contains("bad hex value 'zz'"));
        assert!(err("add a 123", ValueSyntax::Hex).contains("odd number"));
        assert!(err("add a", ValueSyntax::Hex).contains("missing value"));
        assert!(err("add a", ValueSyntax::Text).contains("missing value"));
        assert!(err("add", ValueSyntax::Hex).contains("missing path"));
        assert!(err("add a//b 00", ValueSyntax::Hex).contains("empty step 1"));
        assert!(err("add /a 00", ValueSyntax::Hex).contains("empty step 0"));
        assert!(err("add a/ 00", ValueSyntax::Hex).contains("empty step 1"));
        assert!(err("remove a/b/", ValueSyntax::Hex).contains("empty step 2"));
        assert!(err("add / 00", ValueSyntax::Hex).contains("empty path"));
        assert!(err("remove a b", ValueSyntax::Hex).contains("unexpected 'b'"));
        assert!(err("add a 00 11", ValueSyntax::Hex).contains("unexpected '11'"));
    }

    #[test]
    fn numbers_lines_and_stops_at_the_first_error() {
        let ops = parse(&b"# header\r\nadd a 00\r\n\nremove b\n"[..], ValueSyntax::Hex, 64).unwrap();
        assert_eq!(ops.iter().map(|o| o.line).collect::<Vec<_>>(), vec![2, 4]);
        let e = parse(&b"add a 00\n\nadd b xx\nadd c yy\n"[..], ValueSyntax::Hex, 64).unwrap_err();
        assert_eq!(e.failure, crate::error::Failure::Usage);
        assert!(e.message.starts_with("line 3: bad hex"), "{}", e.message);
        assert!(parse(&b"add a \xff\n"[..], ValueSyntax::Text, 64)
            .unwrap_err()
            .message
            .contains("line 1: not valid UTF-8"));
    }

    #[test]
    fn values_over_the_limit_are_refused() {
        let at_limit = format!("add a {}\n", "ab".repeat(4));
        assert_eq!(parse(at_limit.as_bytes(), ValueSyntax::Hex, 4).unwrap().len(), 1);
        let over = format!("add a 00\nadd b {}\n", "ab".repeat(5));
        let e = parse(over.as_bytes(), ValueSyntax::Hex, 4).unwrap_err();
        assert!(e.message.starts_with("line 2: value of 5 bytes exceeds the maximum of 4"), "{}", e.message);
        // Far over: refused from the line's length, before the end of the line.
        let far = format!("add k {}", "x".repeat(MAX_LINE_OVERHEAD + 100));
        let e = parse(far.as_bytes(), ValueSyntax::Text, 10).unwrap_err();
        assert!(e.message.starts_with("line 1: value exceeds the maximum of 10 bytes"), "{}", e.message);
        let e = parse(far.replace(' ', "/").as_bytes(), ValueSyntax::Text, 10).unwrap_err();
        assert!(e.message.contains("path longer than"), "{}", e.message);
    }
}
