//! What a replay measured: one sample per block and the summary over them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::environment::Environment;
use crate::latency::OpLatencies;

/// Measurements of one replayed block.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BlockSample {
    /// Block level.
    pub level: u64,
    /// Context operations in the block.
    pub ops: u64,
    /// Transactions in the block (from the trace metadata).
    pub transactions: u32,
    /// Wall time from checkout to the end of the commit, in nanoseconds.
    pub time_ns: u64,
    /// Wall time of the commit alone (hashing, writing, syncing), in nanoseconds.
    pub commit_ns: u64,
    /// Of the commit, hashing the changed tree (as the store reports it), in nanoseconds.
    pub hashing_ns: u64,
    /// Of the commit, encoding and writing the changed nodes, in nanoseconds.
    pub writing_ns: u64,
    /// Of the commit, waiting for durability, in nanoseconds (under the pipelined policy:
    /// for the previous commit's sync).
    pub syncing_ns: u64,
    /// Resident set size after the block, in bytes.
    pub rss_bytes: u64,
    /// Of the resident set, the bytes of file pages: the store's log, mapped for reading
    /// (`Config::mapped_reads`), which the kernel may drop at any time.
    pub file_rss_bytes: u64,
    /// Store size on disk after the block, in bytes.
    pub disk_bytes: u64,
    /// Bytes read by the replaying thread during the block (`rchar` of /proc/thread-self/io;
    /// includes the few hundred bytes of reading that file and /proc/self/statm).
    pub read_bytes: u64,
    /// Bytes written by the process during the block (`wchar` of /proc/self/io: the store
    /// writes a commit's last records on its sync thread).
    pub write_bytes: u64,
    /// Read system calls of the replaying thread during the block (`syscr`).
    pub read_syscalls: u64,
    /// Records the store read from its log during the block (`Store::records_read`): with a
    /// system call each, or copied out of the mapped log.
    pub records_read: u64,
    /// Write system calls of the process during the block (`syscw`).
    pub write_syscalls: u64,
    /// A garbage collection was running in the background during the block.
    pub gc_running: bool,
    /// CPU time (user + system) of the whole process during the block, in ns: the replaying
    /// thread, the hashing pool, and the trace-decoding thread working ahead.
    pub cpu_ns: u64,
    /// Bytes the block appended to the log (its records and commit).
    pub appended_bytes: u64,
    /// Values the block wrote (`add`, and each leaf of an `add_tree`).
    pub writes: u64,
}

/// Records read from the store's log per block, by kind (`arbor::store::RecordsRead`): where
/// a workload's cold reads go.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RecordsReadPerBlock {
    /// Values too long to be inlined.
    pub contents: f64,
    /// Flat directories, full.
    pub flat_dirs: f64,
    /// Flat directory deltas.
    pub flat_dir_deltas: f64,
    /// Values inodes, full (with the bases of Values inode deltas).
    pub values_inodes: f64,
    /// Values inode deltas.
    pub values_inode_deltas: f64,
    /// Tree inodes, full (with the bases of tree inode deltas).
    pub tree_inodes: f64,
    /// Tree inode deltas.
    pub tree_inode_deltas: f64,
    /// Commits, heads and other kinds.
    pub other: f64,
}

impl RecordsReadPerBlock {
    /// `read` (what a replay of `blocks` blocks read) per block.
    pub fn of(read: &arbor::store::RecordsRead, blocks: usize) -> RecordsReadPerBlock {
        let per = |n: u64| n as f64 / blocks.max(1) as f64;
        RecordsReadPerBlock {
            contents: per(read.contents),
            flat_dirs: per(read.flat_dirs),
            flat_dir_deltas: per(read.flat_dir_deltas),
            values_inodes: per(read.values_inodes),
            values_inode_deltas: per(read.values_inode_deltas),
            tree_inodes: per(read.tree_inodes),
            tree_inode_deltas: per(read.tree_inode_deltas),
            other: per(read.other),
        }
    }
}

/// One background garbage collection during a replay.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct GcRun {
    /// Level of the block after which it started.
    pub started_level: u64,
    /// Level of the first block after it finished (or the last block).
    pub finished_level: u64,
    /// Records kept below the floor.
    pub objects_kept: u64,
    /// Bytes of those records.
    pub bytes_kept: u64,
    /// Bytes given back to the file system.
    pub bytes_freed: u64,
    /// Commits that can no longer be checked out.
    pub commits_dropped: u64,
    /// How long the writer was held for the switch, milliseconds.
    pub writer_pause_ms: f64,
    /// Wall time of the collection, seconds.
    pub seconds: f64,
}

/// The summary of a replay.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplaySummary {
    /// Blocks replayed.
    pub blocks: u64,
    /// Context operations replayed.
    pub ops: u64,
    /// Transactions in the replayed blocks.
    pub transactions: u64,
    /// Seconds spent loading the initial state (not part of the block figures).
    pub load_seconds: f64,
    /// Values loaded as initial state.
    pub load_values: u64,
    /// The initial state was loaded by another process (`arbor bench`), so the blocks were
    /// timed in a process that holds nothing the load left behind.
    pub load_separate: bool,
    /// Seconds spent replaying blocks (sum of block times).
    pub replay_seconds: f64,
    /// Transactions per second of block time.
    pub tps: f64,
    /// Context operations per second of block time.
    pub ops_per_second: f64,
    /// Mean block time, milliseconds.
    pub block_mean_ms: f64,
    /// Median block time, milliseconds.
    pub block_p50_ms: f64,
    /// 90th percentile block time, milliseconds.
    pub block_p90_ms: f64,
    /// 99th percentile block time, milliseconds.
    pub block_p99_ms: f64,
    /// Slowest block time, milliseconds.
    pub block_max_ms: f64,
    /// Level of the slowest block.
    pub block_max_level: u64,
    /// Mean commit time, milliseconds.
    pub commit_mean_ms: f64,
    /// 99th percentile commit time, milliseconds.
    pub commit_p99_ms: f64,
    /// Mean time of a commit's hashing, milliseconds.
    pub commit_hashing_ms: f64,
    /// Mean time of a commit's encoding and writing, milliseconds.
    pub commit_writing_ms: f64,
    /// Mean time of a commit's wait for durability, milliseconds.
    pub commit_syncing_ms: f64,
    /// The store's durability policy (`EveryCommit`: each commit durable before it returns;
    /// `Pipelined`: durable before the next one returns).
    pub durability: String,
    /// Largest resident set size seen, bytes.
    pub max_rss_bytes: u64,
    /// Largest resident set size seen less its file pages (the log's, mapped), bytes: the
    /// process's own memory.
    pub max_anon_rss_bytes: u64,
    /// Store size before the first block (after loading), bytes.
    pub disk_before_bytes: u64,
    /// Store size after the last block, bytes.
    pub disk_after_bytes: u64,
    /// Mean bytes read per block.
    pub read_bytes_per_block: f64,
    /// Mean bytes written per block.
    pub write_bytes_per_block: f64,
    /// Mean read system calls per block.
    pub read_syscalls_per_block: f64,
    /// Mean records read from the store's log per block.
    pub records_read_per_block: f64,
    /// Of those, the ones found, by kind, per block (over the whole replay).
    pub records_read_by_kind: RecordsReadPerBlock,
    /// Mean write system calls per block.
    pub write_syscalls_per_block: f64,
    /// User CPU seconds during the block replay.
    pub cpu_user_seconds: f64,
    /// System CPU seconds during the block replay.
    pub cpu_sys_seconds: f64,
    /// Mean process CPU time per block (user + system), ms.
    pub cpu_ms_per_block: f64,
    /// Minor page faults of the process per block: first touches of memory it had not used
    /// yet (a process that grows its cache takes them until the cache is full).
    pub page_faults_per_block: f64,
    /// Bytes appended to the log per value written (log growth over the blocks / writes).
    pub appended_bytes_per_write: f64,
    /// Operations whose result was checked against the trace.
    pub checked_results: u64,
    /// Commits whose hash was checked against the trace.
    pub checked_hashes: u64,
    /// Garbage collections run during the replay.
    pub gc: Vec<GcRun>,
    /// Collections not started because the previous one was still running.
    pub gc_skipped: u64,
    /// Blocks replayed while a collection ran, and their p99 and max time in milliseconds.
    pub gc_blocks: u64,
    /// 99th percentile time of the blocks replayed while a collection ran, milliseconds.
    pub gc_block_p99_ms: f64,
    /// Slowest block replayed while a collection ran, milliseconds.
    pub gc_block_max_ms: f64,
}

/// A replay's full report: summary, the per-block series, and what was replayed where.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplayReport {
    /// The trace file.
    pub trace: String,
    /// The store directory.
    pub store: String,
    /// Durability policy of the store during the replay.
    pub durability: String,
    /// The machine, kernel and build the replay ran on.
    pub environment: Environment,
    /// The store's configuration and the replay's options, by name.
    pub config: BTreeMap<String, String>,
    /// Summary figures.
    pub summary: ReplaySummary,
    /// Per-operation latency histograms.
    pub latency: OpLatencies,
    /// One sample per block, in order.
    pub blocks: Vec<BlockSample>,
}

/// The `q` quantile (0..=1) of sorted values, nearest rank.
pub fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl ReplaySummary {
    /// Fills the block-derived figures from the samples.
    pub fn from_samples(&mut self, samples: &[BlockSample]) {
        let n = samples.len() as u64;
        self.blocks = n;
        self.ops = samples.iter().map(|s| s.ops).sum();
        self.transactions = samples.iter().map(|s| u64::from(s.transactions)).sum();
        let total_ns: u64 = samples.iter().map(|s| s.time_ns).sum();
        self.replay_seconds = total_ns as f64 / 1e9;
        if self.replay_seconds > 0.0 {
            self.tps = self.transactions as f64 / self.replay_seconds;
            self.ops_per_second = self.ops as f64 / self.replay_seconds;
        }
        let mut times: Vec<u64> = samples.iter().map(|s| s.time_ns).collect();
        times.sort_unstable();
        let ms = |ns: u64| ns as f64 / 1e6;
        if n > 0 {
            self.block_mean_ms = ms(total_ns) / n as f64;
            self.block_p50_ms = ms(quantile(&times, 0.5));
            self.block_p90_ms = ms(quantile(&times, 0.9));
            self.block_p99_ms = ms(quantile(&times, 0.99));
            let slowest = samples.iter().max_by_key(|s| s.time_ns).expect("non-empty");
            self.block_max_ms = ms(slowest.time_ns);
            self.block_max_level = slowest.level;
            let mut commits: Vec<u64> = samples.iter().map(|s| s.commit_ns).collect();
            commits.sort_unstable();
            self.commit_mean_ms = ms(commits.iter().sum()) / n as f64;
            self.commit_p99_ms = ms(quantile(&commits, 0.99));
            let mean_ms = |f: fn(&BlockSample) -> u64| ms(samples.iter().map(f).sum()) / n as f64;
            self.commit_hashing_ms = mean_ms(|s| s.hashing_ns);
            self.commit_writing_ms = mean_ms(|s| s.writing_ns);
            self.commit_syncing_ms = mean_ms(|s| s.syncing_ns);
            let per = |f: fn(&BlockSample) -> u64| samples.iter().map(f).sum::<u64>() as f64 / n as f64;
            self.read_bytes_per_block = per(|s| s.read_bytes);
            self.write_bytes_per_block = per(|s| s.write_bytes);
            self.read_syscalls_per_block = per(|s| s.read_syscalls);
            self.records_read_per_block = per(|s| s.records_read);
            self.write_syscalls_per_block = per(|s| s.write_syscalls);
            self.disk_after_bytes = samples.last().map_or(0, |s| s.disk_bytes);
            self.cpu_ms_per_block = per(|s| s.cpu_ns) / 1e6;
            let writes: u64 = samples.iter().map(|s| s.writes).sum();
            let appended: u64 = samples.iter().map(|s| s.appended_bytes).sum();
            self.appended_bytes_per_write = if writes > 0 { appended as f64 / writes as f64 } else { 0.0 };
            let mut during: Vec<u64> = samples.iter().filter(|s| s.gc_running).map(|s| s.time_ns).collect();
            during.sort_unstable();
            self.gc_blocks = during.len() as u64;
            self.gc_block_p99_ms = ms(quantile(&during, 0.99));
            self.gc_block_max_ms = ms(during.last().copied().unwrap_or(0));
        }
        self.max_rss_bytes = self.max_rss_bytes.max(samples.iter().map(|s| s.rss_bytes).max().unwrap_or(0));
        let anon = samples.iter().map(|s| s.rss_bytes.saturating_sub(s.file_rss_bytes)).max().unwrap_or(0);
        self.max_anon_rss_bytes = self.max_anon_rss_bytes.max(anon);
    }
}

impl std::fmt::Display for ReplaySummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mb = |b: f64| b / (1024.0 * 1024.0);
        let by = if self.load_separate { " (by a process of its own)" } else { "" };
        writeln!(f, "initial state   {} values loaded in {:.2} s{by}", self.load_values, self.load_seconds)?;
        writeln!(f, "blocks          {}  ({} operations, {} transactions)", self.blocks, self.ops, self.transactions)?;
        writeln!(f, "replay time     {:.2} s", self.replay_seconds)?;
        writeln!(f, "throughput      {:.0} TPS, {:.0} operations/s", self.tps, self.ops_per_second)?;
        writeln!(
            f,
            "block time      mean {:.2} ms, p50 {:.2}, p90 {:.2}, p99 {:.2}, max {:.2} ms (level {})",
            self.block_mean_ms,
            self.block_p50_ms,
            self.block_p90_ms,
            self.block_p99_ms,
            self.block_max_ms,
            self.block_max_level
        )?;
        writeln!(
            f,
            "commit time     mean {:.2} ms, p99 {:.2} ms (hashing {:.2}, writing {:.2}, syncing {:.2} ms)",
            self.commit_mean_ms,
            self.commit_p99_ms,
            self.commit_hashing_ms,
            self.commit_writing_ms,
            self.commit_syncing_ms
        )?;
        if !self.durability.is_empty() {
            writeln!(f, "durability      {}", self.durability)?;
        }
        writeln!(f, "CPU per block   {:.2} ms (process: replay, hashing pool, trace decoding)", self.cpu_ms_per_block)?;
        writeln!(f, "appended        {:.1} bytes per value written", self.appended_bytes_per_write)?;
        writeln!(
            f,
            "max RSS         {:.1} MiB ({:.1} MiB less the log's mapped pages)",
            mb(self.max_rss_bytes as f64),
            mb(self.max_anon_rss_bytes as f64)
        )?;
        writeln!(
            f,
            "disk            {:.1} MiB before, {:.1} MiB after ({:.1} KiB per block)",
            mb(self.disk_before_bytes as f64),
            mb(self.disk_after_bytes as f64),
            (self.disk_after_bytes.saturating_sub(self.disk_before_bytes)) as f64 / 1024.0 / self.blocks.max(1) as f64
        )?;
        writeln!(
            f,
            "I/O per block   {:.1} records read; read {:.0} B in {:.1} syscalls, written {:.0} B in {:.1} syscalls",
            self.records_read_per_block,
            self.read_bytes_per_block,
            self.read_syscalls_per_block,
            self.write_bytes_per_block,
            self.write_syscalls_per_block
        )?;
        let k = &self.records_read_by_kind;
        writeln!(
            f,
            "records read    per block: flat directories {:.1} + {:.1} deltas, values inodes {:.1} + {:.1} deltas, tree inodes {:.1} + {:.1} deltas, values {:.1}, other {:.1}",
            k.flat_dirs,
            k.flat_dir_deltas,
            k.values_inodes,
            k.values_inode_deltas,
            k.tree_inodes,
            k.tree_inode_deltas,
            k.contents,
            k.other
        )?;
        writeln!(
            f,
            "CPU             user {:.2} s, sys {:.2} s; {:.0} page faults per block",
            self.cpu_user_seconds, self.cpu_sys_seconds, self.page_faults_per_block
        )?;
        if !self.gc.is_empty() {
            let pause = self.gc.iter().map(|g| g.writer_pause_ms).fold(0.0, f64::max);
            let secs = self.gc.iter().map(|g| g.seconds).fold(0.0, f64::max);
            let freed: u64 = self.gc.iter().map(|g| g.bytes_freed).sum();
            writeln!(
                f,
                "gc              {} runs ({} skipped: previous still running), longest {:.2} s, writer paused at most {:.2} ms, {:.1} MiB freed",
                self.gc.len(),
                self.gc_skipped,
                secs,
                pause,
                mb(freed as f64)
            )?;
            writeln!(
                f,
                "blocks under gc {} blocks, p99 {:.2} ms, max {:.2} ms",
                self.gc_blocks, self.gc_block_p99_ms, self.gc_block_max_ms
            )?;
        }
        write!(f, "verified        {} operation results, {} commit hashes", self.checked_results, self.checked_hashes)
    }
}
