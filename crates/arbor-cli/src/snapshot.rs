//! `arbor snapshot export` and `arbor snapshot import`: one commit's state as a single
//! portable, self-checking file (docs/SNAPSHOT.md), and its import into a store, verified
//! against the commit hash.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use arbor::snapshot::{self, Counts};
use arbor::{Config, Hash};
use clap::{Args, Subcommand};

use crate::common::{parse_hash, resolve_commit, StoreArg};
use crate::error::CliResult;

/// Object cache of the store while exporting or importing: both touch each record about once,
/// so the default 512 MiB would only raise the peak RSS.
const CACHE_BYTES: u64 = 64 << 20;

/// Arguments of `arbor snapshot`.
#[derive(Args, Debug)]
pub struct SnapshotArgs {
    #[command(subcommand)]
    command: SnapshotCommand,
}

/// The `arbor snapshot` subcommands.
#[derive(Subcommand, Debug)]
enum SnapshotCommand {
    /// Write one commit's state to a snapshot file (works beside a running writer).
    Export(ExportArgs),
    /// Import a snapshot file into a store (fresh or not), checking every checksum and the
    /// commit hash; prints the commit last.
    Import(ImportArgs),
}

impl SnapshotArgs {
    /// Runs the chosen subcommand.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        match self.command {
            SnapshotCommand::Export(a) => a.run(out),
            SnapshotCommand::Import(a) => a.run(out),
        }
    }
}

/// Arguments of `arbor snapshot export`.
#[derive(Args, Debug)]
struct ExportArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Commit to export (hex or Co…); default: head `main`, else the last commit.
    #[arg(long, value_name = "HASH", value_parser = parse_hash)]
    commit: Option<Hash>,
    /// The snapshot file to write (replaced if it exists; written to FILE.tmp, then renamed).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

impl ExportArgs {
    fn run(self, out: &mut dyn Write) -> CliResult {
        // Every record is read once: a large cache would only hold memory.
        let store = self.store.open_read_only_with(Config { cache_bytes: CACHE_BYTES, ..Config::default() })?;
        let commit = resolve_commit(&store, self.commit)?;
        let start = Instant::now();
        let stats = snapshot::export_file(&store, &commit, &self.out)?;
        let took = start.elapsed();
        writeln!(out, "commit      {commit}")?;
        writeln!(out, "file        {} ({} bytes)", self.out.display(), stats.file_bytes)?;
        report(out, &stats.counts, stats.file_bytes, took)
    }
}

/// Arguments of `arbor snapshot import`.
#[derive(Args, Debug)]
struct ImportArgs {
    #[command(flatten)]
    store: StoreArg,
    /// The snapshot file to read.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

impl ImportArgs {
    fn run(self, out: &mut dyn Write) -> CliResult {
        // Import re-reads only what it just wrote: a small cache suffices.
        let (store, created) = self.store.open_or_create(Config { cache_bytes: CACHE_BYTES, ..Config::default() })?;
        let start = Instant::now();
        // A refused import into a new store leaves no empty store behind; a kept one is
        // closed (durable, with a recovery point after the bulk write) before it is reported.
        let stats = created.guard(store, |store| Ok(snapshot::import_file(store, &self.file)?))?;
        let took = start.elapsed();
        writeln!(out, "file        {} ({} bytes)", self.file.display(), stats.file_bytes)?;
        report(out, &stats.counts, stats.file_bytes, took)?;
        if !stats.written {
            writeln!(out, "note        the store already had this commit: the file was checked, nothing written")?;
        }
        writeln!(out, "{}", stats.commit)?;
        Ok(())
    }
}

/// Prints the tree's counts and the throughput of the run.
fn report(out: &mut dyn Write, c: &Counts, file_bytes: u64, took: Duration) -> CliResult {
    let secs = took.as_secs_f64().max(1e-9);
    writeln!(
        out,
        "tree        {} values ({} bytes), {} directories; stream {} bytes in {} blocks",
        c.values, c.value_bytes, c.dirs, c.stream_bytes, c.blocks
    )?;
    writeln!(
        out,
        "throughput  {:.3} s: {:.0} values/s, {:.1} MB/s of file, {:.1} MB/s of stream",
        secs,
        c.values as f64 / secs,
        file_bytes as f64 / 1e6 / secs,
        c.stream_bytes as f64 / 1e6 / secs
    )?;
    Ok(())
}
