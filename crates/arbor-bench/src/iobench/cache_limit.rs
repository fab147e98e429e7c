//! Constraining the memory the OS page cache may use for the store, as the IO benchmarks (DaiLambda, 2023) do.
//!
//! In order of preference:
//! 1. a memory cgroup (v2 `memory.max`, else v1 `memory.limit_in_bytes`) created as a child
//!    of this process's own cgroup, into which the process moves for the measurements: the
//!    limit covers the page cache of the files the process reads, so only this process is
//!    squeezed. Needs write access to the cgroup file system (root, or a delegated subtree).
//! 2. ballast: anonymous memory mapped and locked (`mlock`; merely touched when locking is
//!    not allowed) until `MemAvailable` of `/proc/meminfo` is down to the cache wanted. This
//!    is the IO benchmarks' method; it squeezes the whole machine, other processes included.
//!
//! Every attempt and why it failed is recorded in the report, and the memory actually left
//! for the cache is measured, not assumed.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// How to constrain the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LimitMethod {
    /// A cgroup if possible, else ballast.
    #[default]
    Auto,
    /// A cgroup, or no limit (with the reason) if none can be made.
    Cgroup,
    /// Ballast memory, even where a cgroup could be made.
    Ballast,
    /// No limit: the page cache may use all free memory.
    None,
}

impl std::str::FromStr for LimitMethod {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(LimitMethod::Auto),
            "cgroup" => Ok(LimitMethod::Cgroup),
            "ballast" => Ok(LimitMethod::Ballast),
            "none" => Ok(LimitMethod::None),
            _ => Err(format!("unknown limit method {s:?}: expected auto, cgroup, ballast or none")),
        }
    }
}

/// Memory figures of the limit in force, read when asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemoryUsage {
    /// The cgroup's limit (0 without a cgroup).
    pub limit_bytes: u64,
    /// Anonymous memory charged to the cgroup (0 without a cgroup).
    pub anon_bytes: u64,
    /// Page cache charged to the cgroup (0 without a cgroup).
    pub file_bytes: u64,
    /// `MemAvailable` of /proc/meminfo (the whole machine).
    pub mem_available_bytes: u64,
    /// Memory the page cache can have: limit − anon with a cgroup, else `MemAvailable`.
    pub left_for_cache_bytes: u64,
}

/// What was tried and what holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LimitReport {
    /// `cgroup-v2`, `cgroup-v1`, `ballast`, `ballast-unlocked` or `none`.
    pub method: String,
    /// Page cache asked for.
    pub requested_cache_bytes: u64,
    /// Anonymous memory allowed for on top of it in a cgroup.
    pub anon_headroom_bytes: u64,
    /// The cgroup directory made, if any.
    pub cgroup: Option<String>,
    /// Ballast mapped, if any.
    pub ballast_bytes: u64,
    /// Each attempt that failed, and why.
    pub attempts: Vec<String>,
}

/// A limit in force; dropping it lifts the limit (leaves and removes the cgroup, or frees the
/// ballast).
#[derive(Debug)]
pub struct CacheLimit {
    kind: Kind,
    /// What was done.
    pub report: LimitReport,
}

#[derive(Debug)]
enum Kind {
    None,
    Cgroup(Cgroup),
    /// Held only to be unmapped on drop.
    Ballast {
        _chunks: Vec<Chunk>,
    },
}

impl CacheLimit {
    /// Applies `method` so that about `cache_bytes` remain for the page cache, allowing
    /// `anon_headroom` bytes of new anonymous memory in a cgroup.
    pub fn apply(method: LimitMethod, cache_bytes: u64, anon_headroom: u64) -> CacheLimit {
        let mut report = LimitReport {
            requested_cache_bytes: cache_bytes,
            anon_headroom_bytes: anon_headroom,
            ..LimitReport::default()
        };
        if matches!(method, LimitMethod::Auto | LimitMethod::Cgroup) {
            match Cgroup::enter(cache_bytes + anon_headroom, &mut report.attempts) {
                Some(cg) => {
                    report.method = format!("cgroup-v{}", cg.version);
                    report.cgroup = Some(cg.dir.display().to_string());
                    return CacheLimit { kind: Kind::Cgroup(cg), report };
                }
                None if method == LimitMethod::Cgroup => {
                    report.method = "none".into();
                    return CacheLimit { kind: Kind::None, report };
                }
                None => {}
            }
        }
        if method == LimitMethod::None {
            report.method = "none".into();
            return CacheLimit { kind: Kind::None, report };
        }
        let (chunks, locked) = ballast(cache_bytes, &mut report.attempts);
        report.ballast_bytes = chunks.iter().map(|c| c.len as u64).sum();
        report.method = if locked { "ballast" } else { "ballast-unlocked" }.into();
        CacheLimit { kind: Kind::Ballast { _chunks: chunks }, report }
    }

    /// With a cgroup, sets its limit to the cache asked for plus the anonymous memory charged
    /// now (plus [`MARGIN`]), so that the page cache keeps its size as the process's own
    /// memory grows or shrinks. Memory allocated before the process moved in is not charged
    /// and does not count. No-op otherwise.
    pub fn retune(&mut self) {
        let Kind::Cgroup(cg) = &self.kind else { return };
        let (_, anon, _) = cg.usage();
        let limit = self.report.requested_cache_bytes + anon + MARGIN;
        if let Err(e) = cg.set_limit(limit) {
            let note = format!("retuning the limit to {limit}: {e}");
            if !self.report.attempts.contains(&note) {
                self.report.attempts.push(note);
            }
        }
    }

    /// The memory figures now.
    pub fn usage(&self) -> MemoryUsage {
        let available = meminfo("MemAvailable").unwrap_or(0);
        match &self.kind {
            Kind::Cgroup(cg) => {
                let (limit, anon, file) = cg.usage();
                MemoryUsage {
                    limit_bytes: limit,
                    anon_bytes: anon,
                    file_bytes: file,
                    mem_available_bytes: available,
                    left_for_cache_bytes: limit.saturating_sub(anon).min(available),
                }
            }
            _ => MemoryUsage { mem_available_bytes: available, left_for_cache_bytes: available, ..Default::default() },
        }
    }
}

/// Slack above the cache and the charged anonymous memory in a retuned cgroup limit.
pub const MARGIN: u64 = 4 << 20;

/// A field of /proc/meminfo, in bytes.
pub fn meminfo(field: &str) -> Option<u64> {
    crate::procfs::meminfo_bytes(field)
}

/// A child memory cgroup this process moved into.
#[derive(Debug)]
struct Cgroup {
    version: u8,
    dir: PathBuf,
    /// The cgroup the process came from, to move back to.
    home: PathBuf,
}

/// Name prefix of the cgroups made (followed by the process id).
const PREFIX: &str = "arbor-iobench-";

/// Removes the empty cgroups a killed earlier run left in `home`; a cgroup still holding a
/// process cannot be removed, so a running benchmark's is left alone.
fn remove_stale(home: &Path) {
    let Ok(entries) = fs::read_dir(home) else { return };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with(PREFIX) {
            let _ = fs::remove_dir(e.path());
        }
    }
}

/// The mount point of the cgroup hierarchy of `fstype` (`cgroup2`, or `cgroup` with
/// `memory` among its options), and the root it mounts.
fn mount_of(fstype: &str) -> Option<(PathBuf, String)> {
    let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mut r = right.split_whitespace();
        let (fs_type, _source, opts) = (r.next()?, r.next()?, r.next().unwrap_or(""));
        let is_memory_v1 = fs_type == "cgroup" && opts.split(',').any(|o| o == "memory");
        if fs_type != fstype || (fstype == "cgroup" && !is_memory_v1) {
            return None;
        }
        let l: Vec<&str> = left.split_whitespace().collect();
        Some((PathBuf::from(l.get(4)?), l.get(3)?.to_string()))
    })
}

/// This process's cgroup directory in the hierarchy of `fstype`.
fn own_cgroup(fstype: &str) -> Option<PathBuf> {
    let (mnt, root) = mount_of(fstype)?;
    let text = fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = text.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, ctrl, path) = (parts.next()?, parts.next()?, parts.next()?);
        let ok = if fstype == "cgroup2" { ctrl.is_empty() } else { ctrl.split(',').any(|c| c == "memory") };
        ok.then(|| path.to_string())
    })?;
    let rel = rel.strip_prefix(root.trim_end_matches('/')).unwrap_or(&rel);
    Some(mnt.join(rel.trim_start_matches('/')))
}

fn write(path: &Path, text: &str) -> io::Result<()> {
    fs::write(path, text).map_err(|e| io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))
}

fn has_word(path: &Path, word: &str) -> bool {
    fs::read_to_string(path).is_ok_and(|t| t.split_whitespace().any(|w| w == word))
}

impl Cgroup {
    /// Makes a child cgroup limited to `limit` bytes and moves this process into it; records
    /// why not in `attempts`.
    fn enter(limit: u64, attempts: &mut Vec<String>) -> Option<Cgroup> {
        let name = format!("{PREFIX}{}", std::process::id());
        match Cgroup::enter_v2(limit, &name) {
            Ok(cg) => return Some(cg),
            Err(e) => attempts.push(format!("cgroup v2: {e}")),
        }
        match Cgroup::enter_v1(limit, &name) {
            Ok(cg) => Some(cg),
            Err(e) => {
                attempts.push(format!("cgroup v1: {e}"));
                None
            }
        }
    }

    fn enter_v2(limit: u64, name: &str) -> io::Result<Cgroup> {
        let home = own_cgroup("cgroup2").ok_or_else(|| io::Error::other("no cgroup2 hierarchy"))?;
        if !has_word(&home.join("cgroup.controllers"), "memory") {
            return Err(io::Error::other(format!("memory controller not available in {}", home.display())));
        }
        if !has_word(&home.join("cgroup.subtree_control"), "memory") {
            // Only the root may hold processes and enable a controller for its children;
            // elsewhere that would change a cgroup this process does not own.
            if home.join("cgroup.type").exists() {
                return Err(io::Error::other(format!(
                    "memory not delegated below {} (a non-root cgroup holding this process)",
                    home.display()
                )));
            }
            write(&home.join("cgroup.subtree_control"), "+memory")?;
        }
        remove_stale(&home);
        let dir = home.join(name);
        fs::create_dir(&dir).map_err(|e| io::Error::new(e.kind(), format!("mkdir {}: {e}", dir.display())))?;
        let cg = Cgroup { version: 2, dir, home };
        cg.set_limit(limit)?;
        let _ = write(&cg.dir.join("memory.swap.max"), "0");
        write(&cg.dir.join("cgroup.procs"), &std::process::id().to_string())?;
        Ok(cg)
    }

    fn enter_v1(limit: u64, name: &str) -> io::Result<Cgroup> {
        let home = own_cgroup("cgroup").ok_or_else(|| io::Error::other("no v1 memory hierarchy"))?;
        remove_stale(&home);
        let dir = home.join(name);
        fs::create_dir(&dir).map_err(|e| io::Error::new(e.kind(), format!("mkdir {}: {e}", dir.display())))?;
        let cg = Cgroup { version: 1, dir, home };
        cg.set_limit(limit)?;
        let _ = write(&cg.dir.join("memory.swappiness"), "0");
        write(&cg.dir.join("cgroup.procs"), &std::process::id().to_string())?;
        Ok(cg)
    }

    fn set_limit(&self, bytes: u64) -> io::Result<()> {
        let file = if self.version == 2 { "memory.max" } else { "memory.limit_in_bytes" };
        write(&self.dir.join(file), &bytes.to_string())
    }

    /// Limit, anonymous and file bytes charged.
    fn usage(&self) -> (u64, u64, u64) {
        let read = |f: &str| fs::read_to_string(self.dir.join(f)).unwrap_or_default();
        let stat = read("memory.stat");
        let field = |name: &str| {
            stat.lines()
                .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        if self.version == 2 {
            (read("memory.max").trim().parse().unwrap_or(u64::MAX), field("anon"), field("file"))
        } else {
            let limit = read("memory.limit_in_bytes").trim().parse().unwrap_or(u64::MAX);
            (limit, field("total_rss"), field("total_cache"))
        }
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Move back home, then remove the (now empty) child; its charges go to the parent.
        let _ = write(&self.home.join("cgroup.procs"), &std::process::id().to_string());
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        eprintln!("iobench: could not remove cgroup {}", self.dir.display());
    }
}

/// One mapped ballast chunk.
#[derive(Debug)]
struct Chunk {
    ptr: usize,
    len: usize,
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the anonymous mapping made in `ballast`, owned by this chunk.
        let _ = unsafe { rustix::mm::munmap(self.ptr as *mut std::ffi::c_void, self.len) };
    }
}

/// Maps (and locks if allowed) anonymous memory until `MemAvailable` is about `cache_bytes`.
fn ballast(cache_bytes: u64, attempts: &mut Vec<String>) -> (Vec<Chunk>, bool) {
    const CHUNK: u64 = 64 << 20;
    let mut chunks = Vec::new();
    let mut locked = true;
    let page = rustix::param::page_size();
    let total = meminfo("MemTotal").unwrap_or(0);
    while let Some(avail) = meminfo("MemAvailable") {
        // The second test guards against a MemAvailable that does not fall as chunks lock.
        if avail <= cache_bytes + CHUNK / 2 || (chunks.len() as u64 + 1) * CHUNK > total {
            break;
        }
        let len = (avail - cache_bytes).min(CHUNK) as usize;
        let flags = rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE;
        // SAFETY: a fresh private anonymous mapping; only this chunk refers to it.
        let mapped =
            unsafe { rustix::mm::mmap_anonymous(std::ptr::null_mut(), len, flags, rustix::mm::MapFlags::PRIVATE) };
        let ptr = match mapped {
            Ok(p) => p,
            Err(e) => {
                attempts.push(format!("ballast: mmap failed after {} chunks: {e}", chunks.len()));
                break;
            }
        };
        chunks.push(Chunk { ptr: ptr as usize, len });
        // SAFETY: locks the range just mapped, `len` bytes from `ptr`.
        let lock = if locked { unsafe { rustix::mm::mlock(ptr, len) } } else { Ok(()) };
        if let Err(e) = lock {
            attempts.push(format!("ballast: mlock refused ({e}); pages are touched instead (no swap keeps them)"));
            locked = false;
        }
        if !locked {
            for off in (0..len).step_by(page) {
                // SAFETY: `off < len`, inside the writable mapping made above.
                unsafe { (ptr as *mut u8).add(off).write_volatile(1) };
            }
        }
    }
    (chunks, locked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_parse() {
        assert_eq!("cgroup".parse::<LimitMethod>(), Ok(LimitMethod::Cgroup));
        assert!("x".parse::<LimitMethod>().is_err());
    }

    #[test]
    fn meminfo_reads_available_memory() {
        if Path::new("/proc/meminfo").exists() {
            assert!(meminfo("MemTotal").unwrap() > 0);
        }
    }
}
