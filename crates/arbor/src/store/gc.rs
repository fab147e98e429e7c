//! Garbage collection: keep the history from one commit on, drop (or, in archive mode, move to
//! the lower layer) everything older, while the writer keeps committing.
//!
//! The log's offsets are global and never change, so nothing is rewritten: the records below
//! the kept commit (the *floor*) that are still reachable are copied verbatim into a new
//! prefix file, the control file switches to it, and the chunks below the floor are given
//! back to the file system. See docs/FORMAT.md, section 15, for the crash analysis.
//!
//! What is reachable below the floor: the tree of the kept commit, and anything a record at
//! or above the floor points at (the writer may reuse any node it still holds, so the log
//! written since is scanned rather than trusted to descend from the kept commit). The scan
//! catches up with the writer in rounds; the last round, under the writer lock, sees only
//! what was committed while the previous round ran.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arbor_core::Hash;
use parking_lot::Mutex;

use super::{crash_point, CrashPoint, Store};
use crate::error::{Error, Result};
use crate::pack::control::GcState;
use crate::pack::log::{GcView, Log};
use crate::pack::prefix::{prefix_name, PrefixWriter};
use crate::pack::refs::children;

/// What happens to history below the kept commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum GcMode {
    /// Rolling or full node: older commits and everything only they reach are dropped, and
    /// their space is given back to the file system.
    #[default]
    Drop,
    /// Archive node: nothing is dropped; the chunks below the kept commit move to the
    /// read-only lower layer (`pack/lower/`), and the live state is copied, compact and in
    /// tree order, into the prefix.
    Archive,
}

/// What a garbage collection did.
#[derive(Debug, Clone, Default)]
pub struct GcReport {
    /// The oldest commit kept.
    pub kept_from: Option<Hash>,
    /// Its offset: the new floor of the log.
    pub floor: u64,
    /// Records kept below the floor (copied into the prefix).
    pub objects_kept: u64,
    /// Bytes of those records.
    pub bytes_kept: u64,
    /// Bytes given back to the file system (chunks removed, holes punched, old prefix).
    pub bytes_freed: u64,
    /// Commits that can no longer be checked out.
    pub commits_dropped: u64,
    /// Log bytes scanned above the floor for pointers below it.
    pub bytes_scanned: u64,
    /// Time spent finding and copying what is kept.
    pub copy_time: Duration,
    /// Time the writer was held: the final catch-up scan and the control file switch.
    pub writer_pause: Duration,
    /// Time from start to finish.
    pub total_time: Duration,
}

/// A garbage collection running on its own thread.
#[derive(Debug)]
pub struct GcHandle {
    thread: Option<JoinHandle<Result<GcReport>>>,
}

impl GcHandle {
    /// True once the collection has finished (successfully or not).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Waits for the collection and returns what it did.
    pub fn wait(mut self) -> Result<GcReport> {
        let t = self.thread.take().expect("joined once");
        t.join().unwrap_or_else(|_| Err(Error::InvalidArgument("the garbage collection thread panicked".into())))
    }
}

impl Drop for GcHandle {
    fn drop(&mut self) {
        // A store must not be left with a collection nobody waits for half-way: finish it.
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Rounds of handed-over pointers processed before the switch.
const CATCH_UP_ROUNDS: usize = 8;
/// A round with fewer handed-over pointers than this ends the rounds.
const CATCH_UP_SMALL: usize = 4096;

/// The set of copied offsets.
/// Offsets hash with one multiply (rustc-hash's Fx) rather than SipHash: the switch checks
/// thousands of them with the writer held.
type OffsetSet = HashSet<u64, rustc_hash::FxBuildHasher>;

/// A collection under way, as commits see it.
#[derive(Debug)]
pub(super) struct Pending {
    /// Its floor.
    pub floor: u64,
    /// Pointers below the floor that commits wrote since the collection started.
    pub roots: Vec<u64>,
}

/// What a store's handles and its collections share about collecting: the last collection,
/// whether one runs, and what commits hand a running one.
#[derive(Debug)]
pub(super) struct GcCoordinator {
    /// The last completed garbage collection, as the control file records it.
    last: Mutex<Option<GcState>>,
    /// A garbage collection is running.
    running: AtomicBool,
    /// While a collection runs: its floor, and the pointers below it that commits wrote.
    pending: Mutex<Option<Pending>>,
}

impl GcCoordinator {
    /// No collection running; `last` the last one completed.
    pub fn new(last: Option<GcState>) -> GcCoordinator {
        GcCoordinator { last: Mutex::new(last), running: AtomicBool::new(false), pending: Mutex::new(None) }
    }

    /// The last completed collection.
    pub fn last(&self) -> Option<GcState> {
        *self.last.lock()
    }

    /// Records a completed collection (this process's, or one a read-only handle found).
    pub fn set_last(&self, g: GcState) {
        *self.last.lock() = Some(g);
    }

    /// The floor of the collection under way, 0 if none: commits note pointers below it.
    pub fn pending_floor(&self) -> u64 {
        self.pending.lock().as_ref().map_or(0, |g| g.floor)
    }

    /// Hands a running collection the pointers below its floor a commit just wrote.
    pub fn note_roots(&self, roots: Vec<u64>) {
        if roots.is_empty() {
            return;
        }
        if let Some(g) = self.pending.lock().as_mut() {
            g.roots.extend(roots);
        }
    }

    /// The pointers handed over since the last call (`finish`: and the collection stops
    /// taking them).
    fn take_roots(&self, finish: bool) -> Vec<u64> {
        let mut pending = self.pending.lock();
        match finish {
            true => pending.take().map(|p| p.roots).unwrap_or_default(),
            false => pending.as_mut().map(|p| std::mem::take(&mut p.roots)).unwrap_or_default(),
        }
    }
}

/// Clears the pending collection however `run_gc` ends.
struct ClearPending<'a>(&'a GcCoordinator);

impl Drop for ClearPending<'_> {
    fn drop(&mut self) {
        *self.0.pending.lock() = None;
    }
}

impl Store {
    /// Starts a garbage collection in the background keeping `keep_from` and everything
    /// committed after it. Blocks keep committing meanwhile; the writer is held only for
    /// the final switch. One collection runs at a time ([`Error::GcRunning`]). A collection
    /// that would drop the commit of a named head is refused ([`Error::GcWouldDropHeads`]):
    /// [`Store::gc_window_start`] gives a `keep_from` that keeps every head.
    pub fn gc(&self, keep_from: &Hash, mode: GcMode) -> Result<GcHandle> {
        self.gc_begin()?;
        let store = self.clone();
        let hash = *keep_from;
        let thread = std::thread::Builder::new()
            .name("arbor-gc".into())
            .spawn(move || {
                background_priority();
                let r = store.run_gc(&hash, mode);
                store.shared.gc.running.store(false, Ordering::Release);
                r
            })
            .map_err(|e| crate::error::io_err("starting the gc thread", self.dir())(e))?;
        Ok(GcHandle { thread: Some(thread) })
    }

    /// Runs a garbage collection on the calling thread (see [`Store::gc`]).
    pub fn gc_blocking(&self, keep_from: &Hash, mode: GcMode) -> Result<GcReport> {
        self.gc_begin()?;
        let r = self.run_gc(keep_from, mode);
        self.shared.gc.running.store(false, Ordering::Release);
        r
    }

    /// The commit `n - 1` first-parent steps back from `from` (the `n`-th newest of its
    /// chain), or the oldest one in the store if the chain is shorter.
    pub fn nth_ancestor(&self, from: &Hash, n: u64) -> Result<Hash> {
        let mut at = *from;
        for _ in 1..n.max(1) {
            match self.commit_info(&at)?.parents.first() {
                Some(p) if self.contains(p) && self.commit_offset(p).is_ok_and(|o| o >= self.floor()) => at = *p,
                _ => break,
            }
        }
        Ok(at)
    }

    /// The oldest commit a collection must keep so that every named head keeps its commit
    /// and the `keep` commits of its chain (first parents, the head's own included); with no
    /// named head, the window of the last commit. None in a store without commits.
    pub fn gc_window_start(&self, keep: u64) -> Result<Option<Hash>> {
        let mut tips: Vec<Hash> = self.heads().into_iter().map(|(_, h)| h).collect();
        if tips.is_empty() {
            tips.extend(self.last_commit());
        }
        let mut oldest: Option<(u64, Hash)> = None;
        for tip in tips {
            let start = self.nth_ancestor(&tip, keep)?;
            let offset = self.commit_offset(&start)?;
            if oldest.is_none_or(|(o, _)| offset < o) {
                oldest = Some((offset, start));
            }
        }
        Ok(oldest.map(|(_, h)| h))
    }

    /// Named heads whose commits lie below `floor`: a collection dropping history there
    /// would take them (archive collections drop nothing).
    fn heads_below(&self, floor: u64, mode: GcMode) -> Vec<String> {
        if mode == GcMode::Archive {
            return Vec::new();
        }
        self.shared.catalog.heads().into_iter().filter(|h| h.2 < floor).map(|h| h.0).collect()
    }

    /// Offset below which the last collection dropped or moved history (0 if none ran).
    fn floor(&self) -> u64 {
        self.shared.loader.log.gc_view().floor
    }

    fn gc_begin(&self) -> Result<()> {
        if self.shared.writer.lock().is_none() {
            return Err(Error::ReadOnly);
        }
        if self.shared.gc.running.swap(true, Ordering::AcqRel) {
            return Err(Error::GcRunning);
        }
        Ok(())
    }

    fn run_gc(&self, keep_from: &Hash, mode: GcMode) -> Result<GcReport> {
        let started = Instant::now();
        let sh = &self.shared;
        let log = &sh.loader.log;
        let floor = self.commit_offset(keep_from)?;
        let old = log.gc_view();
        let mut report = GcReport { kept_from: Some(*keep_from), floor, ..GcReport::default() };
        if floor < old.floor {
            return Err(Error::CommitDropped { hash: *keep_from, kept_from: old.floor });
        }
        if floor == old.floor {
            report.floor = old.floor;
            report.total_time = started.elapsed();
            return Ok(report);
        }
        // Checked again at the switch, where the writer lock keeps heads from moving.
        let heads = self.heads_below(floor, mode);
        if !heads.is_empty() {
            return Err(Error::GcWouldDropHeads { kept_from: *keep_from, heads });
        }
        let generation = sh.gc.last().map_or(1, |g| g.generation + 1);
        let pack = log.dir.clone();
        let fs = sh.config.fs.clone();
        let mut out = PrefixWriter::create(fs.as_ref(), &pack, log.uid, generation)?;
        let mut marker = Marker { log, floor, seen: OffsetSet::default(), stack: Vec::new(), refs: Vec::new() };

        // From here on, every commit hands over the pointers below the floor it writes; what
        // was written before is scanned. The writer lock makes "before" exact.
        let scan_end = {
            let _writer = sh.writer.lock();
            *sh.gc.pending.lock() = Some(Pending { floor, roots: Vec::new() });
            log.end()
        };
        let _pending = ClearPending(&sh.gc);
        marker.scan(floor, scan_end, &mut out)?;
        report.bytes_scanned = scan_end - floor;
        // Pointers committed meanwhile: almost all reach records copied already. Rounds
        // until a round is small, so that the one under the writer lock is smaller still.
        let mut finished = usize::MAX;
        for _ in 0..CATCH_UP_ROUNDS {
            let noted = sh.gc.take_roots(false);
            marker.copy_all(&noted, &mut out)?;
            if out.len() != finished {
                out.finish(fs.as_ref(), &pack, floor)?;
                finished = out.len();
            } else if noted.len() < CATCH_UP_SMALL {
                break;
            }
        }
        crash_point(CrashPoint::GcAfterPrefix);
        report.copy_time = started.elapsed();

        // The switch, under the writer lock: the last pointers, then the new routing.
        let mut guard = sh.lock_writer()?;
        let paused = Instant::now();
        let w = &mut *guard;
        // A head set to an old commit while the collection ran: refuse now, before anything
        // switches, and take back the prefix file no control file names.
        let heads = self.heads_below(floor, mode);
        if !heads.is_empty() {
            let _ = fs.remove_file(&out.path);
            return Err(Error::GcWouldDropHeads { kept_from: *keep_from, heads });
        }
        let noted = sh.gc.take_roots(true);
        marker.copy_all(&noted, &mut out)?;
        if out.len() != finished {
            // The writer reused old nodes just now (rare): write the map again.
            out.finish(fs.as_ref(), &pack, floor)?;
        }
        let prefix = out.into_prefix(floor);
        report.objects_kept = prefix.len() as u64;
        report.bytes_kept = prefix.record_bytes();
        let archive = mode == GcMode::Archive;
        // From now on reads below the floor go to the prefix and commits may not point at
        // anything else there. The files still hold everything until the control file says
        // otherwise, so a crash before that reopens the store as it was.
        sh.gc.set_last(GcState { generation, floor, archive });
        log.set_gc_view(GcView { floor, prefix: Some(Arc::new(prefix)), archive });
        if !archive {
            report.commits_dropped = sh.catalog.forget_below(floor) as u64;
        }
        let durable_end = w.log.pos();
        let unsynced = w.unsynced.then(|| w.log.chunk());
        let (index_count, index) = w.index.snapshot();
        drop(guard);
        report.writer_pause = paused.elapsed();

        // The control file names the new prefix; until it is durable, nothing is removed.
        let switched = (|| {
            if let Some(chunk) = unsynced {
                chunk.file.sync_data().map_err(crate::error::io_err("syncing", &chunk.path))?;
            }
            index.sync_data().map_err(crate::error::io_err("syncing", sh.dir.join("commits.idx")))?;
            sh.store_control(durable_end, index_count)
        })();
        if let Err(e) = switched {
            // Memory is ahead of the disk: refuse writes until a reopen reads the disk again.
            sh.poisoned.store(true, Ordering::Release);
            return Err(e);
        }
        crash_point(CrashPoint::GcAfterControl);

        // Giving space back needs no lock: nothing reads below the floor from chunks now.
        report.bytes_freed = finish_release(log, fs.as_ref(), generation, floor, archive)?;
        crash_point(CrashPoint::GcAfterRelease);
        report.total_time = started.elapsed();
        Ok(report)
    }
}

/// The routing a completed collection left, as its control file records it: its prefix,
/// opened and checked against the control file's floor.
pub(super) fn load_view(fs: &dyn crate::io::FileSystem, log: &Log, g: GcState) -> Result<GcView> {
    let prefix = crate::pack::prefix::Prefix::open(fs, &log.dir, log.uid, g.generation)?;
    if prefix.floor != g.floor {
        let kind = crate::error::Corruption::PrefixMismatch { field: "floor", expected: g.floor, found: prefix.floor };
        return Err(Error::Corrupt { file: prefix.path.clone(), offset: 0, kind });
    }
    Ok(GcView { floor: g.floor, prefix: Some(Arc::new(prefix)), archive: g.archive })
}

/// Lowers the calling thread's CPU priority (Linux: nice +10 for this thread only), so that a
/// collection takes the cores blocks leave idle rather than time from them.
fn background_priority() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // Best effort: at worst the collection competes with the writer as an equal.
        let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 10);
    }
}

/// Removes what a collection of `generation` made unneeded: older prefix files and the
/// chunks (or chunk parts) below `floor`. Also run at open, to finish after a crash.
pub(super) fn finish_release(
    log: &Log,
    fs: &dyn crate::io::FileSystem,
    generation: u64,
    floor: u64,
    archive: bool,
) -> Result<u64> {
    let mut freed = 0;
    let dir = &log.dir;
    let names = fs.list(dir).map_err(crate::error::io_err("listing", dir))?;
    for name in names {
        let stale = crate::pack::prefix::parse_prefix_name(&name).is_some_and(|g| g != generation);
        if stale {
            let path = dir.join(&name);
            if let Ok(f) = fs.open(&path, crate::io::OpenOptions::default()) {
                freed += f.len().unwrap_or(0);
            }
            fs.remove_file(&path).map_err(crate::error::io_err("removing", &path))?;
        }
    }
    freed += log.release_below(floor, archive)?;
    debug_assert!(fs.exists(&dir.join(prefix_name(generation))));
    Ok(freed)
}

/// Finds and copies the records below the floor that are reachable.
struct Marker<'a> {
    log: &'a Log,
    floor: u64,
    seen: OffsetSet,
    stack: Vec<u64>,
    refs: Vec<u64>,
}

impl Marker<'_> {
    /// Scans the records in `[from, to)` (all at or above the floor) for pointers below the
    /// floor, and copies what those reach.
    fn scan(&mut self, from: u64, to: u64, out: &mut PrefixWriter) -> Result<()> {
        let floor = self.floor;
        let mut roots = Vec::new();
        let mut refs = std::mem::take(&mut self.refs);
        self.log.for_each_record(from, to, &mut |at, k, body| {
            refs.clear();
            children(k, body, at, &mut refs).map_err(|e| self.log.corrupt_at(at, e))?;
            roots.extend(refs.iter().copied().filter(|&o| o < floor));
            Ok(())
        })?;
        self.refs = refs;
        self.copy_all(&roots, out)
    }

    /// Copies what each of `roots` reaches.
    fn copy_all(&mut self, roots: &[u64], out: &mut PrefixWriter) -> Result<()> {
        for &r in roots {
            if !self.seen.contains(&r) {
                self.copy_from(r, out)?;
            }
        }
        Ok(())
    }

    /// Copies the record at `root` and everything it reaches that was not copied yet, in
    /// depth-first order (which keeps a directory's records together in the prefix).
    fn copy_from(&mut self, root: u64, out: &mut PrefixWriter) -> Result<()> {
        self.stack.push(root);
        while let Some(at) = self.stack.pop() {
            if !self.seen.insert(at) {
                continue;
            }
            let frame = self.log.read(at)?;
            out.append(at, frame.raw())?;
            self.refs.clear();
            children(frame.kind(), frame.body(), at, &mut self.refs).map_err(|e| self.log.corrupt_at(at, e))?;
            self.stack.extend(self.refs.iter().rev().copied().filter(|o| !self.seen.contains(o)));
        }
        Ok(())
    }
}
