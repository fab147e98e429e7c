//! The two inode shapes Octez proofs are made for, as an [`InodeConfig`]-like configuration:
//! how many slots an inode has, up to how many entries a directory is hashed flat, and which
//! slot a step takes at each depth.

use crate::hash::blake2b_256;
use crate::tezos::InodeConfig;

/// The shape of the trees an Octez proof is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The Tezos context: 32 slots, flat up to 256 entries, slot chosen by a seeded hash of the
    /// step ([`InodeConfig::TEZOS`]).
    Tezos32,
    /// The binary trees of smart rollups: 2 slots, flat up to 2 entries, the slot at depth `d`
    /// being bit `d` (most significant bit first) of the step's Blake2b-256 hash.
    Binary,
}

impl Shape {
    /// Slots per inode.
    pub fn entries(self) -> u32 {
        match self {
            Shape::Tezos32 => InodeConfig::TEZOS.entries,
            Shape::Binary => 2,
        }
    }

    /// Directories with at most this many entries are hashed flat.
    pub fn stable_hash(self) -> u32 {
        match self {
            Shape::Tezos32 => InodeConfig::TEZOS.stable_hash,
            Shape::Binary => 2,
        }
    }

    /// Deepest inode the shape can have: the step hash has 256 bits for the binary shape; the
    /// 32-ary shape is held to [`crate::proof::types::MAX_INODE_DEPTH`].
    pub fn max_depth(self) -> u32 {
        match self {
            Shape::Tezos32 => crate::proof::types::MAX_INODE_DEPTH,
            Shape::Binary => 255,
        }
    }

    /// The slot `step` takes in an inode at `depth` (`depth` at most [`Shape::max_depth`]).
    pub fn slot(self, depth: u32, step: &[u8]) -> u32 {
        match self {
            Shape::Tezos32 => InodeConfig::TEZOS.slot(depth, step),
            Shape::Binary => {
                let h = blake2b_256(&[step]);
                let byte = h.as_bytes()[(depth / 8) as usize % 32];
                u32::from((byte >> (7 - depth % 8)) & 1)
            }
        }
    }

    /// The shape's bit in the version field.
    pub fn version_bit(self) -> u16 {
        match self {
            Shape::Tezos32 => 0,
            Shape::Binary => super::types::BINARY_BIT,
        }
    }

    /// Bits one segment of an extender takes.
    pub(crate) fn segment_bits(self) -> u32 {
        match self {
            Shape::Tezos32 => 5,
            Shape::Binary => 1,
        }
    }
}
