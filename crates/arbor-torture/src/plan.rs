//! A child's plan: the actions the swarm asks one writer process to run, in order, written
//! to a text file the child reads (one action a line, a commit's changes on the lines after
//! it). The swarm computes every outcome beforehand (each commit's hash and contents), so the
//! child needs no model and the swarm trusts nothing the child says beyond "done".

use std::fmt::Write as _;

use arbor::GcMode;
use arbor_core::Hash;

use crate::model::{key, show, Op};

/// One action of a writer process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Check out `parent` (the empty tree if None), apply `ops`, commit with `parent` as the
    /// only parent, `date` and `message` (author `Tezos`).
    Commit {
        /// The parent commit.
        parent: Option<Hash>,
        /// Commit date.
        date: i64,
        /// Commit message (no whitespace).
        message: String,
        /// Changes to the parent's tree.
        ops: Vec<Op>,
    },
    /// Garbage-collect the main store keeping `keep_from` and what follows it.
    Gc {
        /// The oldest commit kept.
        keep_from: Hash,
        /// Drop or archive what is older.
        mode: GcMode,
    },
    /// Export the snapshot of `commit` to `file` (a name in the work directory).
    Export {
        /// The commit exported.
        commit: Hash,
        /// The snapshot's file name.
        file: String,
    },
    /// Import the snapshot `file` into the import store.
    Import {
        /// The snapshot's file name.
        file: String,
    },
    /// Close the main store and open it again.
    Reopen,
}

fn mode_name(mode: GcMode) -> &'static str {
    if mode == GcMode::Archive {
        "archive"
    } else {
        "drop"
    }
}

/// The text form of a plan.
pub fn encode(plan: &[Action]) -> String {
    let mut out = String::new();
    for a in plan {
        match a {
            Action::Commit { parent, date, message, ops } => {
                let parent = parent.map_or_else(|| "-".to_string(), |p| p.to_hex());
                let _ = writeln!(out, "commit {date} {parent} {message}");
                for op in ops {
                    let _ = match op {
                        Op::Add(k, v) => writeln!(out, "add {} {}", show(k), String::from_utf8_lossy(v)),
                        Op::Remove(k) => writeln!(out, "rm {}", show(k)),
                        Op::Copy(from, to) => writeln!(out, "cp {} {}", show(from), show(to)),
                    };
                }
                out.push_str("end\n");
            }
            Action::Gc { keep_from, mode } => {
                let _ = writeln!(out, "gc {} {}", keep_from.to_hex(), mode_name(*mode));
            }
            Action::Export { commit, file } => {
                let _ = writeln!(out, "export {} {file}", commit.to_hex());
            }
            Action::Import { file } => {
                let _ = writeln!(out, "import {file}");
            }
            Action::Reopen => out.push_str("reopen\n"),
        }
    }
    out
}

fn hash(s: &str) -> Result<Hash, String> {
    Hash::from_hex(s).map_err(|e| format!("bad hash {s:?}: {e}"))
}

/// Parses the text form of a plan.
pub fn decode(text: &str) -> Result<Vec<Action>, String> {
    let mut plan = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let words: Vec<&str> = line.split(' ').collect();
        let bad = || format!("plan line {}: cannot parse {line:?}", n + 1);
        let action = match words.as_slice() {
            ["commit", date, parent, message] => {
                let parent = if *parent == "-" { None } else { Some(hash(parent)?) };
                let mut ops = Vec::new();
                loop {
                    let (m, l) = lines.next().ok_or_else(|| format!("plan line {}: commit without end", n + 1))?;
                    let w: Vec<&str> = l.split(' ').collect();
                    ops.push(match w.as_slice() {
                        ["end"] => break,
                        ["add", k, v] => Op::Add(key(k), v.as_bytes().to_vec()),
                        ["rm", k] => Op::Remove(key(k)),
                        ["cp", from, to] => Op::Copy(key(from), key(to)),
                        _ => return Err(format!("plan line {}: cannot parse {l:?}", m + 1)),
                    });
                }
                Action::Commit { parent, date: date.parse().map_err(|_| bad())?, message: message.to_string(), ops }
            }
            ["gc", keep, mode] => Action::Gc {
                keep_from: hash(keep)?,
                mode: match *mode {
                    "archive" => GcMode::Archive,
                    "drop" => GcMode::Drop,
                    _ => return Err(bad()),
                },
            },
            ["export", commit, file] => Action::Export { commit: hash(commit)?, file: file.to_string() },
            ["import", file] => Action::Import { file: file.to_string() },
            ["reopen"] => Action::Reopen,
            _ => return Err(bad()),
        };
        plan.push(action);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_round_trip_through_text() {
        let h = arbor_core::blake2b_256(&[b"x"]);
        let plan = vec![
            Action::Commit {
                parent: Some(h),
                date: 7,
                message: "c7".into(),
                ops: vec![Op::Add(key("a/b"), b"v1".to_vec()), Op::Remove(key("c")), Op::Copy(key("a"), key("d/e"))],
            },
            Action::Commit { parent: None, date: 8, message: "c8".into(), ops: vec![] },
            Action::Gc { keep_from: h, mode: GcMode::Archive },
            Action::Export { commit: h, file: "snap-1".into() },
            Action::Import { file: "snap-1".into() },
            Action::Reopen,
        ];
        assert_eq!(decode(&encode(&plan)).unwrap(), plan);
        assert!(decode("gc zz drop").is_err());
        assert!(decode("commit 1 - m\nadd a").is_err());
    }
}
