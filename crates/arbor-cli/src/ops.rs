//! The operation language `arbor commit` reads from standard input:
//! `add PATH VALUE` and `remove PATH`, one a line.

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

/// Parses a whole input, stopping at the first malformed line with a usage error (exit 2)
/// naming it. Everything is parsed before anything is written, so bad input commits nothing.
pub fn parse(input: &[u8], syntax: ValueSyntax) -> CliResult<Vec<Numbered>> {
    let mut ops = Vec::new();
    for (i, raw) in input.split(|&b| b == b'\n').enumerate() {
        let line = i + 1;
        // Tolerate CRLF files: a hex token ending in '\r' would otherwise be "bad hex".
        // The price is that a text value cannot end with '\r'.
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = std::str::from_utf8(raw).map_err(|_| CliError::usage(format!("line {line}: not valid UTF-8")))?;
        match parse_line(text, syntax) {
            Ok(Some(op)) => ops.push(Numbered { line, op }),
            Ok(None) => {}
            Err(why) => return Err(CliError::usage(format!("line {line}: {why}"))),
        }
    }
    Ok(ops)
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
        let ops = parse(b"# header\r\nadd a 00\r\n\nremove b\n", ValueSyntax::Hex).unwrap();
        assert_eq!(ops.iter().map(|o| o.line).collect::<Vec<_>>(), vec![2, 4]);
        let e = parse(b"add a 00\n\nadd b xx\nadd c yy\n", ValueSyntax::Hex).unwrap_err();
        assert_eq!(e.failure, crate::error::Failure::Usage);
        assert!(e.message.starts_with("line 3: bad hex"), "{}", e.message);
        assert!(parse(b"add a \xff\n", ValueSyntax::Text).unwrap_err().message.contains("line 1: not valid UTF-8"));
    }
}
