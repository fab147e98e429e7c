//! Octez's Merkle proof values, as Octez's context library defines them (see docs/PROOFS.md,
//! "Octez proofs"): a tree proof carries a partial tree, a stream proof a flat sequence of
//! elements in the order a verifier replaying the reads consumes them.

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::hash::Hash;

/// A hash with what it is the hash of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindedHash {
    /// The hash of a value.
    Value(Hash),
    /// The hash of a directory.
    Node(Hash),
}

impl KindedHash {
    /// The hash itself.
    pub fn hash(&self) -> &Hash {
        match self {
            KindedHash::Value(h) | KindedHash::Node(h) => h,
        }
    }
}

/// An inode of a large directory shown in a proof: its binding count and its shown
/// non-empty slots, in increasing order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inode<A> {
    /// Bindings below this inode.
    pub length: u64,
    /// `(slot, child)` for each non-empty slot, slots increasing.
    pub proofs: Vec<(u8, A)>,
}

/// A chain of inodes that each have a single non-empty slot, folded into one node: the inode
/// at the chain's top has `segments[0]` as its only slot, the inode there `segments[1]`, and
/// so on; `proof` is the inode below the last slot. Every inode of the chain has `length`
/// bindings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extender<A> {
    /// Bindings below every inode of the chain.
    pub length: u64,
    /// The slots of the chain, from its top (at least two).
    pub segments: Vec<u8>,
    /// What lies below the last slot.
    pub proof: A,
}

/// A binding list: `(step, child)` in increasing step order.
pub type Bindings = Vec<(Vec<u8>, Tree)>;

/// A node of a tree proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tree {
    /// A value, shown in full.
    Value(Vec<u8>),
    /// A value shown by its hash.
    BlindedValue(Hash),
    /// A directory with every entry listed.
    Node(Bindings),
    /// A directory shown by its hash.
    BlindedNode(Hash),
    /// A directory shown as the root inode of its inode tree.
    Inode(Inode<InodeTree>),
    /// A directory whose root inode starts a chain of single-slot inodes.
    Extender(Box<Extender<InodeTree>>),
}

/// An inode below a directory's root inode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InodeTree {
    /// An inode shown by its hash.
    Blinded(Hash),
    /// A leaf inode: every binding it holds.
    Values(Bindings),
    /// An inode with slots.
    Tree(Inode<InodeTree>),
    /// A chain of single-slot inodes.
    Extender(Box<Extender<InodeTree>>),
}

/// An element of a stream proof: one node with its children given by their hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Elt {
    /// A value.
    Value(Vec<u8>),
    /// A directory or leaf inode: every binding with the kinded hash of its child.
    Node(Vec<(Vec<u8>, KindedHash)>),
    /// An inode: its count and the hash in each non-empty slot.
    Inode(Inode<Hash>),
    /// A chain of single-slot inodes and the hash below its last slot.
    Extender(Extender<Hash>),
}

/// The two byte encodings Octez defines for its proofs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Plain: fixed-width fields and one-byte tags.
    V1,
    /// Compact: small counts and field widths packed into the tags.
    V2,
}

/// An Octez proof: the version bits, the kinded root hashes before and after the proof's
/// operations, and its state (a [`Tree`] or a sequence of [`Elt`]s).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OctezProof<S> {
    /// The version field: bit 0 set for a stream proof, bit 1 for the binary shape; no other
    /// bit may be set.
    pub version: u16,
    /// The root before.
    pub before: KindedHash,
    /// The root after.
    pub after: KindedHash,
    /// The proof's content.
    pub state: S,
}

/// An Octez tree proof.
pub type TreeProof = OctezProof<Tree>;

/// An Octez stream proof.
pub type StreamProof = OctezProof<Vec<Elt>>;

/// Version bit telling a stream proof.
pub const STREAM_BIT: u16 = 0b01;

/// Version bit telling the binary shape.
pub const BINARY_BIT: u16 = 0b10;
