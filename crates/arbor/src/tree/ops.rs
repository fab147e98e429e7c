//! Lookup and copy-on-write update of directories and inode trees.

use std::sync::Arc;

use arbor_core::{ChildKind, InodeConfig};

use super::bindings::Bindings;
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

impl Ctx {
    fn source(&self) -> Result<&Arc<dyn Source>> {
        self.source.as_ref().ok_or(Error::ForeignTree)
    }

    /// The directory `ptr` points to, or None if it is contents.
    pub fn dir_of(&self, ptr: &Ptr) -> Result<Option<Arc<Dir>>> {
        match ptr {
            Ptr::Dir(d) => Ok(Some(d.node().clone())),
            Ptr::Value(_) | Ptr::Small(_) => Ok(None),
            Ptr::Disk(d) if d.kind == ChildKind::Node => Ok(Some(self.source()?.load_dir(d)?)),
            Ptr::Disk(_) => Ok(None),
        }
    }

    /// The value `ptr` points to, or None if it is a directory (a small value is copied into
    /// a [`Value`] of its own).
    pub fn value_of(&self, ptr: &Ptr) -> Result<Option<Arc<Value>>> {
        match ptr {
            Ptr::Value(v) => Ok(Some(v.node().clone())),
            Ptr::Small(v) => Ok(Some(Arc::new(v.to_value()))),
            Ptr::Dir(_) => Ok(None),
            Ptr::Disk(d) if d.kind == ChildKind::Contents => Ok(Some(self.source()?.load_value(d)?)),
            Ptr::Disk(_) => Ok(None),
        }
    }

    /// The inode at `offset`, loaded through the store.
    pub fn load_inode(&self, offset: u64, hash: &arbor_core::Hash, depth: u32) -> Result<Arc<Inode>> {
        self.source()?.load_inode(offset, hash, depth)
    }

    fn inode_of(&self, slot: &IPtr, depth: u32) -> Result<Option<Arc<Inode>>> {
        match slot {
            IPtr::Empty => Ok(None),
            IPtr::Mem(i) => Ok(Some(i.node().clone())),
            IPtr::Disk { offset, hash } => Ok(Some(self.source()?.load_inode(*offset, hash, depth)?)),
        }
    }

    /// Builds the inode at `depth` holding `entries`, the bindings of one list that grew past
    /// what one node holds (sorted by step).
    pub fn build_inode(&self, depth: u32, entries: Vec<Entry>) -> Inode {
        let count = entries.len() as u64;
        if entries.len() <= self.cfg.entries as usize {
            return Inode::new(depth, count, InodeBody::Values(Bindings::from_part(entries)));
        }
        let mut buckets: Vec<Vec<Entry>> = (0..self.cfg.entries).map(|_| Vec::new()).collect();
        for e in entries {
            buckets[self.cfg.slot(depth, &e.0) as usize].push(e);
        }
        let slots = buckets
            .into_iter()
            .map(|b| if b.is_empty() { IPtr::Empty } else { IPtr::mem(Arc::new(self.build_inode(depth + 1, b))) })
            .collect();
        Inode::new(depth, count, InodeBody::Tree(slots))
    }

    /// Appends every binding below `node` to `out` (inode order, not sorted).
    pub fn collect(&self, node: &Inode, out: &mut Vec<Entry>) -> Result<()> {
        match &node.body {
            InodeBody::Values(e) => out.extend(e.iter().map(|(s, c)| (Step::from_slice(s), c.clone()))),
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

    /// Every binding below `node`, sorted by step: the bindings of an inode tree that shrank
    /// to a size held in one node (a Values inode, or a flat directory).
    pub fn sorted_bindings(&self, node: &Inode) -> Result<Bindings> {
        let mut all = Vec::with_capacity(node.count as usize);
        self.collect(node, &mut all)?;
        all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Bindings::from_sorted(all)
    }

    /// Calls `f` on each binding of `dir` in storage order (sorted for flat directories,
    /// inode order for large ones); stops early when `f` returns false.
    pub fn each_entry(&self, dir: &Dir, f: &mut dyn FnMut(&[u8], &Ptr) -> Result<bool>) -> Result<bool> {
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

    fn each_inode_entry(&self, node: &Inode, f: &mut dyn FnMut(&[u8], &Ptr) -> Result<bool>) -> Result<bool> {
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

    /// Calls `f` with the node at the end of `path` below `root` (None when nothing is there).
    ///
    /// Nodes in memory are walked by reference: a read of the working tree takes no reference
    /// count per step (two atomic operations each, on nodes every thread shares). A node
    /// loaded from the store is held by the frame that loaded it for the rest of the walk.
    pub fn lookup<S, R>(&self, root: &Ptr, path: &[S], f: impl FnOnce(Option<&Ptr>) -> Result<R>) -> Result<R>
    where
        S: AsRef<[u8]>,
    {
        self.walk(At::Ptr(root), path, None, f)
    }

    /// As [`Ctx::lookup`], and sets `parent` to the directory holding the path's last step
    /// when the walk gets there (a path of at least one step).
    pub fn lookup_noting<S, R>(
        &self,
        root: &Ptr,
        path: &[S],
        parent: &mut Option<Ptr>,
        f: impl FnOnce(Option<&Ptr>) -> Result<R>,
    ) -> Result<R>
    where
        S: AsRef<[u8]>,
    {
        self.walk(At::Ptr(root), path, Some(parent), f)
    }

    fn walk<S, R>(
        &self,
        start: At<'_>,
        path: &[S],
        mut parent: Option<&mut Option<Ptr>>,
        f: impl FnOnce(Option<&Ptr>) -> Result<R>,
    ) -> Result<R>
    where
        S: AsRef<[u8]>,
    {
        let mut at = start;
        let mut i = 0;
        loop {
            let node = match at {
                At::Ptr(p) if i == path.len() => return f(Some(p)),
                At::Ptr(dir @ Ptr::Dir(d)) => {
                    if i + 1 == path.len() {
                        if let Some(parent) = parent.as_deref_mut() {
                            *parent = Some(dir.clone());
                        }
                    }
                    match &d.body {
                        DirBody::Flat(entries) => match entries.search(path[i].as_ref()) {
                            Ok(j) => {
                                at = At::Ptr(entries.child(j));
                                i += 1;
                                continue;
                            }
                            Err(_) => return f(None),
                        },
                        DirBody::Large(root) => &**root,
                    }
                }
                At::Ptr(Ptr::Value(_) | Ptr::Small(_)) => return f(None),
                At::Ptr(Ptr::Disk(d)) if d.kind == ChildKind::Node => {
                    let loaded = Ptr::dir(self.source()?.load_dir(d)?);
                    return self.walk(At::Ptr(&loaded), &path[i..], parent, f);
                }
                At::Ptr(Ptr::Disk(_)) => return f(None),
                At::Inode(node) => node,
            };
            // Inside a large directory, looking for `path[i]`.
            let step = path[i].as_ref();
            match &node.body {
                InodeBody::Values(entries) => match entries.search(step) {
                    Ok(j) => {
                        at = At::Ptr(entries.child(j));
                        i += 1;
                    }
                    Err(_) => return f(None),
                },
                InodeBody::Tree(slots) => match &slots[self.cfg.slot(node.depth, step) as usize] {
                    IPtr::Empty => return f(None),
                    IPtr::Mem(sub) => at = At::Inode(sub),
                    IPtr::Disk { offset, hash } => {
                        let loaded = self.source()?.load_inode(*offset, hash, node.depth + 1)?;
                        return self.walk(At::Inode(&loaded), &path[i..], parent, f);
                    }
                },
            }
        }
    }
}

/// Where a walk is: at a node, or inside a large directory at one of its inodes (looking for
/// the next step there).
#[derive(Clone, Copy)]
enum At<'a> {
    Ptr(&'a Ptr),
    Inode(&'a Inode),
}

/// The first eight bytes of `s` as a big-endian number, zero-padded when `s` is shorter.
#[inline]
pub(crate) fn prefix_key(s: &[u8]) -> u64 {
    if let Some(head) = s.first_chunk::<8>() {
        return u64::from_be_bytes(*head);
    }
    let n = s.len();
    if n >= 4 {
        // Two overlapping 4-byte loads: the first four bytes, and the last four, of which
        // the bytes past the fourth land right after them.
        let high = u64::from(u32::from_be_bytes([s[0], s[1], s[2], s[3]]));
        let low = u64::from(u32::from_be_bytes([s[n - 4], s[n - 3], s[n - 2], s[n - 1]]));
        return (high << 32) | ((low << (8 * (8 - n))) & 0xffff_ffff);
    }
    match n {
        0 => 0,
        1 => u64::from(s[0]) << 56,
        2 => (u64::from(s[0]) << 56) | (u64::from(s[1]) << 48),
        _ => (u64::from(s[0]) << 56) | (u64::from(s[1]) << 48) | (u64::from(s[2]) << 40),
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_key;

    /// Byte order of two steps decided by their keys where the keys differ, as the searches
    /// of `tree::bindings` decide it: the order the tests below check against `a.cmp(b)`.
    fn compare_steps(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        let (x, y) = (prefix_key(a), prefix_key(b));
        if x != y {
            // Zero-padded prefixes that differ order the steps: at the first differing byte
            // either both steps have a byte there, or one has ended (a padding 0) and is a
            // proper prefix of the other, which has a byte > 0 there and sorts after it.
            return x.cmp(&y);
        }
        a.cmp(b)
    }

    #[test]
    fn step_order_is_byte_order() {
        let steps: [&[u8]; 24] = [
            b"",
            b"\0",
            b"\0\0",
            b"a",
            b"a\0",
            b"a\0\0\0",
            b"a\0\0\0\0\0\0",
            b"a\0\0\0\0\0\0\0",
            b"ab\xff",
            b"abc",
            b"abcd",
            b"abce",
            b"abcde",
            b"abcdf",
            b"ab",
            b"abcdefg",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefgi",
            b"abcdefgha",
            b"\xff",
            b"0001f46d63a0",
            b"0001f46d63a1",
            b"0001f46d",
        ];
        for a in steps {
            for b in steps {
                assert_eq!(compare_steps(a, b), a.cmp(b), "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn step_order_is_byte_order_for_random_short_steps() {
        // Bytes drawn from a small alphabet with 0 and 0xff, so that equal prefixes, zero
        // padding and proper prefixes come up often.
        let mut rng = arbor_core::toolbox::SplitMix64::new(7);
        let alphabet = [0u8, 1, b'a', 0x7f, 0xff];
        let mut draw = || -> Vec<u8> {
            let len = rng.below(11) as usize;
            (0..len).map(|_| alphabet[rng.below(alphabet.len() as u64) as usize]).collect()
        };
        for _ in 0..200_000 {
            let (a, b) = (draw(), draw());
            assert_eq!(compare_steps(&a, &b), a.cmp(&b), "{a:?} vs {b:?}");
        }
    }
}
