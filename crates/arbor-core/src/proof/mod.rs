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

//!
//! The module is layered; each layer uses only those listed before it:
//! - `types`: the shared types (partial tree, proof and claims, results, errors, limits);
//! - `claims`: the walks of a proof's claims down a tree and the application of its writes,
//!   shared by the prover and the verifier;
//! - `encoding`: the byte encodings of tree proofs;
//! - `verify`: verification of tree proofs;
//! - `tree`: building tree proofs from a [`ProofSource`];
//! - `stream`: stream proofs (building, encoding, reading and verifying them).

mod types;

mod claims;

mod encoding;

mod verify;

mod tree;

mod stream;

pub use encoding::{MAGIC, VERSION};
pub use stream::{
    decode_stream, encode_stream, prove_stream, verify_stream, verify_stream_paths, STREAM_MAGIC, STREAM_VERSION,
};
pub use tree::{prove, ProofSource, ProveError, RefSource, SourceDir, SourceInode};
pub use types::{
    Entries, Path, Proof, ProofError, ProofInode, ProofTree, Proved, Show, Verified, Write, MAX_INODE_DEPTH,
    MAX_INODE_ENTRIES, MAX_NESTING,
};
pub use verify::{verify, verify_paths};

/// Octez's Merkle proofs: reading and writing both encodings (V1, V2) of tree and stream
/// proofs for both shapes (32-slot and binary), verifying them against a root, and building
/// them from arbor proofs (see docs/PROOFS.md, "Octez proofs").
pub mod octez {
    pub use super::encoding::octez::*;
    pub use super::tree::octez::{octez_stream, prove_octez, to_octez};
    pub use super::verify::octez::{
        verify_octez_stream, verify_octez_stream_proof, verify_octez_tree, verify_octez_tree_proof, OctezVerified,
    };
}
