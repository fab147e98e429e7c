//! What a verified proof tells: its root hashes, what it proves at each read path, its writes.

use alloc::collections::BTreeSet;
use alloc::vec::Vec;

use super::error::{Path, ProofError};
use super::proof::Write;
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
    pub(crate) config: InodeConfig,
    pub(crate) before: Hash,
    pub(crate) after: Hash,
    pub(crate) reads: Vec<(Path, Proved)>,
    pub(crate) writes: Vec<Write>,
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

fn to_path<S: AsRef<[u8]>>(p: &[S]) -> Path {
    p.iter().map(|s| s.as_ref().to_vec()).collect()
}

fn cmp_path<S: AsRef<[u8]>>(a: &[Vec<u8>], b: &[S]) -> core::cmp::Ordering {
    a.iter().map(|s| &s[..]).cmp(b.iter().map(|s| s.as_ref()))
}
