//! `arbor replay` and `arbor bench`: replay a trace into a store and report what it cost.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use arbor::{Config, Durability, GcMode, Store};
use arbor_bench::{replay, ReplayOptions, ReplayReport};
use arbor_trace::{generate, GeneratorParams, Profile, TraceReader};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use crate::error::{CliError, CliResult};
use crate::iobench::parse_mem_size;

/// Durability choices on the command line.
fn parse_durability(text: &str) -> Result<Durability, String> {
    match text {
        "commit" => Ok(Durability::EveryCommit),
        "pipelined" => Ok(Durability::Pipelined),
        t => match t.strip_prefix("interval-ms=").and_then(|n| n.parse::<u64>().ok()) {
            Some(ms) => Ok(Durability::Interval(Duration::from_millis(ms))),
            None => Err("expected 'commit' (fsync every commit), 'pipelined' (each commit's fsync overlapping the \
                         next block; durable before the next commit returns) or 'interval-ms=N'"
                .into()),
        },
    }
}

/// Options shared by `replay` and `bench`.
#[derive(Args, Debug)]
pub struct ReplayFlags {
    /// Durability of the store: `commit` (fsync each commit before it returns), `pipelined`
    /// (each commit's fsync runs beside the next block and ends before the next commit
    /// returns) or `interval-ms=N`.
    #[arg(long, default_value = "commit", value_parser = parse_durability)]
    durability: Durability,
    /// Cache budget of the store, with its unit (`512MiB`, `2GiB`; as iobench's sizes, a bare
    /// number is refused). `--cache-mib` is an older name of this option.
    #[arg(long, alias = "cache-mib", value_name = "SIZE", default_value = "1GiB", value_parser = parse_mem_size)]
    cache_size: u64,
    /// Commits a written node stays in the writer's working tree after the last one that
    /// wrote it (`Config::working_commits`; 0 keeps no working tree). Default: the store's.
    #[arg(long, value_name = "N")]
    working_commits: Option<u32>,
    /// Read the log's records with a system call each, not copied out of its files mapped
    /// into memory (`Config::mapped_reads` off).
    #[arg(long)]
    no_mapped_reads: bool,
    /// Do not fault in the cache budget's memory before the first block: the heap then grows
    /// a page at a time inside the blocks, with transparent huge pages off.
    #[arg(long)]
    no_reserve: bool,
    /// An earlier run's JSON report (`--json`) to compare with: its series are drawn on every
    /// chart of the HTML report, and the ratios of the key figures are printed and reported.
    #[arg(long, value_name = "OLD.json")]
    baseline: Option<PathBuf>,
    /// Do not check recorded results (only time the operations).
    #[arg(long)]
    no_check: bool,
    /// Write the summary and per-block series as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write a self-contained HTML report with plots here.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Hide the progress bar.
    #[arg(long)]
    quiet: bool,
    /// Run a background garbage collection after every K blocks (block times while it runs
    /// are reported apart).
    #[arg(long, value_name = "K")]
    gc_every: Option<u64>,
    /// Commits of the chain each collection keeps (the newest included).
    #[arg(long, value_name = "N", default_value_t = 500)]
    gc_keep: u64,
    /// Collect in archive mode: move old history to the lower layer instead of dropping it.
    #[arg(long)]
    gc_archive: bool,
}

/// Arguments of `arbor replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The trace file.
    trace: PathBuf,
    /// Store to replay into (fresh, or one this trace's initial state was loaded into).
    #[arg(long, value_name = "DIR")]
    store: PathBuf,
    /// Stop after this many blocks.
    #[arg(long)]
    blocks: Option<u64>,
    #[command(flatten)]
    flags: ReplayFlags,
}

/// Arguments of `arbor bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Workload profile.
    #[arg(long, default_value = "tezos-mainnet")]
    profile: Profile,
    /// Blocks to generate and replay.
    #[arg(long, default_value_t = 1_000)]
    blocks: u64,
    /// Values in the initial state.
    #[arg(long, default_value_t = 1_000_000)]
    state_size: u64,
    /// Generator seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Blocks per cycle (cycle-boundary blocks write bursts).
    #[arg(long, default_value_t = 1_000)]
    cycle_length: u64,
    /// Where traces are cached and reports written.
    #[arg(long, default_value = "target/arbor-bench")]
    out: PathBuf,
    /// Keep the store after the run (in OUT/store; the next bench replaces it). A OUT/store
    /// that bench did not make is never deleted: the run is refused instead.
    #[arg(long)]
    keep_store: bool,
    #[command(flatten)]
    flags: ReplayFlags,
}

fn progress_bar(blocks: Option<u64>, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = match blocks {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    let style = ProgressStyle::with_template("{bar:40} {pos}/{len} blocks  {elapsed} elapsed, ~{eta} left  {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// The `arbor trace import` format of a file another tool wrote, told by its magic.
fn import_format_of(path: &Path) -> Option<&'static str> {
    let mut head = [0u8; 8];
    File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head)).ok()?;
    match &head {
        h if h == arbor_trace::irmin::IRMIN_MAGIC => Some("irmin"),
        h if h == arbor_trace::context_trace::CONTEXT_TRACE_MAGIC => Some("octez-context-trace"),
        _ => None,
    }
}

/// The mean time per block of the blocks replayed so far, for the progress bar (one block's
/// time in 64 told nothing: block times vary tenfold).
#[derive(Debug, Default)]
struct RunningMean {
    /// Nanoseconds of all blocks so far.
    sum_ns: u128,
    /// Blocks so far.
    n: u64,
}

impl RunningMean {
    fn add(&mut self, ns: u64) {
        self.sum_ns += u128::from(ns);
        self.n += 1;
    }

    /// The mean in milliseconds (0 before the first block).
    fn ms(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.n as f64 / 1e6
        }
    }
}

/// Beside `OUT/store`, says that `arbor bench` made it: only then may a later run delete it.
const OWNED_MARK: &str = "store.made-by-arbor-bench";

/// `OUT/store`, made ready for a fresh store: a store an earlier bench left (with
/// `--keep-store` or after a crash) is deleted; anything else there is refused untouched.
fn fresh_store_dir(out_dir: &Path) -> CliResult<PathBuf> {
    let store = out_dir.join("store");
    let mark = out_dir.join(OWNED_MARK);
    if store.exists() {
        if !mark.exists() {
            return Err(CliError::failed(format!(
                "{} exists and was not made by arbor bench: remove it yourself or choose another --out",
                store.display()
            )));
        }
        std::fs::remove_dir_all(&store)?;
    }
    // The mark goes first, so a run killed mid-way still owns what it left.
    std::fs::write(&mark, "OUT/store was created by arbor bench, which deletes it at its next run\n")?;
    Ok(store)
}

/// Deletes the store a bench made, then its mark.
fn remove_own_store(out_dir: &Path) -> std::io::Result<()> {
    let store = out_dir.join("store");
    if store.exists() {
        std::fs::remove_dir_all(&store)?;
    }
    std::fs::remove_file(out_dir.join(OWNED_MARK))
}

/// What loading the initial state in a process of its own took: values and seconds.
#[derive(Debug, Clone, Copy)]
struct Loaded {
    values: u64,
    seconds: f64,
}

/// Loads the trace's initial state into `store_dir` with a process of its own (`arbor replay
/// --blocks 0`), so that the blocks are then timed in a process holding nothing the load left
/// behind: the load builds and frees memory the allocator keeps, and blocks timed after it in
/// the same process ran faster than in a fresh one (quiet 2-core machine, 1M values, two
/// alternating runs each: 300 blocks 17.06 / 16.76 ms in-process against 17.70 / 18.43 ms;
/// 1,000 blocks 19.37 / 18.80 against 19.30 / 19.03 ms).
fn load_in_own_process(trace: &Path, store_dir: &Path, out_dir: &Path) -> CliResult<Loaded> {
    let exe = std::env::current_exe()?;
    let json = out_dir.join("load.json");
    let output = std::process::Command::new(&exe)
        .arg("replay")
        .arg("--store")
        .arg(store_dir)
        .args(["--blocks", "0", "--quiet", "--no-check", "--json"])
        .arg(&json)
        .arg(trace)
        .output()
        .map_err(|e| CliError::failed(format!("starting {} to load the initial state: {e}", exe.display())))?;
    if !output.status.success() {
        return Err(CliError::failed(format!(
            "loading the initial state ({} replay --blocks 0) failed: {}",
            exe.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let report = arbor_bench::report::read_json(&json)?;
    std::fs::remove_file(&json)?;
    Ok(Loaded { values: report.summary.load_values, seconds: report.summary.load_seconds })
}

fn run_replay(
    trace: &Path,
    store_dir: &Path,
    max_blocks: Option<u64>,
    flags: &ReplayFlags,
    loaded: Option<Loaded>,
    out: &mut dyn Write,
) -> CliResult<ReplayReport> {
    let reader = TraceReader::new(BufReader::with_capacity(1 << 20, File::open(trace)?)).map_err(|e| {
        let other = if matches!(e, arbor_trace::TraceError::BadMagic) { import_format_of(trace) } else { None };
        let hint = match other {
            Some(f) => format!(" (a trace of another tool: convert it with `arbor trace import --from {f}`)"),
            None => String::new(),
        };
        CliError::failed(format!("{}: {e}{hint}", trace.display()))
    })?;
    let total = reader.header().source.param("blocks").and_then(|b| b.parse::<u64>().ok());
    let total = match (total, max_blocks) {
        (Some(t), Some(m)) => Some(t.min(m)),
        (t, m) => t.or(m),
    };
    // Read before the replay, so that a wrong path is refused before an hour of replay.
    let baseline = match &flags.baseline {
        Some(path) => {
            Some(arbor_bench::report::read_json(path).map_err(|e| CliError::failed(format!("--baseline: {e}")))?)
        }
        None => None,
    };
    let mut config = Config::default()
        .with_durability(flags.durability)
        .with_cache_bytes(flags.cache_size)
        .with_mapped_reads(!flags.no_mapped_reads);
    if let Some(n) = flags.working_commits {
        config = config.with_working_commits(n);
    }
    let reserved = if flags.no_reserve { 0 } else { crate::reserve_memory(flags.cache_size) };
    let store = Store::open_with(store_dir, config)?;
    let bar = progress_bar(total, flags.quiet);
    bar.set_message("loading the initial state");
    let opts = ReplayOptions {
        check: !flags.no_check,
        max_blocks,
        gc_every: flags.gc_every,
        gc_keep: flags.gc_keep,
        gc_mode: if flags.gc_archive { GcMode::Archive } else { GcMode::Drop },
        ..ReplayOptions::default()
    };
    let mut mean = RunningMean::default();
    let result = replay(reader, &store, &opts, |i, s| {
        bar.set_position(i + 1);
        mean.add(s.time_ns);
        // Redrawing costs; the mean covers every block all the same.
        if i % 64 == 0 {
            bar.set_message(format!("{:.1} ms/block (mean of {} blocks)", mean.ms(), mean.n));
        }
    });
    bar.finish_and_clear();
    let mut report = result.map_err(|e| CliError::failed(e.to_string()))?;
    report.trace = trace.display().to_string();
    if let Some(l) = loaded {
        report.summary.load_values = l.values;
        report.summary.load_seconds = l.seconds;
        report.summary.load_separate = true;
    }
    report.config.insert("reserved_bytes".into(), reserved.to_string());
    writeln!(out, "{}", report.summary)?;
    writeln!(out, "machine         {}", report.environment.describe())?;
    writeln!(
        out,
        "memory          {} MiB of the cache budget faulted in before the first block{}",
        reserved >> 20,
        if flags.no_reserve { " (--no-reserve)" } else { "" }
    )?;
    if let Some(base) = &baseline {
        writeln!(
            out,
            "against         {} ({} blocks): this run / baseline",
            flags.baseline.as_ref().map_or(String::new(), |p| p.display().to_string()),
            base.summary.blocks
        )?;
        for c in arbor_bench::report::baseline::compare(&report, base) {
            writeln!(out, "  {:<30} {:>12.3} {:>12.3}  {}", c.name, c.this, c.baseline, c.describe_ratio())?;
        }
    }
    if let Some(path) = &flags.json {
        arbor_bench::write_json(&report, path)?;
        writeln!(out, "json            {}", path.display())?;
    }
    if let Some(path) = &flags.report {
        arbor_bench::write_html(&report, baseline.as_ref(), "arbor replay", path)?;
        writeln!(out, "report          {}", path.display())?;
    }
    Ok(report)
}

impl ReplayArgs {
    /// Replays the trace and prints the summary.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let report = run_replay(&self.trace, &self.store, self.blocks, &self.flags, None, out)?;
        // The last line, so that a script can tell a fully checked replay at a glance.
        writeln!(out, "{} commit hashes verified", report.summary.checked_hashes)?;
        Ok(())
    }
}

impl BenchArgs {
    /// Generates (or reuses) the trace, replays it into a fresh store, prints and writes the report.
    pub fn run(mut self, out: &mut dyn Write) -> CliResult {
        std::fs::create_dir_all(self.out.join("traces"))?;
        let name = format!(
            "{}-b{}-v{}-s{}-c{}.trace",
            self.profile.name(),
            self.blocks,
            self.state_size,
            self.seed,
            self.cycle_length
        );
        let trace = self.out.join("traces").join(name);
        if trace.exists() {
            writeln!(out, "trace           {} (cached)", trace.display())?;
        } else {
            writeln!(out, "trace           generating {} ...", trace.display())?;
            out.flush()?;
            let params = GeneratorParams {
                profile: self.profile,
                blocks: self.blocks,
                values: self.state_size,
                seed: self.seed,
                cycle_length: self.cycle_length,
                ..GeneratorParams::default()
            };
            let tmp = trace.with_extension("partial");
            let file = BufWriter::new(File::create(&tmp)?);
            generate(params, file).map_err(|e| CliError::failed(format!("generating the trace: {e}")))?;
            std::fs::rename(&tmp, &trace)?;
        }
        let store_dir = fresh_store_dir(&self.out)?;
        if self.flags.json.is_none() {
            self.flags.json = Some(self.out.join("report.json"));
        }
        if self.flags.report.is_none() {
            self.flags.report = Some(self.out.join("report.html"));
        }
        writeln!(out, "store           {} (fresh)", store_dir.display())?;
        out.flush()?;
        let result = load_in_own_process(&trace, &store_dir, &self.out)
            .and_then(|loaded| run_replay(&trace, &store_dir, None, &self.flags, Some(loaded), out));
        if !self.keep_store {
            if let Err(e) = remove_own_store(&self.out) {
                eprintln!("arbor: could not remove {}: {e}", store_dir.display());
            }
        }
        result.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_figure_is_the_mean_of_every_block() {
        let mut m = RunningMean::default();
        assert_eq!(m.ms(), 0.0);
        for ns in [1_000_000, 3_000_000, 20_000_000] {
            m.add(ns);
        }
        assert_eq!(m.n, 3);
        assert!((m.ms() - 8.0).abs() < 1e-9, "{}", m.ms());
    }
}
