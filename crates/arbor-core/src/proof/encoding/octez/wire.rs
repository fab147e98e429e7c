//! Writing and reading the fields both Octez encodings share: big-endian integers, 32-byte
//! hashes, steps and packed segment lists with one-byte lengths.

use alloc::vec::Vec;

use super::segment;
use super::shape::Shape;
use crate::hash::Hash;
use crate::proof::encoding::input::Input;
use crate::proof::types::ProofError;

/// Appends a step with its one-byte length.
pub(super) fn put_step(out: &mut Vec<u8>, step: &[u8]) -> Result<(), ProofError> {
    let len = u8::try_from(step.len()).map_err(|_| ProofError::Unencodable("step longer than 255 bytes"))?;
    out.push(len);
    out.extend_from_slice(step);
    Ok(())
}

/// Appends a packed segment list with its one-byte length.
pub(super) fn put_segments(out: &mut Vec<u8>, shape: Shape, segments: &[u8]) -> Result<(), ProofError> {
    let packed = segment::pack(segments, shape.segment_bits())
        .ok_or(ProofError::Unencodable("extender segment list longer than 255 bytes"))?;
    out.push(packed.len() as u8);
    out.extend_from_slice(&packed);
    Ok(())
}

/// Appends a hash.
pub(super) fn put_hash(out: &mut Vec<u8>, h: &Hash) {
    out.extend_from_slice(h.as_bytes());
}

/// Appends a 4-byte big-endian length (Octez's dynamic-size prefix, at most 2^30 - 1).
pub(super) fn put_len32(out: &mut Vec<u8>, n: usize) -> Result<(), ProofError> {
    if n >= 1 << 30 {
        return Err(ProofError::Unencodable("field longer than 2^30 - 1 bytes"));
    }
    out.extend_from_slice(&(n as u32).to_be_bytes());
    Ok(())
}

/// Reads a step.
pub(super) fn step(r: &mut Input<'_>) -> Result<Vec<u8>, ProofError> {
    let at = r.pos();
    let n = usize::from(r.byte()?);
    let s = r.take(n)?.to_vec();
    if s.is_empty() {
        return r.malformed(at, "empty step");
    }
    Ok(s)
}

/// Reads a packed segment list.
pub(super) fn segments(r: &mut Input<'_>, shape: Shape) -> Result<Vec<u8>, ProofError> {
    let at = r.pos();
    let n = usize::from(r.byte()?);
    let packed = r.take(n)?;
    match segment::unpack(packed, shape.segment_bits()) {
        Some(s) => Ok(s),
        None => r.malformed(at, "malformed extender segment list"),
    }
}

/// Reads a 4-byte length prefix and checks that that many bytes are left.
pub(super) fn len32(r: &mut Input<'_>) -> Result<usize, ProofError> {
    let at = r.pos();
    let n = r.be(4)?;
    if n >= 1 << 30 {
        return r.malformed(at, "length prefix above 2^30 - 1");
    }
    if n > (r.end() - r.pos()) as u64 {
        return Err(ProofError::Truncated { at: r.end() });
    }
    Ok(n as usize)
}
