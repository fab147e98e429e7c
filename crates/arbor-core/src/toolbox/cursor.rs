//! A bounds-checked reader over a byte slice: every read either returns what was asked for
//! or a [`CursorError`] saying where the data ran out or was malformed, never a panic.

use alloc::string::String;
use core::fmt;

use super::leb128;

/// Why a read from a [`Cursor`] failed. Offsets are from the start of the cursor's slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CursorError {
    /// The data ends before the `wanted` bytes a read at `at` needed.
    Truncated {
        /// Offset of the read.
        at: usize,
        /// Bytes it needed.
        wanted: usize,
    },
    /// A LEB128 integer at `at` does not fit the type read (64 bits, or 32 for
    /// [`Cursor::leb128_u32`]).
    Overflow {
        /// Offset of the integer.
        at: usize,
    },
    /// A LEB128 integer at `at` is longer than the shortest encoding of its value (only
    /// [`Cursor::leb128_shortest`] refuses that).
    NotShortest {
        /// Offset of the integer.
        at: usize,
    },
    /// A count at `at` is larger than the bytes left, so it cannot be right (every counted
    /// item takes at least one byte).
    CountTooLarge {
        /// Offset of the count.
        at: usize,
    },
    /// A string at `at` is not UTF-8.
    NotUtf8 {
        /// Offset of the string's bytes.
        at: usize,
    },
}

impl CursorError {
    /// A fixed description without the offsets, for decoders whose errors are static text.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Truncated { .. } => "data ends early",
            Self::Overflow { .. } => "integer too large",
            Self::NotShortest { .. } => "integer not in its shortest form",
            Self::CountTooLarge { .. } => "count larger than the remaining data",
            Self::NotUtf8 { .. } => "string is not UTF-8",
        }
    }
}

impl fmt::Display for CursorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Truncated { at, wanted } => write!(f, "data ends early: {wanted} bytes wanted at offset {at}"),
            Self::Overflow { at } => write!(f, "integer too large at offset {at}"),
            Self::NotShortest { at } => write!(f, "integer not in its shortest form at offset {at}"),
            Self::CountTooLarge { at } => write!(f, "count larger than the remaining data at offset {at}"),
            Self::NotUtf8 { at } => write!(f, "string at offset {at} is not UTF-8"),
        }
    }
}

impl core::error::Error for CursorError {}

impl From<CursorError> for &'static str {
    fn from(e: CursorError) -> Self {
        e.as_str()
    }
}

/// Reads values from a byte slice, front to back, never past its end.
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    /// Offset of the next byte to read.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.pos == self.buf.len()
    }

    /// The bytes not yet read (the cursor does not move).
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// Exactly `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], CursorError> {
        if n > self.remaining() {
            return Err(CursorError::Truncated { at: self.pos, wanted: n });
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Exactly `N` bytes, as an array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], CursorError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8, CursorError> {
        Ok(self.take(1)?[0])
    }

    /// A little-endian `u32`.
    pub fn u32_le(&mut self) -> Result<u32, CursorError> {
        self.array().map(u32::from_le_bytes)
    }

    /// A little-endian `u64`.
    pub fn u64_le(&mut self) -> Result<u64, CursorError> {
        self.array().map(u64::from_le_bytes)
    }

    /// A big-endian `i64`.
    pub fn i64_be(&mut self) -> Result<i64, CursorError> {
        self.array().map(i64::from_be_bytes)
    }

    /// An unsigned LEB128 integer of at most 64 bits (redundant trailing zero groups are
    /// accepted, as [`leb128::read_u64`] does).
    // Inlined for its first test: nearly every number a record holds (a step's length, a
    // count, a short back distance) is one byte.
    #[inline]
    pub fn leb128(&mut self) -> Result<u64, CursorError> {
        match self.buf.get(self.pos) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                Ok(u64::from(b))
            }
            _ => self.leb128_long(),
        }
    }

    /// [`Cursor::leb128`] past its one-byte case.
    #[inline(never)]
    fn leb128_long(&mut self) -> Result<u64, CursorError> {
        let at = self.pos;
        let rest = self.rest();
        match leb128::read_u64(rest) {
            Some((n, len)) => {
                self.pos += len;
                Ok(n)
            }
            // Every byte so far said "more" and there is room for more: the data was cut.
            None if rest.len() < leb128::MAX_LEN && rest.iter().all(|b| b & 0x80 != 0) => {
                Err(CursorError::Truncated { at, wanted: rest.len() + 1 })
            }
            None => Err(CursorError::Overflow { at }),
        }
    }

    /// An unsigned LEB128 integer of at most 64 bits in its shortest form, for formats where
    /// each value has exactly one encoding.
    pub fn leb128_shortest(&mut self) -> Result<u64, CursorError> {
        let at = self.pos;
        let n = self.leb128()?;
        if self.pos - at != leb128::len_u64(n) {
            self.pos = at;
            return Err(CursorError::NotShortest { at });
        }
        Ok(n)
    }

    /// A LEB128 integer that must fit in 32 bits.
    pub fn leb128_u32(&mut self) -> Result<u32, CursorError> {
        let at = self.pos;
        u32::try_from(self.leb128()?).map_err(|_| CursorError::Overflow { at })
    }

    /// A zig-zag LEB128 signed integer (see [`leb128::write_i64`]).
    pub fn leb128_i64(&mut self) -> Result<i64, CursorError> {
        self.leb128().map(leb128::zigzag_decode)
    }

    /// A LEB128 count of items that each take at least one byte: it may not exceed the bytes
    /// left, so that nothing is allocated for a count the data cannot hold.
    pub fn count(&mut self) -> Result<usize, CursorError> {
        let at = self.pos;
        let n = self.leb128()?;
        if n > self.remaining() as u64 {
            return Err(CursorError::CountTooLarge { at });
        }
        Ok(n as usize)
    }

    /// A LEB128-length-prefixed byte string (as [`leb128::write_bytes`] writes it).
    pub fn bytes(&mut self) -> Result<&'a [u8], CursorError> {
        let n = self.count()?;
        self.take(n)
    }

    /// A LEB128-length-prefixed UTF-8 string.
    pub fn str(&mut self) -> Result<&'a str, CursorError> {
        let b = self.bytes()?;
        core::str::from_utf8(b).map_err(|_| CursorError::NotUtf8 { at: self.pos - b.len() })
    }

    /// A LEB128-length-prefixed UTF-8 string, copied.
    pub fn string(&mut self) -> Result<String, CursorError> {
        self.str().map(String::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn shortest_leb128_refuses_padding() {
        let mut buf = Vec::new();
        leb128::write_u64(&mut buf, 300);
        buf.extend_from_slice(&[0x81, 0x00]);
        let mut c = Cursor::new(&buf);
        assert_eq!(c.leb128_shortest(), Ok(300));
        assert_eq!(c.clone().leb128(), Ok(1), "the plain reader takes the padded form");
        assert_eq!(c.leb128_shortest(), Err(CursorError::NotShortest { at: 2 }));
        assert_eq!(c.pos(), 2, "a refused read does not move the cursor");
        assert_eq!(Cursor::new(&[0x80]).leb128_shortest(), Err(CursorError::Truncated { at: 0, wanted: 2 }));
    }

    #[test]
    fn reads_what_was_written() {
        let mut buf = Vec::new();
        leb128::write_u64(&mut buf, 300);
        leb128::write_i64(&mut buf, -3);
        leb128::write_bytes(&mut buf, b"hi");
        buf.extend_from_slice(&7u32.to_le_bytes());
        buf.extend_from_slice(&(-2i64).to_be_bytes());
        buf.push(9);
        let mut c = Cursor::new(&buf);
        assert_eq!(c.leb128(), Ok(300));
        assert_eq!(c.leb128_i64(), Ok(-3));
        assert_eq!(c.str(), Ok("hi"));
        assert_eq!(c.u32_le(), Ok(7));
        assert_eq!(c.i64_be(), Ok(-2));
        assert_eq!(c.u8(), Ok(9));
        assert!(c.is_empty());
        assert_eq!(c.u8(), Err(CursorError::Truncated { at: buf.len(), wanted: 1 }));
    }

    #[test]
    fn refuses_bad_integers_counts_and_strings() {
        assert_eq!(Cursor::new(&[0x80, 0x80]).leb128(), Err(CursorError::Truncated { at: 0, wanted: 3 }));
        assert_eq!(Cursor::new(&[0xff; 11]).leb128(), Err(CursorError::Overflow { at: 0 }));
        let mut too_big = [0xffu8; 10];
        too_big[9] = 0x02;
        assert_eq!(Cursor::new(&too_big).leb128(), Err(CursorError::Overflow { at: 0 }));
        let mut big = Vec::new();
        leb128::write_u64(&mut big, 1 << 32);
        assert_eq!(Cursor::new(&big).leb128_u32(), Err(CursorError::Overflow { at: 0 }));
        assert_eq!(Cursor::new(&[5, 1]).count(), Err(CursorError::CountTooLarge { at: 0 }));
        assert_eq!(Cursor::new(&[1, 0xff]).str(), Err(CursorError::NotUtf8 { at: 1 }));
        let mut c = Cursor::new(&[1, 2, 3]);
        assert_eq!(c.take(4), Err(CursorError::Truncated { at: 0, wanted: 4 }));
        assert_eq!(c.pos(), 0, "a refused read does not move the cursor");
        let s: &'static str = CursorError::Overflow { at: 3 }.into();
        assert_eq!(s, "integer too large");
    }
}
