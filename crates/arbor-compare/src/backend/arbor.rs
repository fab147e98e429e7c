//! arbor itself, replaying the original trace (directories and all) through
//! `arbor_bench::replay`, which checks every recorded result.
//!
//! Durability: the default `Durability::EveryCommit`, so `commit` returns after `fdatasync`
//! of the log. The initial state is loaded with `arbor_bench::load_initial_state` (commits of
//! 500,000 values), timed apart.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::time::Instant;

use arbor::{Config, Store};
use arbor_bench::{load_initial_state, replay, ReplayOptions};
use arbor_trace::TraceReader;

use crate::error::{IoContext, Result};
use crate::measure::{cpu_seconds, disk_bytes, peak_rss_bytes, reset_peak_rss, ProcIo};
use crate::result::{BackendRun, BlockTime};

/// One line for the report.
pub fn describe(config: &Config) -> String {
    format!(
        "default Config: object cache {} MiB, values up to {} bytes inline; full trace semantics (directories, list, length, fold)",
        config.cache_bytes >> 20,
        config.inline_max
    )
}

/// Garbage collection of a rolling node (`arbor-gc`): a background collection after every
/// [`GC_EVERY`] blocks keeps the newest [`GC_KEEP`] commits and drops the rest.
pub const GC_EVERY: u64 = 100;
/// Commits each collection keeps (as many as the 128 revisions Firewood and geth keep in memory).
pub const GC_KEEP: u64 = 128;

/// Replays `trace` (at most `max_blocks` blocks) into a fresh store in `dir` and fills `run`;
/// with `gc`, collects garbage as a rolling node would ([`GC_EVERY`], [`GC_KEEP`]).
pub fn run(trace: &Path, dir: &Path, max_blocks: Option<u64>, gc: bool, run: &mut BackendRun) -> Result<()> {
    let open = || -> Result<TraceReader<BufReader<File>>> {
        let file = File::open(trace).ctx(|| format!("opening {}", trace.display()))?;
        Ok(TraceReader::new(BufReader::with_capacity(1 << 20, file))?)
    };
    let config = Config::default();
    run.settings = describe(&config);
    run.durability = format!("{:?}: commit returns after fdatasync of the log", config.durability);
    let store = Store::open_with(dir, config)?;
    let reader = open()?;
    let mut opts = ReplayOptions { max_blocks, ..ReplayOptions::default() };
    if gc {
        opts.gc_every = Some(GC_EVERY);
        opts.gc_keep = GC_KEEP;
        opts.gc_mode = arbor::GcMode::Drop;
        run.settings.push_str(&format!(
            "; background garbage collection after every {GC_EVERY} blocks keeping the newest {GC_KEEP} commits (rolling node)"
        ));
    }
    let start = Instant::now();
    let (_, loaded) = load_initial_state(&store, reader.header(), opts.load_batch)?;
    run.load_seconds = start.elapsed().as_secs_f64();
    run.load_values = loaded;
    run.disk_after_load = disk_bytes(dir);
    run.peak_rss_reset = reset_peak_rss();
    let (io0, cpu0) = (ProcIo::now(), cpu_seconds());
    let report = replay(reader, &store, &opts, |_, _| {})?;
    run.io = ProcIo::now().since(io0);
    let cpu1 = cpu_seconds();
    run.cpu_user = cpu1.0 - cpu0.0;
    run.cpu_sys = cpu1.1 - cpu0.1;
    run.blocks = report
        .blocks
        .iter()
        .map(|b| BlockTime { level: b.level, ops: b.ops, time_ns: b.time_ns, rss: b.rss_bytes })
        .collect();
    run.peak_rss = peak_rss_bytes().max(run.blocks.iter().map(|b| b.rss).max().unwrap_or(0));
    run.checked_reads = report.summary.checked_results;
    run.root = store.last_commit().map_or_else(|| "none".into(), |h| h.to_string());
    store.close()?;
    Ok(())
}
