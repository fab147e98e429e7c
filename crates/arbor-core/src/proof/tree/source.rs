//! What proofs are built from: a tree showing its directories and inodes as they are hashed.

use alloc::vec::Vec;
use core::fmt;

use crate::hash::Hash;
use crate::proof::types::ProofError;
use crate::tezos::ChildKind;

/// A directory as its source holds it.
#[derive(Clone, Debug)]
pub enum SourceDir<N, I> {
    /// At most `stable_hash` entries, sorted by step.
    Flat(Vec<(Vec<u8>, N)>),
    /// More: the root inode (depth 0).
    Large(I),
}

/// An inode as its source holds it.
#[derive(Clone, Debug)]
pub enum SourceInode<N, I> {
    /// At most `entries` bindings, sorted by step.
    Values(Vec<(Vec<u8>, N)>),
    /// More: the binding count and the non-empty slots, increasing.
    Tree {
        /// Bindings below the inode.
        count: u64,
        /// `(slot, child inode)` for each non-empty slot.
        slots: Vec<(u32, I)>,
    },
}

/// A tree proofs can be built from: it shows nodes and inodes exactly as they are hashed
/// (canonical shapes for its inode configuration), loading them as needed.
pub trait ProofSource {
    /// A node: a value or a directory.
    type Node: Clone;
    /// An inode of a large directory.
    type Inode: Clone;
    /// What loading a node can fail with.
    type Error;

    /// Whether `node` is a value or a directory.
    fn kind(&self, node: &Self::Node) -> ChildKind;
    /// The context hash of `node`.
    fn hash(&self, node: &Self::Node) -> Result<Hash, Self::Error>;
    /// The bytes of a value.
    fn value(&self, node: &Self::Node) -> Result<Vec<u8>, Self::Error>;
    /// The body of a directory.
    fn dir(&self, node: &Self::Node) -> Result<SourceDir<Self::Node, Self::Inode>, Self::Error>;
    /// The body of the inode `inode`, which sits at `depth`.
    fn inode(&self, inode: &Self::Inode, depth: u32) -> Result<SourceInode<Self::Node, Self::Inode>, Self::Error>;
    /// The hash of the inode `inode`, which sits at `depth`.
    fn inode_hash(&self, inode: &Self::Inode, depth: u32) -> Result<Hash, Self::Error>;
}

/// Why a proof could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProveError<E> {
    /// The source failed to load a node.
    Source(E),
    /// The claims cannot be proved (an empty step, a tree too deep).
    Proof(ProofError),
}

impl<E> From<ProofError> for ProveError<E> {
    fn from(e: ProofError) -> Self {
        ProveError::Proof(e)
    }
}

impl<E: fmt::Display> fmt::Display for ProveError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProveError::Source(e) => write!(f, "{e}"),
            ProveError::Proof(e) => write!(f, "{e}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for ProveError<E> {}
