//! `arbor gc`: keep the last N commits of the head's chain, drop (or archive) older history.

use std::io::Write;
use std::time::Instant;

use arbor::GcMode;
use arbor_bench::metrics::dir_bytes;
use clap::Args;
use serde_json::json;

use crate::common::{resolve_commit, StoreArg};
use crate::error::{CliError, CliResult};
use crate::json;
use crate::rev::{parse_rev, Rev};
use crate::units;

/// Arguments of `arbor gc`.
#[derive(Args, Debug)]
pub struct GcArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Commits of the head's chain to keep, the head included (first parents).
    #[arg(long, value_name = "N")]
    keep: u64,
    /// The commit to count from: a head name, a hash or unique hash prefix, or REV~N
    /// (default: every named head, each keeping its own N commits; with no head, the last
    /// commit). A collection that would drop a named head's commit is refused.
    #[arg(long, value_name = "REV", value_parser = parse_rev)]
    from: Option<Rev>,
    /// Archive mode: move old history to the read-only lower layer instead of dropping it.
    #[arg(long)]
    archive: bool,
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
}

impl GcArgs {
    /// Runs one collection to completion and prints what it did.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        if self.keep == 0 {
            return Err(CliError::usage("--keep must be at least 1 (the head itself)"));
        }
        let store = self.store.open_existing()?;
        let keep_from = match &self.from {
            Some(rev) => store.nth_ancestor(&resolve_commit(&store, Some(rev))?, self.keep)?,
            None => store
                .gc_window_start(self.keep)?
                .ok_or_else(|| CliError::failed(format!("store {} has no commits", store.dir().display())))?,
        };
        let mode = if self.archive { GcMode::Archive } else { GcMode::Drop };
        let before = dir_bytes(store.dir());
        let started = Instant::now();
        let r = store.gc_blocking(&keep_from, mode)?;
        let elapsed = started.elapsed();
        let after = dir_bytes(store.dir());
        if self.json {
            let v = json!({
                "kept_from": json::hash(&keep_from),
                "floor": r.floor,
                "commits_dropped": r.commits_dropped,
                "records_kept_below_floor": r.objects_kept,
                "bytes_kept_below_floor": r.bytes_kept,
                "bytes_scanned": r.bytes_scanned,
                "bytes_freed": r.bytes_freed,
                "disk_bytes_before": before,
                "disk_bytes_after": after,
                "seconds": elapsed.as_secs_f64(),
                "copy_seconds": r.copy_time.as_secs_f64(),
                "writer_pause_seconds": r.writer_pause.as_secs_f64(),
            });
            return json::print(out, &v);
        }
        writeln!(out, "{:<18}{keep_from}", "kept from")?;
        writeln!(out, "{:<18}log offset {}", "floor", r.floor)?;
        writeln!(out, "{:<18}{}", "commits dropped", r.commits_dropped)?;
        writeln!(out, "{:<18}{} records, {}", "kept below floor", r.objects_kept, units::bytes(r.bytes_kept))?;
        writeln!(out, "{:<18}{}", "scanned", units::bytes(r.bytes_scanned))?;
        writeln!(out, "{:<18}{}", "freed", units::bytes(r.bytes_freed))?;
        writeln!(out, "{:<18}{} before, {} after", "disk", units::bytes(before), units::bytes(after))?;
        writeln!(
            out,
            "{:<18}{:.2} s (copy {:.2} s, writer paused {:.2} ms)",
            "time",
            elapsed.as_secs_f64(),
            r.copy_time.as_secs_f64(),
            r.writer_pause.as_secs_f64() * 1e3
        )?;
        Ok(())
    }
}
