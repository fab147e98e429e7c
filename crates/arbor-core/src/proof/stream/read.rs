//! Reading stream proofs: the header, then one element at a time as the traversal asks for
//! it, each hashed and checked against the hash its parent announced before anything below it
//! is read. Strict as the tree decoder: shortest integers, sorted bindings, shapes that fit
//! the inode configuration, nothing after the last element.

use alloc::vec::Vec;

use super::format::{kind, Header, STREAM_MAGIC, STREAM_VERSION};
use super::walk::Elements;
use crate::hash::Hash;
use crate::proof::encoding::format::tag;
use crate::proof::encoding::input::Input;
use crate::proof::types::{Entries, ProofError, ProofInode, ProofTree, MAX_INODE_ENTRIES};
use crate::tezos::{contents_hash, flat_node_hash, inode_tree_hash, inode_values_hash, ChildKind, InodeConfig};

/// A cursor over a stream proof.
pub(super) struct Cursor<'a> {
    input: Input<'a>,
    cfg: InodeConfig,
    /// Whether the next element checked is the root's (its mismatch is a wrong root).
    first: bool,
}

impl<'a> core::ops::Deref for Cursor<'a> {
    type Target = Input<'a>;
    fn deref(&self) -> &Input<'a> {
        &self.input
    }
}

impl core::ops::DerefMut for Cursor<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.input
    }
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { input: Input::new(buf), cfg: InodeConfig::TEZOS, first: true }
    }

    /// True once every byte was read.
    pub fn at_end(&self) -> bool {
        self.pos() == self.end()
    }

    fn kind(&mut self) -> Result<ChildKind, ProofError> {
        let at = self.pos();
        match self.byte()? {
            kind::VALUE => Ok(ChildKind::Contents),
            kind::DIR => Ok(ChildKind::Node),
            _ => self.malformed(at, "unknown kind"),
        }
    }

    /// The header: everything before the first element.
    pub fn header(&mut self) -> Result<Header, ProofError> {
        if self.take(STREAM_MAGIC.len())? != STREAM_MAGIC {
            return Err(ProofError::BadMagic);
        }
        let version = self.byte()?;
        if version != STREAM_VERSION {
            return Err(ProofError::UnsupportedVersion(version));
        }
        let entries = self.u32()?;
        let stable_hash = self.u32()?;
        let config = InodeConfig { entries, stable_hash };
        if !(2..=MAX_INODE_ENTRIES).contains(&entries) {
            return Err(ProofError::BadConfig(config));
        }
        self.cfg = config;
        let root_kind = self.kind()?;
        let before = self.hash()?;
        let after = self.hash()?;
        let reads = self.reads()?;
        let writes = self.writes()?;
        Ok(Header { config, root_kind, before, after, reads, writes })
    }

    /// Checks the element read from `at` hashes to what its parent announced.
    fn check(&mut self, at: usize, expected: &Hash, computed: Hash) -> Result<(), ProofError> {
        let first = core::mem::replace(&mut self.first, false);
        if computed == *expected {
            Ok(())
        } else if first {
            Err(ProofError::RootMismatch { expected: *expected, computed })
        } else {
            Err(ProofError::HashMismatch { at, expected: *expected, computed })
        }
    }

    /// `n` sorted bindings `step ‖ kind ‖ hash`; in an inode reached through `place`, each in
    /// the slots leading there.
    fn bindings(&mut self, n: usize, place: Option<&[u32]>) -> Result<Entries, ProofError> {
        let mut out: Entries = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.pos();
            let step = self.step()?;
            if out.last().is_some_and(|(last, _)| *last >= step) {
                return self.malformed(at, "entries not sorted or repeated");
            }
            if let Some(slots) = place {
                if slots.iter().enumerate().any(|(d, &s)| self.cfg.slot(d as u32, &step) != s) {
                    return self.malformed(at, "binding in the wrong inode slot");
                }
            }
            let child = match self.kind()? {
                ChildKind::Contents => ProofTree::BlindedValue(self.hash()?),
                ChildKind::Node => ProofTree::BlindedNode(self.hash()?),
            };
            out.push((step, child));
        }
        Ok(out)
    }

    /// An inode element's body (after its tag) for the inode reached through `place`; returns
    /// it (children blinded) and its hash.
    fn inode_body(&mut self, tag_byte: u8, at: usize, place: &[u32]) -> Result<(ProofInode, Hash), ProofError> {
        let depth = place.len() as u32;
        match tag_byte {
            tag::INODE_VALUES => {
                let n_at = self.pos();
                let n = self.count()?;
                if n as u64 > u64::from(self.cfg.entries) {
                    return self.malformed(n_at, "Values inode with more than `entries` bindings");
                }
                if n == 0 {
                    return self.malformed(n_at, "empty inode");
                }
                let entries = self.bindings(n, Some(place))?;
                let h = inode_values_hash(entries.iter().map(|(s, c)| (&s[..], c.kind(), blinded_hash(c))));
                Ok((ProofInode::Values(entries), h))
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
                for _ in 0..k {
                    let s_at = self.pos();
                    let s = self.u32()?;
                    if s >= self.cfg.entries || slots.last().is_some_and(|(last, _)| *last >= s) {
                        return self.malformed(s_at, "slots not increasing or out of range");
                    }
                    slots.push((s, ProofInode::Blinded(self.hash()?)));
                }
                let h = inode_tree_hash(depth, count, slots.iter().map(|(s, c)| (*s, blinded_inode_hash(c))));
                Ok((ProofInode::Tree { count, slots }, h))
            }
            _ => self.malformed(at, "expected an inode element"),
        }
    }
}

/// The hash a blinded child stands for.
fn blinded_hash(t: &ProofTree) -> &Hash {
    match t {
        ProofTree::BlindedValue(h) | ProofTree::BlindedNode(h) => h,
        _ => unreachable!("elements list their children blinded"),
    }
}

fn blinded_inode_hash(i: &ProofInode) -> &Hash {
    match i {
        ProofInode::Blinded(h) => h,
        _ => unreachable!("elements list their children blinded"),
    }
}

impl Elements for Cursor<'_> {
    fn value(&mut self, hash: &Hash, _path: &[Vec<u8>]) -> Result<Vec<u8>, ProofError> {
        let at = self.pos();
        if self.byte()? != tag::VALUE {
            return self.malformed(at, "expected a value element");
        }
        let v = self.bytes()?;
        self.check(at, hash, contents_hash(&v))?;
        Ok(v)
    }

    fn dir(&mut self, hash: &Hash, _path: &[Vec<u8>]) -> Result<ProofTree, ProofError> {
        let at = self.pos();
        let t = self.byte()?;
        if t != tag::NODE {
            let (root, h) = self.inode_body(t, at, &[])?;
            if root.count().is_some_and(|c| c <= u64::from(self.cfg.stable_hash)) {
                return self.malformed(at, "inode directory small enough to be flat");
            }
            self.check(at, hash, h)?;
            return Ok(ProofTree::Inode(root));
        }
        let n_at = self.pos();
        let n = self.count()?;
        if n as u64 > u64::from(self.cfg.stable_hash) {
            return self.malformed(n_at, "flat directory larger than stable_hash");
        }
        let entries = self.bindings(n, None)?;
        let h = flat_node_hash(entries.iter().map(|(s, c)| (&s[..], c.kind(), blinded_hash(c))));
        self.check(at, hash, h)?;
        Ok(ProofTree::Node(entries))
    }

    fn inode(&mut self, hash: &Hash, _path: &[Vec<u8>], slots: &[u32]) -> Result<ProofInode, ProofError> {
        let at = self.pos();
        let t = self.byte()?;
        let (inode, h) = self.inode_body(t, at, slots)?;
        self.check(at, hash, h)?;
        Ok(inode)
    }
}
