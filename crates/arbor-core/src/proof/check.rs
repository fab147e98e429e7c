//! The verifier's walk of a proof's claims: it looks every read up, and checks that the proof
//! shows exactly what the walks (and the regions the writes rebuild) need — no less (a claim
//! reaching a blinded node is not provable) and no more (excess).

use alloc::vec;
use alloc::vec::Vec;

use super::error::{Path, ProofError};
use super::tree::{ProofInode, ProofTree};
use super::verify::Proved;
use super::walk::{by_slot, by_step, goes_on, in_regions, read_ends, Mode, Regions, Walker};
use crate::tezos::InodeConfig;

/// Walks `walkers` down `tree` and returns the result of each read, by read index.
pub(super) fn check(
    cfg: InodeConfig,
    tree: &ProofTree,
    walkers: &[Walker<'_>],
    reads: usize,
    regions: &Regions,
) -> Result<Vec<Proved>, ProofError> {
    let mut c = Checker { cfg, regions, results: vec![None; reads], path: Vec::new() };
    c.tree(tree, walkers)?;
    // Every read ends somewhere: at a node, at a value in its way, or at a missing step.
    Ok(c.results.into_iter().map(|r| r.unwrap_or(Proved::Absent)).collect())
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

    fn tree(&mut self, node: &ProofTree, walkers: &[Walker<'_>]) -> Result<(), ProofError> {
        match node {
            ProofTree::Value(v) => {
                if !read_ends(walkers) {
                    return self.excess();
                }
                self.set_reads(walkers, true, &Proved::Value(v.clone()));
                self.set_reads(walkers, false, &Proved::Absent);
            }
            ProofTree::BlindedValue(_) => {
                if read_ends(walkers) {
                    return self.not_provable();
                }
                self.set_reads(walkers, false, &Proved::Absent);
            }
            ProofTree::BlindedNode(h) => {
                if goes_on(walkers) {
                    return self.not_provable();
                }
                self.set_reads(walkers, true, &Proved::Dir(*h));
            }
            ProofTree::Node(entries) => {
                if !goes_on(walkers) {
                    return self.excess();
                }
                if read_ends(walkers) {
                    self.set_reads(walkers, true, &Proved::Dir(node.hash(self.cfg)));
                }
                self.bindings(entries, walkers)?;
            }
            ProofTree::Inode(root) => {
                let in_region = in_regions(self.regions, &self.path, &[]);
                if !goes_on(walkers) && !in_region {
                    return self.excess();
                }
                if read_ends(walkers) {
                    self.set_reads(walkers, true, &Proved::Dir(node.hash(self.cfg)));
                }
                self.inode(root, 0, &mut Vec::new(), walkers, in_region)?;
            }
        }
        Ok(())
    }

    /// The entries of a flat node or Values inode, which list every binding there is.
    fn bindings(&mut self, entries: &[(Vec<u8>, ProofTree)], walkers: &[Walker<'_>]) -> Result<(), ProofError> {
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
        for (step, child) in entries {
            let ws = groups.get(&step[..]).map_or(&[][..], |v| &v[..]);
            self.path.push(step.clone());
            let r = self.tree(child, ws);
            self.path.pop();
            r?;
        }
        Ok(())
    }

    /// An inode at `depth`, reached through `slots`; `in_region` if the writes rebuild it.
    fn inode(
        &mut self,
        node: &ProofInode,
        depth: u32,
        slots: &mut Vec<u32>,
        walkers: &[Walker<'_>],
        in_region: bool,
    ) -> Result<(), ProofError> {
        let needed = goes_on(walkers) || in_region;
        match node {
            ProofInode::Blinded(_) if needed => self.not_provable(),
            ProofInode::Blinded(_) => Ok(()),
            _ if !needed => self.excess(),
            ProofInode::Values(entries) => self.bindings(entries, walkers),
            ProofInode::Tree { slots: children, .. } => {
                let groups = by_slot(self.cfg, depth, walkers);
                for (slot, ws) in &groups {
                    if children.binary_search_by(|(s, _)| s.cmp(slot)).is_err() {
                        // An empty slot: nothing with these steps is in the directory.
                        self.set_reads(ws, false, &Proved::Absent);
                    }
                }
                for (slot, child) in children {
                    let ws = groups.get(slot).map_or(&[][..], |v| &v[..]);
                    slots.push(*slot);
                    let child_region = in_region || in_regions(self.regions, &self.path, slots);
                    let r = self.inode(child, depth + 1, slots, ws, child_region);
                    slots.pop();
                    r?;
                }
                Ok(())
            }
        }
    }
}
