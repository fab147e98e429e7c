//! Reading objects from the log into tree nodes, through a weighted cache.

use std::path::PathBuf;
use std::sync::Arc;

use arbor_core::{ChildKind, Hash, InodeConfig};
use quick_cache::sync::Cache;
use quick_cache::Weighter;

use crate::error::{Corruption, Error, Result};
use crate::pack::log::Log;
use crate::pack::record::{kind, ChildRef, Reader};
use crate::tree::{Dir, DirBody, DiskPtr, Entry, IPtr, Inode, InodeBody, Persisted, Ptr, Value};

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
pub(crate) type ObjectCache = Cache<u64, Cached, ByteWeighter>;

/// Creates a cache holding about `bytes` of decoded objects.
pub(crate) fn new_cache(bytes: u64) -> ObjectCache {
    let items = (bytes / 512).clamp(64, 1 << 24) as usize;
    Cache::with_weighter(items, bytes.max(1 << 16), ByteWeighter)
}

/// Memory of one binding: step, pointer and inline value bytes.
fn entries_weight(entries: &[Entry]) -> usize {
    entries
        .iter()
        .map(|(s, p)| {
            let inline = if s.spilled() { s.len() } else { 0 };
            let value = match p {
                Ptr::Value(v) => 64 + v.bytes.len(),
                _ => 0,
            };
            std::mem::size_of::<Entry>() + inline + value
        })
        .sum()
}

/// Memory of an inode.
fn inode_weight(i: &Inode) -> usize {
    match &i.body {
        InodeBody::Values(e) => 96 + entries_weight(e),
        InodeBody::Tree(s) => 96 + 48 * s.len(),
    }
}

/// Turns log records into tree nodes; shared by every reader of a store.
#[derive(Debug)]
pub(crate) struct Loader {
    pub log: Log,
    pub cache: ObjectCache,
    /// Id of this store instance (not the persistent store uid): see `Persisted`.
    pub uid: u64,
    pub inode: InodeConfig,
}

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

    fn bad(&self, offset: u64) -> impl Fn(&'static str) -> Error + '_ {
        move |what| self.corrupt(offset, Corruption::BadEncoding(what))
    }

    /// Resolves a back distance found in the record at `at`.
    fn target(&self, at: u64, back: u64) -> Result<u64> {
        if back == 0 || back > at {
            return Err(self.corrupt(at, Corruption::DanglingOffset(at.wrapping_sub(back))));
        }
        Ok(at - back)
    }

    fn persisted(&self, offset: u64) -> Persisted {
        Persisted { store: self.uid, offset }
    }

    /// Decodes `n` sorted bindings of a FLAT_DIR or INODE_VALUES record at `at`.
    fn entries(&self, r: &mut Reader<'_>, at: u64) -> Result<Vec<Entry>> {
        let bad = self.bad(at);
        let n = r.len().map_err(&bad)?;
        let mut out: Vec<Entry> = Vec::with_capacity(n);
        for _ in 0..n {
            let (step, child) = r.entry().map_err(&bad)?;
            if out.last().is_some_and(|(prev, _)| prev[..] >= *step) {
                return Err(bad("bindings out of order"));
            }
            let ptr = match child {
                ChildRef::Inline(v) => Ptr::Value(Arc::new(Value::loaded(v.into(), None, None))),
                ChildRef::Ref { back, hash, kind } => Ptr::Disk(DiskPtr { offset: self.target(at, back)?, hash, kind }),
            };
            out.push((step, ptr));
        }
        Ok(out)
    }

    /// Decodes the body of an INODE_TREE record at `at`.
    fn tree_inode(&self, body: &[u8], at: u64, depth: u32, hash: Option<Hash>) -> Result<Inode> {
        let bad = self.bad(at);
        let mut r = Reader::new(body);
        let d = r.leb().map_err(&bad)?;
        if d != u64::from(depth) {
            return Err(bad("inode at an unexpected depth"));
        }
        let count = r.leb().map_err(&bad)?;
        let bitmap = r.leb().map_err(&bad)?;
        let entries = self.inode.entries;
        if entries < 64 && bitmap >> entries != 0 {
            return Err(bad("inode slot out of range"));
        }
        let mut slots = vec![IPtr::Empty; entries as usize];
        for (i, slot) in slots.iter_mut().enumerate() {
            if bitmap & (1 << i) != 0 {
                let back = r.leb().map_err(&bad)?;
                let h = r.hash().map_err(&bad)?;
                *slot = IPtr::Disk { offset: self.target(at, back)?, hash: h };
            }
        }
        if !r.is_done() {
            return Err(bad("trailing bytes in inode"));
        }
        if count <= u64::from(entries) || bitmap == 0 {
            return Err(bad("tree inode with too few bindings"));
        }
        Ok(Inode::loaded(depth, count, InodeBody::Tree(slots), hash, self.persisted(at)))
    }

    fn read(&self, offset: u64) -> Result<(u8, Vec<u8>)> {
        self.log.read(offset)
    }

    fn unexpected(&self, offset: u64, expected: &'static str, found: u8) -> Error {
        self.corrupt(offset, Corruption::UnexpectedRecordKind { expected, found })
    }

    /// Caches a value just written at `offset`.
    pub fn cache_value(&self, offset: u64, v: Arc<Value>) {
        let weight = (96 + v.bytes.len()) as u32;
        self.cache.insert(offset, Cached { weight, object: Object::Value(v) });
    }

    /// Caches a directory just written at `offset` (in decoded form: children by offset).
    pub fn cache_dir(&self, offset: u64, d: Dir) {
        let weight = self.dir_weight(&d) as u32;
        self.cache.insert(offset, Cached { weight, object: Object::Dir(Arc::new(d)) });
    }

    /// Caches an inode just written at `offset` (in decoded form).
    pub fn cache_inode(&self, offset: u64, i: Inode) {
        let weight = inode_weight(&i) as u32;
        self.cache.insert(offset, Cached { weight, object: Object::Inode(Arc::new(i)) });
    }

    fn dir_weight(&self, d: &Dir) -> usize {
        match &d.body {
            DirBody::Flat(e) => 96 + entries_weight(e),
            DirBody::Large(_) => 96 + 48 * self.inode.entries as usize,
        }
    }

    pub fn load_value(&self, ptr: &DiskPtr) -> Result<Arc<Value>> {
        if let Some(Cached { object: Object::Value(v), .. }) = self.cache.get(&ptr.offset) {
            return Ok(v);
        }
        let (k, body) = self.read(ptr.offset)?;
        if k != kind::CONTENTS {
            return Err(self.unexpected(ptr.offset, "contents", k));
        }
        let weight = (96 + body.len()) as u32;
        let v = Arc::new(Value::loaded(body.into(), Some(ptr.hash), Some(self.persisted(ptr.offset))));
        self.cache.insert(ptr.offset, Cached { weight, object: Object::Value(v.clone()) });
        Ok(v)
    }

    pub fn load_dir(&self, ptr: &DiskPtr) -> Result<Arc<Dir>> {
        if let Some(Cached { object: Object::Dir(d), .. }) = self.cache.get(&ptr.offset) {
            return Ok(d);
        }
        let d = self.decode_dir(ptr.offset, Some(ptr.hash))?;
        let weight = self.dir_weight(&d);
        let d = Arc::new(d);
        self.cache.insert(ptr.offset, Cached { weight: weight as u32, object: Object::Dir(d.clone()) });
        Ok(d)
    }

    /// Decodes the directory record at `offset` (flat, or the root inode of a large one).
    pub fn decode_dir(&self, offset: u64, hash: Option<Hash>) -> Result<Dir> {
        let (k, body) = self.read(offset)?;
        let at = self.persisted(offset);
        match k {
            kind::FLAT_DIR => {
                let mut r = Reader::new(&body);
                let e = self.entries(&mut r, offset)?;
                if !r.is_done() {
                    return Err(self.bad(offset)("trailing bytes in directory"));
                }
                Ok(Dir::loaded(DirBody::Flat(e), hash, at))
            }
            kind::INODE_TREE => {
                let root = self.tree_inode(&body, offset, 0, hash)?;
                Ok(Dir::loaded(DirBody::Large(Arc::new(root)), hash, at))
            }
            other => Err(self.unexpected(offset, "directory", other)),
        }
    }

    pub fn load_inode(&self, offset: u64, hash: &Hash, depth: u32) -> Result<Arc<Inode>> {
        if let Some(Cached { object: Object::Inode(i), .. }) = self.cache.get(&offset) {
            return Ok(i);
        }
        let i = Arc::new(self.decode_inode(offset, Some(*hash), depth)?);
        let weight = inode_weight(&i);
        self.cache.insert(offset, Cached { weight: weight as u32, object: Object::Inode(i.clone()) });
        Ok(i)
    }

    /// Decodes the inode record at `offset`, expected at `depth`.
    pub fn decode_inode(&self, offset: u64, hash: Option<Hash>, depth: u32) -> Result<Inode> {
        let (k, body) = self.read(offset)?;
        match k {
            kind::INODE_VALUES => {
                let mut r = Reader::new(&body);
                let d = r.leb().map_err(self.bad(offset))?;
                if d != u64::from(depth) {
                    return Err(self.bad(offset)("inode at an unexpected depth"));
                }
                let e = self.entries(&mut r, offset)?;
                if !r.is_done() {
                    return Err(self.bad(offset)("trailing bytes in inode"));
                }
                if e.is_empty() || e.len() > self.inode.entries as usize {
                    return Err(self.bad(offset)("values inode of a wrong size"));
                }
                let n = e.len() as u64;
                Ok(Inode::loaded(depth, n, InodeBody::Values(e), hash, self.persisted(offset)))
            }
            kind::INODE_TREE => self.tree_inode(&body, offset, depth, hash),
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
}

/// A pointer to the tree of a commit record.
pub(crate) fn root_ptr(offset: u64, hash: Hash) -> Ptr {
    Ptr::Disk(DiskPtr { offset, hash, kind: ChildKind::Node })
}
