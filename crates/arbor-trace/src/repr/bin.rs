//! The binary form `Repr` gives OCaml values, for the types the traces use.
//!
//! - a variant is its case number as a varint, cases counted from 0 in the order the type
//!   declares them (constant and non-constant cases share the count), then the case's
//!   arguments one after another;
//! - records and tuples are their fields in order, nothing between them;
//! - a `string`, `bytes`, list or array is a varint count, then the bytes or elements;
//! - an `int` is a varint of its 63-bit two's complement (so a negative `int` takes 9 bytes);
//!   an `int32` / `int64` is 4 / 8 bytes big-endian; a `float` is the 8 bytes of its IEEE
//!   bits, big-endian;
//! - a `bool` is one byte, `00` false and any other true (writers use `ff`); an `option` is
//!   `00` for `None`, or `ff` and the value;
//! - `unit` takes no bytes.

use crate::format::DecodeResult;
use crate::types::Path;
use arbor_core::leb128;
use arbor_core::toolbox::Cursor;

/// The `Repr` byte of `true`.
const TRUE: u8 = 0xff;

/// Bits of an OCaml `int`.
const INT_BITS: u32 = 63;

/// Appends an `int64`.
pub(crate) fn put_int64(buf: &mut Vec<u8>, v: i64) {
    buf.extend_from_slice(&v.to_be_bytes());
}

/// Reads an `int64`.
pub(crate) fn int64(c: &mut Cursor<'_>) -> DecodeResult<i64> {
    Ok(c.i64_be()?)
}

/// Appends an OCaml `int` (63 bits; `v` must fit).
pub(crate) fn put_int(buf: &mut Vec<u8>, v: i64) {
    // OCaml shifts the 63-bit pattern right logically: a negative int is its two's
    // complement in 63 bits.
    leb128::write_u64(buf, (v as u64) & ((1 << INT_BITS) - 1));
}

/// Reads an OCaml `int`: a varint of at most 63 bits, sign-extended from bit 62.
pub(crate) fn int(c: &mut Cursor<'_>) -> DecodeResult<i64> {
    let u = c.leb128()?;
    if u >> INT_BITS != 0 {
        return Err("an int larger than 63 bits");
    }
    // Shifting left then arithmetically right copies bit 62 into bit 63.
    Ok(((u << 1) as i64) >> 1)
}

/// Appends a `bool`.
pub(crate) fn put_bool(buf: &mut Vec<u8>, v: bool) {
    buf.push(if v { TRUE } else { 0 });
}

/// Reads a `bool`.
pub(crate) fn boolean(c: &mut Cursor<'_>) -> DecodeResult<bool> {
    Ok(c.u8()? != 0)
}

/// Appends a `string` or `bytes`.
pub(crate) fn put_str(buf: &mut Vec<u8>, s: &[u8]) {
    leb128::write_bytes(buf, s);
}

/// Reads a `string` or `bytes`.
pub(crate) fn str(c: &mut Cursor<'_>) -> DecodeResult<Vec<u8>> {
    Ok(c.bytes()?.to_vec())
}

/// Appends a key: a `string list`.
pub(crate) fn put_key(buf: &mut Vec<u8>, key: &[Vec<u8>]) {
    leb128::write_u64(buf, key.len() as u64);
    for step in key {
        put_str(buf, step);
    }
}

/// Reads a key: a `string list`.
pub(crate) fn key(c: &mut Cursor<'_>) -> DecodeResult<Path> {
    let n = c.count()?;
    let mut k = Vec::with_capacity(n.min(64));
    for _ in 0..n {
        k.push(str(c)?);
    }
    Ok(k)
}

/// Appends an `option`, the value written by `put`.
pub(crate) fn put_option<T>(buf: &mut Vec<u8>, v: &Option<T>, put: impl FnOnce(&mut Vec<u8>, &T)) {
    match v {
        None => buf.push(0),
        Some(x) => {
            buf.push(TRUE);
            put(buf, x);
        }
    }
}

/// Reads an `option`, the value read by `read`.
pub(crate) fn option<T>(
    c: &mut Cursor<'_>,
    read: impl FnOnce(&mut Cursor<'_>) -> DecodeResult<T>,
) -> DecodeResult<Option<T>> {
    if c.u8()? == 0 {
        Ok(None)
    } else {
        read(c).map(Some)
    }
}

/// Appends a variant's case number.
pub(crate) fn put_case(buf: &mut Vec<u8>, case: u64) {
    leb128::write_u64(buf, case);
}

/// Reads a variant's case number.
pub(crate) fn case(c: &mut Cursor<'_>) -> DecodeResult<u64> {
    Ok(c.leb128()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_are_63_bit_varints() {
        for (v, bytes) in [
            (0i64, &[0u8][..]),
            (127, &[0x7f]),
            (128, &[0x80, 0x01]),
            (-1, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
            ((1 << 62) - 1, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f]),
            (-(1 << 62), &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]),
        ] {
            let mut buf = Vec::new();
            put_int(&mut buf, v);
            assert_eq!(buf, bytes, "{v}");
            assert_eq!(int(&mut Cursor::new(&buf)), Ok(v), "{v}");
        }
        // 64 significant bits are no OCaml int.
        let mut buf = Vec::new();
        leb128::write_u64(&mut buf, 1 << 63);
        assert!(int(&mut Cursor::new(&buf)).is_err());
    }

    #[test]
    fn options_and_bools_use_00_and_ff() {
        let mut buf = Vec::new();
        put_option(&mut buf, &Some(true), |b, v| put_bool(b, *v));
        put_option::<bool>(&mut buf, &None, |b, v| put_bool(b, *v));
        assert_eq!(buf, [0xff, 0xff, 0x00]);
        let mut c = Cursor::new(&buf);
        assert_eq!(option(&mut c, boolean), Ok(Some(true)));
        assert_eq!(option(&mut c, boolean), Ok(None));
        assert!(c.is_empty());
    }
}
