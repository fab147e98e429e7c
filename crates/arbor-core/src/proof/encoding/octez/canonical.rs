//! The shape rules every Octez proof value must follow, checked after decoding and before
//! encoding, so that one proof has one encoding and a value that breaks them is refused with a
//! typed error rather than written out.
//!
//! Bindings are sorted by step with no repeats and non-empty steps of at most 255 bytes; a flat
//! directory has at most `stable_hash` entries and a leaf inode between 1 and `entries`; an
//! inode with slots holds more than `entries` bindings in at least one slot, slots increasing
//! and below `entries`; a single-slot inode whose shown child is a single-slot inode is always
//! written as an extender, and an extender has at least two segments and never ends in another
//! chain. Recursion is bounded by [`MAX_NESTING`].

use super::shape::Shape;
use super::types::{Elt, Extender, Inode, InodeTree, Tree};
use crate::proof::types::{ProofError, MAX_NESTING};

type R = Result<(), ProofError>;

fn bad(what: &'static str) -> R {
    Err(ProofError::BadShape(what))
}

/// Checks a step list: non-empty steps of at most 255 bytes, strictly increasing.
pub(super) fn steps<'a>(steps: impl Iterator<Item = &'a [u8]>) -> R {
    let mut prev: Option<&[u8]> = None;
    for s in steps {
        if s.is_empty() || s.len() > 255 {
            return bad("step empty or longer than 255 bytes");
        }
        if prev.is_some_and(|p| p >= s) {
            return bad("bindings not sorted or repeated");
        }
        prev = Some(s);
    }
    Ok(())
}

/// Checks slots: strictly increasing, below `entries`, at least one.
fn slots(shape: Shape, slots: impl Iterator<Item = u8>) -> R {
    let mut prev: Option<u8> = None;
    let mut any = false;
    for s in slots {
        any = true;
        if u32::from(s) >= shape.entries() || prev.is_some_and(|p| p >= s) {
            return bad("inode slots not increasing or out of range");
        }
        prev = Some(s);
    }
    if any {
        Ok(())
    } else {
        bad("inode with no slot")
    }
}

/// True for the inodes a chain continues through: one slot, shown.
fn is_chain(t: &InodeTree) -> bool {
    matches!(t, InodeTree::Extender(_)) || matches!(t, InodeTree::Tree(i) if i.proofs.len() == 1)
}

/// Checks a tree proof's tree.
pub fn tree(shape: Shape, t: &Tree) -> R {
    tree_at(shape, t, 0)
}

fn tree_at(shape: Shape, t: &Tree, nesting: usize) -> R {
    if nesting >= MAX_NESTING {
        return Err(ProofError::TooDeep);
    }
    match t {
        Tree::Value(_) | Tree::BlindedValue(_) | Tree::BlindedNode(_) => Ok(()),
        Tree::Node(b) => {
            if b.len() > shape.stable_hash() as usize {
                return bad("flat directory larger than stable_hash");
            }
            steps(b.iter().map(|(s, _)| &s[..]))?;
            b.iter().try_for_each(|(_, c)| tree_at(shape, c, nesting + 1))
        }
        Tree::Inode(i) => inode(shape, i, 0, nesting + 1),
        Tree::Extender(e) => extender(shape, e, 0, nesting + 1),
    }
}

fn inode(shape: Shape, i: &Inode<InodeTree>, depth: u32, nesting: usize) -> R {
    if nesting >= MAX_NESTING || depth > shape.max_depth() {
        return Err(ProofError::TooDeep);
    }
    if i.length <= u64::from(shape.entries()) {
        return bad("inode with slots holding at most `entries` bindings");
    }
    slots(shape, i.proofs.iter().map(|(s, _)| *s))?;
    if let [(_, only)] = &i.proofs[..] {
        if is_chain(only) {
            return bad("chain of single-slot inodes not written as an extender");
        }
    }
    i.proofs.iter().try_for_each(|(_, c)| inode_tree(shape, c, depth + 1, nesting + 1))
}

fn extender(shape: Shape, e: &Extender<InodeTree>, depth: u32, nesting: usize) -> R {
    if e.segments.len() < 2 {
        return bad("extender with fewer than two segments");
    }
    if e.length <= u64::from(shape.entries()) {
        return bad("extender holding at most `entries` bindings");
    }
    if e.segments.iter().any(|&s| u32::from(s) >= shape.entries()) {
        return bad("extender segment out of range");
    }
    if is_chain(&e.proof) {
        return bad("extender ending in another chain");
    }
    let below = depth.saturating_add(e.segments.len() as u32);
    if below > shape.max_depth() {
        return Err(ProofError::TooDeep);
    }
    inode_tree(shape, &e.proof, below, nesting + 1)
}

fn inode_tree(shape: Shape, t: &InodeTree, depth: u32, nesting: usize) -> R {
    if nesting >= MAX_NESTING || depth > shape.max_depth() {
        return Err(ProofError::TooDeep);
    }
    match t {
        InodeTree::Blinded(_) => Ok(()),
        InodeTree::Values(b) => {
            if b.is_empty() || b.len() > shape.entries() as usize {
                return bad("leaf inode with no binding or more than `entries`");
            }
            steps(b.iter().map(|(s, _)| &s[..]))?;
            b.iter().try_for_each(|(_, c)| tree_at(shape, c, nesting + 1))
        }
        InodeTree::Tree(i) => inode(shape, i, depth, nesting),
        InodeTree::Extender(e) => extender(shape, e, depth, nesting),
    }
}

/// Checks one stream element.
pub fn elt(shape: Shape, e: &Elt) -> R {
    match e {
        Elt::Value(_) => Ok(()),
        Elt::Node(b) => {
            if b.len() > shape.stable_hash().max(shape.entries()) as usize {
                return bad("node element larger than stable_hash");
            }
            steps(b.iter().map(|(s, _)| &s[..]))
        }
        Elt::Inode(i) => {
            if i.length <= u64::from(shape.entries()) {
                return bad("inode with slots holding at most `entries` bindings");
            }
            slots(shape, i.proofs.iter().map(|(s, _)| *s))
        }
        Elt::Extender(x) => {
            if x.segments.len() < 2 || x.length <= u64::from(shape.entries()) {
                return bad("extender with fewer than two segments or too few bindings");
            }
            if x.segments.iter().any(|&s| u32::from(s) >= shape.entries()) {
                return bad("extender segment out of range");
            }
            if x.segments.len() as u32 > shape.max_depth() {
                return Err(ProofError::TooDeep);
            }
            Ok(())
        }
    }
}
