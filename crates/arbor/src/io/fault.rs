//! [`FaultFs`]: wraps any [`FileSystem`] to crash the process at a chosen
//! operation (optionally tearing the write under way) and to inject
//! `ENOSPC` and `EIO`, for crash harnesses that run on a real disk.
//!
//! [`MemFs`](super::MemFs) models a power loss inside one process; `FaultFs`
//! serves the other half of crash testing: a process that dies (SIGKILL) at
//! an exact, reproducible instant of its I/O, over the real file system, so
//! that the next process must recover from what the kernel kept. With
//! [`FaultFs::track_unsynced`], a crash may also be a power loss: the file
//! data written since each file's last `sync_data` is undone (all of it, or
//! all but a prefix of the writes) before the process dies, while names
//! (creations, renames, removals) stay as they are, which is one of the
//! states a journaling file system can leave. Operations
//! are numbered from 1 in the order they are called; with a fixed workload
//! the numbering is the same on every run, so a seed that picks "crash at
//! operation N" replays exactly.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{File, FileSystem, LockGuard, OpenOptions, SplitMix64};

/// An error [`FaultFs`] injects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InjectedFault {
    /// `ENOSPC` on the first write-class operation from the armed one on (a
    /// write may land a prefix of its bytes first, as a short write does).
    /// The disk then stays full: every later write-class operation fails the
    /// same way until [`FaultFs::clear_faults`] (space was freed).
    NoSpace,
    /// `EIO` on the armed operation whatever its class (a read, a write or a
    /// sync), once.
    Io,
}

/// How the process dies at its crash operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashStyle {
    /// Before the operation has any effect.
    Before,
    /// Once the operation has completed.
    After,
    /// Part-way through a write: this many leading bytes of it reached the
    /// file, the rest did not.
    Torn(usize),
    /// A power loss before the operation: of the writes not yet synced
    /// (across all files), `kept` reached the disk (each file keeps a prefix
    /// of its writes, in order) and `lost` were undone.
    PowerLoss {
        /// Unsynced writes kept.
        kept: usize,
        /// Unsynced writes undone.
        lost: usize,
    },
}

/// Where [`FaultFs`] crashed: passed to the crash hook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KillPoint {
    /// Number of the operation (from 1).
    pub op: u64,
    /// The call, e.g. `write_all_at` or `sync_dir`.
    pub call: &'static str,
    /// The file or directory it was about.
    pub path: PathBuf,
    /// When in the operation the crash happened.
    pub style: CrashStyle,
}

/// An operation [`FaultFs`] failed with an injected error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultRecord {
    /// Number of the operation (from 1).
    pub op: u64,
    /// The call, e.g. `sync_data`.
    pub call: &'static str,
    /// The file or directory it was about.
    pub path: PathBuf,
    /// `ENOSPC` or `EIO`.
    pub fault: InjectedFault,
}

/// Called at the crash operation. A harness kills its own process here
/// (`SIGKILL`); if the hook returns, the operation fails and so does every
/// later one, as if the process were gone.
pub type CrashHook = Arc<dyn Fn(&KillPoint) + Send + Sync>;

/// Which operations [`FaultFs::crash_at`] counts to find its crash operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashCounter {
    /// Every numbered operation (reads included).
    All,
    /// Only operations that change the disk: writes, length changes, creations, renames,
    /// removals and syncs. Crashes then land where a torn write or a lost sync matters.
    Mutations,
}

/// Operation classes, for deciding which fault applies.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Read,
    Write,
    Sync,
}

#[derive(Default)]
struct Plan {
    crash_at: Option<(CrashCounter, u64, CrashHook)>,
    fault_at: Option<(u64, InjectedFault)>,
    disk_full: bool,
}

/// How to undo one unsynced change of a file: write `old` back at
/// `offset`, then set the length back to `old_len`.
struct Undo {
    offset: u64,
    old: Vec<u8>,
    old_len: u64,
}

/// A file's changes since its last successful `sync_data`, oldest first.
struct Unsynced {
    file: Arc<dyn File>,
    undo: Vec<Undo>,
}

struct State {
    inner: Arc<dyn FileSystem>,
    /// Whether unsynced writes are tracked, for power-loss crashes.
    track: AtomicBool,
    /// Per path; a BTreeMap so that a power loss undoes files in a fixed order.
    unsynced: Mutex<BTreeMap<PathBuf, Unsynced>>,
    ops: AtomicU64,
    mutations: AtomicU64,
    faults_fired: AtomicU64,
    /// Every injected failure, in order.
    fault_log: Mutex<Vec<FaultRecord>>,
    dead: AtomicBool,
    plan: Mutex<Plan>,
    rng: Mutex<SplitMix64>,
}

/// What to do with one operation.
enum Verdict {
    Run,
    Fail(io::Error),
    Crash(u64, CrashHook),
}

fn errno(e: rustix::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

fn dead() -> io::Error {
    io::Error::other("FaultFs: the process crashed at an earlier operation")
}

impl State {
    /// Numbers the operation and decides its fate.
    fn verdict(&self, class: Class) -> Verdict {
        if self.dead.load(Ordering::Acquire) {
            return Verdict::Fail(dead());
        }
        let n = self.ops.fetch_add(1, Ordering::AcqRel) + 1;
        let m = if class == Class::Read { 0 } else { self.mutations.fetch_add(1, Ordering::AcqRel) + 1 };
        let mut plan = self.plan.lock();
        if let Some((counter, at, hook)) = &plan.crash_at {
            let count = match counter {
                CrashCounter::All => n,
                CrashCounter::Mutations => m,
            };
            if *at == count {
                let hook = hook.clone();
                plan.crash_at = None;
                return Verdict::Crash(n, hook);
            }
        }
        if plan.disk_full && class == Class::Write {
            self.faults_fired.fetch_add(1, Ordering::Relaxed);
            return Verdict::Fail(errno(rustix::io::Errno::NOSPC));
        }
        let fire = match plan.fault_at {
            Some((at, InjectedFault::NoSpace)) => at <= n && class == Class::Write,
            Some((at, InjectedFault::Io)) => at == n,
            None => false,
        };
        if fire {
            let (_, fault) = plan.fault_at.take().expect("fire implies an armed fault");
            self.faults_fired.fetch_add(1, Ordering::Relaxed);
            return Verdict::Fail(match fault {
                InjectedFault::NoSpace => {
                    plan.disk_full = true;
                    errno(rustix::io::Errno::NOSPC)
                }
                InjectedFault::Io => errno(rustix::io::Errno::IO),
            });
        }
        Verdict::Run
    }

    /// Runs one operation under the plan. `torn` performs a prefix of the
    /// operation's write (given its length) for torn crashes and short
    /// writes; `len` is that write's length (0 if the call writes no bytes).
    fn run<T>(
        &self,
        class: Class,
        call: &'static str,
        path: &Path,
        len: usize,
        torn: impl Fn(usize) -> io::Result<()>,
        op: impl FnOnce() -> io::Result<T>,
    ) -> io::Result<T> {
        match self.verdict(class) {
            Verdict::Run => op(),
            Verdict::Fail(e) => {
                let fault = match e.raw_os_error() {
                    Some(n) if n == rustix::io::Errno::NOSPC.raw_os_error() => Some(InjectedFault::NoSpace),
                    Some(_) => Some(InjectedFault::Io),
                    None => None,
                };
                if let Some(fault) = fault {
                    let op = self.ops.load(Ordering::Acquire);
                    self.fault_log.lock().push(FaultRecord { op, call, path: path.to_path_buf(), fault });
                }
                // A full disk may take part of a write before refusing the rest.
                if len > 1 && e.raw_os_error() == Some(rustix::io::Errno::NOSPC.raw_os_error()) {
                    let part = self.rng.lock().range(0, len - 1);
                    let _ = torn(part);
                }
                Err(e)
            }
            Verdict::Crash(n, hook) => {
                let power = self.track.load(Ordering::Acquire) && self.rng.lock().chance(1, 3);
                let pick = self.rng.lock().below(if len > 0 { 4 } else { 2 });
                let style = match pick {
                    _ if power => self.power_loss(),
                    0 => CrashStyle::Before,
                    1 => CrashStyle::After,
                    _ => CrashStyle::Torn(self.rng.lock().range(0, len - 1)),
                };
                match style {
                    CrashStyle::Before | CrashStyle::PowerLoss { .. } => {}
                    CrashStyle::After => {
                        op()?;
                    }
                    CrashStyle::Torn(part) => torn(part)?,
                }
                hook(&KillPoint { op: n, call, path: path.to_path_buf(), style });
                self.dead.store(true, Ordering::Release);
                Err(dead())
            }
        }
    }
}

impl State {
    /// Remembers how to undo a change of `len` bytes at `offset` of `file`
    /// (a write, a hole, or a length change from `offset` on), if tracking.
    fn record(&self, file: &Arc<dyn File>, path: &Path, offset: u64, len: u64) -> io::Result<()> {
        if !self.track.load(Ordering::Acquire) || self.dead.load(Ordering::Acquire) {
            return Ok(());
        }
        let old_len = file.len()?;
        let end = offset.saturating_add(len).min(old_len);
        let mut old = vec![0; end.saturating_sub(offset) as usize];
        file.read_exact_at(&mut old, offset)?;
        let mut map = self.unsynced.lock();
        let entry = map.entry(path.to_path_buf()).or_insert_with(|| Unsynced { file: file.clone(), undo: Vec::new() });
        entry.undo.push(Undo { offset, old, old_len });
        Ok(())
    }

    /// Undoes the unsynced writes of every file but a random prefix of each.
    fn power_loss(&self) -> CrashStyle {
        let map = std::mem::take(&mut *self.unsynced.lock());
        let (mut kept, mut lost) = (0, 0);
        for (_, u) in map {
            let keep = self.rng.lock().range(0, u.undo.len());
            kept += keep;
            lost += u.undo.len() - keep;
            for undo in u.undo[keep..].iter().rev() {
                // Best effort: the process dies next whatever happens here.
                let _ = u.file.write_all_at(&undo.old, undo.offset);
                let _ = u.file.set_len(undo.old_len);
            }
        }
        CrashStyle::PowerLoss { kept, lost }
    }

    fn synced(&self, path: &Path) {
        self.unsynced.lock().remove(path);
    }
}

/// A [`FileSystem`] that forwards to another one and crashes or fails at
/// chosen operations; see the module docs. Cloning gives another handle to
/// the same counters and plan.
#[derive(Clone)]
pub struct FaultFs {
    state: Arc<State>,
}

impl fmt::Debug for FaultFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultFs")
            .field("inner", &self.state.inner)
            .field("ops", &self.ops())
            .field("faults_fired", &self.faults_fired())
            .finish_non_exhaustive()
    }
}

impl FaultFs {
    /// Wraps `inner`, with nothing armed. `seed` drives the choices made at
    /// a crash or a fault (crash style, length of a torn or short write).
    pub fn new(inner: Arc<dyn FileSystem>, seed: u64) -> FaultFs {
        FaultFs {
            state: Arc::new(State {
                inner,
                track: AtomicBool::new(false),
                unsynced: Mutex::new(BTreeMap::new()),
                ops: AtomicU64::new(0),
                mutations: AtomicU64::new(0),
                faults_fired: AtomicU64::new(0),
                fault_log: Mutex::new(Vec::new()),
                dead: AtomicBool::new(false),
                plan: Mutex::new(Plan::default()),
                rng: Mutex::new(SplitMix64::new(seed)),
            }),
        }
    }

    /// Crashes at operation number `op` as `counter` counts (from 1 since
    /// creation; `exists`, `lock_exclusive` and `drop_cache` are never
    /// counted), calling `hook`. Replaces an earlier crash plan.
    pub fn crash_at(&self, counter: CrashCounter, op: u64, hook: CrashHook) {
        self.state.plan.lock().crash_at = Some((counter, op, hook));
    }

    /// Injects `fault` at operation number `op` (see [`InjectedFault`] for
    /// which operation it lands on). Replaces an earlier armed fault.
    pub fn fail_at(&self, op: u64, fault: InjectedFault) {
        self.state.plan.lock().fault_at = Some((op, fault));
    }

    /// Tracks the writes not yet synced from now on, so that crashes may be
    /// power losses (a third of them; see [`CrashStyle::PowerLoss`]). Costs a
    /// read of the bytes each write replaces.
    pub fn track_unsynced(&self) {
        self.state.track.store(true, Ordering::Release);
    }

    /// Disarms a fault that has not fired and ends a full disk (space was
    /// freed). A planned crash stays armed.
    pub fn clear_faults(&self) {
        let mut plan = self.state.plan.lock();
        plan.fault_at = None;
        plan.disk_full = false;
    }

    /// Operations numbered so far.
    pub fn ops(&self) -> u64 {
        self.state.ops.load(Ordering::Acquire)
    }

    /// Of those, operations that change the disk (see [`CrashCounter::Mutations`]).
    pub fn mutations(&self) -> u64 {
        self.state.mutations.load(Ordering::Acquire)
    }

    /// Faults injected so far (each refused operation of a full disk counts).
    pub fn faults_fired(&self) -> u64 {
        self.state.faults_fired.load(Ordering::Relaxed)
    }

    /// Every injected failure so far, in order: what a caller can compare with the errors it
    /// saw (a failure that no caller reported was absorbed somewhere).
    pub fn fault_log(&self) -> Vec<FaultRecord> {
        self.state.fault_log.lock().clone()
    }

    fn no_torn(_: usize) -> io::Result<()> {
        Ok(())
    }
}

impl FileSystem for FaultFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let s = &self.state;
        s.run(Class::Write, "create_dir_all", path, 0, FaultFs::no_torn, || s.inner.create_dir_all(path))
    }

    fn open(&self, path: &Path, opts: OpenOptions) -> io::Result<Arc<dyn File>> {
        let s = &self.state;
        let class = if opts.create || opts.truncate { Class::Write } else { Class::Read };
        let inner = s.run(class, "open", path, 0, FaultFs::no_torn, || s.inner.open(path, opts))?;
        Ok(Arc::new(FaultFile { inner, state: s.clone(), path: path.to_path_buf() }))
    }

    fn exists(&self, path: &Path) -> bool {
        self.state.inner.exists(path)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let s = &self.state;
        s.run(Class::Read, "list", dir, 0, FaultFs::no_torn, || s.inner.list(dir))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let s = &self.state;
        s.run(Class::Write, "rename", to, 0, FaultFs::no_torn, || {
            s.inner.rename(from, to)?;
            let mut map = s.unsynced.lock();
            map.remove(to);
            if let Some(u) = map.remove(from) {
                map.insert(to.to_path_buf(), u);
            }
            Ok(())
        })
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let s = &self.state;
        s.run(Class::Write, "remove_file", path, 0, FaultFs::no_torn, || {
            s.inner.remove_file(path)?;
            s.synced(path);
            Ok(())
        })
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let s = &self.state;
        s.run(Class::Sync, "sync_dir", dir, 0, FaultFs::no_torn, || s.inner.sync_dir(dir))
    }

    fn lock_exclusive(&self, path: &Path) -> io::Result<Box<dyn LockGuard>> {
        self.state.inner.lock_exclusive(path)
    }
}

/// A file opened through [`FaultFs`].
struct FaultFile {
    inner: Arc<dyn File>,
    state: Arc<State>,
    path: PathBuf,
}

impl fmt::Debug for FaultFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultFile").field("path", &self.path).finish_non_exhaustive()
    }
}

impl File for FaultFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let (s, inner) = (&self.state, &self.inner);
        s.run(Class::Read, "read_at", &self.path, 0, FaultFs::no_torn, || inner.read_at(buf, offset))
    }

    fn write_all_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        let (s, inner) = (&self.state, &self.inner);
        s.record(inner, &self.path, offset, data.len() as u64)?;
        let torn = |part: usize| inner.write_all_at(&data[..part], offset);
        s.run(Class::Write, "write_all_at", &self.path, data.len(), torn, || inner.write_all_at(data, offset))
    }

    fn len(&self) -> io::Result<u64> {
        let (s, inner) = (&self.state, &self.inner);
        s.run(Class::Read, "len", &self.path, 0, FaultFs::no_torn, || inner.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let (s, inner) = (&self.state, &self.inner);
        s.record(inner, &self.path, len, u64::MAX)?;
        s.run(Class::Write, "set_len", &self.path, 0, FaultFs::no_torn, || inner.set_len(len))
    }

    fn sync_data(&self) -> io::Result<()> {
        let (s, inner) = (&self.state, &self.inner);
        s.run(Class::Sync, "sync_data", &self.path, 0, FaultFs::no_torn, || {
            inner.sync_data()?;
            s.synced(&self.path);
            Ok(())
        })
    }

    fn drop_cache(&self) -> io::Result<()> {
        self.inner.drop_cache()
    }

    fn punch_hole(&self, offset: u64, len: u64) -> io::Result<()> {
        let (s, inner) = (&self.state, &self.inner);
        s.record(inner, &self.path, offset, len)?;
        s.run(Class::Write, "punch_hole", &self.path, 0, FaultFs::no_torn, || inner.punch_hole(offset, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::MemFs;

    fn rw() -> OpenOptions {
        OpenOptions { create: true, write: true, truncate: false }
    }

    fn wrap(mem: &MemFs, seed: u64) -> FaultFs {
        FaultFs::new(Arc::new(mem.clone()), seed)
    }

    #[test]
    fn numbers_operations_and_crashes_at_the_chosen_one() {
        let mem = MemFs::new();
        let fs = wrap(&mem, 3);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        fs.crash_at(CrashCounter::All, 3, Arc::new(move |k: &KillPoint| seen2.lock().push(k.clone())));
        let f = fs.open(Path::new("f"), rw()).unwrap(); // op 1
        f.write_all_at(b"abcd", 0).unwrap(); // op 2
        assert!(f.write_all_at(b"efgh", 4).is_err()); // op 3: the crash
        assert!(f.read_at(&mut [0; 4], 0).is_err(), "every later operation fails");
        let kills = seen.lock().clone();
        assert_eq!(kills.len(), 1);
        assert_eq!((kills[0].op, kills[0].call), (3, "write_all_at"));
        let bytes = mem.file_bytes(Path::new("f")).unwrap();
        let expected_len = match kills[0].style {
            CrashStyle::Before => 4,
            CrashStyle::After => 8,
            CrashStyle::Torn(part) => {
                assert!(part < 4);
                4 + part
            }
            CrashStyle::PowerLoss { .. } => unreachable!("unsynced writes are not tracked"),
        };
        assert_eq!(bytes.len(), expected_len, "{:?}", kills[0].style);
        assert_eq!(&bytes[..], &b"abcdefgh"[..expected_len]);
    }

    #[test]
    fn every_style_occurs_across_seeds() {
        let mut styles = [false; 3];
        for seed in 0..64 {
            let fs = wrap(&MemFs::new(), seed);
            let style = Arc::new(Mutex::new(None));
            let s2 = style.clone();
            fs.crash_at(CrashCounter::All, 2, Arc::new(move |k: &KillPoint| *s2.lock() = Some(k.style)));
            let f = fs.open(Path::new("f"), rw()).unwrap();
            let _ = f.write_all_at(b"0123456789", 0);
            let i = match style.lock().expect("crashed") {
                CrashStyle::Before => 0,
                CrashStyle::After => 1,
                CrashStyle::Torn(_) => 2,
                CrashStyle::PowerLoss { .. } => unreachable!("unsynced writes are not tracked"),
            };
            styles[i] = true;
        }
        assert_eq!(styles, [true; 3]);
    }

    #[test]
    fn no_space_is_sticky_until_cleared_and_may_write_a_prefix() {
        let mem = MemFs::new();
        let fs = wrap(&mem, 9);
        let f = fs.open(Path::new("f"), rw()).unwrap(); // op 1
        fs.fail_at(2, InjectedFault::NoSpace);
        assert!(f.read_at(&mut [0; 1], 0).is_ok(), "a read is not refused for a full disk"); // op 2
        let e = f.write_all_at(b"0123456789", 0).unwrap_err(); // op 3
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        let written = mem.file_bytes(Path::new("f")).unwrap();
        assert!(written.len() < 10 && b"0123456789".starts_with(&written));
        assert_eq!(f.set_len(0).unwrap_err().kind(), io::ErrorKind::StorageFull);
        assert!(f.sync_data().is_ok(), "a sync needs no space");
        assert_eq!(fs.faults_fired(), 2);
        let log = fs.fault_log();
        assert_eq!(log.iter().map(|r| (r.op, r.call)).collect::<Vec<_>>(), [(3, "write_all_at"), (4, "set_len")]);
        fs.clear_faults();
        f.write_all_at(b"xy", 0).unwrap();
    }

    #[test]
    fn eio_hits_exactly_the_armed_operation_once() {
        let fs = wrap(&MemFs::new(), 1);
        let f = fs.open(Path::new("f"), rw()).unwrap(); // op 1
        f.write_all_at(b"ab", 0).unwrap(); // op 2
        fs.fail_at(4, InjectedFault::Io);
        f.sync_data().unwrap(); // op 3
        let e = f.read_at(&mut [0; 2], 0).unwrap_err(); // op 4
        assert_eq!(e.raw_os_error(), Some(rustix::io::Errno::IO.raw_os_error()));
        assert_eq!(f.read_at(&mut [0; 2], 0).unwrap(), 2);
        assert_eq!(fs.ops(), 5);
        assert_eq!(fs.mutations(), 3, "open with create, write, sync");
    }

    #[test]
    fn mutation_counter_skips_reads() {
        let fs = wrap(&MemFs::new(), 5);
        let hit = Arc::new(Mutex::new(None));
        let h2 = hit.clone();
        fs.crash_at(CrashCounter::Mutations, 2, Arc::new(move |k: &KillPoint| *h2.lock() = Some(k.call)));
        let f = fs.open(Path::new("f"), rw()).unwrap(); // mutation 1
        for _ in 0..5 {
            f.read_at(&mut [0; 1], 0).unwrap();
        }
        assert!(f.sync_data().is_err()); // mutation 2
        assert_eq!(*hit.lock(), Some("sync_data"));
    }

    #[test]
    fn power_loss_undoes_unsynced_writes_only_keeping_a_prefix() {
        let mut outcomes = std::collections::BTreeSet::new();
        for seed in 0..40 {
            let mem = MemFs::new();
            let fs = wrap(&mem, seed);
            fs.track_unsynced();
            let style = Arc::new(Mutex::new(None));
            let s2 = style.clone();
            // Operation 7 is the final read: the crash comes before it.
            fs.crash_at(CrashCounter::All, 7, Arc::new(move |k: &KillPoint| *s2.lock() = Some(k.style)));
            let f = fs.open(Path::new("f"), rw()).unwrap(); // 1
            f.write_all_at(b"durable", 0).unwrap(); // 2
            f.sync_data().unwrap(); // 3
            f.write_all_at(b"+one", 7).unwrap(); // 4
            f.write_all_at(b"XY", 0).unwrap(); // 5
            f.set_len(9).unwrap(); // 6
            let _ = f.read_at(&mut [0; 1], 0); // 7
            let bytes = mem.file_bytes(Path::new("f")).unwrap();
            let got = *style.lock();
            match got.expect("crashed") {
                CrashStyle::PowerLoss { kept, lost } => {
                    assert_eq!(kept + lost, 3);
                    let expected: &[u8] = [&b"durable"[..], b"durable+one", b"XYrable+one", b"XYrable+o"][kept];
                    assert_eq!(bytes, expected, "kept {kept}");
                    outcomes.insert(kept);
                }
                _ => assert_eq!(bytes, b"XYrable+o", "a plain crash loses nothing the kernel has"),
            }
        }
        assert_eq!(outcomes.len(), 4, "every prefix is kept by some seed: {outcomes:?}");
    }
}
