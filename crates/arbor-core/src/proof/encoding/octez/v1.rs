//! Octez's plain encoding (V1): one-byte tags, fixed-width big-endian integers, lists and
//! values behind a 4-byte byte length. Layout in docs/PROOFS.md, "Octez proofs".

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::shape::Shape;
use super::types::{Bindings, Elt, Extender, Inode, InodeTree, KindedHash, Tree};
use super::wire::{len32, put_hash, put_len32, put_segments, put_step, segments, step};
use crate::hash::Hash;
use crate::proof::encoding::input::Input;
use crate::proof::types::{ProofError, MAX_NESTING};

/// Node tags of a tree.
mod tree_tag {
    pub const VALUE: u8 = 0;
    pub const BLINDED_VALUE: u8 = 1;
    pub const NODE: u8 = 2;
    pub const BLINDED_NODE: u8 = 3;
    pub const INODE: u8 = 4;
    pub const EXTENDER: u8 = 5;
}

/// Tags of an inode below the root.
mod inode_tag {
    pub const BLINDED: u8 = 0;
    pub const VALUES: u8 = 1;
    pub const TREE: u8 = 2;
    pub const EXTENDER: u8 = 3;
    /// An empty slot (only in a dense slot array or a binary inode).
    pub const NONE: u8 = 4;
}

/// Tags of a stream element.
mod elt_tag {
    pub const VALUE: u8 = 0;
    pub const NODE: u8 = 1;
    pub const INODE: u8 = 2;
    pub const EXTENDER: u8 = 3;
}

/// A 32-slot inode lists its slots sparsely below this many, densely from it.
const DENSE_FROM: usize = 16;

type Res<T> = Result<T, ProofError>;

/// Writes a kinded hash: a tag (0 value, 1 node) and the hash.
pub(super) fn put_kinded(out: &mut Vec<u8>, k: &KindedHash) {
    out.push(match k {
        KindedHash::Value(_) => 0,
        KindedHash::Node(_) => 1,
    });
    put_hash(out, k.hash());
}

/// Reads a kinded hash.
pub(super) fn kinded(r: &mut Input<'_>) -> Res<KindedHash> {
    let at = r.pos();
    match r.byte()? {
        0 => Ok(KindedHash::Value(r.hash()?)),
        1 => Ok(KindedHash::Node(r.hash()?)),
        _ => r.malformed(at, "unknown kinded hash tag"),
    }
}

/// The writer.
pub(super) struct Enc {
    pub shape: Shape,
    pub out: Vec<u8>,
}

impl Enc {
    fn bytes(&mut self, v: &[u8]) -> Res<()> {
        put_len32(&mut self.out, v.len())?;
        self.out.extend_from_slice(v);
        Ok(())
    }

    /// Runs `f` and puts its output behind a 4-byte length.
    fn sized(&mut self, f: impl FnOnce(&mut Self) -> Res<()>) -> Res<()> {
        let at = self.out.len();
        self.out.extend_from_slice(&[0; 4]);
        f(self)?;
        let n = self.out.len() - at - 4;
        let mut len = Vec::new();
        put_len32(&mut len, n)?;
        self.out[at..at + 4].copy_from_slice(&len);
        Ok(())
    }

    fn bindings(&mut self, b: &Bindings) -> Res<()> {
        self.sized(|e| {
            for (s, t) in b {
                put_step(&mut e.out, s)?;
                e.tree(t)?;
            }
            Ok(())
        })
    }

    pub fn tree(&mut self, t: &Tree) -> Res<()> {
        match t {
            Tree::Value(v) => {
                self.out.push(tree_tag::VALUE);
                self.bytes(v)
            }
            Tree::BlindedValue(h) => {
                self.out.push(tree_tag::BLINDED_VALUE);
                put_hash(&mut self.out, h);
                Ok(())
            }
            Tree::Node(b) => {
                self.out.push(tree_tag::NODE);
                self.bindings(b)
            }
            Tree::BlindedNode(h) => {
                self.out.push(tree_tag::BLINDED_NODE);
                put_hash(&mut self.out, h);
                Ok(())
            }
            Tree::Inode(i) => {
                self.out.push(tree_tag::INODE);
                self.inode(i, Self::inode_tree)
            }
            Tree::Extender(x) => {
                self.out.push(tree_tag::EXTENDER);
                self.extender(x)
            }
        }
    }

    fn extender(&mut self, x: &Extender<InodeTree>) -> Res<()> {
        self.out.extend_from_slice(&x.length.to_be_bytes());
        put_segments(&mut self.out, self.shape, &x.segments)?;
        self.inode_tree(&x.proof)
    }

    /// An inode's count and slots, each slot written by `child` (`None` for an empty one).
    fn inode<A>(&mut self, i: &Inode<A>, child: fn(&mut Self, &A) -> Res<()>) -> Res<()>
    where
        Self: OptSlot<A>,
    {
        self.out.extend_from_slice(&i.length.to_be_bytes());
        match self.shape {
            Shape::Binary => {
                for slot in 0..2u8 {
                    match i.proofs.iter().find(|(s, _)| *s == slot) {
                        Some((_, c)) => self.some(c, child)?,
                        None => self.none(),
                    }
                }
                Ok(())
            }
            Shape::Tezos32 if i.proofs.len() < DENSE_FROM => {
                self.out.push(0);
                self.sized(|e| {
                    for (s, c) in &i.proofs {
                        e.out.push(*s);
                        e.some(c, child)?;
                    }
                    Ok(())
                })
            }
            Shape::Tezos32 => {
                self.out.push(1);
                let mut next = i.proofs.iter().peekable();
                for slot in 0..32u8 {
                    match next.next_if(|(s, _)| *s == slot) {
                        Some((_, c)) => self.some(c, child)?,
                        None => self.none(),
                    }
                }
                Ok(())
            }
        }
    }

    fn inode_tree(&mut self, t: &InodeTree) -> Res<()> {
        match t {
            InodeTree::Blinded(h) => {
                self.out.push(inode_tag::BLINDED);
                put_hash(&mut self.out, h);
                Ok(())
            }
            InodeTree::Values(b) => {
                self.out.push(inode_tag::VALUES);
                self.bindings(b)
            }
            InodeTree::Tree(i) => {
                self.out.push(inode_tag::TREE);
                self.inode(i, Self::inode_tree)
            }
            InodeTree::Extender(x) => {
                self.out.push(inode_tag::EXTENDER);
                self.extender(x)
            }
        }
    }

    pub fn elt(&mut self, e: &Elt) -> Res<()> {
        match e {
            Elt::Value(v) => {
                self.out.push(elt_tag::VALUE);
                self.bytes(v)
            }
            Elt::Node(b) => {
                self.out.push(elt_tag::NODE);
                self.sized(|e| {
                    for (s, k) in b {
                        put_step(&mut e.out, s)?;
                        put_kinded(&mut e.out, k);
                    }
                    Ok(())
                })
            }
            Elt::Inode(i) => {
                self.out.push(elt_tag::INODE);
                self.inode(i, |e, h| {
                    put_hash(&mut e.out, h);
                    Ok(())
                })
            }
            Elt::Extender(x) => {
                self.out.push(elt_tag::EXTENDER);
                self.out.extend_from_slice(&x.length.to_be_bytes());
                put_segments(&mut self.out, self.shape, &x.segments)?;
                put_hash(&mut self.out, &x.proof);
                Ok(())
            }
        }
    }
}

/// How a slot's optional child is tagged: inode trees carry their own tag (with a tag for
/// an empty slot), hashes get an option byte.
pub(super) trait OptSlot<A> {
    fn some(&mut self, a: &A, child: fn(&mut Self, &A) -> Res<()>) -> Res<()>;
    fn none(&mut self);
}

impl OptSlot<InodeTree> for Enc {
    fn some(&mut self, a: &InodeTree, child: fn(&mut Self, &InodeTree) -> Res<()>) -> Res<()> {
        child(self, a)
    }
    fn none(&mut self) {
        self.out.push(inode_tag::NONE);
    }
}

impl OptSlot<Hash> for Enc {
    fn some(&mut self, a: &Hash, child: fn(&mut Self, &Hash) -> Res<()>) -> Res<()> {
        self.out.push(1);
        child(self, a)
    }
    fn none(&mut self) {
        self.out.push(0);
    }
}

/// The reader.
pub(super) struct Dec<'a> {
    pub shape: Shape,
    pub r: Input<'a>,
}

impl Dec<'_> {
    fn bytes(&mut self) -> Res<Vec<u8>> {
        let n = len32(&mut self.r)?;
        Ok(self.r.take(n)?.to_vec())
    }

    /// Reads items with `item` until the 4-byte length read first is used up exactly.
    fn sized<T>(&mut self, mut item: impl FnMut(&mut Self) -> Res<T>) -> Res<Vec<T>> {
        let n = len32(&mut self.r)?;
        let end = self.r.pos() + n;
        let mut out = Vec::new();
        while self.r.pos() < end {
            out.push(item(self)?);
        }
        if self.r.pos() != end {
            return self.r.malformed(end, "list overruns its length");
        }
        Ok(out)
    }

    fn bindings(&mut self, nesting: usize) -> Res<Bindings> {
        self.sized(|d| {
            let s = step(&mut d.r)?;
            Ok((s, d.tree(nesting + 1)?))
        })
    }

    fn length(&mut self) -> Res<u64> {
        let at = self.r.pos();
        let n = self.r.be(8)?;
        if n > i64::MAX as u64 {
            return self.r.malformed(at, "negative length");
        }
        Ok(n)
    }

    pub fn tree(&mut self, nesting: usize) -> Res<Tree> {
        if nesting >= MAX_NESTING {
            return Err(ProofError::TooDeep);
        }
        let at = self.r.pos();
        Ok(match self.r.byte()? {
            tree_tag::VALUE => Tree::Value(self.bytes()?),
            tree_tag::BLINDED_VALUE => Tree::BlindedValue(self.r.hash()?),
            tree_tag::NODE => Tree::Node(self.bindings(nesting)?),
            tree_tag::BLINDED_NODE => Tree::BlindedNode(self.r.hash()?),
            tree_tag::INODE => Tree::Inode(self.inode(nesting, Self::inode_tree_opt)?),
            tree_tag::EXTENDER => Tree::Extender(Box::new(self.extender(nesting)?)),
            _ => return self.r.malformed(at, "unknown tree tag"),
        })
    }

    fn extender(&mut self, nesting: usize) -> Res<Extender<InodeTree>> {
        let length = self.length()?;
        let segments = segments(&mut self.r, self.shape)?;
        let at = self.r.pos();
        match self.inode_tree_opt(nesting + 1)? {
            Some(proof) => Ok(Extender { length, segments, proof }),
            None => self.r.malformed(at, "extender without an inode"),
        }
    }

    /// An inode's count and slots, each read by `child` (`None` for an empty slot).
    fn inode<A>(&mut self, nesting: usize, child: fn(&mut Self, usize) -> Res<Option<A>>) -> Res<Inode<A>> {
        let length = self.length()?;
        let at = self.r.pos();
        let mut proofs = Vec::new();
        match self.shape {
            Shape::Binary => {
                for slot in 0..2u8 {
                    if let Some(c) = child(self, nesting + 1)? {
                        proofs.push((slot, c));
                    }
                }
            }
            Shape::Tezos32 => match self.r.byte()? {
                0 => {
                    let items = self.sized(|d| {
                        let s = d.r.byte()?;
                        let at = d.r.pos();
                        match child(d, nesting + 1)? {
                            Some(c) => Ok((s, c)),
                            None => d.r.malformed(at, "empty slot listed"),
                        }
                    })?;
                    if items.len() >= DENSE_FROM {
                        return self.r.malformed(at, "sparse slot list of 16 or more slots");
                    }
                    proofs = items;
                }
                1 => {
                    for slot in 0..32u8 {
                        if let Some(c) = child(self, nesting + 1)? {
                            proofs.push((slot, c));
                        }
                    }
                    if proofs.len() < DENSE_FROM {
                        return self.r.malformed(at, "dense slot array of fewer than 16 slots");
                    }
                }
                _ => return self.r.malformed(at, "unknown slot list tag"),
            },
        }
        if proofs.is_empty() {
            return self.r.malformed(at, "inode with no slot");
        }
        Ok(Inode { length, proofs })
    }

    fn inode_tree_opt(&mut self, nesting: usize) -> Res<Option<InodeTree>> {
        if nesting >= MAX_NESTING {
            return Err(ProofError::TooDeep);
        }
        let at = self.r.pos();
        Ok(Some(match self.r.byte()? {
            inode_tag::BLINDED => InodeTree::Blinded(self.r.hash()?),
            inode_tag::VALUES => InodeTree::Values(self.bindings(nesting)?),
            inode_tag::TREE => InodeTree::Tree(self.inode(nesting, Self::inode_tree_opt)?),
            inode_tag::EXTENDER => InodeTree::Extender(Box::new(self.extender(nesting)?)),
            inode_tag::NONE => return Ok(None),
            _ => return self.r.malformed(at, "unknown inode tag"),
        }))
    }

    fn hash_opt(&mut self, _nesting: usize) -> Res<Option<Hash>> {
        let at = self.r.pos();
        match self.r.byte()? {
            0 => Ok(None),
            1 => Ok(Some(self.r.hash()?)),
            _ => self.r.malformed(at, "unknown option tag"),
        }
    }

    pub fn elt(&mut self) -> Res<Elt> {
        let at = self.r.pos();
        Ok(match self.r.byte()? {
            elt_tag::VALUE => Elt::Value(self.bytes()?),
            elt_tag::NODE => Elt::Node(self.sized(|d| {
                let s = step(&mut d.r)?;
                Ok((s, kinded(&mut d.r)?))
            })?),
            elt_tag::INODE => Elt::Inode(self.inode(0, Self::hash_opt)?),
            elt_tag::EXTENDER => {
                let length = self.length()?;
                let segments = segments(&mut self.r, self.shape)?;
                Elt::Extender(Extender { length, segments, proof: self.r.hash()? })
            }
            _ => return self.r.malformed(at, "unknown element tag"),
        })
    }
}
