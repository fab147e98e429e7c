//! `arbor snapshot export` and `arbor snapshot import`: one commit's state as a single
//! portable, self-checking file (docs/SNAPSHOT.md), and its import into a store, verified
//! against the commit hash.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use arbor::snapshot::{self, Counts};
use arbor::Config;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::common::{resolve_commit, StoreArg, MAIN_HEAD};
use crate::error::{CliError, CliResult};
use crate::json;
use crate::rev::{parse_rev, Rev};

/// Object cache of the store while exporting or importing: both touch each record about once,
/// so the default 1 GiB would only raise the peak RSS.
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
    /// Commit to export (a head name, a hash or unique hash prefix, or REV~N); default: head `main`, else the last commit.
    #[arg(long, value_name = "REV", value_parser = parse_rev)]
    commit: Option<Rev>,
    /// The snapshot file to write (replaced if it exists; written to FILE.tmp, then renamed).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
}

impl ExportArgs {
    fn run(self, out: &mut dyn Write) -> CliResult {
        // Every record is read once: a large cache would only hold memory.
        let store = self.store.open_read_only_with(Config::default().with_cache_bytes(CACHE_BYTES))?;
        let commit = resolve_commit(&store, self.commit.as_ref())?;
        let start = Instant::now();
        let stats = snapshot::export_file(&store, &commit, &self.out)?;
        let took = start.elapsed();
        if self.json {
            let mut v = counts_json(&stats.counts, stats.file_bytes, took);
            v["commit"] = json::hash(&commit);
            v["file"] = json!(self.out.display().to_string());
            return json::print(out, &v);
        }
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
    /// The head to point at the imported commit (set or moved), so that garbage collection
    /// keeps it. Default: `main` in a store without commits; required otherwise.
    #[arg(long, value_name = "NAME")]
    head: Option<String>,
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
}

impl ImportArgs {
    fn run(self, out: &mut dyn Write) -> CliResult {
        // Import re-reads only what it just wrote: a small cache suffices.
        let (store, created) = self.store.open_or_create(Config::default().with_cache_bytes(CACHE_BYTES))?;
        // A commit no head names is dropped by the next collection: the imported one always
        // has a head. Decided from the file's header before anything is written, so a
        // refusal changes nothing.
        let head = match (&self.head, store.last_commit()) {
            (Some(name), _) => name.clone(),
            (None, None) => MAIN_HEAD.to_string(),
            // The store was there before (it has commits): refusing leaves nothing to undo.
            (None, Some(_)) => {
                let header = snapshot::read_header(&self.file)?;
                match store.heads().into_iter().find(|(_, h)| *h == header.commit.hash) {
                    // Imported before and still named: importing again only checks the file.
                    Some((name, _)) => name,
                    None => {
                        return Err(CliError::usage(format!(
                            "store {} already has commits: name the head to point at the imported commit with --head NAME (garbage collection keeps only what named heads reach)",
                            store.dir().display()
                        )))
                    }
                }
            }
        };
        let start = Instant::now();
        // A refused import into a new store leaves no empty store behind; a kept one is
        // closed (durable, with a recovery point after the bulk write) before it is reported.
        let stats = created.guard(store, |store| {
            let stats = snapshot::import_file(store, &self.file)?;
            store.set_head(&head, &stats.commit)?;
            Ok(stats)
        })?;
        let took = start.elapsed();
        if self.json {
            let mut v = counts_json(&stats.counts, stats.file_bytes, took);
            v["commit"] = json::hash(&stats.commit);
            v["file"] = json!(self.file.display().to_string());
            v["written"] = json!(stats.written);
            v["head"] = json!(head);
            return json::print(out, &v);
        }
        writeln!(out, "file        {} ({} bytes)", self.file.display(), stats.file_bytes)?;
        report(out, &stats.counts, stats.file_bytes, took)?;
        if !stats.written {
            writeln!(out, "note        the store already had this commit: the file was checked, nothing written")?;
        }
        writeln!(out, "head        {head}")?;
        writeln!(out, "{}", stats.commit)?;
        Ok(())
    }
}

/// The tree's counts and the run's figures as JSON.
fn counts_json(c: &Counts, file_bytes: u64, took: Duration) -> serde_json::Value {
    json!({
        "file_bytes": file_bytes,
        "values": c.values,
        "value_bytes": c.value_bytes,
        "directories": c.dirs,
        "stream_bytes": c.stream_bytes,
        "blocks": c.blocks,
        "seconds": took.as_secs_f64(),
    })
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
