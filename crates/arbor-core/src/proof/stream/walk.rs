//! The verifier's traversal of a stream proof, shared by the encoder (which emits the elements
//! in the order it asks for them) and the decoder (which reads them in that order): both sides
//! follow the same walks, so the order of the elements is fixed by the claims alone.
//!
//! Phase one walks the reads and the write paths depth-first (bindings by step, inode slots
//! increasing), asking for a node's element where a walk needs it shown: a value a read ends
//! at, a directory or inode a walk goes through. Phase two applies the writes to what phase one
//! built and, if they leave inodes to be rebuilt from all their bindings (the regions, see
//! [`crate::proof::claims::partial`]), asks for every inode still blinded there, region by region in sorted
//! order, each depth-first.

use alloc::collections::BTreeSet;
use alloc::vec::Vec;

use crate::hash::Hash;
use crate::proof::claims::partial;
use crate::proof::claims::walk::{self, by_slot, by_step, goes_on, read_ends, Walker};
use crate::proof::types::{Entries, Path, ProofError, ProofInode, ProofTree, Write, MAX_INODE_DEPTH, MAX_NESTING};
use crate::tezos::InodeConfig;

/// Where the elements come from (the decoder) or go to (the encoder). Each call is for the
/// node whose hash its parent announced as `hash`; what it returns shows the node's own
/// content with its children blinded (by the hashes the element announces).
pub(super) trait Elements {
    /// The value at `path`.
    fn value(&mut self, hash: &Hash, path: &[Vec<u8>]) -> Result<Vec<u8>, ProofError>;
    /// The directory at `path`: a flat node, or a large directory with its root inode.
    fn dir(&mut self, hash: &Hash, path: &[Vec<u8>]) -> Result<ProofTree, ProofError>;
    /// The inode reached through `slots` (its depth is their number) in the directory at `path`.
    fn inode(&mut self, hash: &Hash, path: &[Vec<u8>], slots: &[u32]) -> Result<ProofInode, ProofError>;
}

/// Runs the traversal from `root` (a blinded node: the trusted root) for the claims `reads`
/// and `writes`, and returns the partial tree the elements built.
pub(super) fn traverse<E: Elements>(
    cfg: InodeConfig,
    mut root: ProofTree,
    reads: &[Path],
    writes: &[Write],
    elements: &mut E,
) -> Result<ProofTree, ProofError> {
    let write_paths: BTreeSet<&Path> = writes.iter().map(Write::path).collect();
    let walkers = walk::start(reads, &write_paths);
    let mut t = Traversal { cfg, elements, path: Vec::new() };
    t.node(&mut root, &walkers, 0)?;
    if !writes.is_empty() {
        let after = partial::apply(cfg, &root, writes)?;
        if after.missing.is_some() {
            for (dir, slots) in &after.regions {
                t.region(&mut root, dir, slots)?;
            }
        }
    }
    Ok(root)
}

struct Traversal<'e, E> {
    cfg: InodeConfig,
    elements: &'e mut E,
    /// Path of the node being visited.
    path: Path,
}

impl<E: Elements> Traversal<'_, E> {
    /// Shows `node` if the walks need it, then what they need below it.
    fn node(&mut self, node: &mut ProofTree, walkers: &[Walker<'_>], nesting: usize) -> Result<(), ProofError> {
        if nesting >= MAX_NESTING {
            return Err(ProofError::TooDeep);
        }
        match *node {
            ProofTree::BlindedValue(h) if read_ends(walkers) => {
                *node = ProofTree::Value(self.elements.value(&h, &self.path)?);
            }
            ProofTree::BlindedNode(h) if goes_on(walkers) => {
                *node = self.elements.dir(&h, &self.path)?;
                match node {
                    ProofTree::Node(entries) => self.bindings(entries, walkers, nesting)?,
                    ProofTree::Inode(root) => self.inode_below(root, &mut Vec::new(), walkers, nesting + 1)?,
                    _ => {}
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn bindings(&mut self, entries: &mut Entries, walkers: &[Walker<'_>], nesting: usize) -> Result<(), ProofError> {
        let groups = by_step(walkers);
        for (step, child) in entries.iter_mut() {
            if let Some(ws) = groups.get(&step[..]) {
                self.path.push(step.clone());
                let r = self.node(child, ws, nesting + 1);
                self.path.pop();
                r?;
            }
        }
        Ok(())
    }

    /// Visits what the walks need below the (shown) inode reached through `slots`.
    fn inode_below(
        &mut self,
        inode: &mut ProofInode,
        slots: &mut Vec<u32>,
        walkers: &[Walker<'_>],
        nesting: usize,
    ) -> Result<(), ProofError> {
        match inode {
            ProofInode::Blinded(_) => Ok(()),
            ProofInode::Values(entries) => self.bindings(entries, walkers, nesting),
            ProofInode::Tree { slots: children, .. } => {
                let groups = by_slot(self.cfg, slots.len() as u32, walkers);
                for (s, child) in children.iter_mut() {
                    if let Some(ws) = groups.get(s) {
                        slots.push(*s);
                        let r = self.inode(child, slots, ws, nesting + 1);
                        slots.pop();
                        r?;
                    }
                }
                Ok(())
            }
        }
    }

    fn inode(
        &mut self,
        inode: &mut ProofInode,
        slots: &mut Vec<u32>,
        walkers: &[Walker<'_>],
        nesting: usize,
    ) -> Result<(), ProofError> {
        if nesting >= MAX_NESTING || slots.len() as u32 > MAX_INODE_DEPTH {
            return Err(ProofError::TooDeep);
        }
        if let ProofInode::Blinded(h) = *inode {
            *inode = self.elements.inode(&h, &self.path, slots)?;
        }
        self.inode_below(inode, slots, walkers, nesting)
    }

    /// Shows every inode at or below the region `(dir, slots)`, if phase one reached it.
    fn region(&mut self, root: &mut ProofTree, dir: &Path, slots: &[u32]) -> Result<(), ProofError> {
        let Some(ProofTree::Inode(top)) = dir_at(self.cfg, root, dir) else { return Ok(()) };
        let Some(inode) = inode_at(top, slots) else { return Ok(()) };
        self.path.clone_from(dir);
        self.all_inodes(inode, &mut slots.to_vec())
    }

    fn all_inodes(&mut self, inode: &mut ProofInode, slots: &mut Vec<u32>) -> Result<(), ProofError> {
        if slots.len() as u32 > MAX_INODE_DEPTH {
            return Err(ProofError::TooDeep);
        }
        if let ProofInode::Blinded(h) = *inode {
            *inode = self.elements.inode(&h, &self.path, slots)?;
        }
        if let ProofInode::Tree { slots: children, .. } = inode {
            for (s, child) in children.iter_mut() {
                slots.push(*s);
                let r = self.all_inodes(child, slots);
                slots.pop();
                r?;
            }
        }
        Ok(())
    }
}

/// The shown node at `path` below `tree`, if the way there is shown.
pub(super) fn dir_at<'t>(cfg: InodeConfig, tree: &'t mut ProofTree, path: &[Vec<u8>]) -> Option<&'t mut ProofTree> {
    let Some((step, rest)) = path.split_first() else { return Some(tree) };
    let child = match tree {
        ProofTree::Node(entries) => find(entries, step)?,
        ProofTree::Inode(root) => binding_in(cfg, root, 0, step)?,
        _ => return None,
    };
    dir_at(cfg, child, rest)
}

fn find<'t>(entries: &'t mut Entries, step: &[u8]) -> Option<&'t mut ProofTree> {
    let i = entries.binary_search_by(|(s, _)| s[..].cmp(step)).ok()?;
    Some(&mut entries[i].1)
}

/// The child bound to `step` in the inode tree below `inode` (at `depth`), if shown.
fn binding_in<'t>(cfg: InodeConfig, inode: &'t mut ProofInode, depth: u32, step: &[u8]) -> Option<&'t mut ProofTree> {
    match inode {
        ProofInode::Values(entries) => find(entries, step),
        ProofInode::Tree { slots, .. } => {
            let s = cfg.slot(depth, step);
            let i = slots.binary_search_by(|(x, _)| x.cmp(&s)).ok()?;
            binding_in(cfg, &mut slots[i].1, depth + 1, step)
        }
        ProofInode::Blinded(_) => None,
    }
}

/// The inode reached from `inode` through `slots`, if the way there is shown.
pub(super) fn inode_at<'t>(inode: &'t mut ProofInode, slots: &[u32]) -> Option<&'t mut ProofInode> {
    let Some((s, rest)) = slots.split_first() else { return Some(inode) };
    match inode {
        ProofInode::Tree { slots: children, .. } => {
            let i = children.binary_search_by(|(x, _)| x.cmp(s)).ok()?;
            inode_at(&mut children[i].1, rest)
        }
        _ => None,
    }
}
