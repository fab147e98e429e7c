//! Octez's Merkle proofs: the tree proofs and stream proofs Octez's context exchanges, in
//! both of its byte encodings (V1 plain, V2 compact), for both of its shapes (the 32-slot
//! Tezos context and the binary trees of smart rollups).
//!
//! This module reads and writes the bytes and checks every shape rule a proof value must
//! follow (see `canonical`); hashing a proof against a root and looking paths up in it is
//! done by `crate::proof::verify`, building one from a tree by `crate::proof::tree`. The
//! layout is in docs/PROOFS.md, "Octez proofs".

mod canonical;
mod segment;
mod shape;
mod types;
mod v1;
mod v2;
mod wire;

use alloc::vec::Vec;

pub use shape::Shape;
pub use types::{
    Bindings, Elt, Encoding, Extender, Inode, InodeTree, KindedHash, OctezProof, StreamProof, Tree, TreeProof,
    BINARY_BIT, STREAM_BIT,
};

use crate::hash::Hash;
use crate::proof::encoding::input::Input;
use crate::proof::types::ProofError;

impl<S> OctezProof<S> {
    /// The shape the version field names.
    pub fn shape(&self) -> Shape {
        if self.version & BINARY_BIT != 0 {
            Shape::Binary
        } else {
            Shape::Tezos32
        }
    }
}

/// Checks the version field: known bits only, and the stream bit as expected.
fn check_version(version: u16, stream: bool) -> Result<Shape, ProofError> {
    if version & !(STREAM_BIT | BINARY_BIT) != 0 || (version & STREAM_BIT != 0) != stream {
        return Err(ProofError::OctezVersion(version));
    }
    Ok(if version & BINARY_BIT != 0 { Shape::Binary } else { Shape::Tezos32 })
}

fn kinded_of(bit: u8, h: Hash) -> KindedHash {
    if bit == 0 {
        KindedHash::Value(h)
    } else {
        KindedHash::Node(h)
    }
}

/// Writes the envelope (version and roots) of `p` in `enc`.
fn put_envelope<S>(out: &mut Vec<u8>, p: &OctezProof<S>, enc: Encoding) {
    match enc {
        Encoding::V1 => {
            out.extend_from_slice(&p.version.to_be_bytes());
            v1::put_kinded(out, &p.before);
            v1::put_kinded(out, &p.after);
        }
        Encoding::V2 => {
            out.push(v2::kind_bit(&p.before) | (v2::kind_bit(&p.after) << 1));
            out.extend_from_slice(&p.version.to_be_bytes());
            out.extend_from_slice(p.before.hash().as_bytes());
            out.extend_from_slice(p.after.hash().as_bytes());
        }
    }
}

/// Reads an envelope: version, before, after.
fn envelope(r: &mut Input<'_>, enc: Encoding) -> Result<(u16, KindedHash, KindedHash), ProofError> {
    match enc {
        Encoding::V1 => {
            let version = r.be(2)? as u16;
            let before = v1::kinded(r)?;
            let after = v1::kinded(r)?;
            Ok((version, before, after))
        }
        Encoding::V2 => {
            let at = r.pos();
            let t = r.byte()?;
            if t & !0b11 != 0 {
                return r.malformed(at, "unknown proof tag");
            }
            let version = r.be(2)? as u16;
            let before = kinded_of(t & 1, r.hash()?);
            let after = kinded_of((t >> 1) & 1, r.hash()?);
            Ok((version, before, after))
        }
    }
}

/// Encodes a tree proof; fails with a typed error if the value breaks a shape rule or does not
/// fit the encoding.
pub fn encode_tree_proof(p: &TreeProof, enc: Encoding) -> Result<Vec<u8>, ProofError> {
    let shape = check_version(p.version, false)?;
    canonical::tree(shape, &p.state)?;
    let mut out = Vec::new();
    put_envelope(&mut out, p, enc);
    match enc {
        Encoding::V1 => {
            let mut e = v1::Enc { shape, out };
            e.tree(&p.state)?;
            Ok(e.out)
        }
        Encoding::V2 => {
            let mut e = v2::Enc { shape, out };
            e.tree(&p.state)?;
            Ok(e.out)
        }
    }
}

/// Decodes a tree proof written in `enc`: the whole input, strictly (one value has one
/// encoding), with the nesting bounded. The proof is not verified.
pub fn decode_tree_proof(bytes: &[u8], enc: Encoding) -> Result<TreeProof, ProofError> {
    let mut r = Input::new(bytes);
    let (version, before, after) = envelope(&mut r, enc)?;
    let shape = check_version(version, false)?;
    let (state, r) = match enc {
        Encoding::V1 => {
            let mut d = v1::Dec { shape, r };
            (d.tree(0)?, d.r)
        }
        Encoding::V2 => {
            let mut d = v2::Dec { shape, r };
            (d.tree(0)?, d.r)
        }
    };
    if !r.at_end() {
        return Err(ProofError::TrailingBytes { at: r.pos() });
    }
    canonical::tree(shape, &state)?;
    Ok(OctezProof { version, before, after, state })
}

/// Encodes a stream proof.
pub fn encode_stream_proof(p: &StreamProof, enc: Encoding) -> Result<Vec<u8>, ProofError> {
    let shape = check_version(p.version, true)?;
    p.state.iter().try_for_each(|e| canonical::elt(shape, e))?;
    let mut out = Vec::new();
    put_envelope(&mut out, p, enc);
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    let mut out = match enc {
        Encoding::V1 => {
            let mut e = v1::Enc { shape, out };
            p.state.iter().try_for_each(|x| e.elt(x))?;
            e.out
        }
        Encoding::V2 => {
            let mut e = v2::Enc { shape, out };
            p.state.iter().try_for_each(|x| e.elt(x))?;
            e.out
        }
    };
    let mut len = Vec::new();
    wire::put_len32(&mut len, out.len() - at - 4)?;
    out[at..at + 4].copy_from_slice(&len);
    Ok(out)
}

/// Decodes a stream proof written in `enc`: the envelope and every element (elements are
/// flat, so this needs no recursion). The elements are not checked against any hash.
pub fn decode_stream_proof(bytes: &[u8], enc: Encoding) -> Result<StreamProof, ProofError> {
    let mut r = Input::new(bytes);
    let (version, before, after) = envelope(&mut r, enc)?;
    let shape = check_version(version, true)?;
    let n = wire::len32(&mut r)?;
    let end = r.pos() + n;
    let mut state = Vec::new();
    let r = match enc {
        Encoding::V1 => {
            let mut d = v1::Dec { shape, r };
            while d.r.pos() < end {
                state.push(d.elt()?);
            }
            d.r
        }
        Encoding::V2 => {
            let mut d = v2::Dec { shape, r };
            while d.r.pos() < end {
                state.push(d.elt()?);
            }
            d.r
        }
    };
    if r.pos() != end {
        return r.malformed(end, "element overruns the stream's length");
    }
    if !r.at_end() {
        return Err(ProofError::TrailingBytes { at: r.pos() });
    }
    state.iter().try_for_each(|e| canonical::elt(shape, e))?;
    Ok(OctezProof { version, before, after, state })
}
