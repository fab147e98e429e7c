//! Lower-case hex spelling of bytes, and its strict decoding (either case).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// The sixteen digits, lower case.
const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// The two lower-case hex digits of `b`.
#[inline]
pub fn byte_digits(b: u8) -> [u8; 2] {
    [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 0xf)]]
}

/// Appends the lower-case hex digits of `bytes` to `out`, as bytes.
pub fn encode_into(bytes: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + 2 * bytes.len(), 0);
    encode_to_slice(bytes, &mut out[start..]);
}

/// Writes the lower-case hex digits of `bytes` to the first `2 * bytes.len()` bytes of
/// `out`, a pair at a time (no growth check per digit, as pushing them one by one has).
///
/// # Panics
///
/// If `out` is shorter than `2 * bytes.len()`.
pub fn encode_to_slice(bytes: &[u8], out: &mut [u8]) {
    for (pair, &b) in out[..2 * bytes.len()].chunks_exact_mut(2).zip(bytes) {
        pair.copy_from_slice(&byte_digits(b));
    }
}

/// Appends the lower-case hex digits of `bytes` to `out`.
pub fn push_str(bytes: &[u8], out: &mut String) {
    out.reserve(2 * bytes.len());
    for &b in bytes {
        let [hi, lo] = byte_digits(b);
        out.push(char::from(hi));
        out.push(char::from(lo));
    }
}

/// Lower-case hex of `bytes`.
pub fn encode(bytes: &[u8]) -> String {
    let mut s = String::new();
    push_str(bytes, &mut s);
    s
}

/// The value of one hex digit (either case), or `None`.
#[inline]
pub const fn digit_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Why a hex string could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HexError {
    /// An odd number of digits (the count).
    OddLength(usize),
    /// A character that is not a hex digit, at this byte offset.
    BadDigit(usize),
}

impl fmt::Display for HexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OddLength(n) => write!(f, "odd number of hex digits ({n})"),
            Self::BadDigit(at) => write!(f, "invalid hex digit at offset {at}"),
        }
    }
}

impl core::error::Error for HexError {}

/// Marks a byte that is not a hex digit in [`DIGIT_VALUES`].
const NOT_A_DIGIT: u8 = 0xff;

/// The value of each byte as a hex digit (either case), or [`NOT_A_DIGIT`].
static DIGIT_VALUES: [u8; 256] = {
    let mut table = [NOT_A_DIGIT; 256];
    let mut c = 0;
    while c < 256 {
        if let Some(v) = digit_value(c as u8) {
            table[c] = v;
        }
        c += 1;
    }
    table
};

/// Decodes hex digits of either case into `out` (whose length must be half the digits'),
/// naming the first bad digit. On failure `out` holds unspecified bytes.
///
/// Written for speed: the store packs every hex step of every record it writes with this,
/// and the trace reader every hex step it reads. One table lookup per digit and no branch
/// per digit; the position of a bad digit is searched for only once one is known to exist.
pub fn decode_to_slice(digits: &[u8], out: &mut [u8]) -> Result<(), HexError> {
    if digits.len() % 2 == 1 {
        return Err(HexError::OddLength(digits.len()));
    }
    debug_assert_eq!(out.len(), digits.len() / 2);
    let mut seen = 0u8;
    for (pair, o) in digits.chunks_exact(2).zip(out.iter_mut()) {
        let (hi, lo) = (DIGIT_VALUES[usize::from(pair[0])], DIGIT_VALUES[usize::from(pair[1])]);
        seen |= hi | lo;
        *o = (hi << 4) | (lo & 0x0f);
    }
    // Digit values are below 16: a higher bit comes only from NOT_A_DIGIT.
    if seen > 0x0f {
        let at = digits.iter().position(|&c| DIGIT_VALUES[usize::from(c)] == NOT_A_DIGIT);
        return Err(HexError::BadDigit(at.expect("a byte was not a digit")));
    }
    Ok(())
}

/// Decodes hex digits of either case.
pub fn decode(digits: &[u8]) -> Result<Vec<u8>, HexError> {
    if digits.len() % 2 == 1 {
        return Err(HexError::OddLength(digits.len()));
    }
    let mut out = alloc::vec![0u8; digits.len() / 2];
    decode_to_slice(digits, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn round_trips_and_names_the_bad_digit() {
        assert_eq!(encode(&[0, 255, 0x7a]), "00ff7a");
        let mut v = b"x".to_vec();
        encode_into(&[0xab], &mut v);
        assert_eq!(v, b"xab");
        // Into a longer slice: only the first two digits per byte are written.
        let mut slice = *b"......";
        encode_to_slice(&[0x01, 0xfe], &mut slice);
        assert_eq!(&slice, b"01fe..");
        assert_eq!(decode(b"00ff7A"), Ok(vec![0, 255, 0x7a]));
        assert_eq!(decode(b""), Ok(vec![]));
        assert_eq!(decode(b"abc"), Err(HexError::OddLength(3)));
        assert_eq!(decode(b"zz"), Err(HexError::BadDigit(0)));
        assert_eq!(decode(b"0g"), Err(HexError::BadDigit(1)));
        assert_eq!(decode(b"00ff7a0G"), Err(HexError::BadDigit(7)));
        assert_eq!(decode(b"ab\xffc"), Err(HexError::BadDigit(2)));
        for c in 0..=255u8 {
            assert_eq!(decode(&[b'0', c]).ok().map(|v| v[0]), digit_value(c), "digit {c}");
        }
        for b in 0..=255u8 {
            let d = byte_digits(b);
            assert_eq!(digit_value(d[0]).unwrap() << 4 | digit_value(d[1]).unwrap(), b);
        }
    }
}
