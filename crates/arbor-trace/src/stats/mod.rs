//! Statistics of a trace, comparable with the seed documents' figures.

mod display;
pub mod figures;

use std::io::Read;

use serde::Serialize;

use crate::error::Result;
use crate::format::TraceReader;
use std::hash::Hasher;

use crate::op_ref::OpRef;
use crate::tezos::initial::initial_value_lengths;
use crate::tezos::values::{size_bucket, SIZE_BUCKETS};
use crate::types::{InitialState, OpClass, OpKind};
use crate::Profile;
use rustc_hash::{FxHashMap, FxHasher};

/// Totals and per-block distribution of one operation kind or class.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Counts {
    /// Name (`find`, …, or `mem` / `read` / `write` for classes).
    pub name: String,
    /// Total over the trace.
    pub total: u64,
    /// Mean per block.
    pub mean: f64,
    /// Median per block.
    pub p50: u64,
    /// Largest per block.
    pub max: u64,
}

/// A log2 histogram of value lengths (buckets as in [`size_bucket`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SizeHistogram {
    /// Values per bucket.
    pub counts: Vec<u64>,
    /// Number of values.
    pub total: u64,
}

impl SizeHistogram {
    fn new() -> Self {
        SizeHistogram { counts: vec![0; SIZE_BUCKETS], total: 0 }
    }

    fn add(&mut self, len: u64) {
        self.counts[size_bucket(len)] += 1;
        self.total += 1;
    }

    /// Percentage of values in each bucket.
    pub fn percent(&self) -> Vec<f64> {
        self.counts.iter().map(|&c| 100.0 * c as f64 / self.total.max(1) as f64).collect()
    }
}

/// A block that ends a cycle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BoundaryBlock {
    /// Its level.
    pub level: u64,
    /// Write operations in it.
    pub writes: u64,
}

/// Everything [`stats`] measures.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TraceStats {
    /// Blocks in the trace.
    pub blocks: u64,
    /// Sum of the blocks' transaction counts.
    pub transactions: u64,
    /// Operations in the trace.
    pub ops: u64,
    /// Per operation kind.
    pub kinds: Vec<Counts>,
    /// Per class: mem, read, write.
    pub classes: Vec<Counts>,
    /// The same classes over blocks that do not end a cycle.
    pub ordinary_classes: Vec<Counts>,
    /// Share of writes whose path had both a mem and a read earlier in the
    /// same block.
    pub symmetry: f64,
    /// The same share over blocks that do not end a cycle.
    pub symmetry_ordinary: f64,
    /// The 20 most read paths (read-class operations) with their counts.
    pub top_reads: Vec<(String, u64)>,
    /// Whether rarely read paths were dropped from the count to bound memory
    /// (top counts can then be slight underestimates).
    pub top_reads_approximate: bool,
    /// Value lengths of writes (`add` values and `add_tree` leaves).
    pub write_sizes: SizeHistogram,
    /// Value lengths of the initial state, when the trace names one.
    pub initial_sizes: Option<SizeHistogram>,
    /// Blocks that end a cycle, with their writes.
    pub boundaries: Vec<BoundaryBlock>,
    /// How boundaries were found: the header's cycle length, or write-count
    /// outliers (at least 5x the median).
    pub boundary_rule: String,
    /// Operations by number of path steps (index = steps; the last entry
    /// counts 15 steps or more).
    pub path_steps: Vec<u64>,
    /// Mean path length (steps after the first, the IO benchmarks' measure) of
    /// `find`s.
    pub read_path_length: f64,
    /// Mean path length of `add`s.
    pub write_path_length: f64,
}

impl TraceStats {
    /// The statistics as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Options of [`stats_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatsOptions {
    /// Also stream the initial state named by the header to histogram its
    /// value sizes (about a second per million values).
    pub initial_state: bool,
}

impl Default for StatsOptions {
    fn default() -> Self {
        StatsOptions { initial_state: true }
    }
}

/// Read paths kept before rarely read ones are dropped.
const TOP_CAP: usize = 200_000;
/// Buckets of the path-step histogram.
const STEP_BUCKETS: usize = 16;

/// Reads every block of `reader` and measures it (initial state included).
pub fn stats<R: Read>(reader: TraceReader<R>) -> Result<TraceStats> {
    stats_with(reader, StatsOptions::default())
}

fn class_index(c: OpClass) -> usize {
    match c {
        OpClass::Mem => 0,
        OpClass::Read => 1,
        OpClass::Write => 2,
    }
}

fn kind_index(k: OpKind) -> usize {
    OpKind::ALL.iter().position(|&x| x == k).unwrap_or(0)
}

fn join(path: &[Vec<u8>], out: &mut Vec<u8>) {
    out.clear();
    for (i, s) in path.iter().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(s);
    }
}

/// A 64-bit hash of a path (collisions only blur the symmetry measure).
fn path_hash(path: &[Vec<u8>]) -> u64 {
    let mut h = FxHasher::default();
    for s in path {
        h.write_usize(s.len());
        h.write(s);
    }
    h.finish()
}

/// Like [`stats`], with options.
pub fn stats_with<R: Read>(mut reader: TraceReader<R>, opts: StatsOptions) -> Result<TraceStats> {
    let header = reader.header().clone();
    let mut s =
        TraceStats { write_sizes: SizeHistogram::new(), path_steps: vec![0; STEP_BUCKETS], ..TraceStats::default() };
    let mut per_block: Vec<[u32; OpKind::ALL.len()]> = Vec::new();
    let mut levels: Vec<u64> = Vec::new();
    let mut sym: Vec<(u64, u64)> = Vec::new();
    let mut reads: FxHashMap<Vec<u8>, u64> = FxHashMap::default();
    let mut key = Vec::new();
    let (mut read_len, mut reads_n, mut write_len, mut writes_n) = (0u64, 0u64, 0u64, 0u64);

    let mut seen: FxHashMap<u64, u8> = FxHashMap::default();
    loop {
        let mut counts = [0u32; OpKind::ALL.len()];
        let (mut writes, mut preceded) = (0u64, 0u64);
        seen.clear();
        let meta = reader.next_block_with(|op: OpRef<'_>| -> Result<()> {
            let kind = op.kind();
            counts[kind_index(kind)] += 1;
            let path = op.path();
            let steps = path.len();
            s.path_steps[steps.min(STEP_BUCKETS - 1)] += 1;
            match op {
                OpRef::Find { .. } => {
                    read_len += steps.saturating_sub(1) as u64;
                    reads_n += 1;
                }
                OpRef::Add { value, .. } => {
                    write_len += steps.saturating_sub(1) as u64;
                    writes_n += 1;
                    s.write_sizes.add(value.len() as u64);
                }
                OpRef::AddTree { tree, .. } => {
                    for (_, v) in tree {
                        s.write_sizes.add(v.len() as u64);
                    }
                }
                _ => {}
            }
            // Symmetry: writes whose path had a mem and a read before.
            let h = path_hash(path);
            match kind.class() {
                OpClass::Mem => *seen.entry(h).or_insert(0) |= 1,
                OpClass::Read => *seen.entry(h).or_insert(0) |= 2,
                OpClass::Write => {
                    writes += 1;
                    if seen.get(&h) == Some(&3) {
                        preceded += 1;
                    }
                }
            }
            if kind.class() == OpClass::Read {
                join(path, &mut key);
                match reads.get_mut(key.as_slice()) {
                    Some(n) => *n += 1,
                    None => {
                        reads.insert(key.clone(), 1);
                    }
                }
            }
            Ok(())
        })?;
        let Some(meta) = meta else { break };
        if reads.len() > TOP_CAP {
            prune(&mut reads);
            s.top_reads_approximate = true;
        }
        sym.push((writes, preceded));
        s.transactions += u64::from(meta.transactions);
        s.ops += meta.ops;
        levels.push(meta.level);
        per_block.push(counts);
    }
    s.blocks = per_block.len() as u64;
    s.read_path_length = read_len as f64 / reads_n.max(1) as f64;
    s.write_path_length = write_len as f64 / writes_n.max(1) as f64;

    let class_of = |c: &[u32; OpKind::ALL.len()], class: OpClass| -> u64 {
        OpKind::ALL.iter().filter(|k| k.class() == class).map(|&k| u64::from(c[kind_index(k)])).sum()
    };
    let writes: Vec<u64> = per_block.iter().map(|c| class_of(c, OpClass::Write)).collect();
    let boundary = find_boundaries(&header.source, &levels, &writes, &mut s.boundary_rule);
    for (i, &b) in boundary.iter().enumerate() {
        if b {
            s.boundaries.push(BoundaryBlock { level: levels[i], writes: writes[i] });
        }
    }
    for k in OpKind::ALL {
        let v: Vec<u64> = per_block.iter().map(|c| u64::from(c[kind_index(k)])).collect();
        s.kinds.push(summarise(k.name(), &v));
    }
    for (name, class) in [("mem", OpClass::Mem), ("read", OpClass::Read), ("write", OpClass::Write)] {
        let all: Vec<u64> = per_block.iter().map(|c| class_of(c, class)).collect();
        let ordinary: Vec<u64> = all.iter().zip(&boundary).filter(|(_, &b)| !b).map(|(&n, _)| n).collect();
        debug_assert_eq!(class_index(class), s.classes.len());
        s.classes.push(summarise(name, &all));
        s.ordinary_classes.push(summarise(name, &ordinary));
    }
    let ratio = |it: &mut dyn Iterator<Item = &(u64, u64)>| {
        let (w, p) = it.fold((0, 0), |(w, p), &(a, b)| (w + a, p + b));
        p as f64 / w.max(1) as f64
    };
    s.symmetry = ratio(&mut sym.iter());
    s.symmetry_ordinary = ratio(&mut sym.iter().zip(&boundary).filter(|(_, &b)| !b).map(|(x, _)| x));

    let mut top: Vec<(Vec<u8>, u64)> = reads.into_iter().collect();
    top.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    s.top_reads = top.into_iter().take(20).map(|(p, n)| (String::from_utf8_lossy(&p).into_owned(), n)).collect();

    if opts.initial_state {
        if let InitialState::Generated { profile, seed, values } = &header.initial_state {
            if profile.parse::<Profile>().is_ok() {
                let mut h = SizeHistogram::new();
                initial_value_lengths(*seed, *values, |len| h.add(len));
                s.initial_sizes = Some(h);
            }
        }
    }
    Ok(s)
}

/// Drops the read paths at or below the median count.
fn prune(reads: &mut FxHashMap<Vec<u8>, u64>) {
    let mut counts: Vec<u64> = reads.values().copied().collect();
    let mid = counts.len() / 2;
    let (_, &mut median, _) = counts.select_nth_unstable(mid);
    reads.retain(|_, n| *n > median);
}

fn summarise(name: &str, per_block: &[u64]) -> Counts {
    let total: u64 = per_block.iter().sum();
    let mut sorted = per_block.to_vec();
    sorted.sort_unstable();
    Counts {
        name: name.to_string(),
        total,
        mean: total as f64 / per_block.len().max(1) as f64,
        p50: sorted.get(sorted.len() / 2).copied().unwrap_or(0),
        max: sorted.last().copied().unwrap_or(0),
    }
}

/// Marks the blocks that end a cycle: from the generator's parameters when
/// the header has them, otherwise blocks writing at least 5x the median.
fn find_boundaries(source: &crate::types::Source, levels: &[u64], writes: &[u64], rule: &mut String) -> Vec<bool> {
    let param = |k: &str| source.param(k).and_then(|v| v.parse::<u64>().ok());
    if let (Some(len), Some(start)) = (param("cycle_length"), param("start_level")) {
        if len > 0 {
            *rule = format!("last block of every {len}-block cycle (header)");
            return levels.iter().map(|&l| l >= start && (l - start + 1) % len == 0).collect();
        }
    }
    let mut sorted = writes.to_vec();
    sorted.sort_unstable();
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0);
    *rule = format!("blocks with at least 5x the median of {median} writes");
    writes.iter().map(|&w| median > 0 && w >= 5 * median).collect()
}
