//! Letting go of the cold part of a working tree.
//!
//! The store keeps the tree of its last commit in memory as the next block's starting point
//! (`Store::checkout`), so a block walks the nodes the previous blocks changed without a cache
//! lookup per step. What stays in memory must stay bounded: every written node remembers the
//! commit that last wrote it (`Persisted::seq`), and nodes no recent commit wrote are turned
//! back into pointers by offset and handed to the store's cache, in the form a read would
//! decode them to (children by offset, so a cached node pins nothing else).
//!
//! The walk is spread over the blocks: each checkout visits one share of the tree
//! ([`Share`]), so that no block pays for a walk of everything the last blocks changed (a
//! whole walk every 32 blocks made those blocks 2.5 times as slow as the others, and they
//! were the replay's 99th percentile).

use std::cell::Cell;
use std::sync::Arc;

use arbor_core::ChildKind;

use super::node::{Dir, DirBody, DiskPtr, Evicted, Held, IPtr, Inode, InodeBody, Persisted, Ptr, Source};

/// Which part of a tree one eviction visits: share `index` of `count`.
///
/// Below the first large directory on each path (the inode tree of `contracts/index`,
/// `big_maps/index`, ...: nearly all of a Tezos state), only the slots `s` of its root inode
/// with `s % count == index` are visited; everything above those directories is visited
/// every time (a few directories, changed by every block). With `count` shares visited in
/// turn, one per commit, every node is visited once every `count` commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Share {
    pub index: u32,
    pub count: u32,
}

impl Share {
    /// Whether slot `slot` of a large directory's root inode is in this share.
    fn has_slot(self, slot: usize) -> bool {
        slot as u64 % u64::from(self.count.max(1)) == u64::from(self.index)
    }
}

/// Evicts, in share `share` of the tree below the directory `root`, every written node last
/// written before commit `keep_from`. Nodes another tree still shares cannot change in
/// place: they stay, and so does what they hold. Returns what the nodes that stay below the
/// share's slots take in memory, as `source` weighs them ([`Source::weigh`]); nodes above
/// the slots (visited by every share) and nodes another tree shares are not counted.
pub(crate) fn evict(root: &mut Ptr, keep_from: u32, share: Share, source: &dyn Source) -> u64 {
    let held = Cell::new(0);
    let walk = Walk { keep_from, share: Some(share), source, held: &held };
    if let Ptr::Dir(d) = root {
        if let Some(d) = Arc::get_mut(d.node_mut_keeping_hash()) {
            walk.in_dir(d);
        }
    }
    held.get()
}

/// One eviction's parameters, as the walk goes down.
#[derive(Clone, Copy)]
struct Walk<'a> {
    keep_from: u32,
    /// The share to visit; None below a large directory whose share was chosen already
    /// (everything below it is visited).
    share: Option<Share>,
    source: &'a dyn Source,
    /// What the nodes that stay below the share's slots weigh, so far.
    held: &'a Cell<u64>,
}

/// Whether a node written at `written` stays in memory (it is too recent to evict, or not
/// written at all); its values then stay with it.
fn stays(written: Option<Persisted>, keep_from: u32) -> bool {
    written.is_none_or(|p| p.seq >= keep_from)
}

/// Where a node written at `written` is, if it can go: written before `keep_from`, and
/// nothing below it stays (`inside`: what stays below it, None when another tree shares it).
fn evictable(written: Option<Persisted>, inside: Option<u64>, keep_from: u32) -> Option<Persisted> {
    written.filter(|p| p.seq < keep_from && inside == Some(0))
}

impl Walk<'_> {
    /// Counts `node`, which stays, in the share's weight (when below the share's slots).
    fn hold(self, node: Held<'_>) {
        if self.share.is_none() {
            self.held.set(self.held.get() + self.source.weigh(node));
        }
    }

    /// Evicts below a directory; returns the nodes that stay in memory below it.
    fn in_dir(self, d: &mut Dir) -> u64 {
        if d.persisted().is_some() {
            // Written since it changed: what changed before no longer matters (`tree::order`).
            d.updates = None;
        }
        let values_stay = stays(d.persisted(), self.keep_from);
        match &mut d.body {
            DirBody::Flat(entries) => entries.children_mut().map(|c| self.child(c, values_stay)).sum(),
            DirBody::Large(root) => match Arc::get_mut(root) {
                Some(root) => self.in_inode(root),
                None => 1,
            },
        }
    }

    /// Evicts below an inode; returns the nodes that stay in memory below it.
    fn in_inode(self, node: &mut Inode) -> u64 {
        match &mut node.body {
            InodeBody::Values(entries) => {
                let values_stay = stays(node.disk.get().copied(), self.keep_from);
                entries.children_mut().map(|c| self.child(c, values_stay)).sum()
            }
            InodeBody::Tree(slots) => {
                // The root inode of the first large directory on the way down: this share's
                // slots are visited, with everything below them.
                let (share, below) = match self.share {
                    Some(share) if node.depth == 0 => (Some(share), Walk { share: None, ..self }),
                    _ => (None, self),
                };
                let mut kept = 0;
                for (n, slot) in slots.iter_mut().enumerate() {
                    let IPtr::Mem(sub) = slot else { continue };
                    if share.is_some_and(|s| !s.has_slot(n)) {
                        // Another share's: in memory, not visited this time.
                        kept += 1;
                        continue;
                    }
                    // Below a node only what it holds uniquely can be let go of.
                    let inside = Arc::get_mut(sub.node_mut_keeping_hash()).map(|s| below.in_inode(s));
                    match evictable(sub.persisted(), inside, self.keep_from) {
                        Some(p) => {
                            let hash = *sub.hash();
                            if let IPtr::Mem(sub) = std::mem::replace(slot, IPtr::Disk { offset: p.offset, hash }) {
                                self.source.adopt(Evicted::Inode(sub.into_node()));
                            }
                        }
                        None => {
                            if inside.is_some() {
                                below.hold(Held::Inode(sub));
                            }
                            kept += 1 + inside.unwrap_or(0);
                        }
                    }
                }
                kept
            }
        }
    }

    /// A binding's child: evicted when written before `keep_from` and nothing below it
    /// stays. Returns the nodes that stay in memory, itself included (values not counted).
    ///
    /// The values of a node that stays in memory stay with it, unvisited: most bindings hold
    /// values, each its own allocation, and reading every one of them to learn it could stay
    /// anyway was most of an eviction's time. They are let go of with their node.
    fn child(self, ptr: &mut Ptr, values_stay: bool) -> u64 {
        let (written, kind) = match ptr {
            // A small value is part of its binding.
            Ptr::Disk(_) | Ptr::Small(_) => return 0,
            Ptr::Value(_) if values_stay => return 0,
            // An inline value is part of its parent's record: nothing to let go of. A value
            // with a record of its own too recent to go counts as a node that stays.
            Ptr::Value(v) => match evictable(v.written().copied(), Some(0), self.keep_from) {
                Some(p) => (p, ChildKind::Contents),
                None => return u64::from(v.written().is_some()),
            },
            Ptr::Dir(d) => {
                let inside = Arc::get_mut(d.node_mut_keeping_hash()).map(|d| self.in_dir(d));
                match evictable(d.persisted(), inside, self.keep_from) {
                    Some(p) => (p, ChildKind::Node),
                    None => {
                        if inside.is_some() {
                            self.hold(Held::Dir(d));
                        }
                        return 1 + inside.unwrap_or(0);
                    }
                }
            }
        };
        let hash = *ptr.hash();
        match std::mem::replace(ptr, Ptr::Disk(DiskPtr { offset: written.offset, hash, kind })) {
            Ptr::Value(v) => self.source.adopt(Evicted::Value(v.into_node())),
            Ptr::Dir(d) => self.source.adopt(Evicted::Dir(d.into_node())),
            Ptr::Small(_) | Ptr::Disk(_) => {}
        }
        0
    }
}
