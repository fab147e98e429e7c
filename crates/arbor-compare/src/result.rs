//! What one backend's run produced (the JSON a worker writes, the Go program included), and
//! the figures the table shows, derived from it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{CompareError, IoContext, Result};
use crate::measure::{percentile, ProcIo};

/// One replayed block.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct BlockTime {
    /// Block level.
    pub level: u64,
    /// Operations of the block in the original trace.
    pub ops: u64,
    /// Wall time from the block's first operation until its commit is durable, in ns.
    pub time_ns: u64,
    /// Resident memory after the block, in bytes.
    pub rss: u64,
}

/// Outcome of one backend.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It ran.
    #[default]
    Ok,
    /// It could not run here (the reason says why); nothing was measured.
    Skipped,
    /// It failed part way (the reason says how).
    Failed,
}

/// Everything measured about one backend.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct BackendRun {
    /// Backend name (`arbor`, `nomt`, `firewood`, `geth`, `geth-deferred`).
    pub backend: String,
    /// Whether it ran.
    pub status: Status,
    /// Why it was skipped or failed.
    #[serde(default)]
    pub reason: Option<String>,
    /// Library and version.
    pub version: String,
    /// How each block was made durable.
    pub durability: String,
    /// Settings that matter (cache sizes, hash function, table sizes).
    pub settings: String,
    /// Seconds to load the initial state (not part of the block figures).
    pub load_seconds: f64,
    /// Values loaded.
    pub load_values: u64,
    /// Disk space after the load, bytes (allocated).
    pub disk_after_load: u64,
    /// One entry per block.
    pub blocks: Vec<BlockTime>,
    /// Peak resident memory during the block replay, bytes.
    pub peak_rss: u64,
    /// Whether the peak was reset after the load (if not, it includes the load).
    pub peak_rss_reset: bool,
    /// I/O counters over the block replay.
    pub io: ProcIo,
    /// CPU seconds (user) over the block replay.
    pub cpu_user: f64,
    /// CPU seconds (system) over the block replay.
    pub cpu_sys: f64,
    /// Reads whose result was checked against the trace.
    pub checked_reads: u64,
    /// Checked reads that returned something else (0 expected).
    pub mismatches: u64,
    /// Reads made but not checkable (directory answers).
    pub unchecked_reads: u64,
    /// Root hash (or commit hash) after the last block, hex.
    pub root: String,
    /// Disk space at the end, bytes (allocated; measured by the harness after the worker exits).
    #[serde(default)]
    pub disk_end: u64,
    /// Apparent size of the files at the end, bytes.
    #[serde(default)]
    pub disk_end_apparent: u64,
    /// Remarks the backend makes about its run.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl BackendRun {
    /// A run that did not happen, with the reason.
    pub fn not_run(backend: &str, status: Status, reason: String) -> BackendRun {
        BackendRun { backend: backend.into(), status, reason: Some(reason), ..BackendRun::default() }
    }

    /// Reads a worker's JSON.
    pub fn read(path: &Path) -> Result<BackendRun> {
        let text = std::fs::read(path).ctx(|| format!("reading {}", path.display()))?;
        serde_json::from_slice(&text).map_err(|e| CompareError::Json(format!("parsing {}", path.display()), e))
    }

    /// Writes the JSON.
    pub fn write(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_vec_pretty(self)
            .map_err(|e| CompareError::Json(format!("writing {}", path.display()), e))?;
        std::fs::write(path, text).ctx(|| format!("writing {}", path.display()))
    }

    /// The summary figures.
    pub fn figures(&self) -> Figures {
        let mut times: Vec<u64> = self.blocks.iter().map(|b| b.time_ns).collect();
        times.sort_unstable();
        let n = times.len().max(1) as f64;
        let total_ns: u64 = times.iter().sum();
        let ops: u64 = self.blocks.iter().map(|b| b.ops).sum();
        Figures {
            blocks: self.blocks.len() as u64,
            mean_ms: total_ns as f64 / n / 1e6,
            p50_ms: percentile(&times, 50.0) as f64 / 1e6,
            p99_ms: percentile(&times, 99.0) as f64 / 1e6,
            max_ms: times.last().copied().unwrap_or(0) as f64 / 1e6,
            ops_per_s: if total_ns == 0 { 0.0 } else { ops as f64 / (total_ns as f64 / 1e9) },
            peak_rss_mib: self.peak_rss as f64 / 1048576.0,
            disk_end_mib: self.disk_end as f64 / 1048576.0,
            written_per_block_kib: self.io.write_bytes as f64 / n / 1024.0,
            load_s: self.load_seconds,
        }
    }
}

/// The figures of the comparison table.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Figures {
    /// Blocks replayed.
    pub blocks: u64,
    /// Mean block time, ms.
    pub mean_ms: f64,
    /// Median block time, ms.
    pub p50_ms: f64,
    /// 99th percentile block time, ms.
    pub p99_ms: f64,
    /// Slowest block, ms.
    pub max_ms: f64,
    /// Trace operations per second of block time.
    pub ops_per_s: f64,
    /// Peak resident memory during the replay, MiB.
    pub peak_rss_mib: f64,
    /// Disk space at the end, MiB.
    pub disk_end_mib: f64,
    /// Bytes written to storage per block (`write_bytes` of /proc/self/io), KiB.
    pub written_per_block_kib: f64,
    /// Initial-state load, seconds.
    pub load_s: f64,
}
