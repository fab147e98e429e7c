//! Octez's compact encoding (V2): one tag byte per node packing the node's kind with small
//! counts and the widths of the integers that follow. Layout in docs/PROOFS.md, "Octez proofs".

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::shape::Shape;
use super::types::{Bindings, Elt, Extender, Inode, InodeTree, KindedHash, Tree};
use super::v1::{kinded, put_kinded};
use super::wire::{len32, put_hash, put_len32, put_segments, put_step, segments, step};
use crate::hash::Hash;
use crate::proof::encoding::input::Input;
use crate::proof::types::{ProofError, MAX_NESTING};

type Res<T> = Result<T, ProofError>;

/// Fixed tag bytes.
mod tag {
    /// A value shown by its hash.
    pub const BLINDED_VALUE: u8 = 0b1100_1000;
    /// A directory shown by its hash.
    pub const BLINDED_NODE: u8 = 0b1101_0000;
    /// An inode shown by its hash.
    pub const BLINDED_INODE: u8 = 0b1100_0000;
    /// An empty slot.
    pub const NONE: u8 = 0b1110_0000;
    /// Prefix of a value (low 2 bits: length width).
    pub const VALUE: u8 = 0b1100_0000;
    /// Prefix of a tree's extender (low 2 bits: length width).
    pub const EXTENDER: u8 = 0b1101_1000;
    /// Prefix of an inode's extender (low 2 bits: length width).
    pub const INODE_EXTENDER: u8 = 0b1101_0000;
    /// Prefix of an element's extender (low 2 bits: length width).
    pub const ELT_EXTENDER: u8 = 0b1110_0000;
    /// Prefix of a binding list (low 6 bits: count, all ones for a long list).
    pub const LIST: u8 = 0b1000_0000;
    /// Dense slot array bit of an inode's tag.
    pub const DENSE: u8 = 0b0100_0000;
}

/// A 32-slot inode lists its slots sparsely below this many, densely from it.
const DENSE_FROM: usize = 15;

/// The width code (0..=3) of the smallest field holding the length `n`: 1, 2, 4 or 8 bytes.
fn width_code(n: u64) -> u8 {
    if n < 1 << 8 {
        0
    } else if n < 1 << 16 {
        1
    } else if n < 1 << 31 {
        2
    } else {
        3
    }
}

fn put_length(out: &mut Vec<u8>, n: u64) {
    let w = [1usize, 2, 4, 8][usize::from(width_code(n))];
    out.extend_from_slice(&n.to_be_bytes()[8 - w..]);
}

/// Count field bits of a binding list's tag for the shape: counts below all ones are inline.
fn list_bits(shape: Shape) -> u32 {
    match shape {
        Shape::Tezos32 => 6,
        Shape::Binary => 2,
    }
}

/// The writer.
pub(super) struct Enc {
    pub shape: Shape,
    pub out: Vec<u8>,
}

impl Enc {
    fn value(&mut self, v: &[u8]) -> Res<()> {
        let n = v.len();
        if n < 1 << 8 {
            self.out.extend_from_slice(&[tag::VALUE, n as u8]);
        } else if n < 1 << 16 {
            self.out.push(tag::VALUE | 0b01);
            self.out.extend_from_slice(&(n as u16).to_be_bytes());
        } else {
            self.out.push(tag::VALUE | 0b11);
            put_len32(&mut self.out, n)?;
        }
        self.out.extend_from_slice(v);
        Ok(())
    }

    /// A binding list's tag and items, each item written by `item`.
    fn list<T>(&mut self, items: &[T], mut item: impl FnMut(&mut Self, &T) -> Res<()>) -> Res<()> {
        let all_ones = (1usize << list_bits(self.shape)) - 1;
        if items.len() < all_ones {
            self.out.push(tag::LIST | items.len() as u8);
            items.iter().try_for_each(|i| item(self, i))
        } else {
            self.out.push(tag::LIST | all_ones as u8);
            let at = self.out.len();
            self.out.extend_from_slice(&[0; 4]);
            items.iter().try_for_each(|i| item(self, i))?;
            let mut len = Vec::new();
            put_len32(&mut len, self.out.len() - at - 4)?;
            self.out[at..at + 4].copy_from_slice(&len);
            Ok(())
        }
    }

    fn bindings(&mut self, b: &Bindings) -> Res<()> {
        self.list(b, |e, (s, t)| {
            put_step(&mut e.out, s)?;
            e.tree(t)
        })
    }

    pub fn tree(&mut self, t: &Tree) -> Res<()> {
        match t {
            Tree::Value(v) => self.value(v),
            Tree::BlindedValue(h) => {
                self.out.push(tag::BLINDED_VALUE);
                put_hash(&mut self.out, h);
                Ok(())
            }
            Tree::Node(b) => self.bindings(b),
            Tree::BlindedNode(h) => {
                self.out.push(tag::BLINDED_NODE);
                put_hash(&mut self.out, h);
                Ok(())
            }
            Tree::Inode(i) => self.inode(i),
            Tree::Extender(x) => self.extender(tag::EXTENDER, x),
        }
    }

    fn extender(&mut self, prefix: u8, x: &Extender<InodeTree>) -> Res<()> {
        self.out.push(prefix | width_code(x.length));
        put_length(&mut self.out, x.length);
        put_segments(&mut self.out, self.shape, &x.segments)?;
        self.inode_tree(&x.proof)
    }

    /// An inode with slots (a tree's root inode or an inode below it: same layout).
    fn inode(&mut self, i: &Inode<InodeTree>) -> Res<()> {
        let w = width_code(i.length);
        match self.shape {
            Shape::Binary => {
                self.out.push(w);
                put_length(&mut self.out, i.length);
                for slot in 0..2u8 {
                    match i.proofs.iter().find(|(s, _)| *s == slot) {
                        Some((_, c)) => self.inode_tree(c)?,
                        None => self.out.push(tag::NONE),
                    }
                }
            }
            Shape::Tezos32 if i.proofs.len() < DENSE_FROM => {
                self.out.push(((i.proofs.len() as u8) << 2) | w);
                put_length(&mut self.out, i.length);
                for (s, c) in &i.proofs {
                    self.out.push(*s);
                    self.inode_tree(c)?;
                }
            }
            Shape::Tezos32 => {
                self.out.push(tag::DENSE | w);
                put_length(&mut self.out, i.length);
                let mut next = i.proofs.iter().peekable();
                for slot in 0..32u8 {
                    match next.next_if(|(s, _)| *s == slot) {
                        Some((_, c)) => self.inode_tree(c)?,
                        None => self.out.push(tag::NONE),
                    }
                }
            }
        }
        Ok(())
    }

    fn inode_tree(&mut self, t: &InodeTree) -> Res<()> {
        match t {
            InodeTree::Blinded(h) => {
                self.out.push(tag::BLINDED_INODE);
                put_hash(&mut self.out, h);
                Ok(())
            }
            InodeTree::Values(b) => self.bindings(b),
            InodeTree::Tree(i) => self.inode(i),
            InodeTree::Extender(x) => self.extender(tag::INODE_EXTENDER, x),
        }
    }

    pub fn elt(&mut self, e: &Elt) -> Res<()> {
        match e {
            Elt::Value(v) => self.value(v),
            Elt::Node(b) => self.list(b, |e, (s, k)| {
                put_step(&mut e.out, s)?;
                put_kinded(&mut e.out, k);
                Ok(())
            }),
            Elt::Inode(i) => {
                let w = width_code(i.length);
                match self.shape {
                    Shape::Binary => {
                        let mut bits = w;
                        for (s, _) in &i.proofs {
                            bits |= 0b100 << s;
                        }
                        self.out.push(bits);
                        put_length(&mut self.out, i.length);
                        for (_, h) in &i.proofs {
                            put_hash(&mut self.out, h);
                        }
                    }
                    Shape::Tezos32 if i.proofs.len() < DENSE_FROM => {
                        self.out.push(((i.proofs.len() as u8) << 2) | w);
                        put_length(&mut self.out, i.length);
                        for (s, h) in &i.proofs {
                            self.out.extend_from_slice(&[*s, 1]);
                            put_hash(&mut self.out, h);
                        }
                    }
                    Shape::Tezos32 => {
                        self.out.push(tag::DENSE | w);
                        put_length(&mut self.out, i.length);
                        let mut next = i.proofs.iter().peekable();
                        for slot in 0..32u8 {
                            match next.next_if(|(s, _)| *s == slot) {
                                Some((_, h)) => {
                                    self.out.push(1);
                                    put_hash(&mut self.out, h);
                                }
                                None => self.out.push(0),
                            }
                        }
                    }
                }
                Ok(())
            }
            Elt::Extender(x) => {
                self.out.push(tag::ELT_EXTENDER | width_code(x.length));
                put_length(&mut self.out, x.length);
                put_segments(&mut self.out, self.shape, &x.segments)?;
                put_hash(&mut self.out, &x.proof);
                Ok(())
            }
        }
    }
}

/// The reader.
pub(super) struct Dec<'a> {
    pub shape: Shape,
    pub r: Input<'a>,
}

impl Dec<'_> {
    /// A length of width code `w`, in its shortest width.
    fn length(&mut self, w: u8) -> Res<u64> {
        let at = self.r.pos();
        let n = self.r.be([1usize, 2, 4, 8][usize::from(w & 3)])?;
        if n > i64::MAX as u64 || (w == 2 && n >= 1 << 31) {
            return self.r.malformed(at, "negative length");
        }
        if width_code(n) != w & 3 {
            return self.r.malformed(at, "length not in its shortest width");
        }
        Ok(n)
    }

    /// The value after a value tag `t`.
    fn value(&mut self, t: u8) -> Res<Vec<u8>> {
        let at = self.r.pos();
        let (n, min) = match t & 3 {
            0 => (usize::from(self.r.byte()?), 0),
            1 => (self.r.be(2)? as usize, 1 << 8),
            3 => (len32(&mut self.r)?, 1 << 16),
            _ => return self.r.malformed(at - 1, "reserved value length width"),
        };
        if n < min {
            return self.r.malformed(at, "value length not in its shortest width");
        }
        Ok(self.r.take(n)?.to_vec())
    }

    /// The items of a binding list whose tag is `t`.
    fn list<T>(&mut self, t: u8, mut item: impl FnMut(&mut Self) -> Res<T>) -> Res<Vec<T>> {
        let all_ones = (1u8 << list_bits(self.shape)) - 1;
        let at = self.r.pos() - 1;
        if t & 0b0011_1111 & !all_ones != 0 {
            return self.r.malformed(at, "binding count out of range");
        }
        let n = t & all_ones;
        if n < all_ones {
            return (0..n).map(|_| item(self)).collect();
        }
        let len = len32(&mut self.r)?;
        let end = self.r.pos() + len;
        let mut out = Vec::new();
        while self.r.pos() < end {
            out.push(item(self)?);
        }
        if self.r.pos() != end {
            return self.r.malformed(end, "list overruns its length");
        }
        if out.len() < usize::from(all_ones) {
            return self.r.malformed(at, "short binding list written long");
        }
        Ok(out)
    }

    fn bindings(&mut self, t: u8, nesting: usize) -> Res<Bindings> {
        self.list(t, |d| {
            let s = step(&mut d.r)?;
            Ok((s, d.tree(nesting + 1)?))
        })
    }

    pub fn tree(&mut self, nesting: usize) -> Res<Tree> {
        if nesting >= MAX_NESTING {
            return Err(ProofError::TooDeep);
        }
        let at = self.r.pos();
        let t = self.r.byte()?;
        Ok(match t {
            0x00..=0x7f => Tree::Inode(self.inode(t, nesting)?),
            0x80..=0xbf => Tree::Node(self.bindings(t, nesting)?),
            0xc0..=0xc3 => Tree::Value(self.value(t)?),
            tag::BLINDED_VALUE => Tree::BlindedValue(self.r.hash()?),
            tag::BLINDED_NODE => Tree::BlindedNode(self.r.hash()?),
            0xd8..=0xdb => Tree::Extender(Box::new(self.extender(t, nesting)?)),
            _ => return self.r.malformed(at, "unknown tree tag"),
        })
    }

    fn extender(&mut self, t: u8, nesting: usize) -> Res<Extender<InodeTree>> {
        let length = self.length(t)?;
        let segments = segments(&mut self.r, self.shape)?;
        let at = self.r.pos();
        match self.inode_tree_opt(nesting + 1)? {
            Some(proof) => Ok(Extender { length, segments, proof }),
            None => self.r.malformed(at, "extender without an inode"),
        }
    }

    /// An inode with slots whose tag is `t`.
    fn inode(&mut self, t: u8, nesting: usize) -> Res<Inode<InodeTree>> {
        let at = self.r.pos() - 1;
        let mut proofs = Vec::new();
        let length;
        match self.shape {
            Shape::Binary => {
                if t & !3 != 0 {
                    return self.r.malformed(at, "unknown inode tag");
                }
                length = self.length(t)?;
                for slot in 0..2u8 {
                    if let Some(c) = self.inode_tree_opt(nesting + 1)? {
                        proofs.push((slot, c));
                    }
                }
            }
            Shape::Tezos32 if t & tag::DENSE == 0 => {
                let n = (t >> 2) & 0b1111;
                if usize::from(n) >= DENSE_FROM {
                    return self.r.malformed(at, "sparse slot list of 15 or more slots");
                }
                length = self.length(t)?;
                for _ in 0..n {
                    let s = self.r.byte()?;
                    let c_at = self.r.pos();
                    match self.inode_tree_opt(nesting + 1)? {
                        Some(c) => proofs.push((s, c)),
                        None => return self.r.malformed(c_at, "empty slot listed"),
                    }
                }
            }
            Shape::Tezos32 => {
                if t & 0b0011_1100 != 0 {
                    return self.r.malformed(at, "unknown inode tag");
                }
                length = self.length(t)?;
                for slot in 0..32u8 {
                    if let Some(c) = self.inode_tree_opt(nesting + 1)? {
                        proofs.push((slot, c));
                    }
                }
                if proofs.len() < DENSE_FROM {
                    return self.r.malformed(at, "dense slot array of fewer than 15 slots");
                }
            }
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
        let t = self.r.byte()?;
        Ok(Some(match t {
            0x00..=0x7f => InodeTree::Tree(self.inode(t, nesting)?),
            0x80..=0xbf => InodeTree::Values(self.bindings(t, nesting)?),
            tag::BLINDED_INODE => InodeTree::Blinded(self.r.hash()?),
            0xd0..=0xd3 => InodeTree::Extender(Box::new(self.extender(t, nesting)?)),
            tag::NONE => return Ok(None),
            _ => return self.r.malformed(at, "unknown inode tag"),
        }))
    }

    fn opt_hash(&mut self) -> Res<Option<Hash>> {
        let at = self.r.pos();
        match self.r.byte()? {
            0 => Ok(None),
            1 => Ok(Some(self.r.hash()?)),
            _ => self.r.malformed(at, "unknown option tag"),
        }
    }

    pub fn elt(&mut self) -> Res<Elt> {
        let at = self.r.pos();
        let t = self.r.byte()?;
        Ok(match t {
            0x00..=0x7f => Elt::Inode(self.elt_inode(t)?),
            0x80..=0xbf => Elt::Node(self.list(t, |d| {
                let s = step(&mut d.r)?;
                Ok((s, kinded(&mut d.r)?))
            })?),
            0xc0..=0xc3 => Elt::Value(self.value(t)?),
            0xe0..=0xe3 => {
                let length = self.length(t)?;
                let segments = segments(&mut self.r, self.shape)?;
                Elt::Extender(Extender { length, segments, proof: self.r.hash()? })
            }
            _ => return self.r.malformed(at, "unknown element tag"),
        })
    }

    fn elt_inode(&mut self, t: u8) -> Res<Inode<Hash>> {
        let at = self.r.pos() - 1;
        let mut proofs = Vec::new();
        let length;
        match self.shape {
            Shape::Binary => {
                if t & !0b1111 != 0 {
                    return self.r.malformed(at, "unknown inode tag");
                }
                length = self.length(t)?;
                for slot in 0..2u8 {
                    if t & (0b100 << slot) != 0 {
                        proofs.push((slot, self.r.hash()?));
                    }
                }
            }
            Shape::Tezos32 if t & tag::DENSE == 0 => {
                let n = (t >> 2) & 0b1111;
                if usize::from(n) >= DENSE_FROM {
                    return self.r.malformed(at, "sparse slot list of 15 or more slots");
                }
                length = self.length(t)?;
                for _ in 0..n {
                    let s = self.r.byte()?;
                    let h_at = self.r.pos();
                    match self.opt_hash()? {
                        Some(h) => proofs.push((s, h)),
                        None => return self.r.malformed(h_at, "empty slot listed"),
                    }
                }
            }
            Shape::Tezos32 => {
                if t & 0b0011_1100 != 0 {
                    return self.r.malformed(at, "unknown inode tag");
                }
                length = self.length(t)?;
                for slot in 0..32u8 {
                    if let Some(h) = self.opt_hash()? {
                        proofs.push((slot, h));
                    }
                }
                if proofs.len() < DENSE_FROM {
                    return self.r.malformed(at, "dense slot array of fewer than 15 slots");
                }
            }
        }
        if proofs.is_empty() {
            return self.r.malformed(at, "inode with no slot");
        }
        Ok(Inode { length, proofs })
    }
}

/// Writes a kinded hash as the V2 envelope does: only its hash (the kind goes in the tag).
pub(super) fn kind_bit(k: &KindedHash) -> u8 {
    match k {
        KindedHash::Value(_) => 0,
        KindedHash::Node(_) => 1,
    }
}
