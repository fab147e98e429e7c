//! Unsigned LEB128 (7 bits per byte, low bits first, high bit = "more"),
//! the variable-length integer of irmin's inode encodings.

use alloc::vec::Vec;

/// The longest encoding of a `u64`: ceil(64 / 7) bytes.
pub const MAX_LEN: usize = 10;

/// Hands `emit` the LEB128 bytes of `n`, low group first: the one encoding loop, for a
/// buffer on the stack ([`encode_u64`]) and for a growing `Vec` ([`write_u64`]).
#[inline(always)]
fn encode_with(mut n: u64, mut emit: impl FnMut(u8)) {
    while n >= 0x80 {
        emit((n as u8) | 0x80);
        n >>= 7;
    }
    emit(n as u8);
}

/// Encodes `n` into `buf` and returns the number of bytes used. This is the
/// allocation-free form used on the hashing hot path.
#[inline]
pub fn encode_u64(n: u64, buf: &mut [u8; MAX_LEN]) -> usize {
    let mut len = 0;
    encode_with(n, |b| {
        buf[len] = b;
        len += 1;
    });
    len
}

/// Appends the LEB128 encoding of `n` to `out`, a byte at a time: most numbers written are
/// one or two bytes long, and copying an encoded buffer called `memcpy` for each (a commit's
/// records write about 16,000 a block).
#[inline]
pub fn write_u64(out: &mut Vec<u8>, n: u64) {
    out.reserve(MAX_LEN);
    encode_with(n, |b| out.push(b));
}

/// Decodes a LEB128 value at the start of `buf`, returning it with the
/// number of bytes consumed. Returns `None` if the input ends before the
/// last byte, or if the value does not fit in a `u64` (which includes any
/// encoding longer than 10 bytes). Redundant trailing zero groups are
/// accepted, as other LEB128 readers do.
pub fn read_u64(buf: &[u8]) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    for (i, &b) in buf.iter().enumerate().take(MAX_LEN) {
        let bits = u64::from(b & 0x7f);
        if i == MAX_LEN - 1 && bits > 1 {
            // The 10th byte only has room for bit 63.
            return None;
        }
        value |= bits << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// Decodes a LEB128 value from a source of bytes, one byte at a time (a stream that cannot
/// be sliced, such as a file read byte by byte or a value spanning blocks). Returns
/// `Ok(None)` if the value does not fit in a `u64` (the same rule as [`read_u64`]); the
/// source's own errors, such as the end of the input, pass through.
pub fn read_u64_from<E>(mut next: impl FnMut() -> Result<u8, E>) -> Result<Option<u64>, E> {
    let mut value: u64 = 0;
    for i in 0..MAX_LEN {
        let b = next()?;
        let bits = u64::from(b & 0x7f);
        if i == MAX_LEN - 1 && bits > 1 {
            return Ok(None);
        }
        value |= bits << (7 * i);
        if b & 0x80 == 0 {
            return Ok(Some(value));
        }
    }
    Ok(None)
}

/// Appends `n` zig-zag encoded (0, -1, 1, -2, … become 0, 1, 2, 3, …), so that small
/// negative numbers stay short.
pub fn write_i64(out: &mut Vec<u8>, n: i64) {
    write_u64(out, zigzag_encode(n));
}

/// The zig-zag mapping of a signed integer to an unsigned one.
#[inline]
pub fn zigzag_encode(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

/// The inverse of [`zigzag_encode`].
#[inline]
pub fn zigzag_decode(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// Appends a LEB128 length followed by `bytes`.
pub fn write_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    write_u64(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Length in bytes of the LEB128 encoding of `n`.
#[inline]
pub fn len_u64(n: u64) -> usize {
    let bits = 64 - (n | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use proptest::prelude::*;

    #[test]
    fn known_encodings() {
        let cases: &[(u64, &[u8])] = &[
            (0, &[0x00]),
            (1, &[0x01]),
            (127, &[0x7f]),
            (128, &[0x80, 0x01]),
            (300, &[0xac, 0x02]),
            (16_384, &[0x80, 0x80, 0x01]),
            (u64::MAX, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
        ];
        for &(n, bytes) in cases {
            let mut out = Vec::new();
            write_u64(&mut out, n);
            assert_eq!(out, bytes, "encoding {n}");
            assert_eq!(len_u64(n), bytes.len());
            assert_eq!(read_u64(bytes), Some((n, bytes.len())));
        }
    }

    #[test]
    fn rejects_truncated_and_overflowing() {
        assert_eq!(read_u64(&[]), None);
        assert_eq!(read_u64(&[0x80]), None);
        assert_eq!(read_u64(&[0xff; 9]), None);
        // 10th byte carrying more than bit 63.
        let mut too_big = vec![0xff; 9];
        too_big.push(0x02);
        assert_eq!(read_u64(&too_big), None);
        // Eleven bytes.
        let mut too_long = vec![0x80; 10];
        too_long.push(0x00);
        assert_eq!(read_u64(&too_long), None);
        // Trailing data after the value is left alone.
        assert_eq!(read_u64(&[0x05, 0xff]), Some((5, 1)));
    }

    #[test]
    fn byte_at_a_time_matches_slices() {
        for bytes in [&[0x05][..], &[0xac, 0x02], &[0xff; 9], &[0xff; 11], &[0x80, 0x80]] {
            let mut it = bytes.iter().copied();
            let streamed = read_u64_from(|| it.next().ok_or("end"));
            match read_u64(bytes) {
                Some((n, _)) => assert_eq!(streamed, Ok(Some(n))),
                // Cut short: the source's error; too long or too large: `None`.
                None if bytes.len() < MAX_LEN => assert_eq!(streamed, Err("end")),
                None => assert_eq!(streamed, Ok(None)),
            }
        }
    }

    #[test]
    fn zigzag_round_trips() {
        for n in [0i64, -1, 1, -64, 64, i64::MIN, i64::MAX] {
            assert_eq!(zigzag_decode(zigzag_encode(n)), n);
        }
        assert_eq!([0, -1, 1, -2].map(zigzag_encode), [0, 1, 2, 3]);
    }

    proptest! {
        #[test]
        fn round_trip(n in any::<u64>(), tail in proptest::collection::vec(any::<u8>(), 0..4)) {
            let mut out = Vec::new();
            write_u64(&mut out, n);
            prop_assert_eq!(out.len(), len_u64(n));
            let used = out.len();
            out.extend_from_slice(&tail);
            prop_assert_eq!(read_u64(&out), Some((n, used)));
        }

        #[test]
        fn round_trip_small_shifts(shift in 0u32..64, low in any::<u64>()) {
            // Cover every encoded length evenly, which uniform u64s do not.
            let n = (1u64 << shift) | (low >> (64 - shift.max(1)));
            let mut out = Vec::new();
            write_u64(&mut out, n);
            prop_assert_eq!(out.len(), len_u64(n));
            prop_assert_eq!(read_u64(&out), Some((n, out.len())));
        }
    }
}
