//! The byte cursor both proof decoders read with: the toolbox's [`Cursor`] with the proofs'
//! rules and errors on top: strict LEB128 (shortest form only), counts checked against the
//! input left before anything is allocated, truncation reported as such.

use alloc::vec::Vec;

use super::format::tag;
use crate::hash::Hash;
use crate::proof::types::{Path, ProofError, Write, MAX_NESTING};
use crate::toolbox::{Cursor, CursorError};

/// A position in a proof's bytes.
pub(crate) struct Input<'a> {
    cur: Cursor<'a>,
}

impl<'a> Input<'a> {
    /// A cursor at the start of `buf`.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Input { cur: Cursor::new(buf) }
    }

    /// Offset of the next byte to read.
    pub(crate) fn pos(&self) -> usize {
        self.cur.pos()
    }

    /// Length of the whole input: where a proof cut short is reported truncated.
    pub(crate) fn end(&self) -> usize {
        self.cur.pos() + self.cur.remaining()
    }

    pub(crate) fn malformed<T>(&self, at: usize, what: &'static str) -> Result<T, ProofError> {
        Err(ProofError::Malformed { at, what })
    }

    /// The proofs' error for a failed read of the toolbox cursor.
    fn error(&self, e: CursorError) -> ProofError {
        match e {
            CursorError::NotShortest { at } => ProofError::Malformed { at, what: "integer not in its shortest form" },
            CursorError::Overflow { at } => ProofError::Malformed { at, what: "integer too large" },
            _ => ProofError::Truncated { at: self.end() },
        }
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], ProofError> {
        self.cur.take(n).map_err(|e| self.error(e))
    }

    pub(crate) fn byte(&mut self) -> Result<u8, ProofError> {
        self.cur.u8().map_err(|e| self.error(e))
    }

    /// A big-endian unsigned integer of `n` bytes (at most 8).
    pub(crate) fn be(&mut self, n: usize) -> Result<u64, ProofError> {
        Ok(self.take(n)?.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    /// True once every byte was read.
    pub(crate) fn at_end(&self) -> bool {
        self.cur.is_empty()
    }

    pub(crate) fn hash(&mut self) -> Result<Hash, ProofError> {
        self.cur.array().map(Hash).map_err(|e| self.error(e))
    }

    /// A LEB128 integer in its shortest form.
    pub(crate) fn leb(&mut self) -> Result<u64, ProofError> {
        self.cur.leb128_shortest().map_err(|e| self.error(e))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, ProofError> {
        let at = self.pos();
        let n = self.leb()?;
        u32::try_from(n).or_else(|_| self.malformed(at, "integer too large"))
    }

    /// A count of items that each take at least one byte: larger than the rest of the input
    /// means the input was cut short (and is refused before anything is allocated for it).
    pub(crate) fn count(&mut self) -> Result<usize, ProofError> {
        let n = self.leb()?;
        if n > self.cur.remaining() as u64 {
            return Err(ProofError::Truncated { at: self.end() });
        }
        Ok(n as usize)
    }

    pub(crate) fn bytes(&mut self) -> Result<Vec<u8>, ProofError> {
        let n = self.count()?;
        Ok(self.take(n)?.to_vec())
    }

    pub(crate) fn step(&mut self) -> Result<Vec<u8>, ProofError> {
        let at = self.pos();
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

    /// The read paths of a proof header: strictly sorted, so each path is listed once.
    pub(crate) fn reads(&mut self) -> Result<Vec<Path>, ProofError> {
        let n = self.count()?;
        let mut out: Vec<Path> = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.pos();
            let p = self.path()?;
            if out.last().is_some_and(|last| *last >= p) {
                return self.malformed(at, "read paths not sorted or repeated");
            }
            out.push(p);
        }
        Ok(out)
    }

    /// The writes of a proof header, each a removal or an addition with its value.
    pub(crate) fn writes(&mut self) -> Result<Vec<Write>, ProofError> {
        let n = self.count()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.pos();
            out.push(match self.byte()? {
                tag::REMOVE => Write::Remove(self.path()?),
                tag::ADD => {
                    let p = self.path()?;
                    Write::Add(p, self.bytes()?)
                }
                _ => return self.malformed(at, "unknown write tag"),
            });
        }
        Ok(out)
    }
}
