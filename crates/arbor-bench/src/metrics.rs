//! Process measurements: I/O counters, resident memory and CPU time, read from /proc and
//! getrusage. On systems without /proc the counters read as zero.

use std::time::Duration;

use crate::procfs;

/// The I/O counters of /proc: reads of the calling thread, writes of the whole process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCounters {
    /// Bytes passed to read-like system calls.
    pub rchar: u64,
    /// Bytes passed to write-like system calls.
    pub wchar: u64,
    /// Read system calls.
    pub syscr: u64,
    /// Write system calls.
    pub syscw: u64,
}

impl IoCounters {
    /// The current counters: reads of the calling thread (/proc/thread-self/io), as the
    /// replay reads its trace on another thread, whose reads are not the store's; writes of
    /// the whole process (/proc/self/io), as the store writes its records on threads of its
    /// own (the sync thread writes a commit's last buffer) and nothing else in a replay writes
    /// (but the progress display, when shown: a few bytes a block).
    pub fn now() -> IoCounters {
        let thread = procfs::read("/proc/thread-self/io").unwrap_or_default();
        let process = procfs::read("/proc/self/io").unwrap_or_default();
        let f = |text: &str, key| procfs::field_u64(text, key).unwrap_or(0);
        IoCounters {
            rchar: f(&thread, "rchar"),
            wchar: f(&process, "wchar"),
            syscr: f(&thread, "syscr"),
            syscw: f(&process, "syscw"),
        }
    }

    /// Counters accumulated since `earlier`.
    pub fn since(self, earlier: IoCounters) -> IoCounters {
        IoCounters {
            rchar: self.rchar.saturating_sub(earlier.rchar),
            wchar: self.wchar.saturating_sub(earlier.wchar),
            syscr: self.syscr.saturating_sub(earlier.syscr),
            syscw: self.syscw.saturating_sub(earlier.syscw),
        }
    }
}

/// Resident set size of this process in bytes, and of it the bytes of file pages (the
/// store's log, mapped for reading) (from /proc/self/statm; zeros where it is missing).
pub fn rss_bytes() -> (u64, u64) {
    let page = rustix::param::page_size() as u64;
    procfs::resident_pages().map_or((0, 0), |(all, file)| (all * page, file * page))
}

/// Minor page faults this process has taken (0 where /proc is missing).
pub fn page_faults() -> u64 {
    procfs::minor_faults().unwrap_or(0)
}

/// User and system CPU time this process has used (fields 14 and 15 of /proc/self/stat).
pub fn cpu_times() -> (Duration, Duration) {
    let (user, system) = procfs::cpu_ticks().unwrap_or((0, 0));
    let ticks = rustix::param::clock_ticks_per_second().max(1);
    let secs = |t: u64| Duration::from_secs_f64(t as f64 / ticks as f64);
    (secs(user), secs(system))
}

/// Bytes the files under `dir` occupy on disk (allocated blocks), recursively.
pub fn dir_bytes(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(|e| e.ok())
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            // Allocated, not apparent, size: a GC punches holes that the length still counts.
            Ok(m) => std::os::unix::fs::MetadataExt::blocks(&m) * 512,
            Err(_) => 0,
        })
        .sum()
}
