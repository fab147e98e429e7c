//! The partial tree a proof carries, shaped exactly as the context is hashed, and its hash.

use alloc::vec::Vec;

use crate::hash::Hash;
use crate::tezos::{contents_hash, flat_node_hash, inode_tree_hash, inode_values_hash, ChildKind, InodeConfig};

/// A binding list of a flat node or Values inode: `(step, child)`, sorted by step.
pub type Entries = Vec<(Vec<u8>, ProofTree)>;

/// A node of a proof: a part of the context tree, shown in full or only by its hash.
///
/// Directories appear as they are hashed: a directory of at most `stable_hash` entries as a
/// flat [`ProofTree::Node`] listing every entry, a larger one as the inode tree it is hashed
/// with ([`ProofTree::Inode`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProofTree {
    /// A value, shown in full.
    Value(Vec<u8>),
    /// A value shown only by its hash.
    BlindedValue(Hash),
    /// A directory hashed flat: every entry, sorted by step; children not needed are blinded.
    Node(Entries),
    /// A directory shown only by its hash.
    BlindedNode(Hash),
    /// A directory hashed as an inode tree (more than `stable_hash` entries): its root inode,
    /// at depth 0.
    Inode(ProofInode),
}

/// An inode of a large directory's inode tree. Its depth is implied by its place: the root
/// inode is at depth 0, the inode in a slot of a depth-`d` inode is at depth `d + 1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProofInode {
    /// An inode shown only by its hash (never the root of a directory).
    Blinded(Hash),
    /// A Values inode: every binding, sorted by step (at most `entries` of them).
    Values(Entries),
    /// A Tree inode: the number of bindings below it and its non-empty slots in increasing
    /// order, each with the child inode.
    Tree {
        /// Bindings below this inode (more than `entries`).
        count: u64,
        /// `(slot, child)` for each non-empty slot, slots increasing.
        slots: Vec<(u32, ProofInode)>,
    },
}

impl ProofTree {
    /// Whether this node is a value or a directory.
    pub fn kind(&self) -> ChildKind {
        match self {
            ProofTree::Value(_) | ProofTree::BlindedValue(_) => ChildKind::Contents,
            ProofTree::Node(_) | ProofTree::BlindedNode(_) | ProofTree::Inode(_) => ChildKind::Node,
        }
    }

    /// True for the blinded forms, which show a node only by its hash.
    pub fn is_blinded(&self) -> bool {
        matches!(self, ProofTree::BlindedValue(_) | ProofTree::BlindedNode(_))
    }

    /// The context hash of the node this stands for, by the rules of [`crate::tezos`].
    ///
    /// The proof's shape is taken as it is: the decoder has checked that flat nodes and
    /// inodes have sizes matching `cfg`.
    pub fn hash(&self, cfg: InodeConfig) -> Hash {
        match self {
            ProofTree::Value(v) => contents_hash(v),
            ProofTree::BlindedValue(h) | ProofTree::BlindedNode(h) => *h,
            ProofTree::Node(entries) => {
                let hashes = child_hashes(entries, cfg);
                flat_node_hash(entries.iter().zip(&hashes).map(|((s, c), h)| (&s[..], c.kind(), h)))
            }
            ProofTree::Inode(root) => root.hash(cfg, 0),
        }
    }
}

impl ProofInode {
    /// The hash of this inode, placed at `depth`.
    pub fn hash(&self, cfg: InodeConfig, depth: u32) -> Hash {
        match self {
            ProofInode::Blinded(h) => *h,
            ProofInode::Values(entries) => {
                let hashes = child_hashes(entries, cfg);
                inode_values_hash(entries.iter().zip(&hashes).map(|((s, c), h)| (&s[..], c.kind(), h)))
            }
            ProofInode::Tree { count, slots } => {
                let hashes: Vec<Hash> = slots.iter().map(|(_, c)| c.hash(cfg, depth + 1)).collect();
                inode_tree_hash(depth, *count, slots.iter().zip(&hashes).map(|((i, _), h)| (*i, h)))
            }
        }
    }

    /// Bindings below this inode if it is shown, as far as the proof tells: exact for a
    /// Values inode and for a Tree inode (its recorded count).
    pub fn count(&self) -> Option<u64> {
        match self {
            ProofInode::Blinded(_) => None,
            ProofInode::Values(e) => Some(e.len() as u64),
            ProofInode::Tree { count, .. } => Some(*count),
        }
    }
}

/// The hashes of the children of a binding list, in order.
fn child_hashes(entries: &[(Vec<u8>, ProofTree)], cfg: InodeConfig) -> Vec<Hash> {
    entries.iter().map(|(_, c)| c.hash(cfg)).collect()
}
