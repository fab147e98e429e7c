//! Stream proofs: the content of a [`Proof`] (configuration, before- and after-roots, reads,
//! writes, partial tree) with the tree sent as a flat sequence of *elements* in the order the
//! verifier's traversal consumes them, as Octez's `produce_stream_proof` and
//! `verify_stream_proof` do.
//!
//! Each element is a value, a flat directory listing its entries' steps, kinds and hashes, or
//! an inode listing its bindings (a Values inode) or its slots' hashes (a Tree inode). The
//! verifier starts from the trusted root hash; it walks the proof's claims, reads the next
//! element wherever a walk needs a node shown and checks that the element hashes to what the
//! node's parent announced (the trusted root for the first), so nothing is decoded before it
//! is checked and no nested structure is parsed up front. Which children are shown, and in
//! what order, follows from the claims alone (see [`walk`]): a stream proof of
//! given claims about a given tree is unique, minimal by construction, and it shows exactly the
//! nodes the tree proof of the same claims shows.
//!
//! Once the stream is consumed (nothing may follow), the proof goes through the same checks
//! as a tree proof, so [`verify_stream`] and [`verify`](crate::proof::verify) accept the same claims
//! and give the same [`Verified`].

use alloc::vec::Vec;

mod format;
mod read;
mod walk;
mod write;

pub use format::{STREAM_MAGIC, STREAM_VERSION};

use crate::hash::Hash;
use crate::proof::tree::{prove, ProofSource, ProveError};
use crate::proof::types::{Path, Proof, ProofError, ProofTree, Verified, Write, MAX_INODE_ENTRIES};
use crate::tezos::{ChildKind, InodeConfig};
use format::Header;
use read::Cursor;
use walk::traverse;
use write::Emit;

/// A blinded node of `kind` with hash `h`.
fn blinded(kind: ChildKind, h: Hash) -> ProofTree {
    match kind {
        ChildKind::Contents => ProofTree::BlindedValue(h),
        ChildKind::Node => ProofTree::BlindedNode(h),
    }
}

/// The stream encoding of `proof` (layout in docs/PROOFS.md).
///
/// The proof must show exactly what its claims need, as the proofs [`prove`] builds do;
/// otherwise this fails with [`ProofError::NotProvable`] (a needed node is blinded) or
/// [`ProofError::Excess`] (a node is shown that no claim needs).
pub fn encode_stream(proof: &Proof) -> Result<Vec<u8>, ProofError> {
    let header = Header {
        config: proof.config,
        root_kind: proof.tree.kind(),
        before: proof.before,
        after: proof.after,
        reads: proof.reads.clone(),
        writes: proof.writes.clone(),
    };
    let mut emit = Emit { cfg: proof.config, full: proof.tree.clone(), out: Vec::new() };
    write::header(&mut emit.out, &header);
    let root = blinded(header.root_kind, proof.tree.hash(proof.config));
    let tree = traverse(proof.config, root, &proof.reads, &proof.writes, &mut emit)?;
    if tree != proof.tree {
        return Err(ProofError::Excess { path: Path::new() });
    }
    Ok(emit.out)
}

/// Reads a stream proof against the trusted `root` and `config`, checking every element's hash
/// as it is read, and returns its content as a [`Proof`] (whose claims are not yet checked:
/// see [`verify_stream`]).
pub fn decode_stream(bytes: &[u8], root: &Hash, config: InodeConfig) -> Result<Proof, ProofError> {
    if !(2..=MAX_INODE_ENTRIES).contains(&config.entries) {
        return Err(ProofError::BadConfig(config));
    }
    let mut cur = Cursor::new(bytes);
    let h = cur.header()?;
    if h.config != config {
        return Err(ProofError::ConfigMismatch { expected: config, found: h.config });
    }
    let tree = traverse(config, blinded(h.root_kind, *root), &h.reads, &h.writes, &mut cur)?;
    if !cur.at_end() {
        return Err(ProofError::TrailingBytes { at: cur.pos() });
    }
    Ok(Proof { config, before: h.before, after: h.after, tree, reads: h.reads, writes: h.writes })
}

/// Verifies the stream proof `bytes` against the trusted root hash `root` and inode
/// configuration `config`.
///
/// Reads the elements one by one in the verifier's traversal order, each checked against the
/// hash its parent announced; rejects a stream cut short, with elements beyond what the
/// claims need, or out of order. Then checks the claims as [`verify`](crate::proof::verify) does
/// (recorded roots, reads, writes, minimality) and returns what the proof proves; follow with
/// [`Verified::expect_reads`] and [`Verified::expect_writes`] (or use [`verify_stream_paths`]).
pub fn verify_stream(bytes: &[u8], root: &Hash, config: InodeConfig) -> Result<Verified, ProofError> {
    decode_stream(bytes, root, config)?.verify(root, config)
}

/// [`verify_stream`] for a read-only proof of exactly `paths` (in any order).
pub fn verify_stream_paths<P: AsRef<[S]>, S: AsRef<[u8]>>(
    bytes: &[u8],
    root: &Hash,
    config: InodeConfig,
    paths: &[P],
) -> Result<Verified, ProofError> {
    let v = verify_stream(bytes, root, config)?;
    v.expect_reads(paths)?;
    v.expect_writes(&[])?;
    Ok(v)
}

/// Builds the stream proof of `reads` and `writes` on the tree `root` of `src`: the proof
/// [`prove`] builds, in the stream encoding.
pub fn prove_stream<S: ProofSource>(
    src: &S,
    root: &S::Node,
    config: InodeConfig,
    reads: &[Path],
    writes: &[Write],
) -> Result<Vec<u8>, ProveError<S::Error>> {
    let proof = prove(src, root, config, reads, writes)?;
    Ok(encode_stream(&proof)?)
}
