//! `arbor fsck` and `arbor stats`: whole-store checks and statistics.

use std::io::Write;

use clap::Args;

use serde_json::json;

use crate::common::StoreArg;
use crate::error::{CliError, CliResult};
use crate::json;

/// Arguments of `arbor fsck`.
#[derive(Args, Debug)]
pub struct FsckArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Print a JSON object (`commits`, `objects`, `errors`) instead of text.
    #[arg(long)]
    json: bool,
}

impl FsckArgs {
    /// Checks every object reachable from every commit; prints counts, and fails naming
    /// each problem found.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let store = self.store.open_read_only()?;
        let report = store.fsck();
        if self.json {
            let v = json!({
                "commits": report.commits,
                "objects": report.objects,
                "errors": report.errors,
                "errors_truncated": report.truncated,
            });
            json::print(out, &v)?;
        } else {
            writeln!(out, "commits  {}", report.commits)?;
            writeln!(out, "objects  {}", report.objects)?;
            writeln!(out, "errors   {}", report.errors.len())?;
        }
        if report.errors.is_empty() {
            return Ok(());
        }
        // Each problem on its own stderr line so none is lost in one long message.
        for e in report.errors.iter().filter(|_| !self.json) {
            eprintln!("arbor: fsck: {e}");
        }
        Err(CliError::failed(format!("fsck found {} errors in {}", report.errors.len(), store.dir().display())))
    }
}

/// Arguments of `arbor stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Names of the record kinds, in the order of `StoreStats::records`.
const RECORD_KINDS: [&str; 4] = [
    arbor::store::RECORD_KIND_NAMES[1],
    arbor::store::RECORD_KIND_NAMES[2],
    arbor::store::RECORD_KIND_NAMES[3],
    arbor::store::RECORD_KIND_NAMES[4],
];

impl StatsArgs {
    /// Prints statistics of every object reachable from the commits.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let store = self.store.open_read_only()?;
        let s = store.stats()?;
        if self.json {
            let kinds: serde_json::Map<String, serde_json::Value> = RECORD_KINDS
                .iter()
                .zip(s.records.iter().zip(&s.record_bytes))
                .map(|(name, (count, bytes))| (name.replace(' ', "_"), json!({"count": count, "bytes": bytes})))
                .collect();
            let v = json!({
                "commits": s.commits,
                "log_bytes": s.log_bytes,
                "records": kinds,
                "delta_records": s.delta_records,
                "delta_bytes": s.delta_bytes,
                "chained_delta_records": s.chained_delta_records,
                "inlined_values": s.inlined_values,
                "separate_values": s.separate_values,
                "value_depths": s.depths,
                "largest_directory_entries": s.max_dir_entries,
            });
            return json::print(out, &v);
        }
        writeln!(out, "{:<20}{}", "commits", s.commits)?;
        writeln!(out, "{:<20}{} bytes", "log size", s.log_bytes)?;
        writeln!(out, "{:<20}{:>12}{:>16}", "objects", "count", "bytes")?;
        for (name, (count, bytes)) in RECORD_KINDS.iter().zip(s.records.iter().zip(&s.record_bytes)) {
            writeln!(out, "  {name:<18}{count:>12}{bytes:>16}")?;
        }
        let total: u64 = s.records.iter().sum();
        let total_bytes: u64 = s.record_bytes.iter().sum();
        writeln!(out, "  {:<18}{total:>12}{total_bytes:>16}", "total")?;
        writeln!(out, "{:<20}{}", "inlined values", s.inlined_values)?;
        writeln!(out, "{:<20}{}", "separate values", s.separate_values)?;
        writeln!(out, "value depths")?;
        for (depth, count) in s.depths.iter().enumerate().filter(|(_, c)| **c > 0) {
            writeln!(out, "  {depth:<18}{count:>12}")?;
        }
        writeln!(out, "{:<20}{} entries", "largest directory", s.max_dir_entries)?;
        Ok(())
    }
}
