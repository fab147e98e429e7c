//! Reading objects from the log into tree nodes, through a weighted cache.

use std::path::PathBuf;
use std::sync::Arc;

use arbor_core::{ChildKind, Hash, InodeConfig};
use quick_cache::sync::Cache;
use quick_cache::Weighter;

mod delta;

use super::weight;
use crate::error::{Corruption, Error, Result};
use crate::pack::log::{Log, ReadFrame};
use crate::pack::record::{invalid, kind, ChildRef, DecodeError, Reader};
use crate::path::Step;
use crate::tree::{
    Bindings, Builder, Dir, DirBody, DiskPtr, Evicted, IPtr, Inode, InodeBody, Lineage, Persisted, Ptr, Spelling, Value,
};

/// A decoded object held by the cache.
#[derive(Debug, Clone)]
pub(crate) enum Object {
    Value(Arc<Value>),
    Dir(Arc<Dir>),
    Inode(Arc<Inode>),
}

/// A cached object and its approximate memory footprint.
#[derive(Debug, Clone)]
pub(crate) struct Cached {
    weight: u32,
    object: Object,
}

/// Weighs cache entries by their approximate size in bytes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ByteWeighter;

impl Weighter<u64, Cached> for ByteWeighter {
    fn weight(&self, _key: &u64, val: &Cached) -> u64 {
        u64::from(val.weight)
    }
}

/// The object cache, keyed by log offset.
pub(crate) type ObjectCache = Cache<u64, Cached, ByteWeighter, quick_cache::DefaultHashBuilder, FreeElsewhere>;

/// The smallest capacity a cache is given, whatever the budget.
pub(crate) const MIN_CACHE_BYTES: u64 = 1 << 16;

/// Creates a cache holding about `bytes` of decoded objects.
pub(crate) fn new_cache(bytes: u64) -> ObjectCache {
    // The table is sized for this many objects up front; with objects weighed at what they
    // take (`weight`), a cached node averages a few KiB, and a table sized for 512-byte
    // objects took ~9% of the budget unused.
    let items = (bytes / 2048).clamp(64, 1 << 24) as usize;
    Cache::with(items, bytes.max(MIN_CACHE_BYTES), ByteWeighter, Default::default(), FreeElsewhere::start())
}

/// Objects the cache evicts waiting for the freeing thread; beyond this many, the evicting
/// thread frees them itself.
const FREE_QUEUE: usize = 8192;

/// Hands what the cache evicts to a thread of its own to be freed.
///
/// Once the cache is full, every miss evicts: an object freed then is a node with up to 256
/// bindings, each binding's value its own allocation, and freeing them was 4-6% of a block's
/// time on the thread applying the block. A second core is mostly idle outside commits. The
/// thread ends when the cache (every clone of this sender) is gone.
#[derive(Clone)]
pub(crate) struct FreeElsewhere {
    queue: Option<std::sync::mpsc::SyncSender<Cached>>,
}

impl FreeElsewhere {
    fn start() -> FreeElsewhere {
        // Each object is dropped as it arrives: that is the thread's whole work. Without the
        // thread (no threads left to the process), eviction frees in place.
        FreeElsewhere { queue: worker("arbor-free", FREE_QUEUE, drop) }
    }
}

/// A thread named `name` that does `work` on each item sent to it, at most `capacity` of
/// them waiting; None when no thread could be started (the caller then does the work
/// itself). The thread ends when every sender is gone.
fn worker<T: Send + 'static>(
    name: &str,
    capacity: usize,
    mut work: impl FnMut(T) + Send + 'static,
) -> Option<std::sync::mpsc::SyncSender<T>> {
    let (queue, arriving) = std::sync::mpsc::sync_channel::<T>(capacity);
    let spawned = std::thread::Builder::new().name(name.into()).spawn(move || arriving.into_iter().for_each(&mut work));
    spawned.ok().map(|_| queue)
}

impl std::fmt::Debug for FreeElsewhere {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FreeElsewhere")
    }
}

impl quick_cache::Lifecycle<u64, Cached> for FreeElsewhere {
    /// Objects the queue had no room for, freed by the evicting thread once the cache's lock
    /// is released.
    type RequestState = Vec<Cached>;

    fn begin_request(&self) -> Vec<Cached> {
        Vec::new()
    }

    fn on_evict(&self, state: &mut Vec<Cached>, _offset: u64, object: Cached) {
        let Some(queue) = &self.queue else { return state.push(object) };
        match queue.try_send(object) {
            Ok(()) => {}
            Err(std::sync::mpsc::TrySendError::Full(o) | std::sync::mpsc::TrySendError::Disconnected(o)) => {
                state.push(o)
            }
        }
    }
}

/// Subtrees the writer's working tree let go of, waiting for the adopting thread; beyond
/// this many evictions' worth, the evicting thread adopts them itself.
const ADOPT_QUEUE: usize = 64;

/// Hands the subtrees the writer's working tree lets go of (`tree::evict`) to a thread of
/// its own, which turns their nodes into the cache's (`tree::let_go`): that work was a third
/// or more of an eviction's, and an eviction runs on the thread applying the blocks. Until
/// the thread gets to a subtree, a read of one of its nodes reads its record, and finds
/// the same node. The thread starts with the first eviction (a reader never evicts) and
/// ends when the loader is gone.
#[derive(Debug, Default)]
pub(crate) struct Adopter {
    queue: std::sync::OnceLock<Option<std::sync::mpsc::SyncSender<Vec<Evicted>>>>,
    /// Evictions' subtrees sent and not yet adopted.
    pending: Arc<std::sync::atomic::AtomicUsize>,
}

impl Adopter {
    /// Has `subtrees` turned into cached nodes of `cache`, on the adopting thread when it
    /// can take them.
    fn adopt(&self, cache: &Arc<ObjectCache>, subtrees: Vec<Evicted>) {
        let queue = self.queue.get_or_init(|| {
            let (cache, pending) = (cache.clone(), self.pending.clone());
            worker("arbor-adopt", ADOPT_QUEUE, move |subtrees| {
                adopt_now(&cache, subtrees);
                pending.fetch_sub(1, std::sync::atomic::Ordering::Release);
            })
        });
        let Some(queue) = queue else { return adopt_now(cache, subtrees) };
        self.pending.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match queue.try_send(subtrees) {
            Ok(()) => {}
            Err(std::sync::mpsc::TrySendError::Full(s) | std::sync::mpsc::TrySendError::Disconnected(s)) => {
                self.pending.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
                adopt_now(cache, s)
            }
        }
    }

    /// Tests: waits until the adopting thread has adopted everything sent to it.
    #[cfg(test)]
    pub(crate) fn settle(&self) {
        while self.pending.load(std::sync::atomic::Ordering::Acquire) > 0 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

/// Turns `subtrees` into cached nodes of `cache`, here.
fn adopt_now(cache: &ObjectCache, subtrees: Vec<Evicted>) {
    for subtree in subtrees {
        crate::tree::let_go(subtree, &|node| cache_evicted(cache, node));
    }
}

/// Caches a node a tree let go of, under the offset it was written at.
fn cache_evicted(cache: &ObjectCache, node: Evicted) {
    let (offset, weight, object) = match node {
        Evicted::Value(v) => match v.written() {
            Some(p) => (p.offset, weight::value(&v), Object::Value(v)),
            None => return,
        },
        Evicted::Dir(d) => match d.persisted() {
            Some(p) => (p.offset, weight::dir(&d), Object::Dir(d)),
            None => return,
        },
        Evicted::Inode(i) => match i.disk.get() {
            Some(p) => (p.offset, weight::inode(&i), Object::Inode(i)),
            None => return,
        },
    };
    cache.insert(offset, Cached { weight: weight as u32, object });
}

/// Turns log records into tree nodes; shared by every reader of a store.
#[derive(Debug)]
pub(crate) struct Loader {
    pub log: Log,
    pub cache: Arc<ObjectCache>,
    /// Where the writer's evictions send what they let go of.
    pub adopter: Adopter,
    /// Id of this store instance (not the persistent store uid): see `Persisted`.
    pub uid: u64,
    pub inode: InodeConfig,
    /// Opened read-only: another process's collections switch the log under this handle.
    pub read_only: bool,
}

/// Reads retried after meeting a collection's switch, before an error is taken as real.
pub(super) const SWITCH_RETRIES: usize = 3;

impl Loader {
    fn corrupt(&self, offset: u64, kind: Corruption) -> Error {
        Error::Corrupt { file: self.file_of(offset), offset, kind }
    }

    /// The chunk file holding `offset`, for error messages.
    pub fn file_of(&self, offset: u64) -> PathBuf {
        let chunks = self.log.chunks();
        let i = chunks.partition_point(|c| c.start <= offset);
        match i.checked_sub(1) {
            Some(i) => chunks[i].path.clone(),
            None => self.log.dir.clone(),
        }
    }

    /// The error for a body field of the record at `offset` that does not decode.
    fn bad(&self, offset: u64) -> impl Fn(DecodeError) -> Error + '_ {
        move |e| self.corrupt(offset, e.into())
    }

    /// Resolves a back distance found in the record at `at`.
    fn target(&self, at: u64, back: u64) -> Result<u64> {
        if back == 0 || back > at {
            return Err(self.corrupt(at, Corruption::DanglingOffset(at.wrapping_sub(back))));
        }
        Ok(at - back)
    }

    /// A full record at `offset`, read by this instance.
    fn persisted(&self, offset: u64) -> Persisted {
        Persisted::full(self.uid, offset)
    }

    /// A delta record at `offset` of the record `base` (its base's place and lineage) with
    /// `steps` (each with whether `base` held it) or `slots` changed, and the lineage it
    /// gives: a delta of a full record is
    /// level 1; a delta of a level-1 delta is level 2, its changes since the full record
    /// those of both.
    fn delta_at<S: Spelling>(
        &self,
        offset: u64,
        base: (&Persisted, &Lineage),
        steps: &[(S, bool)],
        slots: u64,
    ) -> (Persisted, Lineage) {
        let (base_at, base_lineage) = base;
        let full = base_at.full;
        let at = Persisted { store: self.uid, offset, full, seq: 0, level: base_at.level + 1 };
        if base_at.level == 0 {
            return (at, Lineage::of_delta(self.persisted(full), steps, slots));
        }
        // As the writer's lineage of this version: the level-1 delta's, its changes marked.
        let mut lineage = base_lineage.derive(Some(base_at));
        let mut spelled = Step::new();
        for &(s, held) in steps {
            spelled.resize(s.len(), 0);
            s.write_to(&mut spelled);
            lineage.mark_step(&spelled, held);
        }
        for slot in (0..64).filter(|i| slots & (1 << i) != 0) {
            lineage.mark_slot(slot);
        }
        (at, lineage)
    }

    /// The tree pointer for a child reference of the record at `at`.
    fn child_ptr(&self, child: ChildRef<'_>, at: u64) -> Result<Ptr> {
        Ok(match child {
            ChildRef::Inline(v) => Ptr::value(v),
            ChildRef::Ref { back, hash, kind } => Ptr::Disk(DiskPtr { offset: self.target(at, back)?, hash, kind }),
        })
    }

    /// Decodes `n` sorted bindings of a FLAT_DIR or INODE_VALUES record at `at`.
    fn entries(&self, r: &mut Reader<'_>, at: u64) -> Result<Bindings> {
        let bad = self.bad(at);
        let n = r.len().map_err(&bad)?;
        let mut out = Builder::new(n, long_steps_guess(r, n));
        for _ in 0..n {
            let (step, child) = r.entry_ref().map_err(&bad)?;
            out.push_with(step.len(), |to| step.write_to(to), self.child_ptr(child, at)?)?;
            if !out.last_in_order() {
                return Err(self.corrupt(at, Corruption::OutOfOrder { what: "bindings", index: out.len() - 1 }));
            }
        }
        Ok(out.finish())
    }

    /// The Tree inode at `base` (at `depth`) that the INODE_TREE_DELTA at `at` is a version
    /// of: a full record or, when `chained` allows it, a level-1 delta of one (FORMAT.md 5.8:
    /// a chain is at most two deltas long). Taken from the cache when there, not put there
    /// when read ([`Loader::decoded_base`] says why).
    fn tree_base(&self, base: u64, at: u64, depth: u32, chained: bool) -> Result<Arc<Inode>> {
        if let Some(Object::Inode(i)) = self.decoded_base(base, kind::INODE_TREE, depth, chained) {
            return Ok(i);
        }
        let frame = self.read(base)?;
        let (k, body) = frame.parts();
        let inode = match k {
            kind::INODE_TREE => self.tree_inode(body, base, depth, None)?,
            kind::INODE_TREE_DELTA if chained => {
                // A level-1 delta whose own base is not a full record makes the chain from
                // `at` too long: reported at `at`, whose chain it is (the base may be sound
                // on its own).
                self.tree_inode_delta(body, base, depth, None, false).map_err(|e| match e {
                    Error::Corrupt { offset, kind: Corruption::DeltaBase { .. }, .. } if offset == base => {
                        self.delta_base(at, base)
                    }
                    e => e,
                })?
            }
            _ => return Err(self.delta_base(at, base)),
        };
        Ok(Arc::new(inode))
    }

    /// Reads the depth an inode record at `at` starts with and checks it is `depth`, where its
    /// parent places it.
    fn inode_depth(&self, r: &mut Reader<'_>, at: u64, depth: u32) -> Result<()> {
        let found = r.leb().map_err(self.bad(at))?;
        if found != u64::from(depth) {
            return Err(self.corrupt(at, Corruption::InodeDepth { expected: depth, found }));
        }
        Ok(())
    }

    /// Checks that a tree inode at `at` has more bindings than a values inode may hold, and
    /// at least one slot (`no_slots` when it has none).
    fn tree_inode_size(&self, at: u64, count: u64, no_slots: bool) -> Result<()> {
        if count <= u64::from(self.inode.entries) {
            return Err(self.bad(at)(invalid("binding count of a tree inode", count)));
        }
        if no_slots {
            return Err(self.bad(at)(invalid("slot count of a tree inode", 0u64)));
        }
        Ok(())
    }

    /// Decodes the body of an INODE_TREE record at `at`.
    fn tree_inode(&self, body: &[u8], at: u64, depth: u32, hash: Option<Hash>) -> Result<Inode> {
        let bad = self.bad(at);
        let mut r = Reader::new(body);
        self.inode_depth(&mut r, at, depth)?;
        let count = r.leb().map_err(&bad)?;
        let bitmap = r.leb().map_err(&bad)?;
        let entries = self.inode.entries;
        if entries < 64 && bitmap >> entries != 0 {
            return Err(bad(invalid("inode slot bitmap", bitmap)));
        }
        let mut slots = vec![IPtr::Empty; entries as usize];
        for (i, slot) in slots.iter_mut().enumerate() {
            if bitmap & (1 << i) != 0 {
                let back = r.leb().map_err(&bad)?;
                let h = r.hash().map_err(&bad)?;
                *slot = IPtr::Disk { offset: self.target(at, back)?, hash: h };
            }
        }
        r.finish().map_err(&bad)?;
        self.tree_inode_size(at, count, bitmap == 0)?;
        Ok(Inode::loaded(depth, count, InodeBody::Tree(slots), hash, self.persisted(at), Lineage::default()))
    }

    /// Decodes the body of an INODE_TREE_DELTA record at `at`.
    fn tree_inode_delta(&self, body: &[u8], at: u64, depth: u32, hash: Option<Hash>, chained: bool) -> Result<Inode> {
        let bad = self.bad(at);
        let mut r = Reader::new(body);
        self.inode_depth(&mut r, at, depth)?;
        let base = self.target(at, r.leb().map_err(&bad)?)?;
        let count = r.leb().map_err(&bad)?;
        let changed = r.leb().map_err(&bad)?;
        let entries = self.inode.entries;
        if entries < 64 && changed >> entries != 0 {
            return Err(bad(invalid("inode changed-slot bitmap", changed)));
        }
        let base_node = self.tree_base(base, at, depth, chained)?;
        let InodeBody::Tree(base_slots) = &base_node.body else {
            return Err(self.corrupt(at, Corruption::DeltaBase { base }));
        };
        let mut slots = base_slots.clone();
        for (i, slot) in slots.iter_mut().enumerate() {
            if changed & (1 << i) != 0 {
                let back = r.leb().map_err(&bad)?;
                *slot = match back {
                    0 => IPtr::Empty,
                    _ => IPtr::Disk { offset: self.target(at, back)?, hash: r.hash().map_err(&bad)? },
                };
            }
        }
        r.finish().map_err(&bad)?;
        self.tree_inode_size(at, count, slots.iter().all(|s| matches!(s, IPtr::Empty)))?;
        let (p, lineage) =
            self.delta_at(at, based(&base_node.disk, &base_node.lineage), &[] as &[(&[u8], bool)], changed);
        Ok(Inode::loaded(depth, count, InodeBody::Tree(slots), hash, p, lineage))
    }

    /// The record at `offset`, frame and all. A read that fails while a garbage collection
    /// switches the log (its prefix replaced, chunks below the floor removed or hollowed out)
    /// is retried on the new routing: a reader must not report corruption that is not there.
    pub(crate) fn read(&self, offset: u64) -> Result<ReadFrame> {
        let mut retries = 0;
        loop {
            let floor = self.log.gc_view().floor;
            match self.log.read(offset) {
                Ok(r) => return Ok(r),
                Err(_) if retries < SWITCH_RETRIES && self.switched_since(floor) => retries += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether a collection switched the log since its floor was `floor`: in this process
    /// (the view moved), or, for a read-only handle, in the writer's (the control file names
    /// a newer collection, whose routing this handle then takes up). Floors only rise.
    fn switched_since(&self, floor: u64) -> bool {
        if self.log.gc_view().floor != floor {
            return true;
        }
        if !self.read_only {
            return false;
        }
        let Some(store_dir) = self.log.dir.parent() else { return false };
        let newer = match crate::pack::control::Control::read(self.log.fs.as_ref(), store_dir) {
            Ok(Some(control)) => control.gc.filter(|g| g.floor > floor),
            _ => None,
        };
        // Commits and heads follow at the next `Store::refresh`; reads need only the routing.
        match newer.map(|g| super::gc::load_view(self.log.fs.as_ref(), &self.log, g)) {
            Some(Ok(view)) => {
                self.log.set_gc_view(view);
                true
            }
            _ => false,
        }
    }

    fn unexpected(&self, offset: u64, expected: &'static str, found: u8) -> Error {
        self.corrupt(offset, Corruption::UnexpectedRecordKind { expected, found })
    }

    pub fn load_value(&self, ptr: &DiskPtr) -> Result<Arc<Value>> {
        if let Some(Cached { object: Object::Value(v), .. }) = self.cache.get(&ptr.offset) {
            return Ok(v);
        }
        let frame = self.read(ptr.offset)?;
        let (k, body) = frame.parts();
        if k != kind::CONTENTS {
            return Err(self.unexpected(ptr.offset, "contents", k));
        }
        let v = Arc::new(Value::loaded(body, Some(ptr.hash), Some(self.persisted(ptr.offset))));
        let weight = weight::value(&v) as u32;
        self.cache.insert(ptr.offset, Cached { weight, object: Object::Value(v.clone()) });
        Ok(v)
    }

    pub fn load_dir(&self, ptr: &DiskPtr) -> Result<Arc<Dir>> {
        if let Some(Cached { object: Object::Dir(d), .. }) = self.cache.get(&ptr.offset) {
            return Ok(d);
        }
        let d = self.decode_dir(ptr.offset, Some(ptr.hash))?;
        let weight = weight::dir(&d);
        let d = Arc::new(d);
        self.cache.insert(ptr.offset, Cached { weight: weight as u32, object: Object::Dir(d.clone()) });
        Ok(d)
    }

    /// Decodes the body of a FLAT_DIR record at `offset`.
    fn flat_dir(&self, body: &[u8], offset: u64, hash: Option<Hash>) -> Result<Dir> {
        let mut r = Reader::new(body);
        let e = self.entries(&mut r, offset)?;
        r.finish().map_err(self.bad(offset))?;
        Ok(Dir::loaded(DirBody::Flat(e), hash, self.persisted(offset), Lineage::default()))
    }

    /// Decodes the body of a FLAT_DIR_DELTA record at `offset`; `chained`: whether its base
    /// may be a delta.
    fn flat_dir_delta(&self, body: &[u8], offset: u64, hash: Option<Hash>, chained: bool) -> Result<Dir> {
        let bad = self.bad(offset);
        let mut r = Reader::new(body);
        let base = self.target(offset, r.leb().map_err(&bad)?)?;
        let count = r.leb().map_err(&bad)?;
        let (e, at, lineage) = self.delta_bindings(r, offset, base, count, kind::FLAT_DIR, 0, chained)?;
        Ok(Dir::loaded(DirBody::Flat(e), hash, at, lineage))
    }

    /// Decodes the directory record at `offset` (flat, or the root inode of a large one,
    /// either in full or as a delta).
    pub fn decode_dir(&self, offset: u64, hash: Option<Hash>) -> Result<Dir> {
        let frame = self.read(offset)?;
        let (k, body) = frame.parts();
        match k {
            kind::FLAT_DIR => self.flat_dir(body, offset, hash),
            kind::FLAT_DIR_DELTA => self.flat_dir_delta(body, offset, hash, true),
            kind::INODE_TREE | kind::INODE_TREE_DELTA => {
                let root = self.inode_record(k, body, offset, hash, 0, true)?;
                let at = *root.disk.get().expect("a decoded inode knows its offset");
                Ok(Dir::loaded(DirBody::Large(Arc::new(root)), hash, at, Lineage::default()))
            }
            other => Err(self.unexpected(offset, "directory", other)),
        }
    }

    pub fn load_inode(&self, offset: u64, hash: &Hash, depth: u32) -> Result<Arc<Inode>> {
        if let Some(Cached { object: Object::Inode(i), .. }) = self.cache.get(&offset) {
            return Ok(i);
        }
        let i = Arc::new(self.decode_inode(offset, Some(*hash), depth)?);
        let weight = weight::inode(&i);
        self.cache.insert(offset, Cached { weight: weight as u32, object: Object::Inode(i.clone()) });
        Ok(i)
    }

    /// Decodes the inode record at `offset`, expected at `depth`.
    pub fn decode_inode(&self, offset: u64, hash: Option<Hash>, depth: u32) -> Result<Inode> {
        let frame = self.read(offset)?;
        let (k, body) = frame.parts();
        self.inode_record(k, body, offset, hash, depth, true)
    }

    /// Decodes an inode record of kind `k` at `offset` (full or delta), expected at `depth`;
    /// `chained`: whether a delta's base may be a delta.
    fn inode_record(
        &self,
        k: u8,
        body: &[u8],
        offset: u64,
        hash: Option<Hash>,
        depth: u32,
        chained: bool,
    ) -> Result<Inode> {
        let bad = self.bad(offset);
        match k {
            kind::INODE_VALUES | kind::INODE_VALUES_DELTA => {
                let mut r = Reader::new(body);
                self.inode_depth(&mut r, offset, depth)?;
                let (e, at, lineage) = if k == kind::INODE_VALUES {
                    let e = self.entries(&mut r, offset)?;
                    r.finish().map_err(&bad)?;
                    (e, self.persisted(offset), Lineage::default())
                } else {
                    let base = self.target(offset, r.leb().map_err(&bad)?)?;
                    let count = r.leb().map_err(&bad)?;
                    self.delta_bindings(r, offset, base, count, kind::INODE_VALUES, depth, chained)?
                };
                if e.is_empty() || e.len() > self.inode.entries as usize {
                    return Err(bad(invalid("binding count of a values inode", e.len() as u64)));
                }
                let n = e.len() as u64;
                Ok(Inode::loaded(depth, n, InodeBody::Values(e), hash, at, lineage))
            }
            kind::INODE_TREE => self.tree_inode(body, offset, depth, hash),
            kind::INODE_TREE_DELTA => self.tree_inode_delta(body, offset, depth, hash, chained),
            other => Err(self.unexpected(offset, "inode", other)),
        }
    }
}

impl crate::tree::Source for Loader {
    fn load_value(&self, ptr: &DiskPtr) -> Result<Arc<Value>> {
        Loader::load_value(self, ptr)
    }
    fn load_dir(&self, ptr: &DiskPtr) -> Result<Arc<Dir>> {
        Loader::load_dir(self, ptr)
    }
    fn load_inode(&self, offset: u64, hash: &Hash, depth: u32) -> Result<Arc<Inode>> {
        Loader::load_inode(self, offset, hash, depth)
    }
    fn adopt(&self, subtrees: Vec<Evicted>) {
        self.adopter.adopt(&self.cache, subtrees);
    }
    fn superseded(&self, offset: u64) {
        // The tree holds the object too, so that dropping the cache's handle frees nothing.
        drop(self.cache.remove(&offset));
    }
    fn weigh(&self, node: crate::tree::Held<'_>) -> u64 {
        weight::held(node) as u64
    }
}

/// About how many bytes the long steps of the `n` bindings left in `r` take: what is left of
/// the body less each child's tag, offset and hash, twice over as hex steps are stored
/// packed. A guess for a buffer that grows if it is short, and lives only while decoding.
fn long_steps_guess(r: &Reader<'_>, n: usize) -> usize {
    2 * r.remaining().saturating_sub(n.saturating_mul(34))
}

/// A delta's base as [`Loader::delta_at`] takes it: where the base is and its lineage.
fn based<'a>(disk: &'a std::sync::OnceLock<Persisted>, lineage: &'a Lineage) -> (&'a Persisted, &'a Lineage) {
    (disk.get().expect("a base object is decoded with its place or was written"), lineage)
}

/// A pointer to the tree of a commit record.
pub(crate) fn root_ptr(offset: u64, hash: Hash) -> Ptr {
    Ptr::Disk(DiskPtr { offset, hash, kind: ChildKind::Node })
}
