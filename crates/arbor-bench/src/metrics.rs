//! Process measurements: I/O counters, resident memory and CPU time, read from /proc and
//! getrusage. On systems without /proc the counters read as zero.

use std::time::Duration;

/// The I/O counters of /proc/self/io.
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
    /// The current counters of the calling thread (/proc/thread-self/io): the replay reads
    /// its trace on another thread, whose I/O is not the store's.
    pub fn now() -> IoCounters {
        let mut c = IoCounters::default();
        let Ok(text) = std::fs::read_to_string("/proc/thread-self/io") else { return c };
        for line in text.lines() {
            let mut parts = line.split(':');
            let (Some(k), Some(v)) = (parts.next(), parts.next()) else { continue };
            let v: u64 = v.trim().parse().unwrap_or(0);
            match k {
                "rchar" => c.rchar = v,
                "wchar" => c.wchar = v,
                "syscr" => c.syscr = v,
                "syscw" => c.syscw = v,
                _ => {}
            }
        }
        c
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

/// Resident set size of this process in bytes (from /proc/self/statm).
pub fn rss_bytes() -> u64 {
    let Ok(text) = std::fs::read_to_string("/proc/self/statm") else { return 0 };
    let pages: u64 = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    pages * rustix::param::page_size() as u64
}

/// User and system CPU time this process has used (fields 14 and 15 of /proc/self/stat).
pub fn cpu_times() -> (Duration, Duration) {
    let Ok(text) = std::fs::read_to_string("/proc/self/stat") else { return (Duration::ZERO, Duration::ZERO) };
    // The command name (field 2) may hold spaces; the fields after it start past its ')'.
    let rest = text.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<u64> = rest.split_whitespace().map(|f| f.parse().unwrap_or(0)).collect();
    let ticks = rustix::param::clock_ticks_per_second().max(1);
    let at = |i: usize| fields.get(i).copied().unwrap_or(0);
    // `rest` starts at field 3, so utime (14) and stime (15) are at 11 and 12.
    let secs = |t: u64| Duration::from_secs_f64(t as f64 / ticks as f64);
    (secs(at(11)), secs(at(12)))
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
