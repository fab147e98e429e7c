//! Merkle proofs of trees and commits: the engine's prover for the proofs of
//! [`arbor_core::proof`], which verifies them with no engine and no I/O.
//!
//! - [`Tree::prove`] proves what is at a set of paths (values, directories, absences);
//! - [`Store::prove`] does the same in a commit's tree;
//! - [`prove_with`] runs a closure on a [`Recorder`] that logs what it reads and writes, and
//!   proves all of it, with the root hash after its writes;
//! - [`Tree::prove_changes`] proves given reads and writes directly;
//! - [`Tree::prove_octez`], [`Tree::prove_octez_stream`] and their [`Store`] forms write the
//!   proofs of [`Tree::prove`] in Octez's format (checked with [`arbor_core::proof::octez`]);
//! - [`Tree::prove_stream`], [`Store::prove_stream`] and [`prove_with_stream`] give the same
//!   proofs as stream proofs, checked with [`verify_stream`].
//!
//! The format, its encoding and what verification checks are described in docs/PROOFS.md.

mod octez;
mod record;
mod source;
mod stream;

use arbor_core::proof::{self as core_proof, Path, ProveError};
pub use arbor_core::proof::{
    verify, verify_paths, verify_stream, verify_stream_paths, Proof, ProofError, Proved, Verified, Write,
};
use arbor_core::Hash;

use crate::error::{Error, Result};
use crate::path::check_path;
use crate::store::Store;
use crate::tree::Tree;
pub use record::{prove_with, prove_with_tree, Recorder};
use source::EngineSource;
pub use stream::prove_with_stream;

/// Converts caller paths to owned proof paths, rejecting empty steps.
pub(crate) fn to_paths<P: AsRef<[S]>, S: AsRef<[u8]>>(paths: &[P]) -> Result<Vec<Path>> {
    paths
        .iter()
        .map(|p| {
            check_path(p.as_ref())?;
            Ok(p.as_ref().iter().map(|s| s.as_ref().to_vec()).collect())
        })
        .collect()
}

impl Tree {
    /// The proof of what is at each of `paths` in this tree: a value, a directory (by its
    /// hash) or nothing. Its root hash is this tree's hash.
    pub fn prove<P: AsRef<[S]>, S: AsRef<[u8]>>(&self, paths: &[P]) -> Result<Proof> {
        self.prove_changes(&to_paths(paths)?, &[])
    }

    /// The proof of `reads` (in this tree) and of the root hash after applying `writes` to it,
    /// in order; writes have the semantics of [`Tree::add`] and [`Tree::remove`].
    pub fn prove_changes(&self, reads: &[Path], writes: &[Write]) -> Result<Proof> {
        for p in reads.iter().chain(writes.iter().map(Write::path)) {
            check_path(p)?;
        }
        let src = EngineSource { ctx: &self.ctx };
        core_proof::prove(&src, &self.root, self.ctx.cfg, reads, writes).map_err(|e| match e {
            ProveError::Source(e) => e,
            ProveError::Proof(e) => Error::InvalidArgument(format!("cannot prove: {e}")),
        })
    }
}

impl Store {
    /// The proof of what is at each of `paths` in the tree of `commit`; its root hash is the
    /// commit's tree hash.
    pub fn prove<P: AsRef<[S]>, S: AsRef<[u8]>>(&self, commit: &Hash, paths: &[P]) -> Result<Proof> {
        self.checkout(commit)?.prove(paths)
    }
}
