//! Verifying a tree proof from its bytes alone.

use alloc::collections::BTreeSet;
mod check;
pub(crate) mod octez;

use crate::hash::Hash;
use crate::proof::claims::{partial, walk};
use crate::proof::types::{Path, Proof, ProofError, Verified, Write, MAX_INODE_ENTRIES};
use crate::tezos::InodeConfig;

/// Verifies the encoded proof `bytes` against the trusted root hash `root` and inode
/// configuration `config`, from the bytes alone.
///
/// Checks, in order: the encoding (canonical, complete, nothing after it); the configuration;
/// that the tree hashes to `root` and to the recorded before-root; that the writes apply to
/// the shown part of the tree; that every read resolves to a value, a directory or a proved
/// absence, with nothing shown beyond what reads and writes need; and that the writes give the
/// recorded after-root. Returns what the proof proves; to check that it is about the right
/// paths and writes, follow with [`Verified::expect_reads`] and [`Verified::expect_writes`]
/// (or use [`verify_paths`]).
pub fn verify(bytes: &[u8], root: &Hash, config: InodeConfig) -> Result<Verified, ProofError> {
    let proof = Proof::decode(bytes)?;
    verify_decoded(&proof, root, config)
}

/// [`verify`] for a read-only proof of exactly `paths` (in any order): also checks that the
/// proof reads those paths and writes nothing.
pub fn verify_paths<P: AsRef<[S]>, S: AsRef<[u8]>>(
    bytes: &[u8],
    root: &Hash,
    config: InodeConfig,
    paths: &[P],
) -> Result<Verified, ProofError> {
    let v = verify(bytes, root, config)?;
    v.expect_reads(paths)?;
    v.expect_writes(&[])?;
    Ok(v)
}

impl Proof {
    /// Verifies a decoded proof against the trusted `root` and inode configuration: see
    /// [`verify`]. The proof goes through its encoding, so that a value built by hand is held
    /// to the same rules as bytes received.
    pub fn verify(&self, root: &Hash, config: InodeConfig) -> Result<Verified, ProofError> {
        verify(&self.encode(), root, config)
    }
}

/// The verification proper, on a proof fresh from the decoder.
fn verify_decoded(proof: &Proof, root: &Hash, config: InodeConfig) -> Result<Verified, ProofError> {
    if !(2..=MAX_INODE_ENTRIES).contains(&config.entries) {
        return Err(ProofError::BadConfig(config));
    }
    if proof.config != config {
        return Err(ProofError::ConfigMismatch { expected: config, found: proof.config });
    }
    // A wrong root is the clearest report of a tampered proof: it comes first whatever else
    // fails (the checker hashes the tree on its way; this hashes it only when it failed).
    let root_first = |e: ProofError| match root_check(proof.tree.hash(config), proof, root) {
        Err(root_error) => root_error,
        Ok(()) => e,
    };
    let (after, regions) = if proof.writes.is_empty() {
        (None, walk::Regions::new())
    } else {
        let a = partial::apply(config, &proof.tree, &proof.writes).map_err(root_first)?;
        if let Some(path) = a.missing {
            return Err(root_first(ProofError::NotProvable { path }));
        }
        (Some(a.hash), a.regions)
    };
    let write_paths: BTreeSet<&Path> = proof.writes.iter().map(Write::path).collect();
    let walkers = walk::start(&proof.reads, &write_paths);
    let (computed, results) =
        check::check(config, &proof.tree, &walkers, proof.reads.len(), &regions).map_err(root_first)?;
    root_check(computed, proof, root)?;
    let after = after.unwrap_or(computed);
    if after != proof.after {
        return Err(ProofError::AfterMismatch { recorded: proof.after, computed: after });
    }
    Ok(Verified {
        config,
        before: computed,
        after,
        reads: proof.reads.iter().cloned().zip(results).collect(),
        writes: proof.writes.clone(),
    })
}

/// Checks the tree's hash `computed` against the trusted root and the recorded before-root.
fn root_check(computed: Hash, proof: &Proof, root: &Hash) -> Result<(), ProofError> {
    if computed != *root {
        return Err(ProofError::RootMismatch { expected: *root, computed });
    }
    if proof.before != computed {
        return Err(ProofError::BeforeMismatch { recorded: proof.before, computed });
    }
    Ok(())
}
