//! `arbor trace generate` and `arbor trace stats`: write a synthetic workload trace, and
//! summarise any trace next to the published workload figures (`docs/TRACE.md`,
//! `docs/WORKLOAD.md`).

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use arbor_trace::{generate, stats_with, GenerateSummary, GeneratorParams, Profile, StatsOptions, TraceError};
use clap::{Args, Subcommand};

use crate::error::{CliError, CliResult};

/// Arguments of `arbor trace`.
#[derive(Args, Debug)]
pub struct TraceArgs {
    #[command(subcommand)]
    command: TraceCommand,
}

/// The `arbor trace` subcommands.
#[derive(Subcommand, Debug)]
enum TraceCommand {
    /// Generate a synthetic workload trace.
    Generate(GenerateArgs),
    /// Print a trace's statistics: operations per block and kind, read/write symmetry, value
    /// sizes, cycle boundaries, path lengths.
    Stats(StatsArgs),
    /// Convert another tool's trace into an arbor trace that `arbor replay` checks (recorded
    /// results and commit hashes).
    Import(ImportArgs),
}

impl TraceArgs {
    /// Runs the chosen subcommand.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        match self.command {
            TraceCommand::Generate(a) => a.run(out),
            TraceCommand::Stats(a) => a.run(out),
            TraceCommand::Import(a) => a.run(out),
        }
    }
}

/// Trace errors: bad parameters are usage errors (exit 2), anything else a failure.
fn trace_error(e: TraceError) -> CliError {
    match e {
        TraceError::InvalidParams(_) => CliError::usage(e.to_string()),
        TraceError::Io(io) => CliError::from(io),
        _ => CliError::failed(e.to_string()),
    }
}

/// Arguments of `arbor trace generate`.
#[derive(Args, Debug)]
struct GenerateArgs {
    /// Workload profile.
    #[arg(long, default_value = "tezos-mainnet")]
    profile: Profile,
    /// Blocks to generate.
    #[arg(long, default_value_t = 1_000)]
    blocks: u64,
    /// Values in the initial state (at least 10,000).
    #[arg(long, value_name = "VALUES", default_value_t = 1_000_000)]
    state_size: u64,
    /// Seed of the initial state and the blocks.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Blocks per cycle (each cycle's last block does the boundary work).
    #[arg(long, default_value_t = 1_000)]
    cycle_length: u64,
    /// The trace file to write.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

impl GenerateArgs {
    fn run(self, out: &mut dyn Write) -> CliResult {
        let params = GeneratorParams {
            profile: self.profile,
            blocks: self.blocks,
            values: self.state_size,
            seed: self.seed,
            cycle_length: self.cycle_length,
            ..GeneratorParams::default()
        };
        let start = Instant::now();
        let file = File::create(&self.out)
            .map_err(|e| CliError::failed(format!("cannot create {}: {e}", self.out.display())))?;
        let summary = match generate(params, BufWriter::new(file)) {
            Ok(s) => s,
            Err(e) => {
                // Leave no partial trace behind: a reader would take it for a truncated one.
                let _ = std::fs::remove_file(&self.out);
                return Err(trace_error(e));
            }
        };
        print_summary(out, &summary, &self.out, start.elapsed().as_secs_f64())?;
        Ok(())
    }
}

fn print_summary(out: &mut dyn Write, s: &GenerateSummary, path: &std::path::Path, secs: f64) -> std::io::Result<()> {
    let blocks = s.blocks.max(1) as f64;
    writeln!(out, "trace           {}", path.display())?;
    writeln!(out, "blocks          {} ({} ending a cycle)", s.blocks, s.boundary_blocks)?;
    writeln!(out, "transactions    {} ({:.1} per block)", s.transactions, s.transactions as f64 / blocks)?;
    writeln!(out, "operations      {} ({:.1} per block)", s.ops, s.ops as f64 / blocks)?;
    for (kind, n) in &s.ops_by_kind {
        writeln!(out, "  {:<14}{n}", kind.name())?;
    }
    let mb = |b: u64| b as f64 / 1e6;
    writeln!(out, "size            {:.1} MB ({:.1} MB uncompressed)", mb(s.bytes_written), mb(s.raw_bytes))?;
    writeln!(out, "tracked         {} entities", s.tracked_entities)?;
    writeln!(out, "time            {secs:.2} s")
}

/// Trace formats `arbor trace import` reads.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum ImportFormat {
    /// irmin-bench's replayable trace (magic `IrmRepBT`, version 0), as Tarides recorded Octez.
    Irmin,
    /// tezos-context-trace's replayable actions trace (magic `TezosRep`, version 0): Octez's
    /// `tezos_context` calls, block by block.
    OctezContextTrace,
}

/// Arguments of `arbor trace import`.
#[derive(Args, Debug)]
struct ImportArgs {
    /// The format of the input file.
    #[arg(long = "from", value_name = "FORMAT")]
    from: ImportFormat,
    /// The trace to convert.
    input: PathBuf,
    /// The arbor trace to write.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

impl ImportArgs {
    fn run(self, out: &mut dyn Write) -> CliResult {
        let input = File::open(&self.input)
            .map_err(|e| CliError::failed(format!("cannot open {}: {e}", self.input.display())))?;
        let output = File::create(&self.out)
            .map_err(|e| CliError::failed(format!("cannot create {}: {e}", self.out.display())))?;
        let (input, output) = (BufReader::new(input), BufWriter::new(output));
        let flush = |w: BufWriter<File>| w.into_inner().map_err(|e| TraceError::Io(e.into_error())).map(|_| ());
        let result = match self.from {
            ImportFormat::Irmin => {
                let description = format!("imported from the irmin-bench replayable trace {}", self.input.display());
                arbor_trace::irmin::import_irmin(input, output, &description)
                    .and_then(|(w, s)| flush(w).map(|()| Imported::Irmin(s)))
            }
            ImportFormat::OctezContextTrace => {
                let description = format!("imported from the Octez context trace {}", self.input.display());
                arbor_trace::context_trace::import_context_trace(input, output, &description)
                    .and_then(|(w, s)| flush(w).map(|()| Imported::Octez(s)))
            }
        };
        let imported = match result {
            Ok(s) => s,
            Err(e) => {
                // Leave no partial trace behind: a reader would take it for a truncated one.
                let _ = std::fs::remove_file(&self.out);
                return Err(trace_error(e));
            }
        };
        writeln!(out, "trace           {}", self.out.display())?;
        match imported {
            Imported::Irmin(s) => {
                writeln!(out, "rows            {}", s.rows)?;
                writeln!(out, "blocks          {} ({} with a recorded commit hash)", s.blocks, s.hashes)?;
                writeln!(out, "operations      {}", s.ops)?;
                if s.unfinished_ops > 0 {
                    writeln!(
                        out,
                        "not imported    {} operations after the last commit (no commit to check them by)",
                        s.unfinished_ops
                    )?;
                }
                if s.cut_row {
                    writeln!(out, "not imported    the file ends inside row {} (a recording cut short)", s.rows)?;
                }
            }
            Imported::Octez(s) => print_octez_summary(out, &s)?,
        }
        Ok(())
    }
}

/// What an import read, by format.
enum Imported {
    Irmin(arbor_trace::irmin::ImportSummary),
    Octez(arbor_trace::context_trace::ContextImportSummary),
}

fn print_octez_summary(
    out: &mut dyn Write,
    s: &arbor_trace::context_trace::ContextImportSummary,
) -> std::io::Result<()> {
    writeln!(out, "rows            {} (the header says {})", s.rows, s.header_blocks)?;
    writeln!(out, "events          {}", s.events)?;
    writeln!(out, "blocks          {} ({} with a recorded commit hash)", s.blocks, s.hashes)?;
    writeln!(out, "operations      {}", s.ops)?;
    if s.undone_writes > 0 {
        writeln!(out, "left out        {} writes on contexts no commit kept (undone operations)", s.undone_writes)?;
    }
    if s.unfinished_events > 0 {
        writeln!(out, "not imported    {} events of a last block cut before its commit", s.unfinished_events)?;
    }
    if s.cut_row {
        writeln!(out, "not imported    the file ends inside row {} (a recording cut short)", s.rows)?;
    }
    writeln!(out, "not expressible {} events", s.not_expressed_total())?;
    for (what, n) in &s.not_expressed {
        writeln!(out, "  {n:>12}  {what}")?;
    }
    Ok(())
}

/// Arguments of `arbor trace stats`.
#[derive(Args, Debug)]
struct StatsArgs {
    /// The trace file.
    trace: PathBuf,
    /// Also write the statistics as JSON here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Do not stream the initial state to histogram its value sizes (about a second per
    /// million values).
    #[arg(long)]
    skip_initial_state: bool,
}

impl StatsArgs {
    fn run(self, out: &mut dyn Write) -> CliResult {
        let file = File::open(&self.trace)
            .map_err(|e| CliError::failed(format!("cannot open {}: {e}", self.trace.display())))?;
        let reader = arbor_trace::TraceReader::new(BufReader::new(file)).map_err(trace_error)?;
        let stats =
            stats_with(reader, StatsOptions { initial_state: !self.skip_initial_state }).map_err(trace_error)?;
        writeln!(out, "{stats}")?;
        if let Some(path) = &self.json {
            std::fs::write(path, stats.to_json() + "\n")
                .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::error::Failure;

    /// `arbor trace …` as parsed by the real command line.
    #[derive(Parser, Debug)]
    struct Cli {
        #[command(subcommand)]
        command: TraceCommand,
    }

    fn run(args: &[&str]) -> (CliResult, String) {
        let cli = Cli::try_parse_from(std::iter::once("trace").chain(args.iter().copied())).unwrap();
        let mut out = Vec::new();
        let r = TraceArgs { command: cli.command }.run(&mut out);
        (r, String::from_utf8(out).unwrap())
    }

    #[test]
    fn generate_then_stats() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.trace");
        let json = dir.path().join("stats.json");
        let t = trace.to_str().unwrap();
        let args = ["generate", "--blocks", "4", "--state-size", "10000", "--seed", "3", "--cycle-length", "2"];
        let (r, text) = run(&[&args[..], &["--out", t]].concat());
        r.unwrap();
        assert!(text.contains("blocks          4 (2 ending a cycle)"), "{text}");
        assert!(text.contains("  find"), "{text}");

        let (r, text) = run(&["stats", t, "--json", json.to_str().unwrap()]);
        r.unwrap();
        assert!(text.starts_with("4 blocks"), "{text}");
        let parsed: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(parsed["blocks"], 4);
    }

    #[test]
    fn bad_parameters_are_usage_errors_and_leave_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.trace");
        let (r, _) = run(&["generate", "--state-size", "5", "--out", trace.to_str().unwrap()]);
        assert_eq!(r.unwrap_err().failure, Failure::Usage);
        assert!(!trace.exists());
    }

    #[test]
    fn a_damaged_trace_fails() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.trace");
        std::fs::write(&trace, b"not a trace at all").unwrap();
        let (r, _) = run(&["stats", trace.to_str().unwrap()]);
        let e = r.unwrap_err();
        assert_eq!(e.failure, Failure::Failed);
        assert!(e.message.contains("magic"), "{}", e.message);
    }
}
