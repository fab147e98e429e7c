//! Merkle proofs of the Tezos context: a partial tree shaped exactly as the context is hashed,
//! with everything a set of reads and writes does not touch replaced by its hash.
//!
//! A [`Proof`] records the inode configuration, the root hashes before and after its writes,
//! the partial tree, the paths it proves (its *reads*) and the changes it makes (its
//! *writes*). [`verify`] checks one from its bytes alone against a trusted root hash:
//! it recomputes the root hash from the partial tree, looks every read path up in it (a value,
//! a directory, or a proved absence), applies the writes to the partial tree to recompute the
//! after-root, and rejects any mismatch, truncation or excess. This module does no I/O and
//! needs only `alloc`, so a light client can use it without the engine.
//!
//! Proofs are *minimal*: a node is shown only where a read or write needs it (see
//! [`ProofTree`] and docs/PROOFS.md), and the verifier rejects a proof showing more. With the
//! canonical encoding this makes a proof of given claims about a given tree unique: any change
//! to its bytes is rejected, or yields a proof of other claims, which
//! [`Verified::expect_reads`] and [`Verified::expect_writes`] reject.
//!
//! [`prove`] builds proofs from anything implementing [`ProofSource`]: the engine's trees, or
//! the plain [`crate::reference::RefTree`] (through [`RefSource`]).

mod check;
mod decode;
mod encode;
mod error;
mod input;
mod partial;
mod prove;
mod reference;
mod stream;
mod stream_read;
mod stream_walk;
mod stream_write;
mod tree;
mod verify;
mod walk;

use alloc::vec::Vec;

use crate::hash::Hash;
use crate::tezos::InodeConfig;

pub use error::{Path, ProofError, Show};
pub use prove::{prove, ProofSource, ProveError, SourceDir, SourceInode};
pub use reference::RefSource;
pub use stream::{
    decode_stream, encode_stream, prove_stream, verify_stream, verify_stream_paths, STREAM_MAGIC, STREAM_VERSION,
};
pub use tree::{Entries, ProofInode, ProofTree};
pub use verify::{verify, verify_paths, Proved, Verified};

/// The four bytes every encoded proof starts with.
pub const MAGIC: [u8; 4] = *b"ARBP";

/// The encoding version this build writes and reads.
pub const VERSION: u8 = 1;

/// Deepest nesting of a proof's tree (directory levels plus inode levels) and longest path
/// accepted, which bounds the verifier's recursion.
pub const MAX_NESTING: usize = 512;

/// Deepest inode accepted (the root inode is at depth 0).
pub const MAX_INODE_DEPTH: u32 = 64;

/// Most slots per inode accepted in a proof's configuration.
pub const MAX_INODE_ENTRIES: u32 = 1024;

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

/// A Merkle proof: see the [module documentation](self).
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

impl Proof {
    /// The compact binary encoding (see docs/PROOFS.md).
    pub fn encode(&self) -> Vec<u8> {
        encode::encode(self)
    }

    /// Decodes a proof, checking that the bytes are exactly one canonical encoding; the
    /// proof is not verified (see [`Proof::verify`]).
    pub fn decode(bytes: &[u8]) -> Result<Proof, ProofError> {
        decode::decode(bytes)
    }

    /// Verifies a decoded proof against the trusted `root` and inode configuration: see
    /// [`verify`].
    pub fn verify(&self, root: &Hash, config: InodeConfig) -> Result<Verified, ProofError> {
        verify::verify_proof(self, root, config)
    }
}
