//! Proving whatever a closure reads and writes, as Octez's `produce_tree_proof` does.

use arbor_core::proof::{Path, Proof, Write};

use super::to_paths;
use crate::error::{Error, Result};
use crate::tree::Tree;

/// A tree handle that logs every path read or written through it; see [`prove_with`].
///
/// Reads see the closure's own earlier writes, as on a [`Tree`]. The proof proves each read
/// path in the tree as it was *before* the closure ran; with the writes (recorded in order), a
/// verifier can tell what each read saw.
#[derive(Debug)]
pub struct Recorder {
    tree: Tree,
    reads: Vec<Path>,
    writes: Vec<Write>,
}

impl Recorder {
    fn read<S: AsRef<[u8]>>(&mut self, path: &[S]) -> Result<()> {
        let p = to_paths(&[path])?.remove(0);
        self.reads.push(p);
        Ok(())
    }

    /// The value at `path`, if any ([`Tree::find`]).
    pub fn find<S: AsRef<[u8]>>(&mut self, path: &[S]) -> Result<Option<Vec<u8>>> {
        self.read(path)?;
        self.tree.find(path)
    }

    /// True if a value is at `path` ([`Tree::mem`]).
    pub fn mem<S: AsRef<[u8]>>(&mut self, path: &[S]) -> Result<bool> {
        self.read(path)?;
        self.tree.mem(path)
    }

    /// True if a value or a directory is at `path` ([`Tree::mem_tree`]).
    pub fn mem_tree<S: AsRef<[u8]>>(&mut self, path: &[S]) -> Result<bool> {
        self.read(path)?;
        self.tree.mem_tree(path)
    }

    /// Sets the value at `path` ([`Tree::add`]).
    pub fn add<S: AsRef<[u8]>>(&mut self, path: &[S], value: &[u8]) -> Result<()> {
        self.tree.add_mut(path, value)?;
        self.writes.push(Write::Add(to_paths(&[path])?.remove(0), value.to_vec()));
        Ok(())
    }

    /// Removes whatever is at `path` ([`Tree::remove`]).
    pub fn remove<S: AsRef<[u8]>>(&mut self, path: &[S]) -> Result<()> {
        self.tree.remove_mut(path)?;
        self.writes.push(Write::Remove(to_paths(&[path])?.remove(0)));
        Ok(())
    }

    /// The tree as the closure has changed it so far.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }
}

/// Runs `f` on a [`Recorder`] over `tree` and returns its result with the proof of everything
/// it read and wrote: the before-root is `tree`'s hash, the after-root the hash of the tree
/// its writes produce (which the verifier recomputes from the proof).
pub fn prove_with<T>(tree: &Tree, f: impl FnOnce(&mut Recorder) -> Result<T>) -> Result<(T, Proof)> {
    let (out, proof, _) = prove_with_tree(tree, f)?;
    Ok((out, proof))
}

/// [`prove_with`], also returning the tree the closure's writes produced.
pub fn prove_with_tree<T>(tree: &Tree, f: impl FnOnce(&mut Recorder) -> Result<T>) -> Result<(T, Proof, Tree)> {
    let mut r = Recorder { tree: tree.clone(), reads: Vec::new(), writes: Vec::new() };
    let out = f(&mut r)?;
    let proof = tree.prove_changes(&r.reads, &r.writes)?;
    if proof.after != r.tree.hash() {
        return Err(Error::InvalidArgument(format!(
            "proof after-root {} differs from the changed tree's {}",
            proof.after,
            r.tree.hash()
        )));
    }
    Ok((out, proof, r.tree))
}
