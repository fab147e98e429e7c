//! `arbor log`, `arbor show` and `arbor heads`: commit metadata.

use std::collections::HashSet;
use std::io::Write;

use arbor::{CommitInfo, Hash};
use clap::Args;

use crate::common::{default_commit, parse_hash, StoreArg};
use crate::date::format_utc;
use crate::error::{CliError, CliResult};

/// Arguments of `arbor log`.
#[derive(Args, Debug)]
pub struct LogArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Start from this commit instead of head `main` (else the last commit).
    #[arg(long, value_name = "HASH", value_parser = parse_hash)]
    commit: Option<Hash>,
}

impl LogArgs {
    /// Prints commits from the start through first parents, newest first.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let store = self.store.open_read_only()?;
        let mut next = match self.commit {
            Some(h) if !store.contains(&h) => return Err(CliError::failed(format!("unknown commit {h}"))),
            Some(h) => Some(h),
            // An empty store has an empty history: nothing to print, not an error.
            None => default_commit(&store),
        };
        // Hashes make a cycle impossible in a sound store; the guard keeps a corrupt one
        // from looping forever.
        let mut seen = HashSet::new();
        while let Some(hash) = next.filter(|h| seen.insert(*h)) {
            let info = store.commit_info(&hash)?;
            write_log_entry(out, &info)?;
            next = match info.parents.first() {
                // Parents need not be in the store (a store may start mid-chain); say where
                // the history stops rather than failing.
                Some(p) if !store.contains(p) => {
                    writeln!(out, "(parent {p} is not in this store)")?;
                    None
                }
                first => first.copied(),
            };
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
    /// The commit (hex or Co…).
    #[arg(value_parser = parse_hash)]
    hash: Hash,
}

impl ShowArgs {
    /// Prints a commit's metadata, one `label value` line each, hashes in both spellings.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let store = self.store.open_read_only()?;
        let info = match store.commit_info(&self.hash) {
            Err(arbor::Error::UnknownCommit(h)) => return Err(CliError::failed(format!("unknown commit {h}"))),
            other => other?,
        };
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
}

impl HeadsArgs {
    /// Prints every named head as `NAME HASH`, sorted by name.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let store = self.store.open_read_only()?;
        let heads = store.heads();
        let width = heads.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (name, hash) in heads {
            writeln!(out, "{name:<width$}  {hash}")?;
        }
        Ok(())
    }
}
