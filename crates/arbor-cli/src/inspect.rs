//! `arbor log`, `arbor show` and `arbor heads`: commit metadata.

use std::collections::HashSet;
use std::io::Write;

use arbor::{CommitInfo, Hash};
use clap::Args;
use serde_json::json;

use crate::common::{default_commit, resolve_commit, StoreArg};
use crate::date::format_utc;
use crate::error::{CliError, CliResult};
use crate::json;
use crate::rev::{parse_rev, Rev};

/// Arguments of `arbor log`.
#[derive(Args, Debug)]
pub struct LogArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Start from this commit (a head name, a hash or unique hash prefix, or REV~N) instead of
    /// head `main` (else the last commit).
    #[arg(long, value_name = "REV", value_parser = parse_rev)]
    commit: Option<Rev>,
    /// Show at most N commits.
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    max_count: Option<u64>,
    /// Print a JSON array of commits (newest first) instead of text.
    #[arg(long)]
    json: bool,
}

impl LogArgs {
    /// Prints commits from the start through first parents, newest first.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let store = self.store.open_read_only()?;
        let mut next = match &self.commit {
            Some(rev) => Some(rev.resolve(&store)?),
            // An empty store has an empty history: nothing to print, not an error.
            None => default_commit(&store),
        };
        let mut entries = Vec::new();
        // Hashes make a cycle impossible in a sound store; the guard keeps a corrupt one
        // from looping forever.
        let mut seen = HashSet::new();
        let max = self.max_count.unwrap_or(u64::MAX);
        while let Some(hash) = next.filter(|h| seen.len() < max as usize && seen.insert(*h)) {
            let info = store.commit_info(&hash)?;
            next = match info.parents.first() {
                // Parents need not be in the store (a store may start mid-chain); say where
                // the history stops rather than failing.
                Some(p) if !store.contains(p) => {
                    let p = *p;
                    entries.push((info, Some(p)));
                    break;
                }
                first => first.copied(),
            };
            entries.push((info, None));
        }
        if self.json {
            let list: Vec<_> = entries
                .iter()
                .map(|(info, missing)| {
                    let mut v = json::commit(info);
                    if let Some(p) = missing {
                        v["parent_not_in_store"] = json::hash(p);
                    }
                    v
                })
                .collect();
            return json::print(out, &serde_json::Value::Array(list));
        }
        for (info, missing) in &entries {
            write_log_entry(out, info)?;
            if let Some(p) = missing {
                writeln!(out, "(parent {p} is not in this store)")?;
            }
        }
        Ok(())
    }
}

/// One commit of `log`, in blocks like `git log`.
fn write_log_entry(out: &mut dyn Write, info: &CommitInfo) -> CliResult {
    writeln!(out, "commit {}", info.hash)?;
    writeln!(out, "Author: {}", String::from_utf8_lossy(&info.author))?;
    writeln!(out, "Date:   {} ({})", format_utc(info.date), info.date)?;
    writeln!(out)?;
    for line in String::from_utf8_lossy(&info.message).lines() {
        writeln!(out, "    {line}")?;
    }
    writeln!(out)?;
    Ok(())
}

/// Arguments of `arbor show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    #[command(flatten)]
    store: StoreArg,
    /// The commit: a head name, a hash or unique hash prefix, or REV~N; default: head `main`,
    /// else the last commit.
    #[arg(value_name = "REV", value_parser = parse_rev)]
    rev: Option<Rev>,
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
}

impl ShowArgs {
    /// Prints a commit's metadata, one `label value` line each, hashes in both spellings.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let store = self.store.open_read_only()?;
        let hash = resolve_commit(&store, self.rev.as_ref())?;
        let info = match store.commit_info(&hash) {
            Err(arbor::Error::UnknownCommit(h)) => return Err(CliError::failed(format!("unknown commit {h}"))),
            other => other?,
        };
        if self.json {
            return json::print(out, &json::commit(&info));
        }
        write_hash(out, "commit", &info.hash)?;
        write_hash(out, "tree", &info.tree)?;
        if info.parents.is_empty() {
            writeln!(out, "{:<12}none", "parents")?;
        }
        for p in &info.parents {
            write_hash(out, "parent", p)?;
        }
        writeln!(out, "{:<12}{} ({})", "date", format_utc(info.date), info.date)?;
        writeln!(out, "{:<12}{}", "author", String::from_utf8_lossy(&info.author))?;
        // Continuation lines are indented so every line still starts with its label column.
        let message = String::from_utf8_lossy(&info.message);
        let mut lines = message.lines();
        writeln!(out, "{:<12}{}", "message", lines.next().unwrap_or(""))?;
        for line in lines {
            writeln!(out, "{:<12}{line}", "")?;
        }
        Ok(())
    }
}

/// A hash as two lines, `LABEL Co…` and `LABEL hex …`, so each is easy to grep.
fn write_hash(out: &mut dyn Write, label: &str, hash: &Hash) -> CliResult {
    writeln!(out, "{label:<12}{hash}")?;
    writeln!(out, "{:<12}{}", format!("{label} hex"), hash.to_hex())?;
    Ok(())
}

/// Arguments of `arbor heads`.
#[derive(Args, Debug)]
pub struct HeadsArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Print a JSON array of `{"name", "commit"}` objects instead of text.
    #[arg(long)]
    json: bool,
}

impl HeadsArgs {
    /// Prints every named head as `NAME HASH`, sorted by name.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let store = self.store.open_read_only()?;
        let heads = store.heads();
        if self.json {
            let list: Vec<_> = heads
                .iter()
                .map(|(name, hash)| json!({"name": name, "commit": json::hash(hash), "commit_hex": hash.to_hex()}))
                .collect();
            return json::print(out, &serde_json::Value::Array(list));
        }
        let width = heads.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (name, hash) in heads {
            writeln!(out, "{name:<width$}  {hash}")?;
        }
        Ok(())
    }
}
