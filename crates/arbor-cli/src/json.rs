//! `--json` output: one JSON document on standard output, for scripts. Hashes appear in both
//! spellings (`Co…` and hex), dates as seconds and RFC 3339, sizes in bytes.

use std::io::Write;

use arbor::{CommitInfo, Hash};
use serde_json::{json, Value};

use crate::date::format_utc;
use crate::error::CliResult;

/// Writes `value` pretty-printed, with a final newline.
pub fn print(out: &mut dyn Write, value: &Value) -> CliResult {
    serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}

/// A hash as its `Co…` spelling (the hex one is beside it where a hash is the main subject).
pub fn hash(h: &Hash) -> Value {
    Value::String(h.to_string())
}

/// A commit's metadata.
pub fn commit(info: &CommitInfo) -> Value {
    json!({
        "commit": hash(&info.hash),
        "commit_hex": info.hash.to_hex(),
        "tree": hash(&info.tree),
        "tree_hex": info.tree.to_hex(),
        "parents": info.parents.iter().map(hash).collect::<Vec<_>>(),
        "date": info.date,
        "date_utc": format_utc(info.date),
        "author": String::from_utf8_lossy(&info.author),
        "message": String::from_utf8_lossy(&info.message),
    })
}
