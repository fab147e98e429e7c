//! Proofs of the plain [`RefTree`]: its directories are shown as they are hashed, inode trees
//! built on the fly by partitioning bindings by slot. Slow (hashes are recomputed from
//! scratch); meant for tests and fuzzing, as an independent prover to compare the engine's with.

use alloc::vec::Vec;
use core::convert::Infallible;
use core::marker::PhantomData;

use super::source::{ProofSource, SourceDir, SourceInode};
use crate::hash::Hash;
use crate::reference::RefTree;
use crate::tezos::{inode_tree_hash, inode_values_hash, ChildKind, InodeConfig};

/// A [`ProofSource`] over [`RefTree`]s hashed with `config`.
#[derive(Clone, Copy, Debug)]
pub struct RefSource<'a> {
    config: InodeConfig,
    _tree: PhantomData<&'a RefTree>,
}

impl RefSource<'_> {
    /// A source hashing with `config`.
    pub fn new(config: InodeConfig) -> Self {
        RefSource { config, _tree: PhantomData }
    }
}

/// The bindings an inode holds, sorted by step.
type Bindings<'a> = Vec<(&'a [u8], &'a RefTree)>;

fn kind_of(t: &RefTree) -> ChildKind {
    match t {
        RefTree::Contents(_) => ChildKind::Contents,
        RefTree::Node(_) => ChildKind::Node,
    }
}

impl<'a> RefSource<'a> {
    fn view(&self, b: &Bindings<'a>) -> Vec<(Vec<u8>, &'a RefTree)> {
        b.iter().map(|(s, t)| (s.to_vec(), *t)).collect()
    }

    fn partition(&self, depth: u32, b: &Bindings<'a>) -> Vec<(u32, Bindings<'a>)> {
        let mut slots: Vec<(u32, Bindings<'a>)> = Vec::new();
        for slot in 0..self.config.entries {
            let part: Bindings<'a> = b.iter().copied().filter(|(s, _)| self.config.slot(depth, s) == slot).collect();
            if !part.is_empty() {
                slots.push((slot, part));
            }
        }
        slots
    }
}

impl<'a> ProofSource for RefSource<'a> {
    type Node = &'a RefTree;
    type Inode = Bindings<'a>;
    type Error = Infallible;

    fn kind(&self, node: &&'a RefTree) -> ChildKind {
        kind_of(node)
    }

    fn hash(&self, node: &&'a RefTree) -> Result<Hash, Infallible> {
        Ok(node.hash(self.config))
    }

    fn value(&self, node: &&'a RefTree) -> Result<Vec<u8>, Infallible> {
        Ok(match node {
            RefTree::Contents(v) => v.clone(),
            RefTree::Node(_) => Vec::new(),
        })
    }

    fn dir(&self, node: &&'a RefTree) -> Result<SourceDir<&'a RefTree, Bindings<'a>>, Infallible> {
        let node: &'a RefTree = node;
        let b: Bindings<'a> = match node {
            RefTree::Node(m) => m.iter().map(|(s, t)| (&s[..], t)).collect(),
            RefTree::Contents(_) => Vec::new(),
        };
        Ok(if b.len() <= self.config.stable_hash as usize {
            SourceDir::Flat(self.view(&b))
        } else {
            SourceDir::Large(b)
        })
    }

    fn inode(&self, inode: &Bindings<'a>, depth: u32) -> Result<SourceInode<&'a RefTree, Bindings<'a>>, Infallible> {
        Ok(if inode.len() <= self.config.entries as usize {
            SourceInode::Values(self.view(inode))
        } else {
            SourceInode::Tree { count: inode.len() as u64, slots: self.partition(depth, inode) }
        })
    }

    fn inode_hash(&self, inode: &Bindings<'a>, depth: u32) -> Result<Hash, Infallible> {
        if inode.len() <= self.config.entries as usize {
            let hashes: Vec<Hash> = inode.iter().map(|(_, t)| t.hash(self.config)).collect();
            return Ok(inode_values_hash(inode.iter().zip(&hashes).map(|((s, t), h)| (*s, kind_of(t), h))));
        }
        let slots = self.partition(depth, inode);
        let mut hashes = Vec::with_capacity(slots.len());
        for (s, b) in &slots {
            hashes.push((*s, self.inode_hash(b, depth + 1)?));
        }
        Ok(inode_tree_hash(depth, inode.len() as u64, hashes.iter().map(|(s, h)| (*s, h))))
    }
}
