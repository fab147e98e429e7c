//! Helpers for the Octez proof tests: a plain builder of binary-shape proofs (the whole Octez
//! tree of a `RefTree`, then everything off the read paths blinded) and an independent hash
//! and lookup for that shape.
#![allow(dead_code)]

use arbor_core::blake2b_256;
use arbor_core::proof::octez::{Extender, Inode, InodeTree, KindedHash, OctezProof, Tree, TreeProof, BINARY_BIT};
use arbor_core::proof::{Path, Proved};
use arbor_core::reference::RefTree;
use arbor_core::{contents_hash, flat_node_hash, inode_tree_hash, inode_values_hash, ChildKind, Hash};

/// Slot of `step` at `depth` in the binary shape: bit `depth` of the step's hash, high bit
/// first (written here from the rule, not with the library's `Shape::slot`).
pub fn bit(depth: u32, step: &[u8]) -> u8 {
    let h = blake2b_256(&[step]);
    (h.as_bytes()[(depth / 8) as usize] >> (7 - depth % 8)) & 1
}

fn kind(t: &RefTree) -> ChildKind {
    match t {
        RefTree::Contents(_) => ChildKind::Contents,
        RefTree::Node(_) => ChildKind::Node,
    }
}

/// The binary-shape hash of a tree.
pub fn bin_hash(t: &RefTree) -> Hash {
    match t {
        RefTree::Contents(v) => contents_hash(v),
        RefTree::Node(m) => {
            let b: Vec<(&[u8], &RefTree)> = m.iter().map(|(s, c)| (&s[..], c)).collect();
            if b.len() <= 2 {
                let hs: Vec<Hash> = b.iter().map(|(_, c)| bin_hash(c)).collect();
                flat_node_hash(b.iter().zip(&hs).map(|((s, c), h)| (*s, kind(c), h)))
            } else {
                inode_hash(&b, 0)
            }
        }
    }
}

fn inode_hash(b: &[(&[u8], &RefTree)], depth: u32) -> Hash {
    if b.len() <= 2 {
        let hs: Vec<Hash> = b.iter().map(|(_, c)| bin_hash(c)).collect();
        return inode_values_hash(b.iter().zip(&hs).map(|((s, c), h)| (*s, kind(c), h)));
    }
    let mut slots = Vec::new();
    for slot in 0..2u8 {
        let part: Vec<_> = b.iter().filter(|(s, _)| bit(depth, s) == slot).cloned().collect();
        if !part.is_empty() {
            slots.push((u32::from(slot), inode_hash(&part, depth + 1)));
        }
    }
    inode_tree_hash(depth, b.len() as u64, slots.iter().map(|(s, h)| (*s, h)))
}

/// What is at `path`, with directory hashes of the binary shape.
pub fn bin_lookup(t: &RefTree, path: &[Vec<u8>]) -> Proved {
    let mut cur = t;
    for s in path {
        match cur {
            RefTree::Node(m) => match m.get(s) {
                Some(c) => cur = c,
                None => return Proved::Absent,
            },
            RefTree::Contents(_) => return Proved::Absent,
        }
    }
    match cur {
        RefTree::Contents(v) => Proved::Value(v.clone()),
        RefTree::Node(_) => Proved::Dir(bin_hash(cur)),
    }
}

/// The binary-shape tree proof of `reads` on `t`.
pub fn bin_prove(t: &RefTree, reads: &[Path]) -> TreeProof {
    let walks: Vec<&[Vec<u8>]> = reads.iter().map(|p| &p[..]).collect();
    let state = node(t, &walks);
    let h = KindedHash::Node(bin_hash(t));
    OctezProof { version: BINARY_BIT, before: h, after: h, state }
}

/// `t` as a proof node for the walks `walks` (the steps left of each read through it).
fn node(t: &RefTree, walks: &[&[Vec<u8>]]) -> Tree {
    let ends = walks.iter().any(|w| w.is_empty());
    let on = walks.iter().any(|w| !w.is_empty());
    match t {
        RefTree::Contents(v) if ends => Tree::Value(v.clone()),
        RefTree::Contents(v) => Tree::BlindedValue(contents_hash(v)),
        RefTree::Node(_) if !on => Tree::BlindedNode(bin_hash(t)),
        RefTree::Node(m) => {
            let b: Vec<(&[u8], &RefTree)> = m.iter().map(|(s, c)| (&s[..], c)).collect();
            if b.len() <= 2 {
                Tree::Node(bindings(&b, walks))
            } else {
                match inode(&b, 0, walks) {
                    InodeTree::Tree(i) => Tree::Inode(i),
                    InodeTree::Extender(x) => Tree::Extender(x),
                    _ => unreachable!("a large directory's root inode has slots"),
                }
            }
        }
    }
}

fn bindings(b: &[(&[u8], &RefTree)], walks: &[&[Vec<u8>]]) -> Vec<(Vec<u8>, Tree)> {
    b.iter()
        .map(|(s, c)| {
            let below: Vec<&[Vec<u8>]> =
                walks.iter().filter(|w| w.first().is_some_and(|f| &f[..] == *s)).map(|w| &w[1..]).collect();
            (s.to_vec(), node(c, &below))
        })
        .collect()
}

/// The inode at `depth` holding `b`, shown for the walks that reach it.
fn inode(b: &[(&[u8], &RefTree)], depth: u32, walks: &[&[Vec<u8>]]) -> InodeTree {
    if b.len() <= 2 {
        return InodeTree::Values(bindings(b, walks));
    }
    let mut proofs = Vec::new();
    for slot in 0..2u8 {
        let part: Vec<_> = b.iter().filter(|(s, _)| bit(depth, s) == slot).cloned().collect();
        if part.is_empty() {
            continue;
        }
        let here: Vec<&[Vec<u8>]> =
            walks.iter().filter(|w| w.first().is_some_and(|f| bit(depth, f) == slot)).copied().collect();
        let child = if here.is_empty() {
            InodeTree::Blinded(inode_hash(&part, depth + 1))
        } else {
            inode(&part, depth + 1, &here)
        };
        proofs.push((slot, child));
    }
    let length = b.len() as u64;
    if proofs.len() == 1 {
        let (slot, child) = proofs.pop().unwrap();
        return match child {
            InodeTree::Extender(x) => {
                let mut segments = vec![slot];
                segments.extend(x.segments);
                InodeTree::Extender(Box::new(Extender { length, segments, proof: x.proof }))
            }
            InodeTree::Tree(mut i) if i.proofs.len() == 1 => {
                let (next, proof) = i.proofs.remove(0);
                InodeTree::Extender(Box::new(Extender { length, segments: vec![slot, next], proof }))
            }
            other => InodeTree::Tree(Inode { length, proofs: vec![(slot, other)] }),
        };
    }
    InodeTree::Tree(Inode { length, proofs })
}
