//! The verifier's walk of a proof's claims: it looks every read up, and checks that the proof
//! shows exactly what the walks (and the regions the writes rebuild) need — no less (a claim
//! reaching a blinded node is not provable) and no more (excess). It hashes the tree bottom-up
//! on the way, so each node is hashed once whatever the claims.

use alloc::vec;
use alloc::vec::Vec;

use crate::hash::Hash;
use crate::proof::claims::walk::{by_slot, by_step, goes_on, in_regions, read_ends, Mode, Regions, Walker};
use crate::proof::types::{Path, ProofError, ProofInode, ProofTree, Proved};
use crate::tezos::{contents_hash, flat_node_hash, inode_tree_hash, inode_values_hash, InodeConfig};

/// Walks `walkers` down `tree`; returns the tree's root hash and the result of each read, by
/// read index.
pub(super) fn check(
    cfg: InodeConfig,
    tree: &ProofTree,
    walkers: &[Walker<'_>],
    reads: usize,
    regions: &Regions,
) -> Result<(Hash, Vec<Proved>), ProofError> {
    let mut c = Checker { cfg, regions, results: vec![None; reads], path: Vec::new() };
    let root = c.tree(tree, walkers)?;
    // Every read ends somewhere: at a node, at a value in its way, or at a missing step.
    Ok((root, c.results.into_iter().map(|r| r.unwrap_or(Proved::Absent)).collect()))
}

struct Checker<'a> {
    cfg: InodeConfig,
    regions: &'a Regions,
    results: Vec<Option<Proved>>,
    /// Path of the node being checked.
    path: Path,
}

impl Checker<'_> {
    fn excess<T>(&self) -> Result<T, ProofError> {
        Err(ProofError::Excess { path: self.path.clone() })
    }

    fn not_provable<T>(&self) -> Result<T, ProofError> {
        Err(ProofError::NotProvable { path: self.path.clone() })
    }

    /// Records `result` for the reads that end here (`ending`) or go on (`!ending`).
    fn set_reads(&mut self, walkers: &[Walker<'_>], ending: bool, result: &Proved) {
        for w in walkers {
            if let Mode::Read(i) = w.mode {
                if w.rest.is_empty() == ending {
                    self.results[i] = Some(result.clone());
                }
            }
        }
    }

    /// Checks `node` and returns its hash.
    fn tree(&mut self, node: &ProofTree, walkers: &[Walker<'_>]) -> Result<Hash, ProofError> {
        let hash = match node {
            ProofTree::Value(v) => {
                if !read_ends(walkers) {
                    return self.excess();
                }
                self.set_reads(walkers, true, &Proved::Value(v.clone()));
                self.set_reads(walkers, false, &Proved::Absent);
                contents_hash(v)
            }
            ProofTree::BlindedValue(h) => {
                if read_ends(walkers) {
                    return self.not_provable();
                }
                self.set_reads(walkers, false, &Proved::Absent);
                *h
            }
            ProofTree::BlindedNode(h) => {
                if goes_on(walkers) {
                    return self.not_provable();
                }
                *h
            }
            ProofTree::Node(entries) => {
                if !goes_on(walkers) {
                    return self.excess();
                }
                let hashes = self.bindings(entries, walkers)?;
                flat_node_hash(entries.iter().zip(&hashes).map(|((s, c), h)| (&s[..], c.kind(), h)))
            }
            ProofTree::Inode(root) => {
                let in_region = in_regions(self.regions, &self.path, &[]);
                if !goes_on(walkers) && !in_region {
                    return self.excess();
                }
                self.inode(root, 0, &mut Vec::new(), walkers, in_region)?
            }
        };
        if node.kind() == crate::tezos::ChildKind::Node {
            self.set_reads(walkers, true, &Proved::Dir(hash));
        }
        Ok(hash)
    }

    /// The entries of a flat node or Values inode, which list every binding there is; returns
    /// the children's hashes.
    fn bindings(&mut self, entries: &[(Vec<u8>, ProofTree)], walkers: &[Walker<'_>]) -> Result<Vec<Hash>, ProofError> {
        let groups = by_step(walkers);
        for (step, ws) in &groups {
            if entries.binary_search_by(|(s, _)| s[..].cmp(step)).is_err() {
                // Proved absent: the step would be listed here.
                for w in ws {
                    if let Mode::Read(i) = w.mode {
                        self.results[i] = Some(Proved::Absent);
                    }
                }
            }
        }
        let mut hashes = Vec::with_capacity(entries.len());
        for (step, child) in entries {
            let ws = groups.get(&step[..]).map_or(&[][..], |v| &v[..]);
            self.path.push(step.clone());
            let r = self.tree(child, ws);
            self.path.pop();
            hashes.push(r?);
        }
        Ok(hashes)
    }

    /// An inode at `depth`, reached through `slots`; `in_region` if the writes rebuild it.
    /// Returns its hash.
    fn inode(
        &mut self,
        node: &ProofInode,
        depth: u32,
        slots: &mut Vec<u32>,
        walkers: &[Walker<'_>],
        in_region: bool,
    ) -> Result<Hash, ProofError> {
        let needed = goes_on(walkers) || in_region;
        match node {
            ProofInode::Blinded(_) if needed => self.not_provable(),
            ProofInode::Blinded(h) => Ok(*h),
            _ if !needed => self.excess(),
            ProofInode::Values(entries) => {
                let hashes = self.bindings(entries, walkers)?;
                Ok(inode_values_hash(entries.iter().zip(&hashes).map(|((s, c), h)| (&s[..], c.kind(), h))))
            }
            ProofInode::Tree { count, slots: children } => {
                let groups = by_slot(self.cfg, depth, walkers);
                for (slot, ws) in &groups {
                    if children.binary_search_by(|(s, _)| s.cmp(slot)).is_err() {
                        // An empty slot: nothing with these steps is in the directory.
                        self.set_reads(ws, false, &Proved::Absent);
                    }
                }
                let mut hashes = Vec::with_capacity(children.len());
                for (slot, child) in children {
                    let ws = groups.get(slot).map_or(&[][..], |v| &v[..]);
                    slots.push(*slot);
                    let child_region = in_region || in_regions(self.regions, &self.path, slots);
                    let r = self.inode(child, depth + 1, slots, ws, child_region);
                    slots.pop();
                    hashes.push((*slot, r?));
                }
                Ok(inode_tree_hash(depth, *count, hashes.iter().map(|(s, h)| (*s, h))))
            }
        }
    }
}
