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
//!
//! A node no recent commit wrote has nothing recent below it either (a change below a node
//! changes the node, which is written again with it), so the walk does not go into it: it
//! takes the whole subtree out of the tree and hands it to the store ([`Source::adopt`]),
//! which lets go of it node by node ([`let_go`]) on a thread of its own. Those subtrees were
//! a third of the nodes an eviction visited, each one out of the processor's caches, and
//! the walk runs on the thread that applies the blocks.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use arbor_core::ChildKind;

use super::node::{
    warm, warm_slots, Dir, DirBody, DiskPtr, Evicted, Held, IPtr, Inode, InodeBody, Persisted, Ptr, Reading, Source,
};

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
/// written before commit `keep_from`: each subtree whose top is such a node goes to the
/// store whole ([`Source::adopt`]). Nodes another tree still shares cannot change in place:
/// they stay, and so does what they hold. Returns what the nodes that stay below the
/// share's slots take in memory, as `source` weighs them ([`Source::weigh`]); nodes above
/// the slots (visited by every share) and nodes another tree shares are not counted.
pub(crate) fn evict(root: &mut Ptr, keep_from: u32, share: Share, source: &dyn Source) -> u64 {
    let held = Cell::new(0);
    let away = RefCell::new(Vec::new());
    let weigh = |node: Held<'_>| source.weigh(node);
    let walk = Walk { keep_from, share: Some(share), weigh: &weigh, away: Away::Whole(&away), held: &held };
    if let Ptr::Dir(d) = root {
        if let Some(d) = Arc::get_mut(d.node_mut_keeping_hash()) {
            walk.in_dir(d);
        }
    }
    let away = away.into_inner();
    if !away.is_empty() {
        source.adopt(away);
    }
    held.get()
}

/// Lets go of a written subtree that a tree let go of whole (`evict`), children first: each
/// node becomes a pointer by offset in its parent, and is handed to `adopt` in the form a
/// read would decode it to. A node another tree shares stays with that tree; the nodes above
/// it, which would pin it, are dropped instead of handed over.
pub(crate) fn let_go(node: Evicted, each: &dyn Fn(Evicted)) {
    let held = Cell::new(0);
    let walk = Walk { keep_from: u32::MAX, share: None, weigh: &|_| 0, away: Away::Each(each), held: &held };
    // The top goes as a child of the walk does, from a pointer of its own, dropped with
    // what it still holds when something below it stays.
    let _stayed = match node {
        Evicted::Value(v) => return each(Evicted::Value(v)),
        Evicted::Dir(d) => walk.child(&mut Ptr::dir(d), false),
        Evicted::Inode(i) => walk.slot(&mut IPtr::mem(i)),
    };
}

/// Where the nodes an eviction takes out of the tree go.
#[derive(Clone, Copy)]
enum Away<'a> {
    /// A node written before the window goes with its subtree, unvisited, to be let go of
    /// later ([`let_go`]).
    Whole(&'a RefCell<Vec<Evicted>>),
    /// Each node goes on its own, once its children are pointers by offset (`let_go`).
    Each(&'a dyn Fn(Evicted)),
}

/// One eviction's parameters, as the walk goes down.
#[derive(Clone, Copy)]
struct Walk<'a> {
    keep_from: u32,
    /// The share to visit; None below a large directory whose share was chosen already
    /// (everything below it is visited).
    share: Option<Share>,
    /// What a node that stays weighs ([`Source::weigh`]).
    weigh: &'a dyn Fn(Held<'_>) -> u64,
    away: Away<'a>,
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
            self.held.set(self.held.get() + (self.weigh)(node));
        }
    }

    /// Whether a node written at `written`, if nothing else holds it, goes with its subtree,
    /// unvisited: it is too old to stay, and so is everything below it.
    fn whole(self, written: Option<Persisted>) -> bool {
        matches!(self.away, Away::Whole(_)) && !stays(written, self.keep_from)
    }

    /// What stays below a node written at `written` once the walk is done with it: nothing
    /// when it leaves whole ([`Walk::whole`]), else what visiting it (`visit`) leaves; None
    /// when another tree shares it (`unique` is None), as only what a node holds uniquely can
    /// be let go of.
    fn inside<T>(
        self,
        written: Option<Persisted>,
        unique: Option<&mut T>,
        visit: fn(Self, &mut T) -> u64,
    ) -> Option<u64> {
        match unique {
            Some(_) if self.whole(written) => Some(0),
            unique => unique.map(|node| visit(self, node)),
        }
    }

    /// Hands `node`, which left the tree, over.
    fn away(self, node: Evicted) {
        match self.away {
            Away::Whole(away) => away.borrow_mut().push(node),
            Away::Each(each) => each(node),
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
            DirBody::Flat(entries) => {
                warm(entries, Reading::Eviction);
                entries.children_mut().map(|c| self.child(c, values_stay)).sum()
            }
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
                warm(entries, Reading::Eviction);
                entries.children_mut().map(|c| self.child(c, values_stay)).sum()
            }
            InodeBody::Tree(slots) => {
                // The root inode of the first large directory on the way down: this share's
                // slots are visited, with everything below them.
                let (share, below) = match self.share {
                    Some(share) if node.depth == 0 => (Some(share), Walk { share: None, ..self }),
                    _ => {
                        // Every slot is visited: their inodes' misses all in flight at once.
                        warm_slots(slots);
                        (None, self)
                    }
                };
                let mut kept = 0;
                for (n, slot) in slots.iter_mut().enumerate() {
                    if share.is_some_and(|s| !s.has_slot(n)) {
                        // Another share's: in memory, not visited this time.
                        kept += u64::from(matches!(slot, IPtr::Mem(_)));
                        continue;
                    }
                    kept += below.slot(slot);
                }
                kept
            }
        }
    }

    /// A slot of a Tree inode: its inode evicted when written before `keep_from` and nothing
    /// below it stays. Returns the nodes that stay in memory, itself included.
    fn slot(self, slot: &mut IPtr) -> u64 {
        let IPtr::Mem(sub) = slot else { return 0 };
        let written = sub.persisted();
        let inside = self.inside(written, Arc::get_mut(sub.node_mut_keeping_hash()), Walk::in_inode);
        match evictable(written, inside, self.keep_from) {
            Some(p) => {
                let hash = *sub.hash();
                if let IPtr::Mem(sub) = std::mem::replace(slot, IPtr::Disk { offset: p.offset, hash }) {
                    self.away(Evicted::Inode(sub.into_node()));
                }
                0
            }
            None => {
                if inside.is_some() {
                    self.hold(Held::Inode(sub));
                }
                1 + inside.unwrap_or(0)
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
                let written = d.persisted();
                let inside = self.inside(written, Arc::get_mut(d.node_mut_keeping_hash()), Walk::in_dir);
                match evictable(written, inside, self.keep_from) {
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
            Ptr::Value(v) => self.away(Evicted::Value(v.into_node())),
            Ptr::Dir(d) => self.away(Evicted::Dir(d.into_node())),
            Ptr::Small(_) | Ptr::Disk(_) => {}
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::sync::Arc;

    use arbor_core::Hash;

    use super::let_go;
    use crate::path::Step;
    use crate::tree::lineage::Lineage;
    use crate::tree::node::{Dir, DirBody, Evicted, Persisted, Ptr};
    use crate::tree::Bindings;

    /// A flat directory written at `offset` holding `children`, with a made-up hash.
    fn written_dir(offset: u64, children: Vec<(&str, Ptr)>) -> Arc<Dir> {
        let entries = children.into_iter().map(|(s, p)| (Step::from_slice(s.as_bytes()), p)).collect();
        let at = Persisted { store: 1, offset, full: offset, seq: 3, level: 0 };
        let hash = Hash([offset as u8; 32]);
        Arc::new(Dir::loaded(
            DirBody::Flat(Bindings::from_sorted(entries).unwrap()),
            Some(hash),
            at,
            Lineage::default(),
        ))
    }

    /// The offsets `let_go` hands over, in order, for a directory at 300 holding one at 200
    /// holding one at 100; `share` keeps another handle on the one at 200.
    fn adopted(share: bool) -> (Vec<u64>, Option<Arc<Dir>>) {
        let leaf = written_dir(100, vec![("v", Ptr::value(b"1"))]);
        let middle = written_dir(200, vec![("leaf", Ptr::dir(leaf))]);
        let kept = share.then(|| middle.clone());
        let top = written_dir(300, vec![("a", Ptr::value(b"2")), ("middle", Ptr::dir(middle))]);
        let seen = RefCell::new(Vec::new());
        let_go(Evicted::Dir(top), &|node| {
            let Evicted::Dir(d) = node else { panic!("only directories here") };
            let DirBody::Flat(entries) = &d.body else { panic!("flat") };
            assert!(entries.iter().all(|(_, c)| !matches!(c, Ptr::Dir(_))), "children by offset when handed over");
            seen.borrow_mut().push(d.persisted().unwrap().offset);
        });
        (seen.into_inner(), kept)
    }

    /// A subtree let go of is handed over node by node, children first, each pointing to its
    /// children by offset.
    #[test]
    fn a_subtree_let_go_of_is_handed_over_children_first() {
        assert_eq!(adopted(false).0, vec![100, 200, 300]);
    }

    /// A node another tree shares stays with it, whole, and the nodes above it (which would
    /// pin it in the cache) are dropped rather than handed over.
    #[test]
    fn a_shared_node_and_those_above_it_are_not_handed_over() {
        let (seen, kept) = adopted(true);
        assert_eq!(seen, Vec::<u64>::new());
        let kept = kept.unwrap();
        let DirBody::Flat(entries) = &kept.body else { panic!("flat") };
        assert!(matches!(entries.child(0), Ptr::Dir(_)), "the shared node keeps its child in memory");
    }
}
