//! Stream proofs of trees and commits: the same proofs as [`Tree::prove`], [`Store::prove`]
//! and [`prove_with`], in the stream encoding of [`arbor_core::proof::encode_stream`]
//! (checked with [`verify_stream`](arbor_core::proof::verify_stream)).

use arbor_core::proof::{encode_stream, Proof};
use arbor_core::Hash;

use super::record::{prove_with, Recorder};
use crate::error::{Error, Result};
use crate::store::Store;
use crate::tree::Tree;

/// The stream encoding of a proof the engine built.
fn stream(proof: &Proof) -> Result<Vec<u8>> {
    encode_stream(proof).map_err(|e| Error::InvalidArgument(format!("cannot stream the proof: {e}")))
}

impl Tree {
    /// The stream proof of what is at each of `paths` in this tree ([`Tree::prove`], as a
    /// stream).
    pub fn prove_stream<P: AsRef<[S]>, S: AsRef<[u8]>>(&self, paths: &[P]) -> Result<Vec<u8>> {
        stream(&self.prove(paths)?)
    }
}

impl Store {
    /// The stream proof of what is at each of `paths` in the tree of `commit` ([`Store::prove`],
    /// as a stream).
    pub fn prove_stream<P: AsRef<[S]>, S: AsRef<[u8]>>(&self, commit: &Hash, paths: &[P]) -> Result<Vec<u8>> {
        stream(&self.prove(commit, paths)?)
    }
}

/// [`prove_with`], returning the stream proof of everything `f` read and wrote.
pub fn prove_with_stream<T>(tree: &Tree, f: impl FnOnce(&mut Recorder) -> Result<T>) -> Result<(T, Vec<u8>)> {
    let (out, proof) = prove_with(tree, f)?;
    Ok((out, stream(&proof)?))
}

#[cfg(test)]
mod tests {
    use arbor_core::proof::{verify_stream, verify_stream_paths, Proved, Write};
    use arbor_core::InodeConfig;

    use super::*;

    #[test]
    fn engine_stream_proofs_verify() {
        let cfg = InodeConfig::TEZOS;
        let mut t = Tree::empty_with(cfg);
        for i in 0..300 {
            t.add_mut(&["big", &format!("k{i}")], &[i as u8]).unwrap();
        }
        t.add_mut(&["a", "b"], b"v").unwrap();
        let paths = [vec!["big", "k7"], vec!["a", "b"], vec!["nope"]];
        let bytes = t.prove_stream(&paths).unwrap();
        let v = verify_stream_paths(&bytes, &t.hash(), cfg, &paths).unwrap();
        assert_eq!(v.get(&["big", "k7"]), Some(&Proved::Value(vec![7])));
        assert_eq!(v.get(&["nope"]), Some(&Proved::Absent));
        let (seen, bytes) = prove_with_stream(&t, |r| {
            let seen = r.find(&["a", "b"])?;
            r.remove(&["big", "k1"])?;
            Ok(seen)
        })
        .unwrap();
        assert_eq!(seen.as_deref(), Some(&b"v"[..]));
        let v = verify_stream(&bytes, &t.hash(), cfg).unwrap();
        assert_eq!(v.writes(), &[Write::Remove(vec![b"big".to_vec(), b"k1".to_vec()])]);
        let mut after = t.clone();
        after.remove_mut(&["big", "k1"]).unwrap();
        assert_eq!(v.after(), after.hash());
    }
}
