//! The walks of a proof's claims down a tree, shared by the prover (which shows what the walks
//! need) and the verifier (which checks that exactly that is shown).
//!
//! Each read path and each write path walks from the root. A walk needs shown every directory
//! it goes through and, inside a large directory, every inode on the way to the step it looks
//! up. A read that ends at a value needs that value shown; a read ending at a directory, and a
//! write at its end, need nothing more (the directory is proved by its hash, and a write
//! replaces what it ends at). Walks stop at a value on their way (a path through a value holds
//! nothing) and at a missing step (a proved absence).

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

use crate::proof::types::Path;
use crate::tezos::InodeConfig;

/// What a walk is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The read of this index in the proof's read list.
    Read(usize),
    /// A write's path.
    Write,
}

/// One walk, at some point of its path.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Walker<'a> {
    /// The steps still to walk.
    pub rest: &'a [Vec<u8>],
    /// What the walk is for.
    pub mode: Mode,
}

/// The walks of `reads` (with their indices) and of the paths of `writes`, from the root.
pub(crate) fn start<'a>(reads: &'a [Path], write_paths: &'a BTreeSet<&'a Path>) -> Vec<Walker<'a>> {
    let mut w: Vec<Walker<'a>> =
        reads.iter().enumerate().map(|(i, p)| Walker { rest: &p[..], mode: Mode::Read(i) }).collect();
    w.extend(write_paths.iter().map(|p| Walker { rest: &p[..], mode: Mode::Write }));
    w
}

/// True if a read ends here (with this node as its target).
pub(crate) fn read_ends(walkers: &[Walker<'_>]) -> bool {
    walkers.iter().any(|w| w.rest.is_empty() && matches!(w.mode, Mode::Read(_)))
}

/// True if a walk goes on below this node.
pub(crate) fn goes_on(walkers: &[Walker<'_>]) -> bool {
    walkers.iter().any(|w| !w.rest.is_empty())
}

/// The walks going on below this node, grouped by the step they take next.
pub(crate) fn by_step<'a, 'w>(walkers: &'w [Walker<'a>]) -> BTreeMap<&'a [u8], Vec<Walker<'a>>> {
    let mut out: BTreeMap<&'a [u8], Vec<Walker<'a>>> = BTreeMap::new();
    for w in walkers {
        if let Some((first, rest)) = w.rest.split_first() {
            out.entry(&first[..]).or_default().push(Walker { rest, mode: w.mode });
        }
    }
    out
}

/// Walks grouped by the slot their next step takes in an inode at `depth`; each walk keeps its
/// next step (the inode is not a level of the path).
pub(crate) fn by_slot<'a>(cfg: InodeConfig, depth: u32, walkers: &[Walker<'a>]) -> BTreeMap<u32, Vec<Walker<'a>>> {
    let mut out: BTreeMap<u32, Vec<Walker<'a>>> = BTreeMap::new();
    for w in walkers {
        if let Some(first) = w.rest.first() {
            out.entry(cfg.slot(depth, first)).or_default().push(*w);
        }
    }
    out
}

/// Places (directory path, slot path) where the writes leave an inode, or a whole large
/// directory (empty slot path), with so few bindings that it must be rebuilt from all of them:
/// every inode there must be shown.
pub(crate) type Regions = BTreeSet<(Path, Vec<u32>)>;

/// True if `regions` holds `(dir, slots)`.
pub(crate) fn in_regions(regions: &Regions, dir: &[Vec<u8>], slots: &[u32]) -> bool {
    // Avoids building the key for the common case of no regions at all.
    !regions.is_empty() && regions.contains(&(dir.to_vec(), slots.to_vec()))
}
