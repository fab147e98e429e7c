//! LEB128 integers and a bounds-checked decoding cursor.

/// Appends `v` as an unsigned LEB128 varint (7 bits per byte, low bits first,
/// high bit set on every byte but the last).
pub(crate) fn put_uvarint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Appends `v` zig-zag encoded (0, -1, 1, -2, … map to 0, 1, 2, 3, …).
pub(crate) fn put_ivarint(buf: &mut Vec<u8>, v: i64) {
    put_uvarint(buf, ((v << 1) ^ (v >> 63)) as u64);
}

/// Appends a length-prefixed byte string.
pub(crate) fn put_bytes(buf: &mut Vec<u8>, bytes: &[u8]) {
    put_uvarint(buf, bytes.len() as u64);
    buf.extend_from_slice(bytes);
}

/// A decoding error: a static description of what was malformed.
pub(crate) type DecodeResult<T> = Result<T, &'static str>;

/// Reads primitive values from a byte slice, never past its end.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    /// Whether every byte has been consumed.
    pub(crate) fn is_empty(&self) -> bool {
        self.pos == self.buf.len()
    }

    /// Number of bytes not yet consumed.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// One byte.
    pub(crate) fn u8(&mut self) -> DecodeResult<u8> {
        let b = *self.buf.get(self.pos).ok_or("unexpected end of data")?;
        self.pos += 1;
        Ok(b)
    }

    /// Exactly `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> DecodeResult<&'a [u8]> {
        if n > self.remaining() {
            return Err("length runs past the end of data");
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// An unsigned LEB128 varint of at most 64 bits.
    pub(crate) fn uvarint(&mut self) -> DecodeResult<u64> {
        let mut v: u64 = 0;
        let mut shift = 0u32;
        loop {
            let b = self.u8()?;
            if shift == 63 && b > 1 {
                return Err("varint overflows 64 bits");
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
            if shift > 63 {
                return Err("varint too long");
            }
        }
    }

    /// A varint that must fit in 32 bits.
    pub(crate) fn u32v(&mut self) -> DecodeResult<u32> {
        u32::try_from(self.uvarint()?).map_err(|_| "value does not fit in 32 bits")
    }

    /// A varint used as a length or count: it must not exceed the bytes left
    /// (every counted item takes at least one byte).
    pub(crate) fn count(&mut self) -> DecodeResult<usize> {
        let n = self.uvarint()?;
        if n > self.remaining() as u64 {
            return Err("count larger than the remaining data");
        }
        Ok(n as usize)
    }

    /// A zig-zag signed varint.
    pub(crate) fn ivarint(&mut self) -> DecodeResult<i64> {
        let u = self.uvarint()?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    /// A length-prefixed byte string.
    pub(crate) fn bytes(&mut self) -> DecodeResult<&'a [u8]> {
        let n = self.count()?;
        self.take(n)
    }

    /// A length-prefixed UTF-8 string.
    pub(crate) fn string(&mut self) -> DecodeResult<String> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| "string is not UTF-8")
    }

    /// 32 raw bytes.
    pub(crate) fn hash32(&mut self) -> DecodeResult<[u8; 32]> {
        let mut h = [0u8; 32];
        h.copy_from_slice(self.take(32)?);
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        let values = [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX - 1, u64::MAX];
        let signed = [0i64, -1, 1, -64, 64, i64::MIN, i64::MAX];
        let mut buf = Vec::new();
        for &v in &values {
            put_uvarint(&mut buf, v);
        }
        for &v in &signed {
            put_ivarint(&mut buf, v);
        }
        let mut c = Cursor::new(&buf);
        for &v in &values {
            assert_eq!(c.uvarint().unwrap(), v);
        }
        for &v in &signed {
            assert_eq!(c.ivarint().unwrap(), v);
        }
        assert!(c.is_empty());
    }

    #[test]
    fn overlong_varint_is_rejected() {
        let buf = [0xffu8; 11];
        assert!(Cursor::new(&buf).uvarint().is_err());
        let buf = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert!(Cursor::new(&buf).uvarint().is_err());
    }
}
