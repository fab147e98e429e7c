//! Octez-format proofs of trees and commits: the proofs of [`Tree::prove`] and
//! [`Store::prove`] written as Octez writes them (tree or stream proofs, in either of its
//! encodings), checked with [`arbor_core::proof::octez`]. Only the Tezos shape is supported.

use arbor_core::proof::octez::{encode_stream_proof, encode_tree_proof, octez_stream, to_octez, Encoding, TreeProof};
use arbor_core::{Hash, InodeConfig};

use super::to_paths;
use crate::error::{Error, Result};
use crate::store::Store;
use crate::tree::Tree;

fn invalid(e: arbor_core::proof::ProofError) -> Error {
    Error::InvalidArgument(format!("cannot write an Octez proof: {e}"))
}

impl Tree {
    /// The Octez tree proof of what is at each of `paths` in this tree (a tree of the Tezos
    /// shape), as a value.
    pub fn prove_octez_value<P: AsRef<[S]>, S: AsRef<[u8]>>(&self, paths: &[P]) -> Result<TreeProof> {
        if self.ctx.cfg != InodeConfig::TEZOS {
            return Err(Error::InvalidArgument("Octez proofs need the Tezos inode shape".into()));
        }
        to_octez(&self.prove(paths)?).map_err(invalid)
    }

    /// The Octez tree proof of what is at each of `paths` in this tree, encoded in `enc`.
    pub fn prove_octez<P: AsRef<[S]>, S: AsRef<[u8]>>(&self, paths: &[P], enc: Encoding) -> Result<Vec<u8>> {
        encode_tree_proof(&self.prove_octez_value(paths)?, enc).map_err(invalid)
    }

    /// The Octez stream proof of what is at each of `paths` in this tree, its elements in the
    /// order a verifier replaying `paths` in this order takes them, encoded in `enc`.
    pub fn prove_octez_stream<P: AsRef<[S]>, S: AsRef<[u8]>>(&self, paths: &[P], enc: Encoding) -> Result<Vec<u8>> {
        let tree = self.prove_octez_value(paths)?;
        let stream = octez_stream(&tree, &to_paths(paths)?).map_err(invalid)?;
        encode_stream_proof(&stream, enc).map_err(invalid)
    }
}

impl Store {
    /// [`Tree::prove_octez`] in the tree of `commit`.
    pub fn prove_octez<P: AsRef<[S]>, S: AsRef<[u8]>>(
        &self,
        commit: &Hash,
        paths: &[P],
        enc: Encoding,
    ) -> Result<Vec<u8>> {
        self.checkout(commit)?.prove_octez(paths, enc)
    }

    /// [`Tree::prove_octez_stream`] in the tree of `commit`.
    pub fn prove_octez_stream<P: AsRef<[S]>, S: AsRef<[u8]>>(
        &self,
        commit: &Hash,
        paths: &[P],
        enc: Encoding,
    ) -> Result<Vec<u8>> {
        self.checkout(commit)?.prove_octez_stream(paths, enc)
    }
}

#[cfg(test)]
mod tests {
    use arbor_core::proof::octez::{verify_octez_stream, verify_octez_tree, Shape};
    use arbor_core::proof::{Path, Proved};

    use super::*;

    fn p(s: &[&str]) -> Path {
        s.iter().map(|x| x.as_bytes().to_vec()).collect()
    }

    #[test]
    fn engine_octez_proofs_verify_in_both_encodings() {
        let mut t = Tree::empty_with(InodeConfig::TEZOS);
        for i in 0..300 {
            t.add_mut(&["big", &format!("k{i}")], &[i as u8]).unwrap();
        }
        t.add_mut(&["a", "b"], b"v").unwrap();
        let paths = [p(&["big", "k7"]), p(&["a", "b"]), p(&["nope"]), p(&["a"])];
        for enc in [Encoding::V1, Encoding::V2] {
            let bytes = t.prove_octez(&paths, enc).unwrap();
            let v = verify_octez_tree(&bytes, enc, &t.hash(), Shape::Tezos32, &paths).unwrap();
            assert_eq!(v.reads[0].1, Proved::Value(vec![7]));
            assert_eq!(v.reads[1].1, Proved::Value(b"v".to_vec()));
            assert_eq!(v.reads[2].1, Proved::Absent);
            assert!(matches!(v.reads[3].1, Proved::Dir(_)));
            let bytes = t.prove_octez_stream(&paths, enc).unwrap();
            let v = verify_octez_stream(&bytes, enc, &t.hash(), Shape::Tezos32, &paths).unwrap();
            assert_eq!(v.reads[0].1, Proved::Value(vec![7]));
            assert_eq!(v.reads[2].1, Proved::Absent);
        }
    }

    #[test]
    fn other_shapes_are_refused() {
        let mut t = Tree::empty_with(InodeConfig::SMALL_TEST);
        t.add_mut(&["a"], b"v").unwrap();
        assert!(matches!(t.prove_octez(&[p(&["a"])], Encoding::V2), Err(Error::InvalidArgument(_))));
    }
}
