//! Writing a tree's new nodes to the log, children before parents.

use arbor_core::{ChildKind, Hash};

use crate::error::Result;
use crate::pack::log::LogWriter;
use crate::pack::record::{kind, put_entry, ChildRef};
use crate::tree::{Dir, DirBody, IPtr, Inode, InodeBody, Persisted, Ptr};
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
pub(crate) struct Persister<'a> {
    pub w: &'a mut LogWriter,
    pub uid: u64,
    pub inline_max: usize,
    pub stats: WriteStats,
}

impl Persister<'_> {
    fn mine(&self, p: Option<&Persisted>) -> Option<u64> {
        p.filter(|p| p.store == self.uid).map(|p| p.offset)
    }

    fn child<'p>(&mut self, ptr: &'p Ptr) -> Result<Written<'p>> {
        match ptr {
            Ptr::Value(v) => {
                if v.bytes.len() <= self.inline_max {
                    self.stats.inlined += 1;
                    return Ok(Written::Inline(&v.bytes));
                }
                let offset = match self.mine(v.disk.get()) {
                    Some(o) => o,
                    None => {
                        let o = self.w.append(kind::CONTENTS, &v.bytes)?;
                        self.stats.objects += 1;
                        let _ = v.disk.set(Persisted { store: self.uid, offset: o });
                        o
                    }
                };
                Ok(Written::At { offset, hash: *v.hash(), kind: ChildKind::Contents })
            }
            Ptr::Dir(d) => Ok(Written::At { offset: self.dir(d)?, hash: *d.hash(), kind: ChildKind::Node }),
            Ptr::Disk(d) => Ok(Written::At { offset: d.offset, hash: d.hash, kind: d.kind }),
        }
    }

    /// Writes `d` (if not yet in this store) and returns its offset.
    pub fn dir(&mut self, d: &Dir) -> Result<u64> {
        if let Some(o) = self.mine(d.persisted().as_ref()) {
            return Ok(o);
        }
        let offset = match &d.body {
            DirBody::Flat(entries) => self.bindings(kind::FLAT_DIR, None, entries)?,
            DirBody::Large(root) => self.inode(root)?,
        };
        let _ = d.disk.set(Persisted { store: self.uid, offset });
        Ok(offset)
    }

    fn bindings(&mut self, k: u8, depth: Option<u32>, entries: &[crate::tree::Entry]) -> Result<u64> {
        let children = entries.iter().map(|(_, p)| self.child(p)).collect::<Result<Vec<_>>>()?;
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
        self.w.append_scratch(k)
    }

    fn inode(&mut self, i: &Inode) -> Result<u64> {
        if let Some(o) = self.mine(i.disk.get()) {
            return Ok(o);
        }
        let offset = match &i.body {
            InodeBody::Values(entries) => self.bindings(kind::INODE_VALUES, Some(i.depth), entries)?,
            InodeBody::Tree(slots) => {
                let mut children = Vec::with_capacity(slots.len());
                for (n, s) in slots.iter().enumerate() {
                    match s {
                        IPtr::Empty => {}
                        IPtr::Mem(sub) => children.push((n, self.inode(sub)?, *sub.hash())),
                        IPtr::Disk { offset, hash } => children.push((n, *offset, *hash)),
                    }
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
                self.w.append_scratch(kind::INODE_TREE)?
            }
        };
        let _ = i.disk.set(Persisted { store: self.uid, offset });
        Ok(offset)
    }
}
