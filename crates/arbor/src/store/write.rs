//! Writing a tree's new nodes to the log, children before parents.

use arbor_core::{ChildKind, Hash};

use super::load::Loader;
use crate::error::Result;
use crate::pack::log::{GcView, LogWriter};
use crate::pack::record::{kind, put_entry, ChildRef};
use crate::tree::{Dir, DirBody, DiskPtr, Entry, IPtr, Inode, InodeBody, Persisted, Ptr};
use arbor_core::leb128;

/// Counters of one commit's writes.
#[derive(Debug, Default, Clone, Copy)]
pub struct WriteStats {
    /// Records written (objects, not counting the commit record).
    pub objects: u64,
    /// Values written inline in their parent's record.
    pub inlined: u64,
}

/// A reference to a child once it is on disk (or inline).
enum Written<'a> {
    Inline(&'a [u8]),
    At { offset: u64, hash: Hash, kind: ChildKind },
}

/// Writes the in-memory parts of trees; nodes already in this store are referenced.
///
/// Every record written also goes into the object cache in the form a read would decode it
/// to (children as offsets): the next block checks out this commit and reads mostly what
/// the last one wrote, so the cache is written through rather than refilled from the file.
/// The cached copies never point at in-memory children, so they pin nothing beyond their
/// own weight.
pub(crate) struct Persister<'a> {
    pub w: &'a mut LogWriter,
    pub loader: &'a Loader,
    pub uid: u64,
    pub inline_max: usize,
    pub stats: WriteStats,
    /// What garbage collection dropped: nodes must not be written pointing there.
    pub gc: std::sync::Arc<GcView>,
    /// The floor of a collection under way (0 if none): pointers below it are noted.
    pub pending_floor: u64,
    /// Pointers below `pending_floor` written, for the collection to keep what they reach.
    pub below_floor: Vec<u64>,
}

impl Persister<'_> {
    fn mine(&mut self, p: Option<&Persisted>) -> Result<Option<u64>> {
        p.filter(|p| p.store == self.uid).map(|p| self.kept(p.offset)).transpose()
    }

    /// Notes a pointer about to be written, for a collection under way.
    pub fn note(&mut self, offset: u64) {
        if offset < self.pending_floor {
            self.below_floor.push(offset);
        }
    }

    /// `offset`, if the record there survived garbage collection. A tree of a dropped commit
    /// held across a collection would otherwise be committed pointing at nothing.
    pub fn kept(&mut self, offset: u64) -> Result<u64> {
        let gc = &self.gc;
        if offset < gc.floor && !gc.archive && !gc.prefix.as_ref().is_some_and(|p| p.contains(offset)) {
            return Err(crate::error::Error::ObjectDropped { offset });
        }
        self.note(offset);
        Ok(offset)
    }

    fn child<'p>(&mut self, ptr: &'p Ptr) -> Result<Written<'p>> {
        match ptr {
            Ptr::Value(v) => {
                if v.bytes.len() <= self.inline_max {
                    self.stats.inlined += 1;
                    return Ok(Written::Inline(&v.bytes));
                }
                let offset = match self.mine(v.disk.get())? {
                    Some(o) => o,
                    None => {
                        let o = self.w.append(kind::CONTENTS, &v.bytes)?;
                        self.stats.objects += 1;
                        let _ = v.disk.set(Persisted { store: self.uid, offset: o });
                        self.loader.cache_value(o, v.clone());
                        o
                    }
                };
                Ok(Written::At { offset, hash: *v.hash(), kind: ChildKind::Contents })
            }
            Ptr::Dir(d) => Ok(Written::At { offset: self.dir(d)?, hash: *d.hash(), kind: ChildKind::Node }),
            Ptr::Disk(d) => Ok(Written::At { offset: self.kept(d.offset)?, hash: d.hash, kind: d.kind }),
        }
    }

    /// Writes `d` (if not yet in this store) and returns its offset.
    pub fn dir(&mut self, d: &Dir) -> Result<u64> {
        if let Some(o) = self.mine(d.persisted().as_ref())? {
            return Ok(o);
        }
        let uid = self.uid;
        let at = |offset| Persisted { store: uid, offset };
        let (offset, body) = match &d.body {
            DirBody::Flat(entries) => {
                let (offset, cached) = self.bindings(kind::FLAT_DIR, None, entries)?;
                (offset, DirBody::Flat(cached))
            }
            DirBody::Large(root) => {
                let (offset, cached) = self.inode(root)?;
                (offset, DirBody::Large(std::sync::Arc::new(cached)))
            }
        };
        let _ = d.disk.set(at(offset));
        self.loader.cache_dir(offset, Dir::loaded(body, Some(*d.hash()), at(offset)));
        Ok(offset)
    }

    /// Writes a FLAT_DIR or INODE_VALUES record; returns its offset and its bindings as a read
    /// would decode them.
    fn bindings(&mut self, k: u8, depth: Option<u32>, entries: &[Entry]) -> Result<(u64, Vec<Entry>)> {
        let children = entries.iter().map(|(_, p)| self.child(p)).collect::<Result<Vec<_>>>()?;
        let cached: Vec<Entry> = entries
            .iter()
            .zip(&children)
            .map(|((s, p), c)| match c {
                Written::Inline(_) => (s.clone(), p.clone()),
                Written::At { offset, hash, kind } => {
                    (s.clone(), Ptr::Disk(DiskPtr { offset: *offset, hash: *hash, kind: *kind }))
                }
            })
            .collect();
        let at = self.w.pos();
        let body = &mut self.w.scratch;
        body.clear();
        if let Some(d) = depth {
            leb128::write_u64(body, u64::from(d));
        }
        leb128::write_u64(body, entries.len() as u64);
        for ((step, _), c) in entries.iter().zip(&children) {
            let r = match c {
                Written::Inline(v) => ChildRef::Inline(v),
                Written::At { offset, hash, kind } => ChildRef::Ref { back: at - offset, hash: *hash, kind: *kind },
            };
            put_entry(body, step, &r);
        }
        self.stats.objects += 1;
        Ok((self.w.append_scratch(k)?, cached))
    }

    /// Writes an inode (if not yet in this store); returns its offset and, when it was
    /// written now, its decoded form for the cache.
    fn inode_offset(&mut self, i: &Inode) -> Result<u64> {
        if let Some(o) = self.mine(i.disk.get())? {
            return Ok(o);
        }
        let (offset, cached) = self.inode(i)?;
        self.loader.cache_inode(offset, cached);
        Ok(offset)
    }

    /// Writes an inode record; returns its offset and its decoded form.
    fn inode(&mut self, i: &Inode) -> Result<(u64, Inode)> {
        let uid = self.uid;
        let at = |offset| Persisted { store: uid, offset };
        let (offset, body) = match &i.body {
            InodeBody::Values(entries) => {
                let (offset, cached) = self.bindings(kind::INODE_VALUES, Some(i.depth), entries)?;
                (offset, InodeBody::Values(cached))
            }
            InodeBody::Tree(slots) => {
                let mut children = Vec::with_capacity(slots.len());
                for (n, s) in slots.iter().enumerate() {
                    match s {
                        IPtr::Empty => {}
                        IPtr::Mem(sub) => children.push((n, self.inode_offset(sub)?, *sub.hash())),
                        IPtr::Disk { offset, hash } => children.push((n, self.kept(*offset)?, *hash)),
                    }
                }
                let mut cached = vec![IPtr::Empty; slots.len()];
                for (n, offset, hash) in &children {
                    cached[*n] = IPtr::Disk { offset: *offset, hash: *hash };
                }
                let at = self.w.pos();
                let body = &mut self.w.scratch;
                body.clear();
                leb128::write_u64(body, u64::from(i.depth));
                leb128::write_u64(body, i.count);
                let bitmap = children.iter().fold(0u64, |b, (n, _, _)| b | (1 << n));
                leb128::write_u64(body, bitmap);
                for (_, offset, hash) in &children {
                    leb128::write_u64(body, at - offset);
                    body.extend_from_slice(hash.as_bytes());
                }
                self.stats.objects += 1;
                (self.w.append_scratch(kind::INODE_TREE)?, InodeBody::Tree(cached))
            }
        };
        let _ = i.disk.set(at(offset));
        Ok((offset, Inode::loaded(i.depth, i.count, body, Some(*i.hash()), at(offset))))
    }
}
