//! The byte cursor both proof decoders read with: strict LEB128 (shortest form only), counts
//! checked against the input left before anything is allocated, truncation reported as such.

use alloc::vec::Vec;

use crate::hash::Hash;
use crate::leb128;
use crate::proof::types::{Path, ProofError, MAX_NESTING};

/// A position in a proof's bytes.
pub(crate) struct Input<'a> {
    pub(crate) buf: &'a [u8],
    /// Offset of the next byte to read.
    pub(crate) pos: usize,
}

impl<'a> Input<'a> {
    /// A cursor at the start of `buf`.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Input { buf, pos: 0 }
    }

    pub(crate) fn malformed<T>(&self, at: usize, what: &'static str) -> Result<T, ProofError> {
        Err(ProofError::Malformed { at, what })
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], ProofError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let end = end.ok_or(ProofError::Truncated { at: self.buf.len() })?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub(crate) fn byte(&mut self) -> Result<u8, ProofError> {
        Ok(self.take(1)?[0])
    }

    /// A big-endian unsigned integer of `n` bytes (at most 8).
    pub(crate) fn be(&mut self, n: usize) -> Result<u64, ProofError> {
        Ok(self.take(n)?.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    /// True once every byte was read.
    pub(crate) fn at_end(&self) -> bool {
        self.pos == self.buf.len()
    }

    pub(crate) fn hash(&mut self) -> Result<Hash, ProofError> {
        let mut h = [0u8; 32];
        h.copy_from_slice(self.take(Hash::LEN)?);
        Ok(Hash(h))
    }

    /// A LEB128 integer in its shortest form.
    pub(crate) fn leb(&mut self) -> Result<u64, ProofError> {
        let at = self.pos;
        let rest = &self.buf[at..];
        match leb128::read_u64(rest) {
            Some((n, len)) if len == leb128::len_u64(n) => {
                self.pos += len;
                Ok(n)
            }
            Some(_) => self.malformed(at, "integer not in its shortest form"),
            None if rest.len() < leb128::MAX_LEN && rest.iter().all(|b| b & 0x80 != 0) => {
                Err(ProofError::Truncated { at: self.buf.len() })
            }
            None => self.malformed(at, "integer too large"),
        }
    }

    pub(crate) fn u32(&mut self) -> Result<u32, ProofError> {
        let at = self.pos;
        let n = self.leb()?;
        u32::try_from(n).or_else(|_| self.malformed(at, "integer too large"))
    }

    /// A count of items that each take at least one byte: larger than the rest of the input
    /// means the input was cut short (and is refused before anything is allocated for it).
    pub(crate) fn count(&mut self) -> Result<usize, ProofError> {
        let n = self.leb()?;
        let left = (self.buf.len() - self.pos) as u64;
        if n > left {
            return Err(ProofError::Truncated { at: self.buf.len() });
        }
        Ok(n as usize)
    }

    pub(crate) fn bytes(&mut self) -> Result<Vec<u8>, ProofError> {
        let n = self.count()?;
        Ok(self.take(n)?.to_vec())
    }

    pub(crate) fn step(&mut self) -> Result<Vec<u8>, ProofError> {
        let at = self.pos;
        let s = self.bytes()?;
        if s.is_empty() {
            return self.malformed(at, "empty step");
        }
        Ok(s)
    }

    pub(crate) fn path(&mut self) -> Result<Path, ProofError> {
        let n = self.count()?;
        if n > MAX_NESTING {
            return Err(ProofError::TooDeep);
        }
        (0..n).map(|_| self.step()).collect()
    }
}
