//! Building Octez proofs: an arbor tree proof rewritten in Octez's terms (tree proof), and a
//! tree proof streamed in the order a verifier replaying its paths takes the elements.
//!
//! The rewrite is node for node: a flat directory stays a list of all its entries, a large
//! directory's inode tree keeps its inodes, and a chain of single-slot inodes whose shown
//! child is again a single-slot inode becomes one extender, as Octez writes it.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::prove::prove;
use super::source::{ProofSource, ProveError};
use crate::hash::Hash;
use crate::proof::encoding::octez::{
    Elt, Extender, Inode, InodeTree, KindedHash, OctezProof, Shape, StreamProof, Tree, TreeProof, STREAM_BIT,
};
use crate::proof::types::{Path, Proof, ProofError, ProofInode, ProofTree};
use crate::proof::verify::octez::hash::{kind, Hasher};
use crate::proof::verify::octez::replay::{replay_all, Ctx, Elements, Replay};
use crate::tezos::{ChildKind, InodeConfig};

fn tree(t: &ProofTree) -> Tree {
    match t {
        ProofTree::Value(v) => Tree::Value(v.clone()),
        ProofTree::BlindedValue(h) => Tree::BlindedValue(*h),
        ProofTree::BlindedNode(h) => Tree::BlindedNode(*h),
        ProofTree::Node(b) => Tree::Node(b.iter().map(|(s, c)| (s.clone(), tree(c))).collect()),
        ProofTree::Inode(root) => match inode(root) {
            InodeTree::Tree(i) => Tree::Inode(i),
            InodeTree::Extender(x) => Tree::Extender(x),
            // A large directory's root inode has slots; the decoder and prover ensure it.
            InodeTree::Values(b) => Tree::Node(b),
            InodeTree::Blinded(h) => Tree::BlindedNode(h),
        },
    }
}

fn inode(i: &ProofInode) -> InodeTree {
    match i {
        ProofInode::Blinded(h) => InodeTree::Blinded(*h),
        ProofInode::Values(b) => InodeTree::Values(b.iter().map(|(s, c)| (s.clone(), tree(c))).collect()),
        ProofInode::Tree { count, slots } => {
            let mut proofs: Vec<(u8, InodeTree)> = slots.iter().map(|(s, c)| (*s as u8, inode(c))).collect();
            match (proofs.len(), proofs.pop()) {
                (1, Some((slot, child))) => single(*count, slot, child),
                (_, last) => {
                    proofs.extend(last);
                    InodeTree::Tree(Inode { length: *count, proofs })
                }
            }
        }
    }
}

/// An inode of `length` bindings whose only slot `slot` holds `child`: the start of a chain
/// (written as an extender) when the child is itself a single-slot inode.
fn single(length: u64, slot: u8, child: InodeTree) -> InodeTree {
    match child {
        InodeTree::Extender(x) => {
            let mut segments = alloc::vec![slot];
            segments.extend_from_slice(&x.segments);
            InodeTree::Extender(Box::new(Extender { length, segments, proof: x.proof }))
        }
        InodeTree::Tree(mut i) if i.proofs.len() == 1 => {
            let (next, proof) = i.proofs.remove(0);
            InodeTree::Extender(Box::new(Extender { length, segments: alloc::vec![slot, next], proof }))
        }
        other => InodeTree::Tree(Inode { length, proofs: alloc::vec![(slot, other)] }),
    }
}

fn kinded(k: ChildKind, h: Hash) -> KindedHash {
    match k {
        ChildKind::Contents => KindedHash::Value(h),
        ChildKind::Node => KindedHash::Node(h),
    }
}

/// Rewrites an arbor proof made for the Tezos shape ([`InodeConfig::TEZOS`]) as an Octez tree
/// proof. The proof's claims are not carried: an Octez proof is checked against the reads the
/// verifier replays.
pub fn to_octez(proof: &Proof) -> Result<TreeProof, ProofError> {
    if proof.config != InodeConfig::TEZOS {
        return Err(ProofError::ConfigMismatch { expected: InodeConfig::TEZOS, found: proof.config });
    }
    let state = tree(&proof.tree);
    let k = kind(&state);
    Ok(OctezProof { version: 0, before: kinded(k, proof.before), after: kinded(k, proof.after), state })
}

/// Builds the Octez tree proof of `reads` (and `writes`, as [`prove`] does) on the tree `root`
/// of `src`, for the Tezos shape.
pub fn prove_octez<S: ProofSource>(
    src: &S,
    root: &S::Node,
    reads: &[Path],
    writes: &[crate::proof::types::Write],
) -> Result<TreeProof, ProveError<S::Error>> {
    let proof = prove(src, root, InodeConfig::TEZOS, reads, writes)?;
    Ok(to_octez(&proof)?)
}

/// The elements of a tree proof by node hash and place.
struct Shown {
    map: BTreeMap<(Hash, Ctx), Elt>,
    out: Vec<Elt>,
}

impl Elements for Shown {
    fn fetch(&mut self, hash: &Hash, ctx: Ctx, _index: usize) -> Result<Elt, ProofError> {
        let e = self.map.get(&(*hash, ctx)).cloned().ok_or(ProofError::NotProvable { path: Path::new() })?;
        self.out.push(e.clone());
        Ok(e)
    }
}

/// Collects the element of every shown node of a tree proof.
struct Collect<'a> {
    h: Hasher,
    map: &'a mut BTreeMap<(Hash, Ctx), Elt>,
}

impl Collect<'_> {
    fn tree(&mut self, t: &Tree) -> Result<Hash, ProofError> {
        let hash = self.h.tree(t)?;
        let e = match t {
            Tree::Value(v) => {
                self.map.insert((hash, Ctx::Value), Elt::Value(v.clone()));
                return Ok(hash);
            }
            Tree::BlindedValue(_) | Tree::BlindedNode(_) => return Ok(hash),
            Tree::Node(b) => Elt::Node(self.bindings(b)?),
            Tree::Inode(i) => Elt::Inode(self.slots(i, 0)?),
            Tree::Extender(x) => Elt::Extender(self.extender(x, 0)?),
        };
        self.map.insert((hash, Ctx::Dir), e);
        Ok(hash)
    }

    fn bindings(&mut self, b: &[(Vec<u8>, Tree)]) -> Result<Vec<(Vec<u8>, KindedHash)>, ProofError> {
        b.iter().map(|(s, c)| Ok((s.clone(), kinded(kind(c), self.tree(c)?)))).collect()
    }

    fn slots(&mut self, i: &Inode<InodeTree>, depth: u32) -> Result<Inode<Hash>, ProofError> {
        let proofs =
            i.proofs.iter().map(|(s, c)| Ok((*s, self.inode(c, depth + 1)?))).collect::<Result<_, ProofError>>()?;
        Ok(Inode { length: i.length, proofs })
    }

    fn extender(&mut self, x: &Extender<InodeTree>, depth: u32) -> Result<Extender<Hash>, ProofError> {
        let below = self.inode(&x.proof, depth + x.segments.len() as u32)?;
        Ok(Extender { length: x.length, segments: x.segments.clone(), proof: below })
    }

    fn inode(&mut self, t: &InodeTree, depth: u32) -> Result<Hash, ProofError> {
        let hash = self.h.inode(t, depth)?;
        let e = match t {
            InodeTree::Blinded(_) => return Ok(hash),
            InodeTree::Values(b) => Elt::Node(self.bindings(b)?),
            InodeTree::Tree(i) => Elt::Inode(self.slots(i, depth)?),
            InodeTree::Extender(x) => Elt::Extender(self.extender(x, depth)?),
        };
        self.map.insert((hash, Ctx::Inode(depth)), e);
        Ok(hash)
    }
}

/// Streams the tree proof `p`: the elements a verifier replaying `paths` in this order takes,
/// in that order. Fails with [`ProofError::NotProvable`] if a replay needs a node the tree
/// proof does not show.
pub fn octez_stream(p: &TreeProof, paths: &[Path]) -> Result<StreamProof, ProofError> {
    let shape: Shape = p.shape();
    let mut map = BTreeMap::new();
    Collect { h: Hasher { shape }, map: &mut map }.tree(&p.state)?;
    let mut r = Replay::new(shape, Shown { map, out: Vec::new() });
    replay_all(&mut r, &p.before, paths)?;
    Ok(OctezProof { version: p.version | STREAM_BIT, before: p.before, after: p.after, state: r.source.out })
}
