//! `arbor iobench`: the storage-gas cost model of DaiLambda's "New IO benchmarks" (September 2023; "the IO
//! benchmarks" below), measured on arbor.
//!
//! The method (the IO benchmarks'): grow a realistic context ([`grow`](mod@grow)), restrict
//! the memory left to the OS page cache ([`cache_limit`]), evict the store's pages and warm
//! the cache with random reads ([`evict`], [`sample::warm_up`]), then time single random reads
//! and single random writes each followed by a fsynced commit ([`sample`]), and fit
//! `cost = a·path_length + b·nbytes + c` to each by least squares ([`fit`](mod@fit)). The engine's own
//! cache is kept small (16 MiB by default) so that the OS page cache is what is measured.
//!
//! Costs are in nanoseconds; with Tezos' 1 gas = 1 µs, one milligas is one nanosecond, so
//! the coefficients read the same in both units. [`report`] writes the results as JSON, as
//! HTML with scatter plots, and as text beside the protocol figures the IO benchmarks quotes.

pub mod cache_limit;
pub mod evict;
pub mod fit;
pub mod grow;
mod html;
mod published;
pub mod report;
pub mod sample;

use std::path::PathBuf;
use std::time::Instant;

use arbor::{Config, Durability, Store};
use serde::Serialize;

pub use cache_limit::{CacheLimit, LimitMethod, LimitReport, MemoryUsage};
pub use fit::{fit, fit_through_origin, Fit, Point};
pub use grow::{grow, GrowParams, GrowSummary};
pub use published::{BlockEstimate, SeedModel, BLOCK_4043830, IO_BENCHMARKS};
pub use report::{write_html, write_json};
pub use sample::{Sample, Warmup};

/// Why a run stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum IobenchError {
    /// A file or the cgroup file system failed.
    Io(std::io::Error),
    /// The store failed.
    Store(arbor::Error),
    /// The generated trace could not be read or replayed.
    Replay(crate::ReplayError),
    /// The options or the benchmark directory do not fit together.
    Invalid(String),
}

impl std::fmt::Display for IobenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IobenchError::Io(e) => write!(f, "I/O: {e}"),
            IobenchError::Store(e) => write!(f, "store: {e}"),
            IobenchError::Replay(e) => write!(f, "{e}"),
            IobenchError::Invalid(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for IobenchError {}

impl From<std::io::Error> for IobenchError {
    fn from(e: std::io::Error) -> Self {
        IobenchError::Io(e)
    }
}

impl From<arbor::Error> for IobenchError {
    fn from(e: arbor::Error) -> Self {
        IobenchError::Store(e)
    }
}

impl From<crate::ReplayError> for IobenchError {
    fn from(e: crate::ReplayError) -> Self {
        IobenchError::Replay(e)
    }
}

impl From<arbor_trace::TraceError> for IobenchError {
    fn from(e: arbor_trace::TraceError) -> Self {
        IobenchError::Replay(crate::ReplayError::Trace(e))
    }
}

const MIB: u64 = 1 << 20;

/// Everything a run needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Options {
    /// `quick`, `full` or `custom`: the preset the options started from.
    pub mode: String,
    /// Benchmark directory: the grown store (`store/`) and its state file live here.
    pub dir: PathBuf,
    /// Values of the generated initial state.
    pub values: u64,
    /// Generator seed.
    pub seed: u64,
    /// Blocks per cycle of the generated workload.
    pub cycle_length: u64,
    /// Grow the store's log to this many bytes.
    pub target_bytes: u64,
    /// Memory to leave to the OS page cache.
    pub cache_bytes: u64,
    /// How to limit it.
    pub limit: LimitMethod,
    /// The engine's decoded-object cache during the measurements.
    pub engine_cache_bytes: u64,
    /// Timed reads.
    pub reads: usize,
    /// Timed writes (each with its commit).
    pub writes: usize,
    /// Paths drawn for the warm-up (the warm-up may stop earlier).
    pub warmup_paths: usize,
    /// Longest warm-up.
    pub warmup_max_seconds: f64,
    /// Largest value written.
    pub max_write_bytes: u64,
    /// Seed of the path and size choices.
    pub sample_seed: u64,
}

impl Options {
    /// The quick preset (CI; under a minute on 2 cores): 200,000 values grown to 128 MiB,
    /// 64 MiB of page cache, 300 reads and 100 writes.
    pub fn quick(dir: PathBuf) -> Options {
        Options {
            mode: "quick".into(),
            dir,
            values: 200_000,
            seed: 0,
            cycle_length: 1_000,
            target_bytes: 128 * MIB,
            cache_bytes: 64 * MIB,
            limit: LimitMethod::Auto,
            engine_cache_bytes: 16 * MIB,
            reads: 300,
            writes: 100,
            warmup_paths: 60_000,
            warmup_max_seconds: 15.0,
            max_write_bytes: 64 << 10,
            sample_seed: 1,
        }
    }

    /// The full preset (see docs/IOBENCH.md for its duration and disk needs): 4,000,000
    /// values grown to 4 GiB, 512 MiB of page cache, 3,000 reads and 1,000 writes.
    pub fn full(dir: PathBuf) -> Options {
        Options {
            mode: "full".into(),
            values: 4_000_000,
            target_bytes: 4096 * MIB,
            cache_bytes: 512 * MIB,
            reads: 3_000,
            writes: 1_000,
            warmup_paths: 1_000_000,
            warmup_max_seconds: 900.0,
            ..Options::quick(dir)
        }
    }
}

/// The samples of one path length.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LengthRow {
    /// The path length.
    pub path_length: u64,
    /// Samples.
    pub n: usize,
    /// Median time, ns.
    pub p50_ns: f64,
    /// Mean time, ns.
    pub mean_ns: f64,
    /// Share of the samples that fetched bytes from storage.
    pub miss_share: f64,
}

fn by_path_length(samples: &[Sample]) -> Vec<LengthRow> {
    let mut groups: std::collections::BTreeMap<u64, Vec<&Sample>> = Default::default();
    for s in samples {
        groups.entry(s.path_length).or_default().push(s);
    }
    groups
        .into_iter()
        .map(|(len, g)| {
            let mut ns: Vec<f64> = g.iter().map(|s| s.ns as f64).collect();
            ns.sort_by(f64::total_cmp);
            LengthRow {
                path_length: len,
                n: g.len(),
                p50_ns: fit::quantile(&ns, 0.5),
                mean_ns: ns.iter().sum::<f64>() / ns.len() as f64,
                miss_share: g.iter().filter(|s| s.disk_read_bytes > 0).count() as f64 / g.len() as f64,
            }
        })
        .collect()
}

/// One model: its samples and fits.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Model {
    /// `read` or `write`.
    pub name: String,
    /// The timed operations.
    pub samples: Vec<Sample>,
    /// Paths that held no value (reads only; not timed into the fit).
    pub missing: u64,
    /// The fit on path length (the IO benchmarks' definition) and value bytes.
    pub fit: Option<Fit>,
    /// The fit without intercept, the form of the IO benchmarks' results (`c` = 0).
    pub fit_through_origin: Option<Fit>,
    /// The fit with the path's byte length in place of its depth, for comparison.
    pub fit_by_path_bytes: Option<Fit>,
    /// Median and mean time and share fetched from storage, per path length.
    pub by_path_length: Vec<LengthRow>,
    /// Median and 99th percentile time, in nanoseconds.
    pub p50_ns: f64,
    /// See `p50_ns`.
    pub p99_ns: f64,
    /// Share of the operations that fetched bytes from storage.
    pub miss_share: f64,
}

impl Model {
    /// Fits the samples.
    pub fn new(name: &str, samples: Vec<Sample>, missing: u64) -> Model {
        let pts = |by_bytes: bool| -> Vec<Point> {
            samples
                .iter()
                .map(|s| Point {
                    path_length: if by_bytes { s.path_bytes } else { s.path_length } as f64,
                    nbytes: s.nbytes as f64,
                    cost: s.ns as f64,
                })
                .collect()
        };
        let mut ns: Vec<f64> = samples.iter().map(|s| s.ns as f64).collect();
        ns.sort_by(f64::total_cmp);
        let misses = samples.iter().filter(|s| s.disk_read_bytes > 0).count();
        Model {
            name: name.into(),
            fit: fit::fit(&pts(false)),
            fit_through_origin: fit::fit_through_origin(&pts(false)),
            fit_by_path_bytes: fit::fit(&pts(true)),
            by_path_length: by_path_length(&samples),
            p50_ns: fit::quantile(&ns, 0.5),
            p99_ns: fit::quantile(&ns, 0.99),
            miss_share: misses as f64 / samples.len().max(1) as f64,
            missing,
            samples,
        }
    }
}

/// Everything a run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IobenchReport {
    /// The options of the run.
    pub options: Options,
    /// How the path length and the costs are defined.
    pub definitions: Vec<(String, String)>,
    /// The grown context.
    pub grow: GrowSummary,
    /// How the page cache was limited.
    pub limit: LimitReport,
    /// Store bytes in the page cache after eviction.
    pub resident_after_evict: u64,
    /// The warm-up.
    pub warmup: Warmup,
    /// Memory figures after the warm-up.
    pub memory_after_warmup: MemoryUsage,
    /// Memory figures after the writes.
    pub memory_at_end: MemoryUsage,
    /// Store bytes in the page cache at the end.
    pub resident_at_end: u64,
    /// The read model.
    pub read: Model,
    /// The write model (add + commit).
    pub write: Model,
    /// The IO benchmarks' fitted coefficients, to compare with.
    pub io_benchmarks: Vec<SeedModel>,
    /// Block 4,043,830's storage accesses priced by this run's fits and by the IO benchmarks.
    pub block_4043830: Vec<BlockEstimate>,
    /// Seconds the whole run took.
    pub seconds: f64,
}

fn definitions() -> Vec<(String, String)> {
    let d = |a: &str, b: &str| (a.to_string(), b.to_string());
    vec![
        d(
            "path_length",
            "the IO benchmarks': the depth of the value's directory, steps − 1 (/hello → 0, /contracts/index → 1). \
             Block 4,043,830's 3,656 for 624 reads (5.9 each) confirms a depth, not a byte count; \
             fit_by_path_bytes uses bytes of '/step/step…' instead.",
        ),
        d("nbytes", "bytes of the value read (as found) or written"),
        d("read cost", "tree.find(path) on one checkout of the grown commit, each path read once"),
        d("write cost", "tree.add_mut(path, value) + store.commit (fsync per commit) on the previous write's commit"),
        d("units", "nanoseconds; 1 gas = 1 µs, so 1 milligas = 1 ns and coefficients read the same in both"),
    ]
}

/// Runs the benchmark; `log` receives progress lines.
pub fn run(opts: &Options, log: &mut dyn FnMut(&str)) -> Result<IobenchReport, IobenchError> {
    let start = Instant::now();
    let gp = GrowParams {
        values: opts.values,
        seed: opts.seed,
        cycle_length: opts.cycle_length,
        target_bytes: opts.target_bytes,
        cache_bytes: 256 * MIB,
    };
    let (grown, head) = grow::grow(&opts.dir, &gp, log)?;
    log(&format!(
        "context: {} blocks, {} MiB ({})",
        grown.blocks,
        grown.log_bytes / MIB,
        if grown.reused { "reused" } else { "grown" }
    ));
    let mut rng = sample::Rng::new(opts.sample_seed);
    let picked = sample::pick_paths(opts.seed, opts.values, opts.reads, opts.writes, opts.warmup_paths, &mut rng);
    let config = Config::default().with_cache_bytes(opts.engine_cache_bytes).with_durability(Durability::EveryCommit);
    let store = Store::open_with(grow::store_dir(&opts.dir), config)?;
    // New anonymous memory the cgroup must allow besides the cache: the engine cache, the
    // trees and buffers of the run.
    let headroom = opts.engine_cache_bytes + 64 * MIB;
    let mut limit = CacheLimit::apply(opts.limit, opts.cache_bytes, headroom);
    log(&format!("page cache: {} ({})", limit.report.method, limit.report.attempts.join("; ")));
    let measured = (|| -> Result<_, IobenchError> {
        limit.retune();
        evict::evict(store.dir())?;
        let (after_evict, _) = evict::resident(store.dir())?;
        let mut retune = || limit.retune();
        let (goal, max_s) = (opts.cache_bytes, opts.warmup_max_seconds);
        let warm = sample::warm_up(&store, &head, &picked.warmup, goal, max_s, &mut retune, log)?;
        limit.retune();
        let mem_warm = limit.usage();
        log(&format!(
            "warm-up: {} reads in {:.1} s ({}), {} MiB of the store cached, {} MiB left for the cache",
            warm.reads,
            warm.seconds,
            warm.stop,
            warm.resident_after / MIB,
            mem_warm.left_for_cache_bytes / MIB
        ));
        let (reads, missing) = sample::time_reads(&store, &head, &picked.reads)?;
        log(&format!("reads: {} timed, {missing} paths gone", reads.len()));
        limit.retune();
        let (writes, _) = sample::time_writes(&store, &head, &picked.writes, opts.max_write_bytes, &mut rng)?;
        log(&format!("writes: {} timed", writes.len()));
        let mem_end = limit.usage();
        let (res_end, _) = evict::resident(store.dir())?;
        Ok((after_evict, warm, mem_warm, reads, missing, writes, mem_end, res_end))
    })();
    let limit_report = limit.report.clone();
    drop(limit);
    let (after_evict, warm, mem_warm, reads, missing, writes, mem_end, res_end) = measured?;
    store.close()?;
    let read = Model::new("read", reads, missing);
    let write = Model::new("write", writes, 0);
    let block = published::estimates(read.fit.as_ref(), write.fit.as_ref());
    Ok(IobenchReport {
        options: opts.clone(),
        definitions: definitions(),
        grow: grown,
        limit: limit_report,
        resident_after_evict: after_evict,
        warmup: warm,
        memory_after_warmup: mem_warm,
        memory_at_end: mem_end,
        resident_at_end: res_end,
        read,
        write,
        io_benchmarks: IO_BENCHMARKS.to_vec(),
        block_4043830: block,
        seconds: start.elapsed().as_secs_f64(),
    })
}
