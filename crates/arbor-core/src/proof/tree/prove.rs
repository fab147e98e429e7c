//! Building proofs from any tree that can show its directories and inodes as they are hashed.

use super::source::{ProofSource, ProveError, SourceDir, SourceInode};
use alloc::collections::BTreeSet;
use alloc::vec::Vec;

use crate::proof::claims::partial;
use crate::proof::claims::walk::{self, by_slot, by_step, goes_on, in_regions, read_ends, Regions, Walker};
use crate::proof::types::{
    Entries, Path, Proof, ProofError, ProofInode, ProofTree, Write, MAX_INODE_DEPTH, MAX_INODE_ENTRIES, MAX_NESTING,
};
use crate::tezos::{ChildKind, InodeConfig};

/// Builds the proof of `reads` and `writes` on the tree `root` of `src`, hashed with `config`.
///
/// The proof shows every node the reads and writes walk through, every value a read ends at,
/// and every inode the writes leave to be rebuilt (see the module documentation); everything
/// else is blinded. Reads are proved in the tree as it is (before the writes); the after-root
/// is computed by applying the writes to the proof's partial tree, exactly as the verifier
/// will.
pub fn prove<S: ProofSource>(
    src: &S,
    root: &S::Node,
    config: InodeConfig,
    reads: &[Path],
    writes: &[Write],
) -> Result<Proof, ProveError<S::Error>> {
    if !(2..=MAX_INODE_ENTRIES).contains(&config.entries) {
        return Err(ProofError::BadConfig(config).into());
    }
    let all_paths = reads.iter().chain(writes.iter().map(Write::path));
    for p in all_paths {
        if p.iter().any(Vec::is_empty) {
            return Err(ProofError::EmptyStep.into());
        }
        if p.len() > MAX_NESTING {
            return Err(ProofError::TooDeep.into());
        }
    }
    let reads: Vec<Path> = reads.iter().cloned().collect::<BTreeSet<Path>>().into_iter().collect();
    let write_paths: BTreeSet<&Path> = writes.iter().map(Write::path).collect();
    let walkers = walk::start(&reads, &write_paths);
    let build = |regions: &Regions| {
        let mut b = Builder { src, cfg: config, regions, path: Vec::new() };
        b.tree(root, &walkers, 0)
    };
    let mut tree = build(&Regions::new())?;
    let before = src.hash(root).map_err(ProveError::Source)?;
    let after = if writes.is_empty() {
        before
    } else {
        let mut a = partial::apply(config, &tree, writes)?;
        if a.missing.is_some() {
            // Show the inodes the writes rebuild, and apply again.
            tree = build(&a.regions)?;
            a = partial::apply(config, &tree, writes)?;
            if let Some(path) = a.missing {
                return Err(ProofError::NotProvable { path }.into());
            }
        }
        a.hash
    };
    Ok(Proof { config, before, after, tree, reads, writes: writes.to_vec() })
}

/// Walks the source, showing what the walks and regions need.
struct Builder<'a, S> {
    src: &'a S,
    cfg: InodeConfig,
    regions: &'a Regions,
    /// Path of the node being built.
    path: Path,
}

impl<S: ProofSource> Builder<'_, S> {
    fn tree(
        &mut self,
        node: &S::Node,
        walkers: &[Walker<'_>],
        nesting: usize,
    ) -> Result<ProofTree, ProveError<S::Error>> {
        if nesting >= MAX_NESTING {
            return Err(ProofError::TooDeep.into());
        }
        let src = self.src;
        Ok(match src.kind(node) {
            ChildKind::Contents if read_ends(walkers) => ProofTree::Value(src.value(node).map_err(ProveError::Source)?),
            ChildKind::Contents => ProofTree::BlindedValue(src.hash(node).map_err(ProveError::Source)?),
            ChildKind::Node => {
                let in_region = in_regions(self.regions, &self.path, &[]);
                if !goes_on(walkers) && !in_region {
                    return Ok(ProofTree::BlindedNode(src.hash(node).map_err(ProveError::Source)?));
                }
                match src.dir(node).map_err(ProveError::Source)? {
                    SourceDir::Flat(entries) => ProofTree::Node(self.bindings(entries, walkers, nesting)?),
                    SourceDir::Large(root) => {
                        ProofTree::Inode(self.inode(&root, 0, &mut Vec::new(), walkers, in_region, nesting + 1)?)
                    }
                }
            }
        })
    }

    fn bindings(
        &mut self,
        entries: Vec<(Vec<u8>, S::Node)>,
        walkers: &[Walker<'_>],
        nesting: usize,
    ) -> Result<Entries, ProveError<S::Error>> {
        let groups = by_step(walkers);
        let mut out = Vec::with_capacity(entries.len());
        for (step, child) in entries {
            let ws = groups.get(&step[..]).map_or(&[][..], |v| &v[..]);
            self.path.push(step);
            let t = self.tree(&child, ws, nesting + 1);
            let step = self.path.pop().unwrap_or_default();
            out.push((step, t?));
        }
        Ok(out)
    }

    /// Shows the inode `inode` at `depth`, reached through `slots`.
    fn inode(
        &mut self,
        inode: &S::Inode,
        depth: u32,
        slots: &mut Vec<u32>,
        walkers: &[Walker<'_>],
        in_region: bool,
        nesting: usize,
    ) -> Result<ProofInode, ProveError<S::Error>> {
        if nesting >= MAX_NESTING || depth > MAX_INODE_DEPTH {
            return Err(ProofError::TooDeep.into());
        }
        Ok(match self.src.inode(inode, depth).map_err(ProveError::Source)? {
            SourceInode::Values(entries) => ProofInode::Values(self.bindings(entries, walkers, nesting)?),
            SourceInode::Tree { count, slots: children } => {
                let groups = by_slot(self.cfg, depth, walkers);
                let mut out = Vec::with_capacity(children.len());
                for (s, child) in children {
                    let ws = groups.get(&s).map_or(&[][..], |v| &v[..]);
                    slots.push(s);
                    let child_region = in_region || in_regions(self.regions, &self.path, slots);
                    let c = if !ws.is_empty() || child_region {
                        self.inode(&child, depth + 1, slots, ws, child_region, nesting + 1)
                    } else if nesting + 1 >= MAX_NESTING || depth + 1 > MAX_INODE_DEPTH {
                        Err(ProofError::TooDeep.into())
                    } else {
                        self.src.inode_hash(&child, depth + 1).map(ProofInode::Blinded).map_err(ProveError::Source)
                    };
                    slots.pop();
                    out.push((s, c?));
                }
                ProofInode::Tree { count, slots: out }
            }
        })
    }
}
