//! A proof's content: configuration, roots, partial tree and claims.

use alloc::vec::Vec;

use super::error::Path;
use super::tree::ProofTree;
use crate::hash::Hash;
use crate::tezos::InodeConfig;

/// A change a proof applies to its tree, as `Tree::add` and `Tree::remove` make it: an add
/// creates the directories on its way and replaces whatever was there (a value on the way
/// becomes a directory); a remove drops the value or directory at the path, and directories
/// left empty disappear.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Write {
    /// Sets the value at the path.
    Add(Path, Vec<u8>),
    /// Removes whatever is at the path.
    Remove(Path),
}

impl Write {
    /// The path the write changes.
    pub fn path(&self) -> &Path {
        match self {
            Write::Add(p, _) | Write::Remove(p) => p,
        }
    }
}

/// A Merkle proof: see the [module documentation](crate::proof).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    /// The inode configuration the tree is hashed with.
    pub config: InodeConfig,
    /// Root hash of the tree the reads are made in.
    pub before: Hash,
    /// Root hash after applying the writes (equal to `before` without writes).
    pub after: Hash,
    /// The partial tree.
    pub tree: ProofTree,
    /// The paths proved, sorted and without repeats.
    pub reads: Vec<Path>,
    /// The writes, in the order they were made.
    pub writes: Vec<Write>,
}
