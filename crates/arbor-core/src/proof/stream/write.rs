//! Writing stream proofs: the header, then the elements of a proof's tree in the order the
//! verifier's traversal asks for them (the encoder runs that same traversal over the tree).

use alloc::vec::Vec;

use super::format::{kind, Header, STREAM_MAGIC, STREAM_VERSION};
use super::walk::{dir_at, inode_at, Elements};
use crate::hash::Hash;
use crate::leb128::write_u64;
use crate::proof::encoding::format::tag;
use crate::proof::types::{ProofError, ProofInode, ProofTree, Write};
use crate::tezos::{ChildKind, InodeConfig};

/// Writes the header of a stream proof.
pub(super) fn header(out: &mut Vec<u8>, h: &Header) {
    out.extend_from_slice(&STREAM_MAGIC);
    out.push(STREAM_VERSION);
    write_u64(out, u64::from(h.config.entries));
    write_u64(out, u64::from(h.config.stable_hash));
    out.push(kind_byte(h.root_kind));
    out.extend_from_slice(h.before.as_bytes());
    out.extend_from_slice(h.after.as_bytes());
    write_u64(out, h.reads.len() as u64);
    for p in &h.reads {
        path(out, p);
    }
    write_u64(out, h.writes.len() as u64);
    for w in &h.writes {
        match w {
            Write::Remove(p) => {
                out.push(tag::REMOVE);
                path(out, p);
            }
            Write::Add(p, v) => {
                out.push(tag::ADD);
                path(out, p);
                bytes(out, v);
            }
        }
    }
}

fn kind_byte(k: ChildKind) -> u8 {
    match k {
        ChildKind::Contents => kind::VALUE,
        ChildKind::Node => kind::DIR,
    }
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

/// The encoder's side of the traversal: finds each node asked for in the proof's full tree,
/// writes its element and hands back its shallow form.
pub(super) struct Emit {
    /// The inode configuration the tree is hashed with.
    pub cfg: InodeConfig,
    /// The proof's tree.
    pub full: ProofTree,
    /// The encoding so far.
    pub out: Vec<u8>,
}

/// The node a walk asked for is not shown in the proof: it does not cover its claims.
fn not_shown<T>(path: &[Vec<u8>]) -> Result<T, ProofError> {
    Err(ProofError::NotProvable { path: path.to_vec() })
}

/// Writes `entries` as bindings `step ‖ kind ‖ hash`; returns them blinded.
fn bindings(cfg: InodeConfig, out: &mut Vec<u8>, entries: &[(Vec<u8>, ProofTree)]) -> Vec<(Vec<u8>, ProofTree)> {
    write_u64(out, entries.len() as u64);
    let mut shallow = Vec::with_capacity(entries.len());
    for (s, c) in entries {
        let h = c.hash(cfg);
        bytes(out, s);
        out.push(kind_byte(c.kind()));
        out.extend_from_slice(h.as_bytes());
        let blinded = match c.kind() {
            ChildKind::Contents => ProofTree::BlindedValue(h),
            ChildKind::Node => ProofTree::BlindedNode(h),
        };
        shallow.push((s.clone(), blinded));
    }
    shallow
}

/// Writes the element of the shown inode `i` at `depth`; returns it with children blinded.
fn inode_element(
    cfg: InodeConfig,
    out: &mut Vec<u8>,
    i: &ProofInode,
    depth: u32,
    path: &[Vec<u8>],
) -> Result<ProofInode, ProofError> {
    match i {
        ProofInode::Blinded(_) => not_shown(path),
        ProofInode::Values(entries) => {
            out.push(tag::INODE_VALUES);
            Ok(ProofInode::Values(bindings(cfg, out, entries)))
        }
        ProofInode::Tree { count, slots } => {
            out.push(tag::INODE_TREE);
            write_u64(out, *count);
            write_u64(out, slots.len() as u64);
            let mut shallow = Vec::with_capacity(slots.len());
            for (s, c) in slots {
                let h = c.hash(cfg, depth + 1);
                write_u64(out, u64::from(*s));
                out.extend_from_slice(h.as_bytes());
                shallow.push((*s, ProofInode::Blinded(h)));
            }
            Ok(ProofInode::Tree { count: *count, slots: shallow })
        }
    }
}

impl Elements for Emit {
    fn value(&mut self, _hash: &Hash, path: &[Vec<u8>]) -> Result<Vec<u8>, ProofError> {
        let Some(ProofTree::Value(v)) = dir_at(self.cfg, &mut self.full, path) else { return not_shown(path) };
        self.out.push(tag::VALUE);
        bytes(&mut self.out, v);
        Ok(v.clone())
    }

    fn dir(&mut self, _hash: &Hash, path: &[Vec<u8>]) -> Result<ProofTree, ProofError> {
        let Emit { cfg, full, out } = self;
        match dir_at(*cfg, full, path) {
            Some(ProofTree::Node(entries)) => {
                out.push(tag::NODE);
                Ok(ProofTree::Node(bindings(*cfg, out, entries)))
            }
            Some(ProofTree::Inode(root)) => Ok(ProofTree::Inode(inode_element(*cfg, out, root, 0, path)?)),
            _ => not_shown(path),
        }
    }

    fn inode(&mut self, _hash: &Hash, path: &[Vec<u8>], slots: &[u32]) -> Result<ProofInode, ProofError> {
        let Emit { cfg, full, out } = self;
        let Some(ProofTree::Inode(root)) = dir_at(*cfg, full, path) else { return not_shown(path) };
        let Some(i) = inode_at(root, slots) else { return not_shown(path) };
        inode_element(*cfg, out, i, slots.len() as u32, path)
    }
}
