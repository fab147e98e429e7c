//! In-memory nodes of a tree and the pointers between them.
//!
//! A tree is immutable: every change builds new nodes along the changed path and shares the
//! rest. A child is either in memory (`Ptr::Value`, `Ptr::Small` inside its binding,
//! `Ptr::Dir`) or only known by its log offset and hash (`Ptr::Disk`), loaded on demand
//! through the store's cache. Hashes are computed lazily and cached in the node; the log
//! offset a node was written at is cached too, so committing a tree twice writes nothing new.

use std::sync::{Arc, OnceLock};

use arbor_core::{contents_hash, flat_node_hash, inode_tree_hash, inode_values_hash, ChildKind, Hash};

use super::bindings::Bindings;
use super::lineage::Lineage;
use super::linked::{Hashed, Linked};
use super::order::Updates;
use crate::error::Result;
use crate::path::Step;

/// Where a node was written: the store instance's id and the global log offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Persisted {
    pub store: u64,
    pub offset: u64,
    /// The full record this record is a version of: `offset` itself for a full record, the
    /// full record at the end of the chain for a delta (FORMAT.md 5.8).
    pub full: u64,
    /// The writer's commit sequence number when this node was written (0 when read): how
    /// recently the working tree needed it (`tree::evict`).
    pub seq: u32,
    /// How many delta records lead to the full one: 0 for a full record, 1 for a delta of
    /// it, 2 for a delta of such a delta (no chain is longer).
    pub level: u8,
}

impl Persisted {
    /// A full record read at `offset` by store instance `store`.
    pub fn full(store: u64, offset: u64) -> Persisted {
        Persisted { store, offset, full: offset, seq: 0, level: 0 }
    }
}

/// The bytes of a value: most Tezos values are under 8 bytes and nearly all under 32, so
/// they live inside the node (which then fills mimalloc's 112-byte size class) instead of a
/// second allocation that every read and every hash of the value would have to follow.
pub(crate) type ValueBytes = smallvec::SmallVec<[u8; 24]>;

/// Contents (a value) in memory.
#[derive(Debug)]
pub(crate) struct Value {
    pub bytes: ValueBytes,
    hash: OnceLock<Hash>,
    /// Where the value's own record is. Boxed: only values longer than `Config::inline_max`
    /// have records of their own (inline values, nearly all of them, have none), and a
    /// value is one allocation per binding of every node in memory: in place, the 32-byte
    /// place took a value from mimalloc's 112-byte size class to its 128-byte one.
    disk: OnceLock<Box<Persisted>>,
}

impl Value {
    pub fn new(bytes: &[u8]) -> Value {
        Value { bytes: ValueBytes::from_slice(bytes), hash: OnceLock::new(), disk: OnceLock::new() }
    }

    /// A value read from the log at `at`, whose hash the parent recorded.
    pub fn loaded(bytes: &[u8], hash: Option<Hash>, at: Option<Persisted>) -> Value {
        let v = Value::new(bytes);
        if let Some(h) = hash {
            let _ = v.hash.set(h);
        }
        if let Some(p) = at {
            v.set_written(p);
        }
        v
    }

    pub fn hash(&self) -> &Hash {
        self.hash.get_or_init(|| contents_hash(&self.bytes))
    }

    /// Records the value's hash, computed elsewhere (`tree::batched`).
    pub fn know_hash(&self, hash: Hash) {
        let _ = self.hash.set(hash);
    }

    /// Where the value's own record is, if it has one.
    pub fn written(&self) -> Option<&Persisted> {
        self.disk.get().map(|p| &**p)
    }

    /// Records where the value's own record was written (kept if one was recorded already).
    pub fn set_written(&self, at: Persisted) {
        let _ = self.disk.set(Box::new(at));
    }
}

impl Hashed for Value {
    fn hash(&self) -> &Hash {
        Value::hash(self)
    }
    fn cached_hash(&self) -> Option<&Hash> {
        self.hash.get()
    }
}

/// A pointer to a not-yet-loaded object in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DiskPtr {
    pub offset: u64,
    pub hash: Hash,
    pub kind: ChildKind,
}

/// The longest value kept inside its binding ([`Small`]): the most that fits beside a
/// cached hash in the place a child pointer takes anyway.
pub(crate) const SMALL_MAX: usize = 15;

/// A value of at most [`SMALL_MAX`] bytes, held inside its binding rather than in an
/// allocation of its own. Most Tezos values are under 8 bytes: as a [`Value`] each was a
/// 112-byte allocation beside its binding (104 bytes then, 112 with this in its place), to
/// allocate when a node is read, to follow when the node is hashed or the value read, and
/// to free. A small value never has a record of its own: it is inlined in its parent's
/// record (`Config::inline_max` is at least [`SMALL_MAX`] by default; see `store::write`
/// otherwise).
#[derive(Debug, Clone)]
pub(crate) struct Small {
    hash: OnceLock<Hash>,
    len: u8,
    bytes: [u8; SMALL_MAX],
}

impl Small {
    /// The value `bytes`, if short enough.
    pub fn new(bytes: &[u8]) -> Option<Small> {
        let mut small = Small { hash: OnceLock::new(), len: 0, bytes: [0; SMALL_MAX] };
        small.bytes.get_mut(..bytes.len())?.copy_from_slice(bytes);
        small.len = bytes.len() as u8; // At most SMALL_MAX: the slice above exists.
        Some(small)
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    pub fn hash(&self) -> &Hash {
        self.hash.get_or_init(|| contents_hash(self.bytes()))
    }

    /// The hash, if computed already.
    pub fn cached_hash(&self) -> Option<&Hash> {
        self.hash.get()
    }

    /// Records the value's hash, computed elsewhere (`tree::batched`).
    pub fn know_hash(&self, hash: Hash) {
        let _ = self.hash.set(hash);
    }

    /// The value as a [`Value`] of its own (for callers that share values by reference).
    pub fn to_value(&self) -> Value {
        Value::loaded(self.bytes(), self.hash.get().copied(), None)
    }
}

/// A child of a directory or of a Values inode.
#[derive(Debug, Clone)]
pub(crate) enum Ptr {
    /// A value longer than [`SMALL_MAX`] bytes.
    Value(Linked<Value>),
    /// A value of at most [`SMALL_MAX`] bytes, in place.
    Small(Small),
    Dir(Linked<Dir>),
    Disk(DiskPtr),
}

impl Ptr {
    pub fn kind(&self) -> ChildKind {
        match self {
            Ptr::Value(_) | Ptr::Small(_) => ChildKind::Contents,
            Ptr::Dir(_) => ChildKind::Node,
            Ptr::Disk(d) => d.kind,
        }
    }

    pub fn hash(&self) -> &Hash {
        match self {
            Ptr::Value(v) => v.hash(),
            Ptr::Small(v) => v.hash(),
            Ptr::Dir(d) => d.hash(),
            Ptr::Disk(d) => &d.hash,
        }
    }

    /// The directory `node`, in memory.
    pub fn dir(node: Arc<Dir>) -> Ptr {
        Ptr::Dir(Linked::new(node))
    }

    /// The value `bytes`, in place when it is small.
    pub fn value(bytes: &[u8]) -> Ptr {
        match Small::new(bytes) {
            Some(small) => Ptr::Small(small),
            None => Ptr::Value(Linked::new(Arc::new(Value::new(bytes)))),
        }
    }

    /// The bytes of a value in memory (None for a directory or an unread value).
    pub fn value_bytes(&self) -> Option<&[u8]> {
        match self {
            Ptr::Value(v) => Some(&v.bytes),
            Ptr::Small(v) => Some(v.bytes()),
            Ptr::Dir(_) | Ptr::Disk(_) => None,
        }
    }
}

/// A binding of a directory or Values inode: step and child, kept sorted by step bytes.
pub(crate) type Entry = (Step, Ptr);

/// A directory in memory.
#[derive(Debug)]
pub(crate) struct Dir {
    pub body: DirBody,
    hash: OnceLock<Hash>,
    pub disk: OnceLock<Persisted>,
    /// For a flat directory: how it differs from its last full record (unused when large:
    /// the root inode keeps its own).
    pub lineage: Lineage,
    /// How Octez would hold the directory, for the order of `list` and unordered `fold`
    /// (`tree::order`): None for a directory built in memory or listed since it changed
    /// (a sorted map); for one changed since it was written or read, what changed. Ignored
    /// while the directory is written and unchanged (`persisted`).
    pub updates: Option<Box<Updates>>,
}

/// A copy to change: same bindings, no cached hash or offset (used by `Arc::make_mut`).
impl Clone for Dir {
    fn clone(&self) -> Dir {
        let body = match &self.body {
            DirBody::Flat(e) => DirBody::Flat(e.clone()),
            DirBody::Large(i) => DirBody::Large(i.clone()),
        };
        let mut d = Dir::new(body);
        d.lineage = self.next_lineage();
        d.updates = match self.persisted() {
            Some(_) => Some(Box::default()),
            None => self.updates.clone(),
        };
        d
    }
}

/// How a directory's bindings are held: flat when at most `stable_hash` entries (and hashed
/// flat), else as the inode tree it is hashed with.
#[derive(Debug)]
pub(crate) enum DirBody {
    Flat(Bindings),
    Large(Arc<Inode>),
}

impl Dir {
    pub fn new(body: DirBody) -> Dir {
        Dir { body, hash: OnceLock::new(), disk: OnceLock::new(), lineage: Lineage::default(), updates: None }
    }

    fn next_lineage(&self) -> Lineage {
        match self.body {
            DirBody::Flat(_) => self.lineage.derive(self.disk.get()),
            DirBody::Large(_) => Lineage::default(),
        }
    }

    pub fn empty() -> Dir {
        Dir::new(DirBody::Flat(Bindings::default()))
    }

    /// A directory read from the log, with the hash its parent recorded.
    pub fn loaded(body: DirBody, hash: Option<Hash>, at: Persisted, lineage: Lineage) -> Dir {
        let mut d = Dir::new(body);
        d.lineage = lineage;
        if let Some(h) = hash {
            let _ = d.hash.set(h);
        }
        let _ = d.disk.set(at);
        d
    }

    /// Number of children, in O(1).
    pub fn len(&self) -> u64 {
        match &self.body {
            DirBody::Flat(e) => e.len() as u64,
            DirBody::Large(i) => i.count,
        }
    }

    pub fn hash(&self) -> &Hash {
        self.hash.get_or_init(|| match &self.body {
            DirBody::Flat(entries) => {
                warm(entries, Reading::Hashes);
                prehash(entries.iter().filter_map(|(_, p)| match p {
                    Ptr::Dir(d) if d.cached_hash().is_none() => Some(Dirty::Dir(d)),
                    _ => None,
                }));
                flat_node_hash(entry_hashes(entries))
            }
            DirBody::Large(inode) => *inode.hash(),
        })
    }

    /// Forgets the cached hash and log offset: the caller is about to change the node.
    pub fn reset(&mut self) {
        self.start_updates();
        if self.hash.get().is_none() && self.disk.get().is_none() {
            // Changed already since it was last hashed or written (a block changes the
            // directories on the way to its hot values hundreds of times): nothing to forget,
            // and the lineage is as the first change left it.
            return;
        }
        match self.body {
            DirBody::Flat(_) => self.lineage.rebase(self.disk.get()),
            DirBody::Large(_) => self.lineage = Lineage::default(),
        }
        self.hash = OnceLock::new();
        self.disk = OnceLock::new();
    }

    pub fn persisted(&self) -> Option<Persisted> {
        match &self.body {
            DirBody::Flat(_) => self.disk.get().copied(),
            DirBody::Large(i) => i.persisted(),
        }
    }

    /// The hash, if computed or recorded already (never computes it).
    pub fn cached_hash(&self) -> Option<&Hash> {
        match &self.body {
            DirBody::Flat(_) => self.hash.get(),
            DirBody::Large(i) => self.hash.get().or_else(|| i.hash.get()),
        }
    }

    /// Records the hash of a flat directory, computed elsewhere (`tree::batched`).
    pub fn know_hash(&self, hash: Hash) {
        let _ = self.hash.set(hash);
    }
}

impl Hashed for Dir {
    fn hash(&self) -> &Hash {
        Dir::hash(self)
    }
    fn cached_hash(&self) -> Option<&Hash> {
        Dir::cached_hash(self)
    }
}

/// A node of a large directory's inode tree.
#[derive(Debug)]
pub(crate) struct Inode {
    pub depth: u32,
    /// Bindings below this inode.
    pub count: u64,
    pub body: InodeBody,
    hash: OnceLock<Hash>,
    pub disk: OnceLock<Persisted>,
    /// How the inode differs from its last full record.
    pub lineage: Lineage,
}

/// A copy to change: same bindings, no cached hash or offset (used by `Arc::make_mut`).
impl Clone for Inode {
    fn clone(&self) -> Inode {
        let body = match &self.body {
            InodeBody::Values(e) => InodeBody::Values(e.clone()),
            InodeBody::Tree(s) => InodeBody::Tree(s.clone()),
        };
        let mut i = Inode::new(self.depth, self.count, body);
        i.lineage = self.lineage.derive(self.disk.get());
        i
    }
}

/// A Values inode holds at most `entries` bindings; a Tree inode one slot per `entries`.
#[derive(Debug)]
pub(crate) enum InodeBody {
    Values(Bindings),
    Tree(Vec<IPtr>),
}

/// A slot of a Tree inode.
#[derive(Debug, Clone)]
pub(crate) enum IPtr {
    Empty,
    Mem(Linked<Inode>),
    Disk { offset: u64, hash: Hash },
}

impl IPtr {
    /// The inode `node`, in memory.
    pub fn mem(node: Arc<Inode>) -> IPtr {
        IPtr::Mem(Linked::new(node))
    }

    pub fn hash(&self) -> Option<&Hash> {
        match self {
            IPtr::Empty => None,
            IPtr::Mem(i) => Some(i.hash()),
            IPtr::Disk { hash, .. } => Some(hash),
        }
    }
}

impl Inode {
    pub fn new(depth: u32, count: u64, body: InodeBody) -> Inode {
        Inode { depth, count, body, hash: OnceLock::new(), disk: OnceLock::new(), lineage: Lineage::default() }
    }

    pub fn loaded(
        depth: u32,
        count: u64,
        body: InodeBody,
        hash: Option<Hash>,
        at: Persisted,
        lineage: Lineage,
    ) -> Inode {
        let mut i = Inode::new(depth, count, body);
        i.lineage = lineage;
        if let Some(h) = hash {
            let _ = i.hash.set(h);
        }
        let _ = i.disk.set(at);
        i
    }

    /// Where the inode was last read or written, if its record still describes it.
    pub fn persisted(&self) -> Option<Persisted> {
        self.disk.get().copied()
    }

    /// Forgets the cached hash and log offset: the caller is about to change the node.
    pub fn reset(&mut self) {
        if self.hash.get().is_none() && self.disk.get().is_none() {
            // Changed already since it was last hashed or written: nothing to forget.
            return;
        }
        self.lineage.rebase(self.disk.get());
        self.hash = OnceLock::new();
        self.disk = OnceLock::new();
    }

    /// The hash, if computed or recorded already (never computes it).
    pub fn cached_hash(&self) -> Option<&Hash> {
        self.hash.get()
    }

    pub fn hash(&self) -> &Hash {
        self.hash.get_or_init(|| self.compute_hash())
    }

    /// The hash, computed by `below` first hashing every changed node under this one (and
    /// then from their hashes): a second caller meanwhile waits for it, as for [`Inode::hash`].
    pub fn hash_below_first(&self, below: impl FnOnce()) -> &Hash {
        self.hash.get_or_init(|| {
            below();
            self.compute_hash()
        })
    }

    /// Records the hash, computed elsewhere (`tree::batched`).
    pub fn know_hash(&self, hash: Hash) {
        let _ = self.hash.set(hash);
    }

    fn compute_hash(&self) -> Hash {
        match &self.body {
            InodeBody::Values(entries) => {
                warm(entries, Reading::Hashes);
                children_first(entries.iter().filter_map(|(_, p)| match p {
                    Ptr::Dir(d) if d.cached_hash().is_none() => Some(Dirty::Dir(d)),
                    _ => None,
                }));
                inode_values_hash(entry_hashes(entries))
            }
            InodeBody::Tree(slots) => {
                let dirty = slots.iter().filter_map(|s| match s {
                    IPtr::Mem(i) if i.cached_hash().is_none() => Some(Dirty::Inode(i)),
                    _ => None,
                });
                if self.depth <= 1 {
                    prehash(dirty);
                } else {
                    children_first(dirty);
                }
                inode_tree_hash(self.depth, self.count, filled_slots(slots))
            }
        }
    }
}

/// Each binding's step, kind and child hash, as the hash of a flat directory or a Values inode
/// takes them (children not hashed yet are hashed).
pub(crate) fn entry_hashes(entries: &Bindings) -> impl ExactSizeIterator<Item = (&[u8], ChildKind, &Hash)> {
    entries.iter().map(|(s, p)| (s, p.kind(), p.hash()))
}

/// The hashes of the slots of a Tree inode that are not empty, with their indexes, as the
/// inode's hash takes them.
pub(crate) fn filled_slots(slots: &[IPtr]) -> impl ExactSizeIterator<Item = (u32, &Hash)> {
    let n = slots.iter().filter(|s| !matches!(s, IPtr::Empty)).count();
    let it = slots.iter().enumerate().filter_map(|(i, s)| s.hash().map(|h| (i as u32, h)));
    ExactLen { inner: it, len: n }
}

impl Hashed for Inode {
    fn hash(&self) -> &Hash {
        Inode::hash(self)
    }
    fn cached_hash(&self) -> Option<&Hash> {
        Inode::cached_hash(self)
    }
}

/// Reads every child that `entries` point to in memory, before a loop that needs each of
/// them in turn (hashing a node, encoding its record). These reads do not depend on one
/// another, so the processor keeps many of their cache misses in flight at once; the loop
/// that follows does a child's hashing or encoding between two of them, and without this
/// waits for each miss alone. A changed node's children are mostly out of the cache: the
/// working tree is about 1 GB, and a commit reads 40,000 of them. A child whose hash is
/// copied into its binding (`tree::Linked`) is not read for hashing.
pub(crate) fn warm(entries: &Bindings, reading: Reading) {
    let mut seen = 0usize;
    for p in entries.children() {
        seen ^= match (p, reading) {
            (Ptr::Value(v), Reading::Hashes) if v.hash_copied() => 0,
            (Ptr::Dir(d), Reading::Hashes) if d.hash_copied() => 0,
            (Ptr::Value(_), Reading::Eviction) => 0,
            (Ptr::Dir(d), Reading::Eviction) => usize::from(d.disk.get().is_some()) ^ Arc::strong_count(d.node()),
            (Ptr::Value(v), _) => v.bytes.len() ^ usize::from(v.node().cached_hash().is_some()),
            (Ptr::Dir(d), _) => usize::from(d.node().cached_hash().is_some()) ^ usize::from(d.disk.get().is_some()),
            // In the binding already.
            (Ptr::Small(_) | Ptr::Disk(_), _) => 0,
        };
    }
    std::hint::black_box(seen);
}

/// What the loop after [`warm`] reads of each child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// Its hash (hashing the node).
    Hashes,
    /// Its bytes or its record's offset, and its hash (writing the node's record).
    Records,
    /// A directory's record's place, and whether another tree holds it (letting go of the
    /// cold part of a working tree, `tree::evict`; values are read only when their node goes).
    Eviction,
}

/// [`warm`] for the children of a Tree inode, before a loop that reads each one's record's
/// place and whether another tree holds it (`tree::evict`).
pub(crate) fn warm_slots(slots: &[IPtr]) {
    let mut seen = 0usize;
    for slot in slots {
        if let IPtr::Mem(sub) = slot {
            seen ^= usize::from(sub.disk.get().is_some()) ^ Arc::strong_count(sub.node());
        }
    }
    std::hint::black_box(seen);
}

/// A child whose hash is not computed yet.
enum Dirty<'a> {
    Dir(&'a Linked<Dir>),
    Inode(&'a Linked<Inode>),
}

impl Dirty<'_> {
    fn hash(&self) {
        match self {
            Dirty::Dir(d) => {
                d.hash();
            }
            Dirty::Inode(i) => {
                i.hash();
            }
        }
    }
}

/// Hashes changed children one after the other before their parent starts on its own hash
/// (in `arbor_core`'s functions, kept out of line): a parent's 1 KiB hashing buffer is then
/// not on the stack while its subtrees are hashed. With it, hashing took 2.8 KiB of stack a
/// level and a chain of `MAX_PATH_STEPS` directories overflowed a 2 MiB thread; 0.3 KiB now.
fn children_first<'a>(dirty: impl Iterator<Item = Dirty<'a>>) {
    dirty.for_each(|d| d.hash());
}

thread_local! {
    /// Set while this thread hashes without handing work to the pool ([`hashing_alone`]).
    static HASHING_ALONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with every hash this thread computes computed on this thread alone, none handed
/// to the pool.
///
/// For the threads that hash a commit's tree side by side (`tree::Parts`): a thread that
/// waited for the pool while it computes a node's hash could wait forever if every pool thread
/// were waiting for that node (a subtree shared by two parts). Without that wait, every wait
/// is for a node below the one being computed, and nodes below cannot wait for those above
/// them.
pub(crate) fn hashing_alone<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            HASHING_ALONE.with(|a| a.set(self.0));
        }
    }
    let _reset = Reset(HASHING_ALONE.with(|a| a.replace(true)));
    f()
}

/// Computes the hashes of several changed subtrees in parallel before their parent needs
/// them: hashing is most of a commit's CPU time, and the top of a tree is where independent
/// subtrees are large. Below the top, hashing stays on the calling thread, children first.
///
/// Only a thread outside the pool spreads work: a pool thread that waited inside a hash for
/// work it had handed out could pick up, meanwhile, another part that needs the very node it
/// is computing (a subtree shared by two parts) and wait for itself. The parts a tree is cut
/// into (`tree::hash_units`) keep both pool threads busy without that.
fn prehash<'a>(dirty: impl Iterator<Item = Dirty<'a>>) {
    use rayon::prelude::*;
    if HASHING_ALONE.with(std::cell::Cell::get) || rayon::current_thread_index().is_some() {
        return children_first(dirty);
    }
    let dirty: Vec<Dirty<'a>> = dirty.collect();
    if dirty.len() < 2 {
        return children_first(dirty.into_iter());
    }
    dirty.par_iter().for_each(Dirty::hash);
}

/// An iterator with a known length, for hashing functions that write the count first.
struct ExactLen<I> {
    inner: I,
    len: usize,
}

impl<I: Iterator> Iterator for ExactLen<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        let item = self.inner.next();
        if item.is_some() {
            self.len -= 1;
        }
        item
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}

impl<I: Iterator> ExactSizeIterator for ExactLen<I> {}

/// Loads objects that trees only know by offset: the store's side of lazy loading.
pub(crate) trait Source: Send + Sync + std::fmt::Debug {
    /// The contents record at `offset`, whose hash the parent recorded.
    fn load_value(&self, ptr: &DiskPtr) -> Result<Arc<Value>>;
    /// The directory (flat record, or root inode of a large one) at `offset`.
    fn load_dir(&self, ptr: &DiskPtr) -> Result<Arc<Dir>>;
    /// The inode at `offset`, expected at `depth`.
    fn load_inode(&self, offset: u64, hash: &Hash, depth: u32) -> Result<Arc<Inode>>;
    /// Takes written subtrees a tree let go of whole (nothing else holds their tops), so
    /// that reading them again needs no I/O: each node is to be turned into one a read would
    /// decode ([`super::let_go`]), here or later, on a thread of the store's.
    fn adopt(&self, subtrees: Vec<Evicted>);
    /// Told that a tree is about to change the node it read or wrote at `offset`: the store
    /// need not keep that version in memory for it (see `Ctx::own`).
    fn superseded(&self, offset: u64);
    /// What `node`, which stays in the writer's working tree after an eviction, takes in
    /// memory (its values weighed without being read), for the store's budget.
    fn weigh(&self, node: Held<'_>) -> u64;
}

/// A node that stays in the working tree after an eviction ([`Source::weigh`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Held<'a> {
    /// A directory (flat, or large with its root inode).
    Dir(&'a Dir),
    /// An inode below a large directory's root.
    Inode(&'a Inode),
}

/// A written node a tree no longer holds, in the form a read would decode it to.
#[derive(Debug)]
pub(crate) enum Evicted {
    /// A CONTENTS record.
    Value(Arc<Value>),
    /// A directory record (flat, or the root inode of a large one).
    Dir(Arc<Dir>),
    /// An inode record.
    Inode(Arc<Inode>),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory or an inode, with its `Arc`'s two counts, fills mimalloc's 256-byte size
    /// class: eight bytes more (a counter in the lineage) put every node in the 320-byte class
    /// (about +7 MiB of a bench's max RSS, +2% L1 misses).
    #[test]
    fn a_node_fits_in_256_bytes_with_its_counts() {
        let counts = 2 * size_of::<usize>();
        assert!(counts + size_of::<Dir>() <= 256, "directory: {} bytes", size_of::<Dir>());
        assert!(counts + size_of::<Inode>() <= 256, "inode: {} bytes", size_of::<Inode>());
    }

    #[test]
    fn a_small_value_fits_in_the_place_of_a_child_pointer() {
        // A child pointer is a disk pointer (offset, hash, kind) or a tag and a place: the
        // small value's cached hash and bytes take that place and one word more.
        assert!(size_of::<Ptr>() <= 56, "{} bytes", size_of::<Ptr>());
        // A binding: the step (64 bytes inline) and the child pointer.
        assert!(size_of::<Entry>() <= 128, "{} bytes", size_of::<Entry>());
        for len in 0..=SMALL_MAX + 1 {
            let bytes: Vec<u8> = (0..len as u8).collect();
            let p = Ptr::value(&bytes);
            assert_eq!(matches!(p, Ptr::Small(_)), len <= SMALL_MAX);
            assert_eq!(p.value_bytes(), Some(&bytes[..]));
            assert_eq!(*p.hash(), contents_hash(&bytes));
            assert_eq!(p.kind(), ChildKind::Contents);
        }
    }
}
