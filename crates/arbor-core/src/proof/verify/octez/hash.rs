//! Hashing an Octez tree proof by the rules of its shape, and looking paths up in it.
//!
//! A directory given as a flat node hashes flat. A directory given as an inode tree hashes as
//! that inode tree when it holds more than `stable_hash` bindings; with fewer it hashes flat,
//! so every binding must be shown (its inodes are only a layout and are not hashed), and
//! lookups in it go by step rather than by slot. An extender hashes as the chain of
//! single-slot inodes it stands for.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::hash::Hash;
use crate::proof::encoding::octez::{Extender, Inode, InodeTree, Shape, Tree};
use crate::proof::types::{Path, ProofError, Proved};
use crate::tezos::{contents_hash, flat_node_hash, inode_tree_hash, inode_values_hash, ChildKind};

type Res<T> = Result<T, ProofError>;

/// The kind a tree node stands for.
pub(crate) fn kind(t: &Tree) -> ChildKind {
    match t {
        Tree::Value(_) | Tree::BlindedValue(_) => ChildKind::Contents,
        _ => ChildKind::Node,
    }
}

/// Hashes the chain of single-slot inodes from `depth` down to `below` (the hash of what
/// lies under the last slot).
pub(crate) fn chain_hash(length: u64, segments: &[u8], depth: u32, below: Hash) -> Hash {
    segments
        .iter()
        .enumerate()
        .rev()
        .fold(below, |h, (j, &s)| inode_tree_hash(depth + j as u32, length, core::iter::once((u32::from(s), &h))))
}

/// Hashes proof trees of one shape.
pub(crate) struct Hasher {
    pub shape: Shape,
}

impl Hasher {
    /// The hash of a tree node.
    pub fn tree(&self, t: &Tree) -> Res<Hash> {
        Ok(match t {
            Tree::Value(v) => contents_hash(v),
            Tree::BlindedValue(h) | Tree::BlindedNode(h) => *h,
            Tree::Node(b) => self.flat(b.iter().map(|(s, c)| (&s[..], c)))?,
            Tree::Inode(i) => self.large_dir(i.length, InodeRef::Tree(i))?,
            Tree::Extender(x) => self.large_dir(x.length, InodeRef::Extender(x))?,
        })
    }

    /// The flat hash of sorted bindings.
    fn flat<'a>(&self, b: impl Iterator<Item = (&'a [u8], &'a Tree)>) -> Res<Hash> {
        let mut rows = Vec::new();
        for (s, c) in b {
            rows.push((s, kind(c), self.tree(c)?));
        }
        Ok(flat_node_hash(rows.iter().map(|(s, k, h)| (*s, *k, h))))
    }

    /// A directory given by its root inode, holding `length` bindings.
    fn large_dir(&self, length: u64, root: InodeRef<'_>) -> Res<Hash> {
        if length > u64::from(self.shape.stable_hash()) {
            return self.inode_ref(root, 0);
        }
        let all = self.bindings(root)?;
        if all.len() as u64 != length {
            return Err(ProofError::BadShape("directory count does not match its bindings"));
        }
        self.flat(all.iter().map(|(s, c)| (*s, *c)))
    }

    /// Every binding below an inode, sorted; fails if part of it is blinded.
    pub fn bindings<'t>(&self, root: InodeRef<'t>) -> Res<BTreeMap<&'t [u8], &'t Tree>> {
        let mut out = BTreeMap::new();
        let mut todo = alloc::vec![root];
        while let Some(i) = todo.pop() {
            match i {
                InodeRef::Tree(i) => todo.extend(i.proofs.iter().map(|(_, c)| InodeRef::of(c))),
                InodeRef::Extender(x) => todo.push(InodeRef::of(&x.proof)),
                InodeRef::Blinded => {
                    return Err(ProofError::NotProvable { path: Path::new() });
                }
                InodeRef::Values(b) => {
                    for (s, c) in b {
                        if out.insert(&s[..], c).is_some() {
                            return Err(ProofError::BadShape("binding repeated in a directory"));
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    fn inode_ref(&self, i: InodeRef<'_>, depth: u32) -> Res<Hash> {
        match i {
            InodeRef::Tree(i) => {
                let mut hs = Vec::with_capacity(i.proofs.len());
                for (_, c) in &i.proofs {
                    hs.push(self.inode(c, depth + 1)?);
                }
                Ok(inode_tree_hash(depth, i.length, i.proofs.iter().zip(&hs).map(|((s, _), h)| (u32::from(*s), h))))
            }
            InodeRef::Extender(x) => {
                let k = x.segments.len() as u32;
                let below = self.inode(&x.proof, depth + k)?;
                Ok(chain_hash(x.length, &x.segments, depth, below))
            }
            InodeRef::Values(b) => {
                let mut rows = Vec::new();
                for (s, c) in b {
                    rows.push((&s[..], kind(c), self.tree(c)?));
                }
                Ok(inode_values_hash(rows.iter().map(|(s, k, h)| (*s, *k, h))))
            }
            InodeRef::Blinded => Err(ProofError::NotProvable { path: Path::new() }),
        }
    }

    /// The hash of an inode at `depth`.
    pub fn inode(&self, t: &InodeTree, depth: u32) -> Res<Hash> {
        match t {
            InodeTree::Blinded(h) => Ok(*h),
            _ => self.inode_ref(InodeRef::of(t), depth),
        }
    }

    /// What the tree proves at `path`.
    pub fn read(&self, root: &Tree, path: &[Vec<u8>]) -> Res<Proved> {
        let mut cur = root;
        for (i, step) in path.iter().enumerate() {
            let not_provable = || ProofError::NotProvable { path: path[..i].to_vec() };
            let next = match cur {
                Tree::Value(_) | Tree::BlindedValue(_) => return Ok(Proved::Absent),
                Tree::BlindedNode(_) => return Err(not_provable()),
                Tree::Node(b) => b.binary_search_by(|(s, _)| s[..].cmp(step)).ok().map(|j| &b[j].1),
                Tree::Inode(x) => self.find(x.length, InodeRef::Tree(x), step).map_err(|_| not_provable())?,
                Tree::Extender(x) => self.find(x.length, InodeRef::Extender(x), step).map_err(|_| not_provable())?,
            };
            match next {
                Some(n) => cur = n,
                None => return Ok(Proved::Absent),
            }
        }
        match cur {
            Tree::Value(v) => Ok(Proved::Value(v.clone())),
            Tree::BlindedValue(_) => Err(ProofError::NotProvable { path: path.to_vec() }),
            dir => Ok(Proved::Dir(self.tree(dir)?)),
        }
    }

    /// Looks `step` up in a large directory; `Err` if a blinded inode is in the way.
    fn find<'t>(&self, length: u64, root: InodeRef<'t>, step: &[u8]) -> Result<Option<&'t Tree>, ()> {
        if length <= u64::from(self.shape.stable_hash()) {
            return Ok(self.bindings(root).map_err(|_| ())?.get(step).copied());
        }
        let mut cur = root;
        let mut depth = 0u32;
        loop {
            match cur {
                InodeRef::Blinded => return Err(()),
                InodeRef::Values(b) => {
                    return Ok(b.binary_search_by(|(s, _)| s[..].cmp(step)).ok().map(|j| &b[j].1));
                }
                InodeRef::Tree(i) => {
                    let slot = self.shape.slot(depth, step);
                    match i.proofs.iter().find(|(s, _)| u32::from(*s) == slot) {
                        Some((_, c)) => cur = InodeRef::of(c),
                        None => return Ok(None),
                    }
                    depth += 1;
                }
                InodeRef::Extender(x) => {
                    for &seg in &x.segments {
                        if self.shape.slot(depth, step) != u32::from(seg) {
                            return Ok(None);
                        }
                        depth += 1;
                    }
                    cur = InodeRef::of(&x.proof);
                }
            }
        }
    }
}

/// An inode of a proof tree, whether a directory's root or below it.
#[derive(Clone, Copy)]
pub(crate) enum InodeRef<'t> {
    Blinded,
    Values(&'t [(Vec<u8>, Tree)]),
    Tree(&'t Inode<InodeTree>),
    Extender(&'t Extender<InodeTree>),
}

impl<'t> InodeRef<'t> {
    fn of(t: &'t InodeTree) -> Self {
        match t {
            InodeTree::Blinded(_) => InodeRef::Blinded,
            InodeTree::Values(b) => InodeRef::Values(b),
            InodeTree::Tree(i) => InodeRef::Tree(i),
            InodeTree::Extender(x) => InodeRef::Extender(x),
        }
    }
}
