//! Lookup and copy-on-write update of directories and inode trees.

use std::sync::Arc;

use arbor_core::{ChildKind, InodeConfig};

use super::node::{Dir, DirBody, Entry, IPtr, Inode, InodeBody, Ptr, Source, Value};
use crate::error::{Error, Result};
use crate::path::Step;

/// What a tree needs besides its nodes: the inode shape and where to load objects from.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub cfg: InodeConfig,
    pub source: Option<Arc<dyn Source>>,
    /// Identifies the store instance whose log offsets `Ptr::Disk` refers to (0: none).
    pub uid: u64,
    pub max_value_len: usize,
}

/// The result of changing a binding: unchanged, or the new node (None: it became empty).
pub(crate) enum Change<T> {
    Unchanged,
    Changed(Option<T>),
}

impl Ctx {
    fn source(&self) -> Result<&Arc<dyn Source>> {
        self.source.as_ref().ok_or(Error::ForeignTree)
    }

    /// The directory `ptr` points to, or None if it is contents.
    pub fn dir_of(&self, ptr: &Ptr) -> Result<Option<Arc<Dir>>> {
        match ptr {
            Ptr::Dir(d) => Ok(Some(d.clone())),
            Ptr::Value(_) => Ok(None),
            Ptr::Disk(d) if d.kind == ChildKind::Node => Ok(Some(self.source()?.load_dir(d)?)),
            Ptr::Disk(_) => Ok(None),
        }
    }

    /// The value `ptr` points to, or None if it is a directory.
    pub fn value_of(&self, ptr: &Ptr) -> Result<Option<Arc<Value>>> {
        match ptr {
            Ptr::Value(v) => Ok(Some(v.clone())),
            Ptr::Dir(_) => Ok(None),
            Ptr::Disk(d) if d.kind == ChildKind::Contents => Ok(Some(self.source()?.load_value(d)?)),
            Ptr::Disk(_) => Ok(None),
        }
    }

    fn inode_of(&self, slot: &IPtr, depth: u32) -> Result<Option<Arc<Inode>>> {
        match slot {
            IPtr::Empty => Ok(None),
            IPtr::Mem(i) => Ok(Some(i.clone())),
            IPtr::Disk { offset, hash } => Ok(Some(self.source()?.load_inode(*offset, hash, depth)?)),
        }
    }

    /// The child of `dir` named `step`.
    pub fn get(&self, dir: &Dir, step: &[u8]) -> Result<Option<Ptr>> {
        match &dir.body {
            DirBody::Flat(entries) => Ok(search(entries, step).ok().map(|i| entries[i].1.clone())),
            DirBody::Large(root) => {
                let mut cur = root.clone();
                loop {
                    let next = match &cur.body {
                        InodeBody::Values(entries) => {
                            return Ok(search(entries, step).ok().map(|i| entries[i].1.clone()))
                        }
                        InodeBody::Tree(slots) => {
                            let slot = &slots[self.cfg.slot(cur.depth, step) as usize];
                            match self.inode_of(slot, cur.depth + 1)? {
                                None => return Ok(None),
                                Some(next) => next,
                            }
                        }
                    };
                    cur = next;
                }
            }
        }
    }

    /// `dir` with the binding `step` set to `child`, or removed if `child` is None.
    pub fn dir_with(&self, dir: &Dir, step: &[u8], child: Option<Ptr>) -> Result<Change<Dir>> {
        let body = match &dir.body {
            DirBody::Flat(entries) => {
                let Some(entries) = entries_with(entries, step, child) else {
                    return Ok(Change::Unchanged);
                };
                if entries.is_empty() {
                    return Ok(Change::Changed(None));
                }
                if entries.len() > self.cfg.stable_hash as usize {
                    DirBody::Large(Arc::new(self.build_inode(0, entries)))
                } else {
                    DirBody::Flat(entries)
                }
            }
            DirBody::Large(root) => {
                let root = match self.inode_with(root, step, child)? {
                    Change::Unchanged => return Ok(Change::Unchanged),
                    Change::Changed(None) => return Ok(Change::Changed(None)),
                    Change::Changed(Some(r)) => r,
                };
                if root.count <= u64::from(self.cfg.stable_hash) {
                    let mut all = Vec::with_capacity(root.count as usize);
                    self.collect(&root, &mut all)?;
                    all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                    DirBody::Flat(all)
                } else {
                    DirBody::Large(Arc::new(root))
                }
            }
        };
        Ok(Change::Changed(Some(Dir::new(body))))
    }

    /// Builds the inode at `depth` holding `entries` (sorted by step).
    pub fn build_inode(&self, depth: u32, entries: Vec<Entry>) -> Inode {
        let count = entries.len() as u64;
        if entries.len() <= self.cfg.entries as usize {
            return Inode::new(depth, count, InodeBody::Values(entries));
        }
        let mut buckets: Vec<Vec<Entry>> = (0..self.cfg.entries).map(|_| Vec::new()).collect();
        for e in entries {
            buckets[self.cfg.slot(depth, &e.0) as usize].push(e);
        }
        let slots = buckets
            .into_iter()
            .map(|b| if b.is_empty() { IPtr::Empty } else { IPtr::Mem(Arc::new(self.build_inode(depth + 1, b))) })
            .collect();
        Inode::new(depth, count, InodeBody::Tree(slots))
    }

    fn inode_with(&self, node: &Inode, step: &[u8], child: Option<Ptr>) -> Result<Change<Inode>> {
        match &node.body {
            InodeBody::Values(entries) => match entries_with(entries, step, child) {
                None => Ok(Change::Unchanged),
                Some(e) if e.is_empty() => Ok(Change::Changed(None)),
                Some(e) => Ok(Change::Changed(Some(self.build_inode(node.depth, e)))),
            },
            InodeBody::Tree(slots) => {
                let i = self.cfg.slot(node.depth, step) as usize;
                let old = self.inode_of(&slots[i], node.depth + 1)?;
                let old_count = old.as_ref().map_or(0, |o| o.count);
                let new = match (&old, child) {
                    (Some(o), child) => match self.inode_with(o, step, child)? {
                        Change::Unchanged => return Ok(Change::Unchanged),
                        Change::Changed(n) => n,
                    },
                    (None, None) => return Ok(Change::Unchanged),
                    (None, Some(c)) => {
                        let e: Entry = (Step::from_slice(step), c);
                        Some(Inode::new(node.depth + 1, 1, InodeBody::Values(vec![e])))
                    }
                };
                let count = node.count - old_count + new.as_ref().map_or(0, |n| n.count);
                if count == 0 {
                    return Ok(Change::Changed(None));
                }
                if count <= u64::from(self.cfg.entries) {
                    // Too few bindings left for a Tree inode: canonical form is Values.
                    let mut all = Vec::with_capacity(count as usize);
                    for (j, s) in slots.iter().enumerate() {
                        if j != i {
                            if let Some(sub) = self.inode_of(s, node.depth + 1)? {
                                self.collect(&sub, &mut all)?;
                            }
                        }
                    }
                    if let Some(n) = &new {
                        self.collect(n, &mut all)?;
                    }
                    all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                    return Ok(Change::Changed(Some(Inode::new(node.depth, count, InodeBody::Values(all)))));
                }
                let mut slots = slots.clone();
                slots[i] = match new {
                    None => IPtr::Empty,
                    Some(n) => IPtr::Mem(Arc::new(n)),
                };
                Ok(Change::Changed(Some(Inode::new(node.depth, count, InodeBody::Tree(slots)))))
            }
        }
    }

    /// Appends every binding below `node` to `out` (inode order, not sorted).
    pub fn collect(&self, node: &Inode, out: &mut Vec<Entry>) -> Result<()> {
        match &node.body {
            InodeBody::Values(e) => out.extend(e.iter().cloned()),
            InodeBody::Tree(slots) => {
                for s in slots {
                    if let Some(sub) = self.inode_of(s, node.depth + 1)? {
                        self.collect(&sub, out)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Calls `f` on each binding of `dir` in storage order (sorted for flat directories,
    /// inode order for large ones); stops early when `f` returns false.
    pub fn each_entry(&self, dir: &Dir, f: &mut dyn FnMut(&Step, &Ptr) -> Result<bool>) -> Result<bool> {
        match &dir.body {
            DirBody::Flat(entries) => {
                for (s, p) in entries {
                    if !f(s, p)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            DirBody::Large(root) => self.each_inode_entry(root, f),
        }
    }

    fn each_inode_entry(&self, node: &Inode, f: &mut dyn FnMut(&Step, &Ptr) -> Result<bool>) -> Result<bool> {
        match &node.body {
            InodeBody::Values(entries) => {
                for (s, p) in entries {
                    if !f(s, p)? {
                        return Ok(false);
                    }
                }
            }
            InodeBody::Tree(slots) => {
                for s in slots {
                    if let Some(sub) = self.inode_of(s, node.depth + 1)? {
                        if !self.each_inode_entry(&sub, f)? {
                            return Ok(false);
                        }
                    }
                }
            }
        }
        Ok(true)
    }

    /// The node at the end of `path` starting from `root`.
    pub fn find_ptr<S: AsRef<[u8]>>(&self, root: &Ptr, path: &[S]) -> Result<Option<Ptr>> {
        let mut cur = root.clone();
        for step in path {
            let Some(dir) = self.dir_of(&cur)? else { return Ok(None) };
            match self.get(&dir, step.as_ref())? {
                Some(p) => cur = p,
                None => return Ok(None),
            }
        }
        Ok(Some(cur))
    }

    /// `node` with the subtree at `path` replaced by `new` (None removes it). Directories
    /// left empty are removed, as in Tezos; contents in the way of a directory are replaced.
    pub fn set_at<S: AsRef<[u8]>>(&self, node: Option<&Ptr>, path: &[S], new: Option<Ptr>) -> Result<Change<Ptr>> {
        let Some((first, rest)) = path.split_first() else {
            return Ok(Change::Changed(new));
        };
        let dir = match node {
            Some(p) => self.dir_of(p)?,
            None => None,
        };
        let dir = match dir {
            Some(d) => d,
            None if new.is_none() => return Ok(Change::Unchanged),
            None => Arc::new(Dir::empty()),
        };
        let child = self.get(&dir, first.as_ref())?;
        let new_child = match self.set_at(child.as_ref(), rest, new)? {
            Change::Unchanged => return Ok(Change::Unchanged),
            Change::Changed(Some(Ptr::Dir(d))) if d.len() == 0 => None,
            Change::Changed(c) => c,
        };
        match self.dir_with(&dir, first.as_ref(), new_child)? {
            Change::Unchanged => Ok(Change::Unchanged),
            Change::Changed(None) => Ok(Change::Changed(None)),
            Change::Changed(Some(d)) => Ok(Change::Changed(Some(Ptr::Dir(Arc::new(d))))),
        }
    }
}

/// Binary search of a sorted binding list.
pub(crate) fn search(entries: &[Entry], step: &[u8]) -> std::result::Result<usize, usize> {
    entries.binary_search_by(|(s, _)| s[..].cmp(step))
}

/// A copy of `entries` with `step` set or removed; None if nothing changes.
fn entries_with(entries: &[Entry], step: &[u8], child: Option<Ptr>) -> Option<Vec<Entry>> {
    let pos = search(entries, step);
    if pos.is_err() && child.is_none() {
        return None;
    }
    let mut out = Vec::with_capacity(entries.len() + 1);
    out.extend_from_slice(entries);
    match (pos, child) {
        (Ok(i), Some(c)) => out[i].1 = c,
        (Ok(i), None) => {
            out.remove(i);
        }
        (Err(i), Some(c)) => out.insert(i, (Step::from_slice(step), c)),
        (Err(_), None) => unreachable!("handled above"),
    }
    Some(out)
}
