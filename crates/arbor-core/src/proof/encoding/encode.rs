//! The binary encoding of proofs (the layout is described in docs/PROOFS.md).

use alloc::vec::Vec;

use super::format::{tag, MAGIC, VERSION};
use crate::leb128::write_u64;
use crate::proof::types::{Proof, ProofInode, ProofTree, Write};

/// Encodes a proof; the result decodes back to the same proof when the proof is well formed.
pub(super) fn encode(proof: &Proof) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.push(VERSION);
    write_u64(&mut out, u64::from(proof.config.entries));
    write_u64(&mut out, u64::from(proof.config.stable_hash));
    out.extend_from_slice(proof.before.as_bytes());
    out.extend_from_slice(proof.after.as_bytes());
    tree(&mut out, &proof.tree);
    write_u64(&mut out, proof.reads.len() as u64);
    for p in &proof.reads {
        path(&mut out, p);
    }
    write_u64(&mut out, proof.writes.len() as u64);
    for w in &proof.writes {
        match w {
            Write::Remove(p) => {
                out.push(tag::REMOVE);
                path(&mut out, p);
            }
            Write::Add(p, v) => {
                out.push(tag::ADD);
                path(&mut out, p);
                bytes(&mut out, v);
            }
        }
    }
    out
}

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    write_u64(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn path(out: &mut Vec<u8>, p: &[Vec<u8>]) {
    write_u64(out, p.len() as u64);
    for s in p {
        bytes(out, s);
    }
}

fn bindings(out: &mut Vec<u8>, entries: &[(Vec<u8>, ProofTree)]) {
    write_u64(out, entries.len() as u64);
    for (s, c) in entries {
        bytes(out, s);
        tree(out, c);
    }
}

fn tree(out: &mut Vec<u8>, t: &ProofTree) {
    match t {
        ProofTree::Value(v) => {
            out.push(tag::VALUE);
            bytes(out, v);
        }
        ProofTree::BlindedValue(h) => {
            out.push(tag::BLINDED_VALUE);
            out.extend_from_slice(h.as_bytes());
        }
        ProofTree::Node(entries) => {
            out.push(tag::NODE);
            bindings(out, entries);
        }
        ProofTree::BlindedNode(h) => {
            out.push(tag::BLINDED_NODE);
            out.extend_from_slice(h.as_bytes());
        }
        ProofTree::Inode(root) => {
            out.push(tag::INODE);
            inode(out, root);
        }
    }
}

fn inode(out: &mut Vec<u8>, i: &ProofInode) {
    match i {
        ProofInode::Blinded(h) => {
            out.push(tag::INODE_BLINDED);
            out.extend_from_slice(h.as_bytes());
        }
        ProofInode::Values(entries) => {
            out.push(tag::INODE_VALUES);
            bindings(out, entries);
        }
        ProofInode::Tree { count, slots } => {
            out.push(tag::INODE_TREE);
            write_u64(out, *count);
            write_u64(out, slots.len() as u64);
            for (s, c) in slots {
                write_u64(out, u64::from(*s));
                inode(out, c);
            }
        }
    }
}
