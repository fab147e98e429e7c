//! `arbor repair`: bring a damaged store back to its longest intact history.

use std::io::Write;

use arbor::{Config, RepairReport, Store};
use clap::Args;
use serde_json::json;

use crate::common::StoreArg;
use crate::error::{CliError, CliResult};
use crate::json;

/// Arguments of `arbor repair`.
#[derive(Args, Debug)]
pub struct RepairArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Carry out the plan. Without it, nothing is changed: the plan is printed, and the
    /// command fails if the store needs repair.
    #[arg(long)]
    yes: bool,
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
}

impl RepairArgs {
    /// Plans the repair, and carries it out with `--yes`.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        self.store.require_store()?;
        let report = Store::repair(&self.store.store, &Config::default(), self.yes)?;
        if self.json {
            json::print(out, &to_json(&report))?;
        } else {
            print(out, &report, &self.store.store.display().to_string())?;
        }
        if !report.is_intact() && !report.applied {
            return Err(CliError::failed(
                "the store needs repair: nothing was changed; run again with --yes to repair it",
            ));
        }
        Ok(())
    }
}

fn to_json(r: &RepairReport) -> serde_json::Value {
    let heads = |h: &[(String, arbor::Hash)]| {
        h.iter().map(|(n, c)| json!({"name": n, "commit": json::hash(c)})).collect::<Vec<_>>()
    };
    json!({
        "intact": r.is_intact(),
        "applied": r.applied,
        "damage": r.damage.as_ref().map(|(file, offset, what)| json!({"file": file.display().to_string(), "offset": offset, "what": what})),
        "log_end": r.log_end,
        "valid_end": r.valid_end,
        "bytes_cut": r.log_end.saturating_sub(r.valid_end),
        "commits_kept": r.commits_kept.len(),
        "last_commit_kept": r.commits_kept.last().map(json::hash),
        "commits_dropped": r.commits_dropped.iter().map(json::hash).collect::<Vec<_>>(),
        "heads_kept": heads(&r.heads_kept),
        "heads_dropped": heads(&r.heads_dropped),
        "heads_moved": r.heads_moved.iter().map(|(n, from, to)| json!({"name": n, "from": json::hash(from), "to": json::hash(to)})).collect::<Vec<_>>(),
        "rewrites": r.rewrites,
    })
}

fn print(out: &mut dyn Write, r: &RepairReport, dir: &str) -> CliResult {
    if r.is_intact() {
        writeln!(out, "store {dir} is intact: {} commits, nothing to repair", r.commits_kept.len())?;
        return Ok(());
    }
    match &r.damage {
        Some((file, offset, what)) => {
            writeln!(out, "{:<16}{} at log offset {offset}: {what}", "damage", file.display())?
        }
        None => writeln!(out, "{:<16}none in the log", "damage")?,
    }
    for why in &r.rewrites {
        writeln!(out, "{:<16}{why}", "found")?;
    }
    let verb = if r.applied { "kept" } else { "would keep" };
    let last = r.commits_kept.last().map_or_else(|| "none".to_string(), |h| h.to_string());
    writeln!(out, "{:<16}{} commits (newest {last}), log bytes 0..{}", verb, r.commits_kept.len(), r.valid_end)?;
    let verb = if r.applied { "dropped" } else { "would drop" };
    writeln!(out, "{:<16}{} bytes of log after offset {}", verb, r.log_end.saturating_sub(r.valid_end), r.valid_end)?;
    writeln!(out, "{:<16}{} commits", verb, r.commits_dropped.len())?;
    for h in &r.commits_dropped {
        writeln!(out, "  commit {h}")?;
    }
    for (name, h) in &r.heads_dropped {
        writeln!(out, "  head {name} (at {h})")?;
    }
    for (name, from, to) in &r.heads_moved {
        let verb = if r.applied { "moved back" } else { "would move back" };
        writeln!(out, "  head {name} {verb} from {from} to {to}")?;
    }
    for (name, h) in &r.heads_kept {
        writeln!(out, "{:<16}{name} at {h}", "head")?;
    }
    if r.applied {
        writeln!(out, "repaired: the index and control file were rewritten; `arbor fsck` checks the result")?;
    } else {
        writeln!(out, "nothing changed: run again with --yes to repair")?;
    }
    Ok(())
}
