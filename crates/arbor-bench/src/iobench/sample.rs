//! Choosing the paths, warming the page cache, and timing single reads and single writes.
//!
//! Paths are existing paths of the trace's initial state, drawn by index. A pool several times
//! larger than needed is drawn, grouped by path length, and the measured paths are taken
//! round-robin over the groups, so that every path length present is represented (a
//! regression needs spread in its regressors more than it needs the workload's mix). The
//! warm-up reads other paths of the same state, never one of the measured ones.

use std::collections::{BTreeMap, HashSet};
use std::path::Path as FsPath;
use std::time::Instant;

use arbor::{Hash, Store};
use arbor_trace::{initial_state, Path, Profile};
use serde::Serialize;

use super::evict::resident;

/// Path length as the IO benchmarks defines it: the depth of the directory holding the value, i.e.
/// the number of steps minus one (`/hello` is 0, `/contracts/index` is 1).
pub fn path_length(path: &[Vec<u8>]) -> u64 {
    path.len().saturating_sub(1) as u64
}

/// Bytes of the path written as `/step/step…` (steps plus one separator each).
pub fn path_bytes(path: &[Vec<u8>]) -> u64 {
    path.iter().map(|s| s.len() as u64 + 1).sum()
}

/// One timed operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// [`path_length`] of the path.
    pub path_length: u64,
    /// [`path_bytes`] of the path.
    pub path_bytes: u64,
    /// Bytes of the value read or written.
    pub nbytes: u64,
    /// Time taken, in nanoseconds.
    pub ns: u64,
    /// Bytes the process fetched from storage meanwhile (`read_bytes` of /proc/self/io):
    /// non-zero when the page cache missed.
    pub disk_read_bytes: u64,
}

/// The workspace's SplitMix64: the benchmark needs variety, not secrecy.
pub use arbor_core::toolbox::SplitMix64 as Rng;

/// The paths a run uses.
#[derive(Debug, Clone, Default)]
pub struct Picked {
    /// Paths to time reads of.
    pub reads: Vec<Path>,
    /// Paths to time writes to.
    pub writes: Vec<Path>,
    /// Paths for the warm-up, in random order.
    pub warmup: Vec<Path>,
}

/// `n` distinct random indices below `values`, avoiding `taken`, added to it.
fn draw(rng: &mut Rng, values: u64, n: u64, taken: &mut HashSet<u64>) -> Vec<u64> {
    let n = n.min(values.saturating_sub(taken.len() as u64));
    let mut out = Vec::with_capacity(n as usize);
    while (out.len() as u64) < n {
        let i = rng.below(values);
        if taken.insert(i) {
            out.push(i);
        }
    }
    out
}

/// Draws the paths of a run from the initial state of `(seed, values)` in one pass.
pub fn pick_paths(seed: u64, values: u64, reads: usize, writes: usize, warmup: usize, rng: &mut Rng) -> Picked {
    let wanted = (reads + writes) as u64;
    let mut taken = HashSet::new();
    let pool_idx = draw(rng, values, (wanted * 8).max(wanted), &mut taken);
    let warm_idx = draw(rng, values, warmup as u64, &mut taken);
    // Index → 0 for the pool, 1 for the warm-up.
    let mut role: Vec<(u64, u8)> = pool_idx.iter().map(|&i| (i, 0)).chain(warm_idx.iter().map(|&i| (i, 1))).collect();
    role.sort_unstable();
    let mut pool = Vec::with_capacity(pool_idx.len());
    let mut warm = Vec::with_capacity(warm_idx.len());
    let mut next = role.iter().peekable();
    for (i, (path, _)) in initial_state(Profile::TezosMainnet, seed, values).enumerate() {
        let Some(&&(at, r)) = next.peek() else { break };
        if at == i as u64 {
            if r == 0 { &mut pool } else { &mut warm }.push(path);
            next.next();
        }
    }
    rng.shuffle(&mut pool);
    rng.shuffle(&mut warm);
    // The pool is split between reads and writes in their proportion, then each part is
    // taken round-robin over the path lengths.
    let split = pool.len() * reads / (reads + writes).max(1);
    let pool_writes = pool.split_off(split);
    let mut picked = Picked { reads: stratified(pool, reads), writes: stratified(pool_writes, writes), warmup: warm };
    rng.shuffle(&mut picked.reads);
    rng.shuffle(&mut picked.writes);
    picked
}

/// Up to `n` of `paths`, taken one path length after another in turn.
fn stratified(paths: Vec<Path>, n: usize) -> Vec<Path> {
    let mut groups: BTreeMap<u64, Vec<Path>> = BTreeMap::new();
    for p in paths {
        groups.entry(path_length(&p)).or_default().push(p);
    }
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let before = out.len();
        for g in groups.values_mut() {
            if out.len() < n {
                out.extend(g.pop());
            }
        }
        if out.len() == before {
            break;
        }
    }
    out
}

/// Bytes this process has fetched from storage (`read_bytes` of /proc/self/io).
pub fn disk_read_bytes() -> u64 {
    crate::procfs::file_field_u64("/proc/self/io", "read_bytes").unwrap_or(0)
}

/// How the warm-up went.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Warmup {
    /// Reads made.
    pub reads: u64,
    /// Seconds spent.
    pub seconds: f64,
    /// Store bytes in the page cache when it began and when it stopped.
    pub resident_before: u64,
    /// See `resident_before`.
    pub resident_after: u64,
    /// Why it stopped: `full`, `whole store cached`, `plateau`, `time limit`, `paths exhausted`.
    pub stop: String,
}

/// Reads the warm-up paths at `head` in batches until the store's resident bytes reach 90%
/// of `goal`, the whole store is resident, residency stops growing, `max_seconds` pass, or
/// the paths run out. `between_batches` is called after each batch (to retune the limit).
pub fn warm_up(
    store: &Store,
    head: &Hash,
    paths: &[Path],
    goal: u64,
    max_seconds: f64,
    between_batches: &mut dyn FnMut(),
    log: &mut dyn FnMut(&str),
) -> Result<Warmup, super::IobenchError> {
    const BATCH: usize = 500;
    let start = Instant::now();
    let dir: &FsPath = store.dir();
    let (before, _) = resident(dir)?;
    let tree = store.checkout(head)?;
    let mut w = Warmup { resident_before: before, resident_after: before, ..Warmup::default() };
    let mut history = vec![before];
    for batch in paths.chunks(BATCH) {
        for p in batch {
            let _ = tree.find(p)?;
        }
        w.reads += batch.len() as u64;
        between_batches();
        let (now, total) = resident(dir)?;
        w.resident_after = now;
        history.push(now);
        // Flat: less than 0.1% of the goal gained over the last 10 batches (5,000 reads).
        let flat = history.len() > 10 && now.saturating_sub(history[history.len() - 11]) < goal / 1000;
        w.stop = if now >= goal / 10 * 9 {
            "full"
        } else if now >= total / 50 * 49 {
            "whole store cached"
        } else if flat {
            "plateau"
        } else if start.elapsed().as_secs_f64() > max_seconds {
            "time limit"
        } else {
            ""
        }
        .into();
        if w.reads.is_multiple_of(BATCH as u64 * 20) {
            log(&format!("warm-up: {} reads, {} MiB of the store cached", w.reads, now >> 20));
        }
        if !w.stop.is_empty() {
            break;
        }
    }
    if w.stop.is_empty() {
        w.stop = "paths exhausted".into();
    }
    w.seconds = start.elapsed().as_secs_f64();
    Ok(w)
}

/// Times `tree.find(path)` for each path on one checkout of `head`. Returns the samples and
/// the count of paths that held no value (removed by the grown blocks).
pub fn time_reads(store: &Store, head: &Hash, paths: &[Path]) -> Result<(Vec<Sample>, u64), super::IobenchError> {
    let tree = store.checkout(head)?;
    let mut samples = Vec::with_capacity(paths.len());
    let mut missing = 0;
    for p in paths {
        let io = disk_read_bytes();
        let t = Instant::now();
        let v = tree.find(p)?;
        let ns = t.elapsed().as_nanos() as u64;
        let io = disk_read_bytes().saturating_sub(io);
        match v {
            Some(v) => samples.push(Sample {
                path_length: path_length(p),
                path_bytes: path_bytes(p),
                nbytes: v.len() as u64,
                ns,
                disk_read_bytes: io,
            }),
            None => missing += 1,
        }
    }
    Ok((samples, missing))
}

/// A value size for a write: a size class drawn uniformly among 2^0..2^16 bytes (the
/// workload's buckets of 1 B to 4 KiB and beyond, up to contract-code sizes), then a size
/// uniform within it, at most `max`.
pub fn write_size(rng: &mut Rng, max: u64) -> u64 {
    let k = rng.below(17);
    ((1u64 << k) + rng.below(1u64 << k)).clamp(1, max.max(1))
}

/// Times, for each path, `add_mut` of a fresh random value plus a commit (fsynced under the
/// store's durability), each on a checkout of the previous write's commit, starting at
/// `head`. Returns the samples and the last commit.
pub fn time_writes(
    store: &Store,
    head: &Hash,
    paths: &[Path],
    max_bytes: u64,
    rng: &mut Rng,
) -> Result<(Vec<Sample>, Hash), super::IobenchError> {
    let mut samples = Vec::with_capacity(paths.len());
    let mut head = *head;
    let mut date = store.commit_info(&head)?.date;
    let mut value = Vec::new();
    for p in paths {
        let size = write_size(rng, max_bytes) as usize;
        value.clear();
        while value.len() < size {
            value.extend_from_slice(&rng.next_u64().to_le_bytes());
        }
        value.truncate(size);
        date += 30;
        let mut tree = store.checkout(&head)?;
        let io = disk_read_bytes();
        let t = Instant::now();
        tree.add_mut(p, &value)?;
        head = store.commit(&tree, &[head], date, "Tezos", "iobench write")?;
        let ns = t.elapsed().as_nanos() as u64;
        let io = disk_read_bytes().saturating_sub(io);
        samples.push(Sample {
            path_length: path_length(p),
            path_bytes: path_bytes(p),
            nbytes: size as u64,
            ns,
            disk_read_bytes: io,
        });
    }
    Ok((samples, head))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_lengths_follow_the_io_benchmarks() {
        let p = |s: &[&str]| s.iter().map(|x| x.as_bytes().to_vec()).collect::<Vec<_>>();
        assert_eq!(path_length(&p(&["hello"])), 0);
        assert_eq!(path_length(&p(&["contracts", "index"])), 1);
        assert_eq!(path_bytes(&p(&["contracts", "index"])), 16);
    }

    #[test]
    fn write_sizes_stay_in_range() {
        let mut rng = Rng::new(3);
        for _ in 0..1000 {
            let s = write_size(&mut rng, 65_536);
            assert!((1..=65_536).contains(&s));
        }
    }

    #[test]
    fn picked_paths_are_distinct_and_spread() {
        let mut rng = Rng::new(1);
        let picked = pick_paths(0, 10_000, 60, 20, 500, &mut rng);
        assert_eq!((picked.reads.len(), picked.writes.len(), picked.warmup.len()), (60, 20, 500));
        let mut all: Vec<&Path> = picked.reads.iter().chain(&picked.writes).chain(&picked.warmup).collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
        let lengths: HashSet<u64> = picked.reads.iter().map(|p| path_length(p)).collect();
        assert!(lengths.len() > 2, "{lengths:?}");
    }
}
