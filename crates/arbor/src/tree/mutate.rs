//! Changing a tree in place, copy-on-write: a node shared with another tree (or the cache)
//! is copied before it changes, a node only this tree holds is changed where it is. Building
//! a block's tree with `add_mut` therefore copies each touched directory once, not once per
//! operation.

use std::sync::atomic::{fence, Ordering};
use std::sync::Arc;

use super::bindings::Bindings;
use super::lineage::Lineage;
use super::node::{Dir, DirBody, IPtr, Inode, InodeBody, Persisted, Ptr};
use super::ops::Ctx;
use super::order::{may_be_first_change, same_child};
use super::trail::Turn;
use crate::error::Result;

/// Where a change went: the directory holding its path's last step once changed (and still
/// holding bindings), and, when `noting`, the turns taken to that directory from the node
/// changed.
#[derive(Debug, Default)]
pub(crate) struct Reached {
    pub parent: Option<Ptr>,
    pub turns: Vec<Turn>,
    pub noting: bool,
}

impl Reached {
    /// Notes `turn`, taken with the steps `rest` still to go (when noting): only the turns
    /// above the directory holding the last step, whose own bindings a write changes.
    fn turn<S>(&mut self, rest: &[S], turn: Turn) {
        if self.noting && !rest.is_empty() {
            self.turns.push(turn);
        }
    }
}

/// What a change did to the node it was applied to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Unchanged,
    Changed,
    /// The node is now an empty directory (or gone): its parent drops the binding.
    Emptied,
}

impl Ctx {
    /// The node behind `arc`, to change: copied first if anything else holds it
    /// (`Arc::make_mut`). When the node has a record (`written`), the store's cache is told
    /// first that the tree is moving on from that version, and lets go of it: a node a block
    /// changes is most often one it just read through the cache, and with the cache's handle
    /// gone it is changed in place rather than copied whole, and the superseded version does
    /// not stay in the cache's budget (thousands of them a block filled a 1 GiB cache in
    /// 800 blocks). Reading that version again (an older commit's tree) reads its record.
    ///
    /// Whether anything else holds the node is read from its count alone (no tree makes weak
    /// references): `Arc::get_mut` would take it with an atomic exchange, and `make_mut` takes
    /// one more, on each of the six or so levels of every change.
    fn own<'n, T: Clone>(&self, arc: &'n mut Arc<T>, written: impl FnOnce(&T) -> Option<Persisted>) -> &'n mut T {
        if Arc::strong_count(arc) == 1 && Arc::weak_count(arc) == 0 {
            // Every other handle that ever held the node was dropped with a release decrement:
            // this fence orders their reads and writes of it before the change made here.
            fence(Ordering::Acquire);
            let node = Arc::as_ptr(arc).cast_mut();
            // SAFETY: `arc` is the one handle to the node (strong count 1) and no weak one
            // exists (none could upgrade), so no other reference to the node exists or can be
            // made while `arc` is borrowed mutably for `'n`: the same condition under which
            // `Arc::get_mut` hands out `&mut T`. `Arc::as_ptr` derives the pointer from the
            // allocation, not from a shared reference, so writing through it is allowed.
            #[expect(unsafe_code, reason = "Arc::get_mut without its atomic exchange (see above)")]
            return unsafe { &mut *node };
        }
        // (A node of another store instance names an offset in another log.)
        if let (Some(p), Some(source)) = (written(arc).filter(|p| p.store == self.uid), &self.source) {
            source.superseded(p.offset);
        }
        Arc::make_mut(arc)
    }

    /// Sets (or, with None, removes) the subtree at `path` below `node`. Directories left
    /// empty are removed, as in Tezos; contents in the way of a directory are replaced.
    /// `reached` gets the directory holding the path's last step once it is changed (and
    /// still holds bindings), and the turns taken to it.
    pub fn set_mut<S: AsRef<[u8]>>(
        &self,
        node: &mut Ptr,
        path: &[S],
        new: Option<Ptr>,
        reached: &mut Reached,
    ) -> Result<Outcome> {
        let Some((first, rest)) = path.split_first() else {
            return Ok(match new {
                None => Outcome::Emptied,
                Some(Ptr::Dir(d)) if d.len() == 0 => Outcome::Emptied,
                // Octez notes no change for an equal binding (list and fold order see it).
                Some(p) if same_child(node, &p) => Outcome::Unchanged,
                Some(p) => {
                    *node = p;
                    Outcome::Changed
                }
            });
        };
        // Make `node` an in-memory directory we may change.
        match node {
            Ptr::Dir(_) => {}
            Ptr::Disk(_) => match self.dir_of(node)? {
                Some(d) => *node = Ptr::dir(d),
                None if new.is_none() => return Ok(Outcome::Unchanged),
                None => *node = Ptr::dir(Arc::new(Dir::empty())),
            },
            Ptr::Value(_) | Ptr::Small(_) if new.is_none() => return Ok(Outcome::Unchanged),
            Ptr::Value(_) | Ptr::Small(_) => *node = Ptr::dir(Arc::new(Dir::empty())),
        }
        let Ptr::Dir(arc) = node else { unreachable!("made a directory above") };
        let dir = self.own(arc.node_mut(), Dir::persisted);
        dir.reset();
        let step = first.as_ref();
        let before = dir.len();
        // Whether this may be the step's first change since the directory was written or read.
        let mut fresh = true;
        let outcome = match &mut dir.body {
            DirBody::Flat(entries) => {
                let o = self.set_in_entries(entries, &mut dir.lineage, step, rest, new, &mut fresh, reached)?;
                if entries.len() > self.cfg.stable_hash as usize {
                    let all = std::mem::take(entries);
                    dir.body = DirBody::Large(Arc::new(self.build_inode(0, all.into_entries())));
                    dir.lineage = Lineage::default();
                }
                o
            }
            DirBody::Large(root) => {
                let r = self.own(root, Inode::persisted);
                let o = self.set_in_inode(r, step, rest, new, &mut fresh, reached)?;
                if r.count <= u64::from(self.cfg.stable_hash) {
                    dir.body = DirBody::Flat(self.sorted_bindings(r)?);
                    // No flat record of this directory is a base for the next write.
                    dir.lineage = Lineage::default();
                }
                o
            }
        };
        if outcome != Outcome::Unchanged && fresh {
            // One binding more: the step is new; as many or one fewer: the directory had it.
            dir.note_update(step, dir.len() <= before);
        }
        let outcome = match outcome {
            Outcome::Unchanged => Outcome::Unchanged,
            _ if dir.len() == 0 => Outcome::Emptied,
            _ => Outcome::Changed,
        };
        if rest.is_empty() && outcome == Outcome::Changed {
            reached.parent = Some(node.clone());
        }
        Ok(outcome)
    }

    /// Applies the change to a sorted binding list; the binding named `step` is added,
    /// changed, or dropped when its child empties, and noted in `lineage` as changed. `fresh`
    /// is cleared when the binding changed already since its directory was written or read.
    ///
    /// The step is noted before the change: after an error part-way the binding may differ
    /// from the base, and a delta that omits it would not describe the node. A binding that
    /// holds a directory changed since it was written was noted when that directory changed
    /// (a written node's children are all written, so the change went through this node),
    /// and is not looked up in the lineage again: a block changes the directories on the way
    /// to its hot values hundreds of times.
    #[expect(
        clippy::too_many_arguments,
        reason = "the binding list and the lineage are borrowed apart from the node holding both"
    )]
    fn set_in_entries<S: AsRef<[u8]>>(
        &self,
        entries: &mut Bindings,
        lineage: &mut Lineage,
        step: &[u8],
        rest: &[S],
        new: Option<Ptr>,
        fresh: &mut bool,
        reached: &mut Reached,
    ) -> Result<Outcome> {
        match entries.search(step) {
            Ok(i) => {
                if matches!(entries.child(i), Ptr::Dir(d) if d.persisted().is_none()) {
                    // (A node with no base is written whole: what it notes does not matter.)
                    debug_assert!(lineage.base.is_none() || lineage.noted(step), "{step:?} changed unnoted");
                } else {
                    lineage.mark_step(step, true);
                }
                *fresh = may_be_first_change(entries.child(i));
                reached.turn(rest, Turn::Binding(i as u32));
                let o = self.set_mut(entries.child_mut(i), rest, new, reached)?;
                if o == Outcome::Emptied {
                    entries.remove(i);
                    return Ok(Outcome::Changed);
                }
                Ok(o)
            }
            Err(_) if new.is_none() => Ok(Outcome::Unchanged),
            Err(i) => {
                lineage.mark_step(step, false);
                reached.turn(rest, Turn::Binding(i as u32));
                let mut child = Ptr::dir(Arc::new(Dir::empty()));
                match self.set_mut(&mut child, rest, new, reached)? {
                    Outcome::Changed => {
                        entries.insert(i, step, child)?;
                        Ok(Outcome::Changed)
                    }
                    // Adding an empty tree where nothing was: nothing to do.
                    _ => Ok(Outcome::Unchanged),
                }
            }
        }
    }

    /// Applies the change inside an inode, keeping counts and the canonical inode shape.
    fn set_in_inode<S: AsRef<[u8]>>(
        &self,
        node: &mut Inode,
        step: &[u8],
        rest: &[S],
        new: Option<Ptr>,
        fresh: &mut bool,
        reached: &mut Reached,
    ) -> Result<Outcome> {
        node.reset();
        let depth = node.depth;
        match &mut node.body {
            InodeBody::Values(entries) => {
                let o = self.set_in_entries(entries, &mut node.lineage, step, rest, new, fresh, reached)?;
                node.count = entries.len() as u64;
                if entries.len() > self.cfg.entries as usize {
                    let all = std::mem::take(entries);
                    *node = self.build_inode(depth, all.into_entries());
                }
                Ok(if node.count == 0 { Outcome::Emptied } else { o })
            }
            InodeBody::Tree(slots) => {
                let i = self.cfg.slot(depth, step) as usize;
                // Taken out of its slot (no reference count changes hands), so that it is
                // unique when nothing else shares it.
                let mut child = match std::mem::replace(&mut slots[i], IPtr::Empty) {
                    IPtr::Empty if new.is_none() => return Ok(Outcome::Unchanged),
                    IPtr::Empty => Arc::new(Inode::new(depth + 1, 0, InodeBody::Values(Bindings::default()))),
                    IPtr::Mem(c) => c.into_node(),
                    IPtr::Disk { offset, hash } => match self.load_inode(offset, &hash, depth + 1) {
                        Ok(loaded) => loaded,
                        Err(e) => {
                            // Nothing changed: the slot points where it did.
                            slots[i] = IPtr::Disk { offset, hash };
                            return Err(e);
                        }
                    },
                };
                node.lineage.mark_slot(i);
                reached.turn(rest, Turn::Slot(i as u8));
                let before = child.count;
                let c = self.own(&mut child, Inode::persisted);
                let o = match self.set_in_inode(c, step, rest, new, fresh, reached) {
                    Ok(o) => o,
                    Err(e) => {
                        slots[i] = if before == 0 { IPtr::Empty } else { IPtr::mem(child) };
                        return Err(e);
                    }
                };
                let after = c.count;
                slots[i] = if after == 0 { IPtr::Empty } else { IPtr::mem(child) };
                node.count = node.count - before + after;
                if node.count == 0 {
                    return Ok(Outcome::Emptied);
                }
                if node.count <= u64::from(self.cfg.entries) {
                    // Too few bindings left for a Tree inode: the canonical form is Values.
                    node.body = InodeBody::Values(self.sorted_bindings(node)?);
                    node.lineage = Lineage::default();
                }
                Ok(if o == Outcome::Emptied { Outcome::Changed } else { o })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::tree::{Ptr, Tree};

    /// Where the tree's root directory is in memory.
    fn root_at(t: &Tree) -> *const super::Dir {
        let Ptr::Dir(root) = &t.root else { panic!("a directory at the root") };
        Arc::as_ptr(root.node())
    }

    /// A node only its tree holds is changed where it is; one another tree shares is copied
    /// first, and the other tree keeps its version; once that tree is dropped (here, on
    /// another thread after reading it there), the node is the tree's alone again.
    #[test]
    fn a_node_held_once_changes_in_place_and_a_shared_one_is_copied() {
        let mut t = Tree::empty();
        t.add_mut(&["a", "b"], b"1").unwrap();
        let first = root_at(&t);
        t.add_mut(&["a", "c"], b"2").unwrap();
        assert_eq!(root_at(&t), first, "changed in place: nothing else holds the root");

        let copy = t.clone();
        t.add_mut(&["a", "d"], b"3").unwrap();
        let second = root_at(&t);
        assert_ne!(second, first, "copied: the clone holds the root");
        assert_eq!(root_at(&copy), first);
        assert_eq!(copy.find(&["a", "d"]).unwrap(), None, "the clone kept its version");

        let reader = std::thread::spawn(move || {
            let got = copy.find(&["a", "c"]).unwrap();
            drop(copy);
            got
        });
        assert_eq!(reader.join().unwrap(), Some(b"2".to_vec()));
        t.add_mut(&["a", "e"], b"4").unwrap();
        assert_eq!(root_at(&t), second, "in place again once the clone is gone");
        for (step, value) in [("b", b"1"), ("c", b"2"), ("d", b"3"), ("e", b"4")] {
            assert_eq!(t.find(&["a", step]).unwrap(), Some(value.to_vec()), "a/{step}");
        }
    }
}
