//! Verifying a proof from its bytes alone, and what a verified proof tells.

use alloc::collections::BTreeSet;
use alloc::vec::Vec;

use super::error::{Path, ProofError};
use super::{check, partial, walk, Proof, Write, MAX_INODE_ENTRIES};
use crate::hash::Hash;
use crate::tezos::InodeConfig;

/// What a proof proves about one read path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proved {
    /// A value is at the path: these bytes.
    Value(Vec<u8>),
    /// A directory with this hash is at the path.
    Dir(Hash),
    /// Nothing is at the path (a step is missing, or a value lies on the way).
    Absent,
}

/// A proof that verified: its root hashes, what it proves at each read path, and its writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    config: InodeConfig,
    before: Hash,
    after: Hash,
    reads: Vec<(Path, Proved)>,
    writes: Vec<Write>,
}

impl Verified {
    /// The inode configuration the proof was checked with.
    pub fn config(&self) -> InodeConfig {
        self.config
    }

    /// The root hash the reads were proved in (the trusted root given to the verifier).
    pub fn before(&self) -> Hash {
        self.before
    }

    /// The root hash after the proof's writes, as recomputed by the verifier.
    pub fn after(&self) -> Hash {
        self.after
    }

    /// Each read path (sorted) with what is proved there, in the before-tree.
    pub fn reads(&self) -> &[(Path, Proved)] {
        &self.reads
    }

    /// The writes, in order, whose effect gives [`Verified::after`].
    pub fn writes(&self) -> &[Write] {
        &self.writes
    }

    /// What is proved at `path`, if it is one of the proof's reads.
    pub fn get<S: AsRef<[u8]>>(&self, path: &[S]) -> Option<&Proved> {
        let i = self.reads.binary_search_by(|(p, _)| cmp_path(p, path)).ok()?;
        Some(&self.reads[i].1)
    }

    /// Checks that the proof's reads are exactly `paths` (in any order, repeats allowed):
    /// a client checks the proof answers its question, not another one.
    pub fn expect_reads<P: AsRef<[S]>, S: AsRef<[u8]>>(&self, paths: &[P]) -> Result<(), ProofError> {
        let wanted: BTreeSet<Path> = paths.iter().map(|p| to_path(p.as_ref())).collect();
        let same = wanted.len() == self.reads.len() && wanted.iter().zip(&self.reads).all(|(w, (p, _))| w == p);
        if same {
            Ok(())
        } else {
            Err(ProofError::ReadsMismatch)
        }
    }

    /// Checks that the proof's writes are exactly `writes`, in this order.
    pub fn expect_writes(&self, writes: &[Write]) -> Result<(), ProofError> {
        if self.writes == writes {
            Ok(())
        } else {
            Err(ProofError::WritesMismatch)
        }
    }
}

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

/// Verifies a proof held as a value: it goes through its encoding, so that a value built by
/// hand is held to the same rules as bytes received.
pub(super) fn verify_proof(proof: &Proof, root: &Hash, config: InodeConfig) -> Result<Verified, ProofError> {
    verify(&proof.encode(), root, config)
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

fn to_path<S: AsRef<[u8]>>(p: &[S]) -> Path {
    p.iter().map(|s| s.as_ref().to_vec()).collect()
}

fn cmp_path<S: AsRef<[u8]>>(a: &[Vec<u8>], b: &[S]) -> core::cmp::Ordering {
    a.iter().map(|s| &s[..]).cmp(b.iter().map(|s| s.as_ref()))
}
