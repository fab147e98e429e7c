//! Replaying a trace into a store: every operation is applied and its recorded result checked,
//! every block timed and measured.

use std::collections::BTreeMap;
use std::io::Read;
use std::time::{Duration, Instant};

use arbor::{Durability, GcHandle, GcMode, Hash, Kind, Store, Tree};
use arbor_trace::{Digest, InitialState, Parent, TraceError, TraceHeader, TraceReader, TreeSummary};

use crate::environment::Environment;
use crate::latency::{OpKind, OpLatencies};
use crate::metrics::{cpu_times, dir_bytes, page_faults, rss_bytes, IoCounters};
use crate::packed::{Body, PackedBlock, PackedOp};
use crate::summary::{BlockSample, GcRun, RecordsReadPerBlock, ReplayReport, ReplaySummary};

/// The named head marking the commit that holds a trace's initial state.
pub const BASE_HEAD: &str = "trace-initial-state";

/// Why a replay stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReplayError {
    /// The trace could not be read.
    Trace(TraceError),
    /// The store failed.
    Store(arbor::Error),
    /// The store returned something other than what the trace recorded.
    Mismatch {
        /// Index of the block in the trace (0-based).
        block: u64,
        /// Its level.
        level: u64,
        /// Index of the operation in the block (the commit is `ops.len()`).
        op: usize,
        /// What differed.
        what: String,
    },
    /// The trace cannot be replayed on this store.
    Unreplayable(String),
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::Trace(e) => write!(f, "trace: {e}"),
            ReplayError::Store(e) => write!(f, "store: {e}"),
            ReplayError::Mismatch { block, level, op, what } => {
                write!(f, "mismatch in block {block} (level {level}), operation {op}: {what}")
            }
            ReplayError::Unreplayable(s) => write!(f, "cannot replay: {s}"),
        }
    }
}

impl std::error::Error for ReplayError {}

impl From<TraceError> for ReplayError {
    fn from(e: TraceError) -> Self {
        ReplayError::Trace(e)
    }
}

impl From<arbor::Error> for ReplayError {
    fn from(e: arbor::Error) -> Self {
        ReplayError::Store(e)
    }
}

/// How to replay.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Check every recorded result (reads, counts, commit hashes). On by default.
    pub check: bool,
    /// Initial-state values per load commit: bounds the memory the load needs.
    pub load_batch: u64,
    /// Stop after this many blocks.
    pub max_blocks: Option<u64>,
    /// Start a background garbage collection after every this many blocks.
    pub gc_every: Option<u64>,
    /// Each collection keeps this many commits of the chain (the newest included).
    pub gc_keep: u64,
    /// Drop old history (rolling node) or move it to the lower layer (archive node).
    pub gc_mode: GcMode,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            check: true,
            load_batch: 500_000,
            max_blocks: None,
            gc_every: None,
            gc_keep: 500,
            gc_mode: GcMode::Drop,
        }
    }
}

/// Loads a trace's initial state into an empty store, committing every `batch` values, and
/// marks the last commit with the head [`BASE_HEAD`]. Returns that commit and the count of
/// values loaded; a store that has the head already is left as it is.
pub fn load_initial_state(store: &Store, header: &TraceHeader, batch: u64) -> Result<(Option<Hash>, u64), ReplayError> {
    if let Some(h) = store.head(BASE_HEAD) {
        return Ok((Some(h), 0));
    }
    let Some(stream) = header.initial_state.stream()? else { return Ok((None, 0)) };
    if store.last_commit().is_some() {
        return Err(ReplayError::Unreplayable(format!(
            "the store has commits but no '{BASE_HEAD}' head: replay into a fresh store, or one this trace's initial state was loaded into"
        )));
    }
    let batch = batch.max(1);
    let mut tree = store.empty();
    let mut parent: Option<Hash> = None;
    let mut n = 0u64;
    for (path, value) in stream {
        tree.add_mut(&path, &value)?;
        n += 1;
        if n.is_multiple_of(batch) {
            let h = store.commit(&tree, parent.as_slice(), 0, "Tezos", "initial state")?;
            // Continue from the committed tree as stored, so memory stays bounded.
            tree = store.checkout(&h)?;
            parent = Some(h);
        }
    }
    if !n.is_multiple_of(batch) || parent.is_none() {
        parent = Some(store.commit(&tree, parent.as_slice(), 0, "Tezos", "initial state")?);
    }
    let base = parent.expect("committed above");
    store.set_head(BASE_HEAD, &base)?;
    Ok((Some(base), n))
}

fn mismatch(block: u64, level: u64, op: usize, what: String) -> ReplayError {
    ReplayError::Mismatch { block, level, op, what }
}

/// A value longer than [`Digest::INLINE_MAX`] that a `find` of the block read, kept to be
/// checked against the trace's digest once the block's time is taken: that digest (a Blake2b
/// hash of the value) is the replay's checking, not work of the store's. (A shorter value is
/// its own digest, compared at once.)
struct Found {
    /// The operation's index in its block.
    op: usize,
    got: Vec<u8>,
}

/// Applies one operation of `block` to `tree`; returns whether a recorded result was checked,
/// or what differs. A long value a `find` reads goes to `found`, to be checked after the
/// block ([`check_found`]), and counts as checked.
fn apply(
    store: &Store,
    tree: &mut Tree,
    block: &PackedBlock,
    (index, op): (usize, &PackedOp),
    found: &mut Vec<Found>,
) -> Result<Result<bool, String>, arbor::Error> {
    block.with_path(op, |path| {
        Ok(match &op.body {
            Body::Find(result) => tree.find_with(path, |got| match got {
                Some(got) if got.len() > Digest::INLINE_MAX => {
                    found.push(Found { op: index, got: got.to_vec() });
                    Ok(true)
                }
                got => find_result(path, result, got),
            })?,
            Body::Mem(result) => check("mem", path, *result, tree.mem(path)?),
            Body::MemTree(result) => check("mem_tree", path, *result, tree.mem_tree(path)?),
            Body::FindTree(result) => {
                let got = match tree.find_tree(path)? {
                    None => None,
                    Some(t) if t.kind() == Kind::Value => Some(TreeSummary { is_value: true, children: 0 }),
                    Some(t) => Some(TreeSummary { is_value: false, children: t.length::<&[u8]>(&[])? }),
                };
                check("find_tree", path, *result, got)
            }
            Body::Add(value) => {
                tree.add_mut(path, block.bytes(value))?;
                Ok(false)
            }
            Body::AddTree(leaves) => {
                let mut sub = store.empty();
                for (p, v) in block.tree(*leaves) {
                    sub.add_mut(p, v)?;
                }
                tree.add_tree_mut(path, &sub)?;
                Ok(false)
            }
            Body::Remove => {
                tree.remove_mut(path)?;
                Ok(false)
            }
            Body::List { offset, length, result } => {
                let got = tree.list(path, offset.map(|o| o as usize), length.map(|l| l as usize))?.len() as u32;
                check("list", path, *result, got)
            }
            Body::Length(result) => check("length", path, *result, tree.length(path)?),
            Body::Fold { depth, result } => {
                let mut visited = 0u64;
                let bound = depth.map(|d| arbor::Depth::Le(d as usize));
                tree.fold(path, bound, arbor::Order::Undefined, |key, _| {
                    // The trace counts entries strictly below the path; the fold also visits the path.
                    if !key.is_empty() {
                        visited += 1;
                    }
                    Ok(true)
                })?;
                check("fold", path, *result, visited)
            }
            Body::Copy(to) => block.with_steps(to, |to| -> Result<Result<bool, String>, arbor::Error> {
                match tree.find_tree(path)? {
                    // The source of a recorded copy existed; its absence is a divergence.
                    None => Ok(Err(format!("copy {} to {}: the source is absent", show(path), show(to)))),
                    Some(sub) => {
                        tree.add_tree_mut(to, &sub)?;
                        Ok(Ok(false))
                    }
                }
            })?,
        })
    })
}

/// The latency histogram an operation is counted in.
fn kind_of(body: &Body) -> OpKind {
    match body {
        Body::Find(_) | Body::FindTree(_) => OpKind::Find,
        Body::Mem(_) | Body::MemTree(_) => OpKind::Mem,
        Body::Add(_) | Body::AddTree(_) | Body::Copy(_) => OpKind::Add,
        Body::Remove => OpKind::Remove,
        Body::List { .. } | Body::Length(_) | Body::Fold { .. } => OpKind::Walk,
    }
}

/// Checks the values the `find`s of `block` read against the digests the trace recorded;
/// returns how many differ, and the first of them (its operation's index, and what differs).
fn check_found(block: &PackedBlock, found: &[Found]) -> (u64, Option<(usize, String)>) {
    let mut differ = 0;
    let mut first = None;
    for f in found {
        let op = &block.ops[f.op];
        let Body::Find(expected) = &op.body else { unreachable!("only finds are kept") };
        if let Err(what) = block.with_path(op, |path| find_result(path, expected, Some(&f.got))) {
            differ += 1;
            first.get_or_insert((f.op, what));
        }
    }
    (differ, first)
}

/// Whether a `find` of `path` read the value the trace recorded the digest of.
fn find_result(path: &[&[u8]], expected: &Option<Digest>, got: Option<&[u8]>) -> Result<bool, String> {
    let got = got.map(Digest::of);
    if got != *expected {
        Err(format!("find {}: expected {expected:?}, got {got:?}", show(path)))
    } else {
        Ok(true)
    }
}

fn check<T: PartialEq + std::fmt::Debug>(what: &str, path: &[&[u8]], expected: T, got: T) -> Result<bool, String> {
    if expected == got {
        Ok(true)
    } else {
        Err(format!("{what} {}: expected {expected:?}, got {got:?}", show(path)))
    }
}

fn show(path: &[&[u8]]) -> String {
    arbor::path::display_path(path)
}

/// Replays every block of `reader` into `store` (loading the initial state first if the
/// store is empty), calling `progress` after each block. The report's series has one sample
/// per block.
pub fn replay<R: Read + Send>(
    mut reader: TraceReader<R>,
    store: &Store,
    opts: &ReplayOptions,
    mut progress: impl FnMut(u64, &BlockSample),
) -> Result<ReplayReport, ReplayError> {
    let mut summary = ReplaySummary::default();
    let mut latency = OpLatencies::default();
    let load_start = Instant::now();
    let (base, loaded) = match reader.header().initial_state {
        InitialState::None => (store.head(BASE_HEAD), 0),
        _ => load_initial_state(store, reader.header(), opts.load_batch)?,
    };
    summary.load_seconds = load_start.elapsed().as_secs_f64();
    summary.load_values = loaded;
    summary.disk_before_bytes = dir_bytes(store.dir());
    let mut previous = base.or_else(|| store.last_commit());
    let mut samples = Vec::new();
    let (user0, sys0) = cpu_times();
    let faults0 = page_faults();
    let kinds0 = store.records_read_by_kind();
    let max_blocks = opts.max_blocks.unwrap_or(u64::MAX);
    // Blocks are decoded on another thread, a few ahead: decoding is the trace's cost, not
    // the store's, and on the replaying thread it would also churn the allocator and caches.
    // Replayed blocks go back to that thread, which decodes into their buffers.
    std::thread::scope(|scope| -> Result<(), ReplayError> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<PackedBlock, TraceError>>(4);
        let (spare_tx, spare_rx) = std::sync::mpsc::sync_channel::<PackedBlock>(4);
        scope.spawn(move || {
            let mut n = 0u64;
            while n < max_blocks {
                let next = match PackedBlock::next(&mut reader, spare_rx.try_recv().ok()) {
                    Ok(Some(b)) => Ok(b),
                    Ok(None) => break,
                    Err(e) => Err(e),
                };
                let stop = next.is_err();
                if tx.send(next).is_err() || stop {
                    break;
                }
                n += 1;
            }
        });
        let mut gc: Option<(GcHandle, GcRun)> = None;
        for (index, block) in rx.iter().enumerate() {
            let block = block?;
            let index = index as u64;
            let running = gc.as_ref().is_some_and(|(h, _)| !h.is_finished());
            let mut sample = replay_block(store, &block, index, base, &mut previous, opts, &mut summary, &mut latency)?;
            sample.gc_running = running;
            if !running {
                if let Some((handle, run)) = gc.take() {
                    summary.gc.push(finish_gc(handle, run, block.meta.level)?);
                }
            }
            let due = opts.gc_every.is_some_and(|k| k > 0 && (index + 1).is_multiple_of(k));
            if due && gc.is_none() {
                if let Some(head) = previous {
                    let keep_from = store.nth_ancestor(&head, opts.gc_keep)?;
                    // A collection keeps every named head's commit: the initial state's head
                    // would pin all history. Once the replay collects, the store can no longer
                    // be replayed into from the start, so the head goes.
                    if opts.gc_mode == GcMode::Drop && store.head(BASE_HEAD).is_some() {
                        store.remove_head(BASE_HEAD)?;
                    }
                    let handle = store.gc(&keep_from, opts.gc_mode)?;
                    gc = Some((handle, GcRun { started_level: block.meta.level, ..GcRun::default() }));
                }
            } else if due {
                summary.gc_skipped += 1;
            }
            progress(index, &sample);
            samples.push(sample);
            // (Full when the decoder is ahead: the block is then freed here.)
            let _ = spare_tx.try_send(block);
        }
        if let Some((handle, run)) = gc.take() {
            let level = samples.last().map_or(0, |s| s.level);
            summary.gc.push(finish_gc(handle, run, level)?);
        }
        Ok(())
    })?;
    let (user1, sys1) = cpu_times();
    summary.cpu_user_seconds = (user1 - user0).as_secs_f64();
    summary.cpu_sys_seconds = (sys1 - sys0).as_secs_f64();
    let faults = page_faults().saturating_sub(faults0);
    summary.page_faults_per_block = faults as f64 / samples.len().max(1) as f64;
    summary.from_samples(&samples);
    let kinds = store.records_read_by_kind().since(&kinds0);
    summary.records_read_by_kind = RecordsReadPerBlock::of(&kinds, samples.len());
    summary.durability = match store.config().durability {
        Durability::EveryCommit => "EveryCommit (each commit durable before it returns)".into(),
        Durability::Pipelined => "Pipelined (each commit durable before the next one returns)".into(),
        other => format!("{other:?} (commits may return before they are durable)"),
    };
    Ok(ReplayReport {
        trace: String::new(),
        store: store.dir().display().to_string(),
        durability: format!("{:?}", store.config().durability),
        environment: Environment::current(),
        config: configuration(store, opts),
        summary,
        latency,
        blocks: samples,
    })
}

/// The store's configuration and the replay's options, as the report records them.
fn configuration(store: &Store, opts: &ReplayOptions) -> BTreeMap<String, String> {
    let c = store.config();
    let mut m = BTreeMap::new();
    let mut set = |k: &str, v: String| m.insert(k.to_string(), v);
    set("durability", format!("{:?}", c.durability));
    set("cache_bytes", c.cache_bytes.to_string());
    set("inline_max", c.inline_max.to_string());
    set("chunk_bytes", c.chunk_bytes.to_string());
    set("inode_entries", c.inode.entries.to_string());
    set("control_every", c.control_every.to_string());
    set("working_commits", c.working_commits.to_string());
    set("mapped_reads", c.mapped_reads.to_string());
    set("check", opts.check.to_string());
    set("load_batch", opts.load_batch.to_string());
    set("gc_every", opts.gc_every.map_or_else(|| "never".to_string(), |k| k.to_string()));
    set("gc_keep", opts.gc_keep.to_string());
    set("gc_mode", format!("{:?}", opts.gc_mode));
    m
}

/// Waits for a collection (already finished, or the replay is over) and records it.
fn finish_gc(handle: GcHandle, mut run: GcRun, level: u64) -> Result<GcRun, ReplayError> {
    let r = handle.wait()?;
    run.finished_level = level;
    run.objects_kept = r.objects_kept;
    run.bytes_kept = r.bytes_kept;
    run.bytes_freed = r.bytes_freed;
    run.commits_dropped = r.commits_dropped;
    run.writer_pause_ms = r.writer_pause.as_secs_f64() * 1e3;
    run.seconds = r.total_time.as_secs_f64();
    Ok(run)
}

#[expect(clippy::too_many_arguments, reason = "the replay's running state, passed apart to borrow it apart")]
fn replay_block(
    store: &Store,
    block: &PackedBlock,
    index: u64,
    base: Option<Hash>,
    previous: &mut Option<Hash>,
    opts: &ReplayOptions,
    summary: &mut ReplaySummary,
    latency: &mut OpLatencies,
) -> Result<BlockSample, ReplayError> {
    let parent = match block.meta.parent {
        Parent::Genesis => base,
        Parent::Previous => *previous,
        Parent::Hash(h) => Some(Hash(h)),
    };
    let io0 = IoCounters::now();
    let records0 = store.records_read();
    let log0 = store.log_bytes();
    let (user0, sys0) = cpu_times();
    let start = Instant::now();
    let mut tree = match parent {
        Some(p) => store.checkout(&p)?,
        None => store.empty(),
    };
    // Grown as long values are read, not sized for every operation of the block:
    // room for all of them was a 300 KB allocation inside the block's time.
    let mut found = Vec::new();
    for (i, op) in block.ops.iter().enumerate() {
        // One operation of a kind in eight is timed: its two clock reads are part of the
        // block time (see `latency`).
        let histogram = latency.get_mut(kind_of(&op.body));
        let applied = if histogram.take_sample() {
            let op_start = Instant::now();
            let applied = apply(store, &mut tree, block, (i, op), &mut found)?;
            histogram.add(op_start.elapsed().as_nanos() as u64);
            applied
        } else {
            apply(store, &mut tree, block, (i, op), &mut found)?
        };
        match applied {
            Ok(true) => summary.checked_results += 1,
            Ok(false) => {}
            Err(what) if opts.check => return Err(mismatch(index, block.meta.level, i, what)),
            Err(_) => {}
        }
    }
    let commit_start = Instant::now();
    let c = &block.meta.commit;
    // The tree is handed over, as a node does after a block: the store lets go of its cold
    // part while the commit's sync runs (`Store::commit_owned`).
    let (hash, written) = store.commit_owned(tree, parent.as_slice(), c.date, &c.author, &c.message)?;
    let commit_time: Duration = commit_start.elapsed();
    latency.commit.add(commit_time.as_nanos() as u64);
    latency.commit_hashing.add(written.hashing.as_nanos() as u64);
    latency.commit_writing.add(written.writing.as_nanos() as u64);
    latency.commit_syncing.add(written.syncing.as_nanos() as u64);
    let time = start.elapsed();
    let (user1, sys1) = cpu_times();
    let cpu = (user1 + sys1).saturating_sub(user0 + sys0);
    match check_found(block, &found) {
        (_, Some((op, what))) if opts.check => return Err(mismatch(index, block.meta.level, op, what)),
        // Counted as checked when read: only those that matched are.
        (differ, _) => summary.checked_results -= differ,
    }
    if let Some(expected) = c.hash {
        if expected != hash.0 && opts.check {
            let what = format!("commit hash: expected {}, got {hash}", Hash(expected));
            return Err(mismatch(index, block.meta.level, block.ops.len(), what));
        }
        // Counted only when compared: `--no-check` verifies nothing.
        if opts.check {
            summary.checked_hashes += 1;
        }
    }
    *previous = Some(hash);
    let io = IoCounters::now().since(io0);
    let rss = rss_bytes();
    Ok(BlockSample {
        level: block.meta.level,
        ops: block.ops.len() as u64,
        transactions: block.meta.transactions,
        time_ns: time.as_nanos() as u64,
        commit_ns: commit_time.as_nanos() as u64,
        hashing_ns: written.hashing.as_nanos() as u64,
        writing_ns: written.writing.as_nanos() as u64,
        syncing_ns: written.syncing.as_nanos() as u64,
        rss_bytes: rss.0,
        file_rss_bytes: rss.1,
        disk_bytes: dir_bytes(store.dir()),
        read_bytes: io.rchar,
        write_bytes: io.wchar,
        read_syscalls: io.syscr,
        records_read: store.records_read() - records0,
        write_syscalls: io.syscw,
        gc_running: false,
        cpu_ns: cpu.as_nanos() as u64,
        appended_bytes: store.log_bytes().saturating_sub(log0),
        writes: block.writes(),
    })
}
