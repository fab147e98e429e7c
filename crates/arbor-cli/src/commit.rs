//! `arbor commit`: apply operations read from standard input to a parent tree and commit.

use std::io::Write;

use arbor::{Config, Hash, Store, Tree};
use clap::Args;
use serde_json::json;

use crate::common::{default_commit, StoreArg, MAIN_HEAD};
use crate::date::parse_date;
use crate::error::{CliError, CliResult};
use crate::json;
use crate::ops::{self, Numbered, Op, ValueSyntax};
use crate::rev::{parse_rev, Rev};

/// Arguments of `arbor commit`.
#[derive(Args, Debug)]
#[command(after_help = "\
Standard input holds one operation a line:
  add PATH VALUE     put VALUE at PATH (hex; `0x` alone is the empty value)
  remove PATH        remove whatever is at PATH
PATH is `/`-separated. With --text, VALUE is the rest of the line after the one
space that follows PATH, taken verbatim. Blank lines and lines starting with `#`
are skipped. The new commit's hash is printed alone on standard output (its
statistics go to standard error), and head `main` moves to it.")]
pub struct CommitArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Parent commit: a head name, a hash or unique hash prefix, or REV~N; default: head
    /// `main`, else the last commit, else none.
    #[arg(long, value_name = "REV", value_parser = parse_rev, conflicts_with = "no_parent")]
    parent: Option<Rev>,
    /// Commit without a parent, starting from the empty tree.
    #[arg(long)]
    no_parent: bool,
    /// Commit date (Tezos: the block timestamp): seconds since the Unix epoch, or RFC 3339
    /// (`2018-06-30T16:07:32Z`, `2018-06-30T18:07:32+02:00`).
    #[arg(long, value_name = "DATE", allow_negative_numbers = true, value_parser = parse_date)]
    date: i64,
    /// Commit message.
    #[arg(long, value_name = "TEXT")]
    message: String,
    /// Commit author.
    #[arg(long, value_name = "TEXT", default_value = "Tezos")]
    author: String,
    /// Values are UTF-8 text (the rest of the line) instead of hex.
    #[arg(long)]
    text: bool,
    /// Print a JSON object (the commit and its statistics) instead of the hash.
    #[arg(long)]
    json: bool,
}

impl CommitArgs {
    /// Runs the command: the new commit's hash on standard output, a summary on standard error.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let syntax = if self.text { ValueSyntax::Text } else { ValueSyntax::Hex };
        let config = Config::default();
        // Parse before opening, so malformed input neither creates nor locks a store.
        let ops = ops::parse(std::io::stdin().lock(), syntax, config.max_value_len)?;

        let (store, created) = self.store.open_or_create(config)?;
        // A refused commit into a new store leaves no empty store behind.
        let (hash, stats) = created.guard(store, |store| {
            let (base, parents) = self.base(store)?;
            let tree = apply(base, &ops)?;
            let (hash, stats) =
                store.commit_with_stats(&tree, &parents, self.date, self.author.as_bytes(), self.message.as_bytes())?;
            store.set_head(MAIN_HEAD, &hash)?;
            Ok((hash, stats))
        })?;
        if self.json {
            let v = json!({
                "commit": json::hash(&hash),
                "commit_hex": hash.to_hex(),
                "operations": ops.len(),
                "objects_written": stats.objects,
                "values_inlined": stats.inlined,
            });
            return json::print(out, &v);
        }
        // Standard output is the hash alone, for `$(arbor commit …)`.
        eprintln!(
            "arbor: operations {}, objects written {}, values inlined {}",
            ops.len(),
            stats.objects,
            stats.inlined
        );
        writeln!(out, "{hash}")?;
        Ok(())
    }

    /// The tree to start from and the parents to record.
    fn base(&self, store: &Store) -> CliResult<(Tree, Vec<Hash>)> {
        let parent = match (&self.parent, self.no_parent) {
            (Some(rev), _) => Some(rev.resolve(store).map_err(|mut e| {
                e.message = format!("--parent: {}", e.message);
                e
            })?),
            (None, true) => None,
            (None, false) => default_commit(store),
        };
        match parent {
            None => Ok((store.empty(), Vec::new())),
            Some(h) => match store.checkout(&h) {
                Ok(tree) => Ok((tree, vec![h])),
                Err(arbor::Error::UnknownCommit(_)) => Err(CliError::failed(format!("unknown parent commit {h}"))),
                Err(e) => Err(e.into()),
            },
        }
    }
}

/// Applies the operations in order; an error caused by a line's content names the line.
fn apply(mut tree: Tree, ops: &[Numbered]) -> CliResult<Tree> {
    for Numbered { line, op } in ops {
        let result = match op {
            Op::Add { path, value } => tree.add(path, value),
            Op::Remove { path } => tree.remove(path),
        };
        tree = result.map_err(|e| {
            let mut err = CliError::from(e);
            err.message = format!("line {line}: {}", err.message);
            err
        })?;
    }
    Ok(tree)
}
