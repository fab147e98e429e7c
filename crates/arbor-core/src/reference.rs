//! A deliberately plain implementation of the context hashing rules, used as
//! a test oracle for the incremental functions of [`crate::tezos`].
//!
//! It shares nothing with them beyond Blake2b and `caml_hash`: every object's
//! encoding is built in full in a `Vec` and hashed once, and the inode tree
//! is built by recursively partitioning the bindings by slot. It is slow and
//! allocates freely; do not use it on a hot path.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::caml::caml_hash;
use crate::hash::Hash;
use crate::tezos::InodeConfig;

/// An in-memory context tree: a value or a directory of named children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefTree {
    /// A value.
    Contents(Vec<u8>),
    /// A directory; the map keeps the steps sorted by their bytes.
    Node(BTreeMap<Vec<u8>, RefTree>),
}

/// A directory entry once its child has been hashed.
struct Binding<'a> {
    step: &'a [u8],
    is_contents: bool,
    hash: Hash,
}

impl RefTree {
    /// The context hash of this tree under the inode configuration `cfg`.
    pub fn hash(&self, cfg: InodeConfig) -> Hash {
        match self {
            RefTree::Contents(value) => {
                let mut buf = Vec::new();
                buf.extend_from_slice(&(value.len() as u64).to_be_bytes());
                buf.extend_from_slice(value);
                digest(&buf)
            }
            RefTree::Node(children) => {
                let bindings: Vec<Binding<'_>> = children
                    .iter()
                    .map(|(step, child)| Binding {
                        step,
                        is_contents: matches!(child, RefTree::Contents(_)),
                        hash: child.hash(cfg),
                    })
                    .collect();
                if bindings.len() <= cfg.stable_hash as usize {
                    flat(&bindings)
                } else {
                    let all: Vec<&Binding<'_>> = bindings.iter().collect();
                    inode(cfg, 0, &all)
                }
            }
        }
    }
}

/// Blake2b-256 of a fully built encoding.
fn digest(bytes: &[u8]) -> Hash {
    let d = blake2b_simd::Params::new().hash_length(32).hash(bytes);
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_bytes());
    Hash(out)
}

/// Unsigned LEB128, written out again here so the oracle stays independent.
fn push_leb(buf: &mut Vec<u8>, mut n: u64) {
    loop {
        let low = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            buf.push(low);
            return;
        }
        buf.push(low | 0x80);
    }
}

/// The flat directory encoding, for directories of at most `stable_hash` entries.
fn flat(bindings: &[Binding<'_>]) -> Hash {
    let mut buf = Vec::new();
    buf.extend_from_slice(&(bindings.len() as u64).to_be_bytes());
    for b in bindings {
        let kind: u64 = if b.is_contents { 0xff << 56 } else { 0 };
        buf.extend_from_slice(&kind.to_be_bytes());
        push_leb(&mut buf, b.step.len() as u64);
        buf.extend_from_slice(b.step);
        buf.extend_from_slice(&32u64.to_be_bytes());
        buf.extend_from_slice(&b.hash.0);
    }
    digest(&buf)
}

/// The inode at `depth` holding `bindings` (sorted by step).
fn inode(cfg: InodeConfig, depth: u32, bindings: &[&Binding<'_>]) -> Hash {
    let mut buf = Vec::new();
    if bindings.len() <= cfg.entries as usize {
        buf.push(0x00);
        push_leb(&mut buf, bindings.len() as u64);
        for b in bindings {
            push_leb(&mut buf, b.step.len() as u64);
            buf.extend_from_slice(b.step);
            buf.push(if b.is_contents { 0x01 } else { 0x00 });
            buf.extend_from_slice(&b.hash.0);
        }
        return digest(&buf);
    }
    // Partition by slot; filtering keeps each slot's bindings in step order.
    let mut slots: Vec<(u32, Hash)> = Vec::new();
    for slot in 0..cfg.entries {
        let part: Vec<&Binding<'_>> =
            bindings.iter().copied().filter(|b| caml_hash(depth, b.step) % cfg.entries == slot).collect();
        if !part.is_empty() {
            slots.push((slot, inode(cfg, depth + 1, &part)));
        }
    }
    buf.push(0x01);
    push_leb(&mut buf, u64::from(depth));
    push_leb(&mut buf, bindings.len() as u64);
    push_leb(&mut buf, slots.len() as u64);
    for (slot, hash) in &slots {
        push_leb(&mut buf, u64::from(*slot));
        buf.extend_from_slice(&hash.0);
    }
    digest(&buf)
}
