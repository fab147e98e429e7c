//! Letting go of the cold part of a working tree.
//!
//! The store keeps the tree of its last commit in memory as the next block's starting point
//! (`Store::checkout`), so a block walks the nodes the previous blocks changed without a cache
//! lookup per step. What stays in memory must stay bounded: every written node remembers the
//! commit that last wrote it (`Persisted::seq`), and nodes no recent commit wrote are turned
//! back into pointers by offset and handed to the store's cache, in the form a read would
//! decode them to (children by offset, so a cached node pins nothing else).

use std::sync::Arc;

use arbor_core::ChildKind;

use super::node::{Dir, DirBody, DiskPtr, Evicted, IPtr, Inode, InodeBody, Persisted, Ptr, Source};

/// Evicts, below the directory `root`, every written node last written before commit
/// `keep_from`. Nodes another tree still shares cannot change in place: they stay, and so
/// does what they hold. Returns how many nodes stay in memory below the root.
pub(crate) fn evict(root: &mut Ptr, keep_from: u32, source: &dyn Source) -> u64 {
    match root {
        Ptr::Dir(d) => Arc::get_mut(d).map_or(0, |d| evict_in_dir(d, keep_from, source)),
        _ => 0,
    }
}

/// Whether a node written at `written` stays in memory (it is too recent to evict, or not
/// written at all); its values then stay with it.
fn stays(written: Option<Persisted>, keep_from: u32) -> bool {
    written.is_none_or(|p| p.seq >= keep_from)
}

/// Evicts below a directory; returns the nodes that stay in memory below it.
fn evict_in_dir(d: &mut Dir, keep_from: u32, source: &dyn Source) -> u64 {
    if d.persisted().is_some() {
        // Written since it changed: what changed before no longer matters (`tree::order`).
        d.updates = None;
    }
    let values_stay = stays(d.persisted(), keep_from);
    match &mut d.body {
        DirBody::Flat(entries) => entries.iter_mut().map(|(_, c)| evict_child(c, keep_from, values_stay, source)).sum(),
        DirBody::Large(root) => match Arc::get_mut(root) {
            Some(root) => evict_in_inode(root, keep_from, source),
            None => 1,
        },
    }
}

/// Evicts below an inode; returns the nodes that stay in memory below it.
fn evict_in_inode(node: &mut Inode, keep_from: u32, source: &dyn Source) -> u64 {
    match &mut node.body {
        InodeBody::Values(entries) => {
            let values_stay = stays(node.disk.get().copied(), keep_from);
            entries.iter_mut().map(|(_, c)| evict_child(c, keep_from, values_stay, source)).sum()
        }
        InodeBody::Tree(slots) => {
            let mut kept = 0;
            for slot in slots.iter_mut() {
                let IPtr::Mem(sub) = slot else { continue };
                // Below a node only what it holds uniquely can be let go of.
                let inside = Arc::get_mut(sub).map(|s| evict_in_inode(s, keep_from, source));
                match sub.disk.get().copied() {
                    Some(p) if p.seq < keep_from && inside == Some(0) => {
                        let hash = *sub.hash();
                        if let IPtr::Mem(sub) = std::mem::replace(slot, IPtr::Disk { offset: p.offset, hash }) {
                            source.adopt(Evicted::Inode(sub));
                        }
                    }
                    _ => kept += 1 + inside.unwrap_or(0),
                }
            }
            kept
        }
    }
}

/// A binding's child: evicted when written before `keep_from` and nothing below it stays.
/// Returns the nodes that stay in memory, itself included (values not counted).
///
/// The values of a node that stays in memory stay with it, unvisited: most bindings hold
/// values, each its own allocation, and reading every one of them to learn it could stay
/// anyway was most of an eviction's time. They are let go of with their node.
fn evict_child(ptr: &mut Ptr, keep_from: u32, values_stay: bool, source: &dyn Source) -> u64 {
    let (written, inside, kind) = match ptr {
        Ptr::Disk(_) => return 0,
        Ptr::Value(_) if values_stay => return 0,
        // An inline value is part of its parent's record: nothing to let go of.
        Ptr::Value(v) => match v.disk.get() {
            None => return 0,
            Some(p) => (*p, Some(0), ChildKind::Contents),
        },
        Ptr::Dir(d) => {
            let written = d.persisted();
            let inside = Arc::get_mut(d).map(|d| evict_in_dir(d, keep_from, source));
            match written {
                Some(p) => (p, inside, ChildKind::Node),
                None => return 1 + inside.unwrap_or(0),
            }
        }
    };
    if written.seq >= keep_from || inside != Some(0) {
        return 1 + inside.unwrap_or(0);
    }
    let hash = *ptr.hash();
    match std::mem::replace(ptr, Ptr::Disk(DiskPtr { offset: written.offset, hash, kind })) {
        Ptr::Value(v) => source.adopt(Evicted::Value(v)),
        Ptr::Dir(d) => source.adopt(Evicted::Dir(d)),
        Ptr::Disk(_) => {}
    }
    0
}
