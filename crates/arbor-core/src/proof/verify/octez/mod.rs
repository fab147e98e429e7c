//! Verifying Octez proofs against a trusted root: a tree proof is hashed by the rules of its
//! shape and its paths looked up in it; a stream proof is checked by replaying its paths, each
//! element checked against the hash its parent announced as it is taken. Only proofs of reads
//! are accepted (after-root equal to the before-root).

pub(crate) mod hash;
pub(crate) mod replay;

use alloc::vec::Vec;

use crate::hash::Hash;
use crate::proof::encoding::octez::{
    decode_stream_proof, decode_tree_proof, Elt, Encoding, KindedHash, OctezProof, Shape, StreamProof, TreeProof,
};
use crate::proof::types::{Path, ProofError, Proved};
use hash::Hasher;
use replay::{replay_all, Ctx, Elements, Replay};

/// An Octez proof that verified: its roots and what it proves at each path asked about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OctezVerified {
    /// The shape the proof is for.
    pub shape: Shape,
    /// The root the reads were proved in (the trusted root).
    pub before: KindedHash,
    /// The root after: always `before`, as only proofs of reads are accepted.
    pub after: KindedHash,
    /// Each path in the order given, with what is proved there.
    pub reads: Vec<(Path, Proved)>,
}

/// Checks the shape, the recorded before-root against the trusted one, and that the proof is
/// of reads only: an Octez proof does not carry the operations that changed its tree, so an
/// after-root other than the before-root cannot be checked and is refused.
fn check_roots<S>(p: &OctezProof<S>, root: &Hash, shape: Shape) -> Result<(), ProofError> {
    if p.shape() != shape {
        return Err(ProofError::OctezVersion(p.version));
    }
    if p.before.hash() != root {
        return Err(ProofError::RootMismatch { expected: *root, computed: *p.before.hash() });
    }
    if p.after != p.before {
        return Err(ProofError::AfterMismatch { recorded: *p.after.hash(), computed: *p.before.hash() });
    }
    Ok(())
}

/// Verifies a decoded tree proof against the trusted `root` for `shape`, and looks `paths` up.
pub fn verify_octez_tree_proof(
    p: &TreeProof,
    root: &Hash,
    shape: Shape,
    paths: &[Path],
) -> Result<OctezVerified, ProofError> {
    check_roots(p, root, shape)?;
    let h = Hasher { shape };
    let computed = h.tree(&p.state)?;
    let kind_ok = matches!(
        (&p.before, hash::kind(&p.state)),
        (KindedHash::Value(_), crate::tezos::ChildKind::Contents)
            | (KindedHash::Node(_), crate::tezos::ChildKind::Node)
    );
    if computed != *root || !kind_ok {
        return Err(ProofError::RootMismatch { expected: *root, computed });
    }
    let reads = paths.iter().map(|path| Ok((path.clone(), h.read(&p.state, path)?))).collect::<Result<_, _>>()?;
    Ok(OctezVerified { shape, before: p.before, after: p.after, reads })
}

/// Decodes the tree proof `bytes` (written in `enc`) and verifies it: see
/// [`verify_octez_tree_proof`].
pub fn verify_octez_tree(
    bytes: &[u8],
    enc: Encoding,
    root: &Hash,
    shape: Shape,
    paths: &[Path],
) -> Result<OctezVerified, ProofError> {
    verify_octez_tree_proof(&decode_tree_proof(bytes, enc)?, root, shape, paths)
}

/// The elements of a stream being verified, taken in order.
struct Stream<'a> {
    elts: &'a [Elt],
}

impl Elements for Stream<'_> {
    fn fetch(&mut self, _hash: &Hash, _ctx: Ctx, index: usize) -> Result<Elt, ProofError> {
        self.elts.get(index).cloned().ok_or(ProofError::StreamTooShort)
    }
}

/// Verifies a decoded stream proof against the trusted `root` for `shape` by replaying
/// `paths` in order; every element must be used.
pub fn verify_octez_stream_proof(
    p: &StreamProof,
    root: &Hash,
    shape: Shape,
    paths: &[Path],
) -> Result<OctezVerified, ProofError> {
    check_roots(p, root, shape)?;
    let mut r = Replay::new(shape, Stream { elts: &p.state });
    let reads = replay_all(&mut r, &p.before, paths)?;
    if r.taken != p.state.len() {
        return Err(ProofError::UnusedElements { used: r.taken, total: p.state.len() });
    }
    Ok(OctezVerified { shape, before: p.before, after: p.after, reads })
}

/// Decodes the stream proof `bytes` (written in `enc`) and verifies it: see
/// [`verify_octez_stream_proof`].
pub fn verify_octez_stream(
    bytes: &[u8],
    enc: Encoding,
    root: &Hash,
    shape: Shape,
    paths: &[Path],
) -> Result<OctezVerified, ProofError> {
    verify_octez_stream_proof(&decode_stream_proof(bytes, enc)?, root, shape, paths)
}
