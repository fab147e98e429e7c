//! Decoding proofs: strict, so that every proof has exactly one encoding, and bounded, so that
//! hostile input costs time and memory in proportion to its length only.
//!
//! Besides the syntax, the decoder checks every shape rule that can be checked locally: flat
//! nodes have at most `stable_hash` entries, large directories more; Values inodes at most
//! `entries` bindings, each in the slot its place implies; Tree inodes more than `entries`
//! bindings in increasing, in-range slots, with counts that add up.

use alloc::vec::Vec;

use super::format::{tag, MAGIC, VERSION};
use super::input::Input;
use crate::proof::types::{Proof, ProofError, ProofInode, ProofTree, MAX_INODE_DEPTH, MAX_INODE_ENTRIES, MAX_NESTING};
use crate::tezos::InodeConfig;

/// Decodes a whole proof; trailing bytes are an error.
pub(super) fn decode(bytes: &[u8]) -> Result<Proof, ProofError> {
    let mut r = Reader { input: Input::new(bytes), cfg: InodeConfig::TEZOS };
    if r.take(MAGIC.len())? != MAGIC {
        return Err(ProofError::BadMagic);
    }
    let version = r.byte()?;
    if version != VERSION {
        return Err(ProofError::UnsupportedVersion(version));
    }
    let entries = r.u32()?;
    let stable_hash = r.u32()?;
    let config = InodeConfig { entries, stable_hash };
    if !(2..=MAX_INODE_ENTRIES).contains(&entries) {
        return Err(ProofError::BadConfig(config));
    }
    r.cfg = config;
    let before = r.hash()?;
    let after = r.hash()?;
    let tree = r.tree(0)?;
    let reads = r.reads()?;
    let writes = r.writes()?;
    if r.pos() != bytes.len() {
        return Err(ProofError::TrailingBytes { at: r.pos() });
    }
    Ok(Proof { config, before, after, tree, reads, writes })
}

/// A cursor over the input.
struct Reader<'a> {
    input: Input<'a>,
    cfg: InodeConfig,
}

impl<'a> core::ops::Deref for Reader<'a> {
    type Target = Input<'a>;
    fn deref(&self) -> &Input<'a> {
        &self.input
    }
}

impl core::ops::DerefMut for Reader<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.input
    }
}

impl<'a> Reader<'a> {
    /// A sorted binding list of `n` entries; `slot_path` (with `depth`) constrains the steps
    /// of a Values inode to the slots leading to it.
    fn bindings(
        &mut self,
        n: usize,
        nesting: usize,
        inode_place: Option<&[u32]>,
    ) -> Result<Vec<(Vec<u8>, ProofTree)>, ProofError> {
        let mut out: Vec<(Vec<u8>, ProofTree)> = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.pos();
            let step = self.step()?;
            if out.last().is_some_and(|(last, _)| *last >= step) {
                return self.malformed(at, "entries not sorted or repeated");
            }
            if let Some(slots) = inode_place {
                let misplaced = slots.iter().enumerate().any(|(d, &s)| self.cfg.slot(d as u32, &step) != s);
                if misplaced {
                    return self.malformed(at, "binding in the wrong inode slot");
                }
            }
            let child = self.tree(nesting + 1)?;
            out.push((step, child));
        }
        Ok(out)
    }

    fn tree(&mut self, nesting: usize) -> Result<ProofTree, ProofError> {
        if nesting >= MAX_NESTING {
            return Err(ProofError::TooDeep);
        }
        let at = self.pos();
        Ok(match self.byte()? {
            tag::VALUE => ProofTree::Value(self.bytes()?),
            tag::BLINDED_VALUE => ProofTree::BlindedValue(self.hash()?),
            tag::BLINDED_NODE => ProofTree::BlindedNode(self.hash()?),
            tag::NODE => {
                let n_at = self.pos();
                let n = self.count()?;
                if n as u64 > u64::from(self.cfg.stable_hash) {
                    return self.malformed(n_at, "flat directory larger than stable_hash");
                }
                ProofTree::Node(self.bindings(n, nesting, None)?)
            }
            tag::INODE => {
                let root_at = self.pos();
                let root = self.inode(0, &mut Vec::new(), nesting + 1)?;
                match root.count() {
                    None => return self.malformed(root_at, "blinded root inode"),
                    Some(c) if c <= u64::from(self.cfg.stable_hash) => {
                        return self.malformed(root_at, "inode directory small enough to be flat")
                    }
                    Some(_) => ProofTree::Inode(root),
                }
            }
            _ => return self.malformed(at, "unknown node tag"),
        })
    }

    /// The inode at `depth` reached through the slots `place` (one per depth above it).
    fn inode(&mut self, depth: u32, place: &mut Vec<u32>, nesting: usize) -> Result<ProofInode, ProofError> {
        if nesting >= MAX_NESTING || depth > MAX_INODE_DEPTH {
            return Err(ProofError::TooDeep);
        }
        let at = self.pos();
        Ok(match self.byte()? {
            tag::INODE_BLINDED => ProofInode::Blinded(self.hash()?),
            tag::INODE_VALUES => {
                let n_at = self.pos();
                let n = self.count()?;
                if n as u64 > u64::from(self.cfg.entries) {
                    return self.malformed(n_at, "Values inode with more than `entries` bindings");
                }
                if n == 0 && depth > 0 {
                    return self.malformed(n_at, "empty inode");
                }
                ProofInode::Values(self.bindings(n, nesting, Some(place))?)
            }
            tag::INODE_TREE => {
                let count_at = self.pos();
                let count = self.leb()?;
                if count <= u64::from(self.cfg.entries) {
                    return self.malformed(count_at, "Tree inode with at most `entries` bindings");
                }
                let k_at = self.pos();
                let k = self.count()?;
                if k == 0 || k as u64 > u64::from(self.cfg.entries) {
                    return self.malformed(k_at, "Tree inode slot count out of range");
                }
                let mut slots: Vec<(u32, ProofInode)> = Vec::with_capacity(k);
                let (mut known, mut blinded) = (0u64, 0u64);
                for _ in 0..k {
                    let s_at = self.pos();
                    let s = self.u32()?;
                    if s >= self.cfg.entries || slots.last().is_some_and(|(last, _)| *last >= s) {
                        return self.malformed(s_at, "slots not increasing or out of range");
                    }
                    place.push(s);
                    let child = self.inode(depth + 1, place, nesting + 1);
                    place.pop();
                    let child = child?;
                    match child.count() {
                        Some(c) => known = known.saturating_add(c),
                        None => blinded += 1,
                    }
                    slots.push((s, child));
                }
                let fits = if blinded == 0 { known == count } else { known.saturating_add(blinded) <= count };
                if !fits {
                    return self.malformed(count_at, "Tree inode count does not match its slots");
                }
                ProofInode::Tree { count, slots }
            }
            _ => return self.malformed(at, "unknown inode tag"),
        })
    }
}
