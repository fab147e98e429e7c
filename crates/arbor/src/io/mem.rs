//! [`MemFs`]: an in-memory file system that models power loss, for crash
//! tests.
//!
//! The model: every file has *current* bytes (what reads see) and *durable*
//! bytes (as of its last `sync_data`). Every directory has a *current* and a
//! *durable* set of entries (name → file or directory); `sync_dir` makes the
//! current entries durable. Directories are nodes, not path prefixes, so a
//! directory's entries move with it when it is renamed, and a file whose
//! directory's own entry was never made durable is lost with it.
//! [`MemFs::crash`] builds the disk a power loss would leave: it walks the
//! durable entries from the root and keeps each reachable file's durable
//! bytes (optionally with torn writes).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::{File, FileSystem, LockGuard, OpenOptions};

/// Id of the root directory, which always exists and is always durable.
const ROOT: u64 = 0;

/// Largest file MemFs accepts, so that a bogus offset fails instead of
/// aborting the test on allocation.
const MAX_FILE_LEN: u64 = 1 << 32;

/// What happens to a file's unsynced writes in [`MemFs::crash`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TornWrites {
    /// All unsynced writes are lost: each file has its durable bytes.
    None,
    /// For a file whose current bytes extend its durable bytes (unsynced
    /// appends), a random-length prefix of the appended bytes survives.
    /// Other files get their durable bytes. The value seeds the randomness.
    Keep(u64),
    /// Random bytes overwrite a random non-empty part of each file's
    /// unsynced region: the surviving part of an append (a random prefix
    /// of at least one byte), or else the span of bytes overwritten since
    /// the last sync. The value seeds the randomness.
    Garbage(u64),
}

/// Which operations [`MemFs::fail_after`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// `write_all_at` and `set_len`.
    Write,
    /// `sync_data` and `sync_dir`.
    Sync,
    /// Both writes and syncs.
    Any,
}

/// What a [`SyncPoint`] syncs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncKind {
    /// [`File::sync_data`].
    File,
    /// [`FileSystem::sync_dir`].
    Dir,
}

/// A point just before or just after a sync, passed to the sync hook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncPoint {
    /// File or directory sync.
    pub kind: SyncKind,
    /// The directory, or the path the file was opened with.
    pub path: PathBuf,
    /// `true` before the sync takes effect, `false` after it succeeded.
    pub before: bool,
    /// Index of this sync among all syncs of this MemFs (from 0); the
    /// before and after points of one sync share it.
    pub seq: u64,
}

/// Operation counters of a [`MemFs`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemFsStats {
    /// `write_all_at` and `set_len` calls, including failed ones (so that a
    /// count from a clean run can drive [`MemFs::fail_after`]).
    pub writes: u64,
    /// `sync_data` and `sync_dir` calls, including failed ones.
    pub syncs: u64,
    /// Bytes written by successful `write_all_at` calls.
    pub bytes_written: u64,
}

/// Called at every [`SyncPoint`].
pub type SyncHook = Box<dyn Fn(SyncPoint) + Send + Sync>;

/// The stored hook: shared so it can be called without holding the lock.
type SharedHook = Arc<dyn Fn(SyncPoint) + Send + Sync>;

/// An in-memory file system that models power loss; see the module docs.
///
/// Cloning gives another handle to the same file system. Paths are
/// interpreted from a single root (`/a`, `a` and `./a` are the same), and
/// must be UTF-8.
#[derive(Clone, Default)]
pub struct MemFs {
    inner: Arc<Inner>,
}

struct Inner {
    ns: Mutex<Namespace>,
    /// Ids of locked files; per file, like `flock`.
    locks: Mutex<HashSet<u64>>,
    hook: RwLock<Option<SharedHook>>,
    fault: Mutex<Option<Fault>>,
    writes: AtomicU64,
    syncs: AtomicU64,
    bytes_written: AtomicU64,
}

impl Default for Inner {
    fn default() -> Self {
        let mut dirs = HashMap::new();
        dirs.insert(ROOT, Dir::default());
        Inner::with_namespace(Namespace { dirs, next_id: ROOT + 1 })
    }
}

#[derive(Debug)]
struct Fault {
    remaining: u64,
    kind: FaultKind,
}

/// Lock order: `Inner::ns` before any `FileNode::data`.
struct Namespace {
    /// Every directory ever created; removed directories are not collected
    /// (there is no `remove_dir`, so only rename-over-empty-dir leaks one).
    dirs: HashMap<u64, Dir>,
    next_id: u64,
}

#[derive(Default)]
struct Dir {
    current: BTreeMap<String, Entry>,
    durable: BTreeMap<String, Entry>,
}

#[derive(Clone)]
enum Entry {
    File(Arc<FileNode>),
    Dir(u64),
}

struct FileNode {
    id: u64,
    data: RwLock<FileData>,
}

struct FileData {
    current: Vec<u8>,
    durable: Vec<u8>,
    /// Lowest offset changed since the last sync (`usize::MAX` if none):
    /// `current` and `durable` agree below it, which lets `sync_data` copy
    /// only the changed tail.
    dirty_from: usize,
}

impl FileNode {
    fn new(id: u64, bytes: Vec<u8>) -> Arc<FileNode> {
        Arc::new(FileNode {
            id,
            data: RwLock::new(FileData { durable: bytes.clone(), current: bytes, dirty_from: usize::MAX }),
        })
    }
}

fn error(kind: io::ErrorKind, what: &str, path: &Path) -> io::Error {
    io::Error::new(kind, format!("{what}: {}", path.display()))
}

fn injected() -> io::Error {
    io::Error::other("injected fault")
}

/// Splits a path into names from the root; `..` pops, as on a real file
/// system without symlinks.
fn components(path: &Path) -> io::Result<Vec<String>> {
    let mut out = Vec::new();
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                let name = name.to_str().ok_or_else(|| error(io::ErrorKind::InvalidInput, "non-UTF-8 path", path))?;
                out.push(name.to_owned());
            }
        }
    }
    Ok(out)
}

impl Namespace {
    fn new_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn dir(&self, id: u64) -> &Dir {
        // Entries only ever name directories present in `dirs`.
        &self.dirs[&id]
    }

    fn dir_mut(&mut self, id: u64) -> &mut Dir {
        self.dirs.get_mut(&id).expect("dangling directory id")
    }

    /// The directory named by `names`, following current entries.
    fn resolve_dir(&self, names: &[String], path: &Path) -> io::Result<u64> {
        let mut id = ROOT;
        for name in names {
            match self.dir(id).current.get(name) {
                Some(Entry::Dir(d)) => id = *d,
                Some(Entry::File(_)) => return Err(error(io::ErrorKind::NotADirectory, "not a directory", path)),
                None => return Err(error(io::ErrorKind::NotFound, "no such directory", path)),
            }
        }
        Ok(id)
    }

    /// The parent directory and the last name of a non-root path.
    fn resolve_parent<'a>(&self, names: &'a [String], path: &Path) -> io::Result<Option<(u64, &'a String)>> {
        match names.split_last() {
            None => Ok(None),
            Some((name, parent)) => Ok(Some((self.resolve_dir(parent, path)?, name))),
        }
    }

    /// The entry at `names`, if any.
    fn lookup(&self, names: &[String], path: &Path) -> io::Result<Option<Entry>> {
        Ok(match self.resolve_parent(names, path)? {
            None => Some(Entry::Dir(ROOT)),
            Some((parent, name)) => self.dir(parent).current.get(name).cloned(),
        })
    }

    /// Opens (and maybe creates) the file at `names`.
    fn open_file(&mut self, names: &[String], path: &Path, create: bool) -> io::Result<Arc<FileNode>> {
        let Some((parent, name)) = self.resolve_parent(names, path)? else {
            return Err(error(io::ErrorKind::IsADirectory, "is a directory", path));
        };
        match self.dir(parent).current.get(name) {
            Some(Entry::File(f)) => Ok(f.clone()),
            Some(Entry::Dir(_)) => Err(error(io::ErrorKind::IsADirectory, "is a directory", path)),
            None if create => {
                let node = FileNode::new(self.new_id(), Vec::new());
                self.dir_mut(parent).current.insert(name.clone(), Entry::File(node.clone()));
                Ok(node)
            }
            None => Err(error(io::ErrorKind::NotFound, "no such file", path)),
        }
    }

    fn file(&self, path: &Path) -> io::Result<Arc<FileNode>> {
        match self.lookup(&components(path)?, path)? {
            Some(Entry::File(f)) => Ok(f),
            Some(Entry::Dir(_)) => Err(error(io::ErrorKind::IsADirectory, "is a directory", path)),
            None => Err(error(io::ErrorKind::NotFound, "no such file", path)),
        }
    }
}

impl Inner {
    fn with_namespace(ns: Namespace) -> Inner {
        Inner {
            ns: Mutex::new(ns),
            locks: Mutex::new(HashSet::new()),
            hook: RwLock::new(None),
            fault: Mutex::new(None),
            writes: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
        }
    }

    /// Counts one operation against an armed fault; fails if it is the one.
    fn check_fault(&self, is_sync: bool) -> io::Result<()> {
        let mut fault = self.fault.lock();
        if let Some(f) = fault.as_mut() {
            let counts = match f.kind {
                FaultKind::Any => true,
                FaultKind::Write => !is_sync,
                FaultKind::Sync => is_sync,
            };
            if counts {
                f.remaining -= 1;
                if f.remaining == 0 {
                    *fault = None;
                    return Err(injected());
                }
            }
        }
        Ok(())
    }

    fn begin_write(&self) -> io::Result<()> {
        self.writes.fetch_add(1, Ordering::Relaxed);
        self.check_fault(false)
    }

    fn call_hook(&self, point: SyncPoint) {
        // Clone out so that no lock is held while the hook runs: it may call
        // `crash` or replace the hook.
        let hook = self.hook.read().clone();
        if let Some(hook) = hook {
            hook(point);
        }
    }

    /// Runs a sync between its two sync points, with fault injection.
    fn sync_op(&self, kind: SyncKind, path: &Path, op: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
        let seq = self.syncs.fetch_add(1, Ordering::Relaxed);
        let point = |before| SyncPoint { kind, path: path.to_path_buf(), before, seq };
        self.call_hook(point(true));
        // A failed sync leaves the durable state as it was.
        self.check_fault(true)?;
        op()?;
        self.call_hook(point(false));
        Ok(())
    }
}

impl MemFs {
    /// An empty file system (only the root directory).
    pub fn new() -> MemFs {
        MemFs::default()
    }

    /// A new, independent file system as the disk would be after a power
    /// loss now: the durable namespace and each file's durable bytes,
    /// modified by `torn`. Locks, hook, faults and stats are not carried
    /// over. Deterministic for a given state and seed.
    pub fn crash(&self, torn: TornWrites) -> MemFs {
        let ns = self.inner.ns.lock();
        let mut rng = Rng::new(match torn {
            TornWrites::None => 0,
            TornWrites::Keep(seed) | TornWrites::Garbage(seed) => seed,
        });
        let mut dirs = HashMap::new();
        // Old id → new node, so that a file durably named twice (a rename
        // synced in the target directory only) stays one file.
        let mut files: HashMap<u64, Arc<FileNode>> = HashMap::new();
        let mut seen = HashSet::from([ROOT]);
        let mut queue = VecDeque::from([ROOT]);
        while let Some(id) = queue.pop_front() {
            let mut entries = BTreeMap::new();
            for (name, entry) in &ns.dir(id).durable {
                let entry = match entry {
                    Entry::Dir(d) => {
                        if seen.insert(*d) {
                            queue.push_back(*d);
                        }
                        Entry::Dir(*d)
                    }
                    Entry::File(f) => Entry::File(
                        files
                            .entry(f.id)
                            .or_insert_with(|| FileNode::new(f.id, after_crash(&f.data.read(), torn, &mut rng)))
                            .clone(),
                    ),
                };
                entries.insert(name.clone(), entry);
            }
            dirs.insert(id, Dir { current: entries.clone(), durable: entries });
        }
        let next_id = ns.next_id;
        MemFs { inner: Arc::new(Inner::with_namespace(Namespace { dirs, next_id })) }
    }

    /// Sets the function called before and after every `sync_data` and
    /// `sync_dir` (replacing any previous one). It runs with no lock held,
    /// so it may call [`MemFs::crash`]. A hook holding a clone of this
    /// MemFs makes a reference cycle; [`MemFs::clear_sync_hook`] breaks it.
    pub fn set_sync_hook(&self, hook: SyncHook) {
        *self.inner.hook.write() = Some(Arc::from(hook));
    }

    /// Removes the sync hook.
    pub fn clear_sync_hook(&self) {
        *self.inner.hook.write() = None;
    }

    /// Makes the `n_ops`-th following operation of `kind` fail (1 = the
    /// next one; 0 is taken as 1) with `io::ErrorKind::Other` "injected
    /// fault", once. The failed operation has no effect. Replaces any armed
    /// fault.
    pub fn fail_after(&self, n_ops: u64, kind: FaultKind) {
        *self.inner.fault.lock() = Some(Fault { remaining: n_ops.max(1), kind });
    }

    /// Disarms a fault set by [`MemFs::fail_after`] that has not fired.
    pub fn clear_fault(&self) {
        *self.inner.fault.lock() = None;
    }

    /// Operation counters since this MemFs was created.
    pub fn stats(&self) -> MemFsStats {
        MemFsStats {
            writes: self.inner.writes.load(Ordering::Relaxed),
            syncs: self.inner.syncs.load(Ordering::Relaxed),
            bytes_written: self.inner.bytes_written.load(Ordering::Relaxed),
        }
    }

    /// The current bytes of the file at `path`, or `None` if there is no
    /// file there.
    pub fn file_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        let node = self.inner.ns.lock().file(path).ok()?;
        let bytes = node.data.read().current.clone();
        Some(bytes)
    }

    /// Replaces the contents of the file at `path` (creating it if missing)
    /// as if written and synced, entry included: for setting up disk
    /// states and corruption tests. Not counted in the stats.
    pub fn set_file_bytes(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let names = components(path)?;
        let mut ns = self.inner.ns.lock();
        let node = ns.open_file(&names, path, true)?;
        let (parent, name) = ns.resolve_parent(&names, path)?.expect("open_file rejects the root");
        let name = name.clone();
        let dir = ns.dir_mut(parent);
        dir.durable.insert(name, Entry::File(node.clone()));
        let mut data = node.data.write();
        data.current = bytes.to_vec();
        data.durable = bytes.to_vec();
        data.dirty_from = usize::MAX;
        Ok(())
    }

    /// Flips bit `bit` (0 = least significant) of byte `byte_offset` of the
    /// file at `path`, in both its current and its durable bytes (where the
    /// offset is within them): the medium itself is corrupted.
    pub fn flip_bit(&self, path: &Path, byte_offset: u64, bit: u8) -> io::Result<()> {
        if bit >= 8 {
            return Err(error(io::ErrorKind::InvalidInput, "bit index >= 8", path));
        }
        let node = self.inner.ns.lock().file(path)?;
        let mut guard = node.data.write();
        let data = &mut *guard;
        let mut flipped = false;
        for bytes in [&mut data.current, &mut data.durable] {
            if let Some(b) = usize::try_from(byte_offset).ok().and_then(|i| bytes.get_mut(i)) {
                *b ^= 1 << bit;
                flipped = true;
            }
        }
        if !flipped {
            return Err(error(io::ErrorKind::InvalidInput, "offset beyond end of file", path));
        }
        Ok(())
    }
}

impl fmt::Debug for MemFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemFs").field("stats", &self.stats()).finish_non_exhaustive()
    }
}

impl FileSystem for MemFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let names = components(path)?;
        let mut ns = self.inner.ns.lock();
        let mut id = ROOT;
        for name in &names {
            id = match ns.dir(id).current.get(name) {
                Some(Entry::Dir(d)) => *d,
                Some(Entry::File(_)) => return Err(error(io::ErrorKind::NotADirectory, "file in the way", path)),
                None => {
                    let new = ns.new_id();
                    ns.dirs.insert(new, Dir::default());
                    ns.dir_mut(id).current.insert(name.clone(), Entry::Dir(new));
                    new
                }
            };
        }
        Ok(())
    }

    fn open(&self, path: &Path, opts: OpenOptions) -> io::Result<Arc<dyn File>> {
        if (opts.create || opts.truncate) && !opts.write {
            return Err(error(io::ErrorKind::InvalidInput, "create or truncate without write", path));
        }
        let names = components(path)?;
        let mut ns = self.inner.ns.lock();
        let node = ns.open_file(&names, path, opts.create)?;
        if opts.truncate {
            let mut data = node.data.write();
            data.current.clear();
            data.dirty_from = 0;
        }
        drop(ns);
        Ok(Arc::new(MemFile { inner: self.inner.clone(), node, path: path.to_path_buf(), writable: opts.write }))
    }

    fn exists(&self, path: &Path) -> bool {
        let Ok(names) = components(path) else {
            return false;
        };
        matches!(self.inner.ns.lock().lookup(&names, path), Ok(Some(_)))
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let names = components(dir)?;
        let ns = self.inner.ns.lock();
        let id = ns.resolve_dir(&names, dir)?;
        Ok(ns.dir(id).current.keys().cloned().collect())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let from_names = components(from)?;
        let to_names = components(to)?;
        let mut ns = self.inner.ns.lock();
        let (Some((from_dir, from_name)), Some((to_dir, to_name))) =
            (ns.resolve_parent(&from_names, from)?, ns.resolve_parent(&to_names, to)?)
        else {
            return Err(error(io::ErrorKind::InvalidInput, "cannot rename the root", from));
        };
        let Some(entry) = ns.dir(from_dir).current.get(from_name).cloned() else {
            return Err(error(io::ErrorKind::NotFound, "no such file", from));
        };
        if from_names == to_names {
            return Ok(());
        }
        match (&entry, ns.dir(to_dir).current.get(to_name)) {
            (Entry::File(_), Some(Entry::Dir(_))) => {
                return Err(error(io::ErrorKind::IsADirectory, "is a directory", to))
            }
            (Entry::Dir(_), Some(Entry::File(_))) => {
                return Err(error(io::ErrorKind::NotADirectory, "not a directory", to))
            }
            (Entry::Dir(_), Some(Entry::Dir(d))) if !ns.dir(*d).current.is_empty() => {
                return Err(error(io::ErrorKind::DirectoryNotEmpty, "directory not empty", to))
            }
            (Entry::Dir(_), _) if to_names.starts_with(&from_names) => {
                return Err(error(io::ErrorKind::InvalidInput, "cannot move a directory into itself", to))
            }
            _ => {}
        }
        let (from_name, to_name) = (from_name.clone(), to_name.clone());
        ns.dir_mut(from_dir).current.remove(&from_name);
        ns.dir_mut(to_dir).current.insert(to_name, entry);
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let names = components(path)?;
        let mut ns = self.inner.ns.lock();
        let Some((parent, name)) = ns.resolve_parent(&names, path)? else {
            return Err(error(io::ErrorKind::IsADirectory, "is a directory", path));
        };
        match ns.dir(parent).current.get(name) {
            Some(Entry::File(_)) => {
                ns.dir_mut(parent).current.remove(name);
                Ok(())
            }
            Some(Entry::Dir(_)) => Err(error(io::ErrorKind::IsADirectory, "is a directory", path)),
            None => Err(error(io::ErrorKind::NotFound, "no such file", path)),
        }
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let names = components(dir)?;
        self.inner.sync_op(SyncKind::Dir, dir, || {
            let mut ns = self.inner.ns.lock();
            let id = ns.resolve_dir(&names, dir)?;
            let d = ns.dir_mut(id);
            d.durable = d.current.clone();
            Ok(())
        })
    }

    fn lock_exclusive(&self, path: &Path) -> io::Result<Box<dyn LockGuard>> {
        let names = components(path)?;
        let node = self.inner.ns.lock().open_file(&names, path, true)?;
        if !self.inner.locks.lock().insert(node.id) {
            return Err(error(io::ErrorKind::WouldBlock, "already locked", path));
        }
        Ok(Box::new(MemLockGuard { inner: self.inner.clone(), id: node.id, path: path.to_path_buf() }))
    }
}

/// Releases a MemFs lock on drop.
struct MemLockGuard {
    inner: Arc<Inner>,
    id: u64,
    path: PathBuf,
}

impl fmt::Debug for MemLockGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemLockGuard").field("path", &self.path).finish_non_exhaustive()
    }
}

impl LockGuard for MemLockGuard {}

impl Drop for MemLockGuard {
    fn drop(&mut self) {
        self.inner.locks.lock().remove(&self.id);
    }
}

/// An open MemFs file. It keeps the file alive after its name is removed,
/// as an open descriptor would.
struct MemFile {
    inner: Arc<Inner>,
    node: Arc<FileNode>,
    path: PathBuf,
    writable: bool,
}

impl fmt::Debug for MemFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemFile").field("path", &self.path).field("writable", &self.writable).finish_non_exhaustive()
    }
}

impl MemFile {
    fn check_writable(&self) -> io::Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(error(io::ErrorKind::PermissionDenied, "file not opened for writing", &self.path))
        }
    }

    fn check_len(&self, len: u64) -> io::Result<usize> {
        if len > MAX_FILE_LEN {
            return Err(error(io::ErrorKind::FileTooLarge, "file too large for MemFs", &self.path));
        }
        Ok(len as usize)
    }
}

impl File for MemFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let data = self.node.data.read();
        let len = data.current.len();
        let Some(start) = usize::try_from(offset).ok().filter(|&s| s < len) else {
            return Ok(0);
        };
        let n = buf.len().min(len - start);
        buf[..n].copy_from_slice(&data.current[start..start + n]);
        Ok(n)
    }

    fn write_all_at(&self, bytes: &[u8], offset: u64) -> io::Result<()> {
        self.check_writable()?;
        self.inner.begin_write()?;
        let end = offset
            .checked_add(bytes.len() as u64)
            .ok_or_else(|| error(io::ErrorKind::InvalidInput, "offset overflow", &self.path))?;
        let end = self.check_len(end)?;
        let start = end - bytes.len();
        let mut data = self.node.data.write();
        let old = data.current.len();
        if old < end {
            data.current.resize(end, 0);
        }
        data.current[start..end].copy_from_slice(bytes);
        // Bytes between the old end and `start` became zeros: dirty too.
        data.dirty_from = data.dirty_from.min(start.min(old));
        drop(data);
        self.inner.bytes_written.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.node.data.read().current.len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.check_writable()?;
        self.inner.begin_write()?;
        let len = self.check_len(len)?;
        let mut data = self.node.data.write();
        let old = data.current.len();
        data.current.resize(len, 0);
        data.dirty_from = data.dirty_from.min(old.min(len));
        Ok(())
    }

    fn punch_hole(&self, offset: u64, len: u64) -> io::Result<()> {
        self.check_writable()?;
        self.inner.begin_write()?;
        let mut data = self.node.data.write();
        let from = usize::try_from(offset).unwrap_or(usize::MAX).min(data.current.len());
        let to = usize::try_from(offset.saturating_add(len)).unwrap_or(usize::MAX).min(data.current.len());
        data.current[from..to].fill(0);
        data.dirty_from = data.dirty_from.min(from);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        self.inner.sync_op(SyncKind::File, &self.path, || {
            let mut guard = self.node.data.write();
            let data = &mut *guard;
            let keep = data.dirty_from.min(data.durable.len()).min(data.current.len());
            data.durable.truncate(keep);
            data.durable.extend_from_slice(&data.current[keep..]);
            data.dirty_from = usize::MAX;
            Ok(())
        })
    }
}

/// The bytes a file holds after a power loss.
fn after_crash(data: &FileData, torn: TornWrites, rng: &mut Rng) -> Vec<u8> {
    let (cur, dur) = (&data.current, &data.durable);
    let common = cur.len().min(dur.len());
    // First byte where current differs from durable within both lengths.
    let lo = data.dirty_from.min(common);
    let first_diff = cur[lo..common].iter().zip(&dur[lo..common]).position(|(a, b)| a != b).map_or(common, |i| lo + i);
    let appended = first_diff == dur.len() && cur.len() > dur.len();
    match torn {
        TornWrites::None => dur.clone(),
        TornWrites::Keep(_) if appended => cur[..rng.range(dur.len(), cur.len())].to_vec(),
        TornWrites::Keep(_) => dur.clone(),
        TornWrites::Garbage(_) if appended => {
            let mut out = cur[..rng.range(dur.len() + 1, cur.len())].to_vec();
            garble(&mut out[dur.len()..], rng);
            out
        }
        TornWrites::Garbage(_) if first_diff < common => {
            let last_diff = (first_diff..common).rev().find(|&i| cur[i] != dur[i]).expect("first_diff differs");
            let mut out = dur.clone();
            garble(&mut out[first_diff..=last_diff], rng);
            out
        }
        TornWrites::Garbage(_) => dur.clone(),
    }
}

/// Overwrites a random non-empty sub-range of a non-empty `region` with
/// random bytes.
fn garble(region: &mut [u8], rng: &mut Rng) {
    let start = rng.range(0, region.len() - 1);
    let end = rng.range(start + 1, region.len());
    for b in &mut region[start..end] {
        *b = rng.next() as u8;
    }
}

/// SplitMix64: small, seedable and good enough for choosing tear points
/// (`rand` is only a dev-dependency).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        arbor_core::toolbox::SplitMix64::step(&mut self.0)
    }

    /// Uniform in `lo..=hi` (modulo bias is irrelevant here).
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        debug_assert!(lo <= hi);
        lo + (self.next() % (hi as u64 - lo as u64 + 1)) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_opts() -> OpenOptions {
        OpenOptions { create: true, write: true, truncate: false }
    }

    #[test]
    fn overwrite_then_sync_copies_only_dirty_tail() {
        let fs = MemFs::new();
        let f = fs.open(Path::new("f"), write_opts()).unwrap();
        f.write_all_at(b"hello world", 0).unwrap();
        f.sync_data().unwrap();
        f.write_all_at(b"W", 6).unwrap();
        f.set_len(8).unwrap();
        f.sync_data().unwrap();
        let data = f_data(&fs, "f");
        assert_eq!(data, (b"hello Wo".to_vec(), b"hello Wo".to_vec()));
    }

    fn f_data(fs: &MemFs, path: &str) -> (Vec<u8>, Vec<u8>) {
        let node = fs.inner.ns.lock().file(Path::new(path)).unwrap();
        let d = node.data.read();
        (d.current.clone(), d.durable.clone())
    }

    #[test]
    fn write_past_end_zero_fills_and_is_dropped_on_crash() {
        let fs = MemFs::new();
        let f = fs.open(Path::new("f"), write_opts()).unwrap();
        f.write_all_at(b"ab", 0).unwrap();
        f.sync_data().unwrap();
        fs.sync_dir(Path::new("/")).unwrap();
        f.write_all_at(b"z", 5).unwrap();
        assert_eq!(fs.file_bytes(Path::new("f")).unwrap(), b"ab\0\0\0z");
        let after = fs.crash(TornWrites::None);
        assert_eq!(after.file_bytes(Path::new("f")).unwrap(), b"ab");
    }

    #[test]
    fn garbage_in_overwrite_stays_within_overwritten_span() {
        let fs = MemFs::new();
        let f = fs.open(Path::new("f"), write_opts()).unwrap();
        f.write_all_at(&[0u8; 64], 0).unwrap();
        f.sync_data().unwrap();
        fs.sync_dir(Path::new("")).unwrap();
        f.write_all_at(&[0xffu8; 8], 20).unwrap();
        for seed in 0..50 {
            let bytes = fs.crash(TornWrites::Garbage(seed)).file_bytes(Path::new("f")).unwrap();
            assert_eq!(bytes.len(), 64);
            assert!(bytes[..20].iter().chain(&bytes[28..]).all(|&b| b == 0));
        }
    }

    #[test]
    fn renamed_directory_keeps_its_durable_entries() {
        let fs = MemFs::new();
        fs.create_dir_all(Path::new("/a")).unwrap();
        fs.set_file_bytes(Path::new("/a/f"), b"x").unwrap();
        fs.sync_dir(Path::new("/")).unwrap();
        fs.rename(Path::new("/a"), Path::new("/b")).unwrap();
        fs.sync_dir(Path::new("/")).unwrap();
        let after = fs.crash(TornWrites::None);
        assert_eq!(after.file_bytes(Path::new("/b/f")).unwrap(), b"x");
        assert!(!after.exists(Path::new("/a")));
    }

    #[test]
    fn rng_range_is_inclusive() {
        let mut rng = Rng::new(1);
        let mut seen = [false; 3];
        for _ in 0..100 {
            seen[rng.range(2, 4) - 2] = true;
        }
        assert_eq!(seen, [true; 3]);
    }
}
