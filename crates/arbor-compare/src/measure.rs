//! Measurements of the current process, from /proc: I/O counters, peak resident memory
//! (reset at the start of the replay), CPU time; and the space a directory takes on disk.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use arbor_bench::procfs;
use serde::{Deserialize, Serialize};

/// The process-wide counters of /proc/self/io (all threads, including exited ones, and the
/// io_uring workers, which are threads of the process).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcIo {
    /// Bytes passed to read-like system calls.
    pub rchar: u64,
    /// Bytes passed to write-like system calls (not io_uring, not memory-mapped writes).
    pub wchar: u64,
    /// Bytes this process caused to be read from storage.
    pub read_bytes: u64,
    /// Bytes this process caused to be written to storage (page-cache dirtying and direct I/O).
    pub write_bytes: u64,
}

impl ProcIo {
    /// The current counters (zero where /proc is missing).
    pub fn now() -> ProcIo {
        let text = procfs::read("/proc/self/io").unwrap_or_default();
        let f = |key| procfs::field_u64(&text, key).unwrap_or(0);
        ProcIo { rchar: f("rchar"), wchar: f("wchar"), read_bytes: f("read_bytes"), write_bytes: f("write_bytes") }
    }

    /// Counters accumulated since `earlier`.
    pub fn since(self, earlier: ProcIo) -> ProcIo {
        ProcIo {
            rchar: self.rchar.saturating_sub(earlier.rchar),
            wchar: self.wchar.saturating_sub(earlier.wchar),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
        }
    }
}

/// Resident memory now, in bytes.
pub fn rss_bytes() -> u64 {
    procfs::status_bytes("VmRSS").unwrap_or(0)
}

/// Peak resident memory since the last [`reset_peak_rss`] (or the start), in bytes.
pub fn peak_rss_bytes() -> u64 {
    procfs::status_bytes("VmHWM").unwrap_or(0)
}

/// Resets the peak resident memory to the current one (`/proc/self/clear_refs` value 5,
/// Linux 4.0 and later). Returns whether it worked; if not, the peak includes the load.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// User and system CPU seconds of this process so far.
pub fn cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage only writes into the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid pointer to a rusage struct.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}

/// Space the files under `dir` take on disk (allocated blocks, as `du` counts: sparse files
/// count what is allocated, preallocated files all of it).
pub fn disk_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(|e| e.ok())
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => disk_bytes(&e.path()),
            Ok(m) => m.blocks() * 512,
            Err(_) => 0,
        })
        .sum()
}

/// Apparent size of the files under `dir` (their lengths).
pub fn apparent_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(|e| e.ok())
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => apparent_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Percentile `p` (0-100) of sorted values, nearest rank.
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 99.0), 99);
        assert_eq!(percentile(&v, 100.0), 100);
        assert_eq!(percentile(&v, 50.0), 50);
        assert_eq!(percentile(&[], 99.0), 0);
    }

    #[test]
    fn counters_read() {
        assert!(rss_bytes() > 0);
        assert!(peak_rss_bytes() >= rss_bytes() / 2);
    }
}
