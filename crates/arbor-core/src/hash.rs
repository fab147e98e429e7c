//! The 32-byte Blake2b digest that names every object of the context, with
//! its hex and "Co…" base58check spellings.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::base58::{base58check_decode, base58check_encode};
pub use crate::error::HashParseError;
use crate::toolbox::hex;

/// Base58check prefix of a Tezos context hash; it makes the text start with "Co".
pub const CONTEXT_HASH_PREFIX: [u8; 2] = [0x4f, 0xc7];

/// A Blake2b-256 digest: the hash of a contents value, a node or a commit.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hash(pub [u8; 32]);

impl Hash {
    /// Length of a hash in bytes.
    pub const LEN: usize = 32;

    /// The raw digest bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Lower-case hex spelling (64 characters).
    pub fn to_hex(&self) -> String {
        hex::encode(&self.0)
    }

    /// Parses exactly 64 hex characters (either case).
    pub fn from_hex(s: &str) -> Result<Hash, HashParseError> {
        let bytes = s.as_bytes();
        if bytes.len() != 2 * Self::LEN {
            return Err(HashParseError::HexLength(bytes.len()));
        }
        let mut out = [0u8; 32];
        hex::decode_to_slice(bytes, &mut out).map_err(|e| match e {
            hex::HexError::BadDigit(at) => HashParseError::HexChar(at),
            // The length was checked above.
            _ => HashParseError::HexLength(bytes.len()),
        })?;
        Ok(Hash(out))
    }

    /// The Octez spelling of a context hash: base58check of `4f c7 ‖ hash`.
    pub fn to_base58(&self) -> String {
        base58check_encode(&CONTEXT_HASH_PREFIX, &self.0)
    }

    /// Parses a "Co…" context hash, checking its checksum, prefix and length.
    pub fn from_base58(s: &str) -> Result<Hash, HashParseError> {
        let (prefix, payload) = base58check_decode(s, CONTEXT_HASH_PREFIX.len())?;
        if prefix != CONTEXT_HASH_PREFIX {
            return Err(HashParseError::WrongPrefix);
        }
        let bytes: [u8; 32] =
            payload.as_slice().try_into().map_err(|_| HashParseError::PayloadLength(payload.len()))?;
        Ok(Hash(bytes))
    }

    /// Accepts either spelling: 64 hex characters or a "Co…" base58check hash.
    pub fn parse(s: &str) -> Result<Hash, HashParseError> {
        // A base58 context hash is 52 characters, so the length alone decides.
        if s.len() == 2 * Self::LEN {
            Self::from_hex(s)
        } else {
            Self::from_base58(s)
        }
    }
}

impl core::str::FromStr for Hash {
    type Err = HashParseError;

    /// Either spelling, as [`Hash::parse`]: 64 hex characters or a "Co…" base58check hash.
    fn from_str(s: &str) -> Result<Hash, HashParseError> {
        Hash::parse(s)
    }
}

/// With the `serde` feature, a hash is the string of its 64 lower-case hex characters (and
/// either spelling is accepted when read back, as [`Hash::parse`] does).
#[cfg(feature = "serde")]
impl serde::Serialize for Hash {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0u8; 2 * Hash::LEN];
        for (pair, &b) in buf.chunks_exact_mut(2).zip(&self.0) {
            pair.copy_from_slice(&hex::byte_digits(b));
        }
        serializer.serialize_str(core::str::from_utf8(&buf).expect("hex digits are ASCII"))
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Hash {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Hash, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = Hash;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a context hash: 64 hex characters or a \"Co…\" base58check string")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Hash, E> {
                Hash::parse(s).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Text)
    }
}

impl From<[u8; 32]> for Hash {
    fn from(bytes: [u8; 32]) -> Self {
        Hash(bytes)
    }
}

impl AsRef<[u8]> for Hash {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Hash {
    /// The first 8 bytes in hex: enough to tell hashes apart in logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Hash(")?;
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        f.write_str("…)")
    }
}

impl fmt::Display for Hash {
    /// The "Co…" base58check form, as Octez prints context hashes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_base58())
    }
}

/// A fresh Blake2b state with a 32-byte digest, for incremental hashing.
#[inline]
pub(crate) fn blake2b_state() -> blake2b_simd::State {
    blake2b_simd::Params::new().hash_length(Hash::LEN).to_state()
}

/// Turns a finished 32-byte Blake2b state into a [`Hash`].
#[inline]
pub(crate) fn finish(state: &blake2b_simd::State) -> Hash {
    let digest = state.finalize();
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_bytes());
    Hash(out)
}

/// Where the input of a hash is written, piece by piece: a [`Feed`] hashing it as it comes,
/// or [`Pieces`] keeping it for a batch of hashes.
pub(crate) trait Input {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);

    /// Appends one byte.
    #[inline(always)]
    fn put_byte(&mut self, b: u8) {
        self.put(&[b]);
    }

    /// Appends `n` as LEB128.
    #[inline(always)]
    fn put_leb(&mut self, n: u64) {
        // Nearly every number of a node's encoding (a step's length, a slot, a count) is
        // below 128: one byte, put as a constant-length piece.
        if n < 0x80 {
            self.put_byte(n as u8);
            return;
        }
        let mut buf = [0u8; crate::leb128::MAX_LEN];
        let len = crate::leb128::encode_u64(n, &mut buf);
        self.put(&buf[..len]);
    }
}

impl Input for Feed {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        Feed::put(self, bytes);
    }
}

impl Input for Pieces {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        Pieces::put(self, bytes);
    }
}

/// Bytes a [`Feed`] gathers before handing them to Blake2b: eight of its 128-byte blocks.
const FEED_LEN: usize = 1024;

/// A Blake2b-256 hash of bytes written in many small pieces.
///
/// A node's encoding is tags, lengths, steps and hashes of a few bytes each; handing each
/// piece to Blake2b's own state costs more than the piece (its bookkeeping runs per call).
/// A feed gathers the pieces on the stack and hands Blake2b whole runs of blocks, and hashes
/// an encoding that fits in one run with the one-shot function.
pub(crate) struct Feed {
    state: Option<blake2b_simd::State>,
    buf: [u8; FEED_LEN],
    len: usize,
}

impl Feed {
    /// An empty feed.
    #[inline]
    pub(crate) fn new() -> Feed {
        Feed { state: None, buf: [0; FEED_LEN], len: 0 }
    }

    /// Appends `bytes` to the hashed input.
    // Always inlined: most pieces have a length known where they are put (a hash, a tag),
    // and the copy is then one or two moves.
    #[inline(always)]
    pub(crate) fn put(&mut self, bytes: &[u8]) {
        if self.len + bytes.len() > FEED_LEN {
            self.flush();
            if bytes.len() > FEED_LEN {
                self.state.get_or_insert_with(blake2b_state).update(bytes);
                return;
            }
        }
        copy_short(&mut self.buf[self.len..self.len + bytes.len()], bytes);
        self.len += bytes.len();
    }

    #[inline(never)]
    fn flush(&mut self) {
        self.state.get_or_insert_with(blake2b_state).update(&self.buf[..self.len]);
        self.len = 0;
    }

    /// The hash of everything appended.
    #[inline]
    pub(crate) fn finish(mut self) -> Hash {
        if self.state.is_none() {
            let digest = blake2b_simd::Params::new().hash_length(Hash::LEN).hash(&self.buf[..self.len]);
            let mut out = [0u8; 32];
            out.copy_from_slice(digest.as_bytes());
            return Hash(out);
        }
        self.flush();
        finish(self.state.as_ref().expect("flush made the state"))
    }
}

/// Bytes written in many small pieces into a buffer that grows and is kept: the inputs of a
/// batch of hashes (`tezos::HashBatch`). As in a [`Feed`], each piece is copied with
/// [`copy_short`]: `Vec::extend_from_slice` calls `memcpy` for every piece, and those calls
/// were 5% of a replay's samples.
#[derive(Debug, Default)]
pub(crate) struct Pieces {
    /// The bytes appended, then room for more (the buffer only grows).
    buf: Vec<u8>,
    len: usize,
}

impl Pieces {
    /// Appends `bytes`.
    #[inline(always)]
    pub(crate) fn put(&mut self, bytes: &[u8]) {
        let end = self.len + bytes.len();
        if end > self.buf.len() {
            self.grow(end);
        }
        copy_short(&mut self.buf[self.len..end], bytes);
        self.len = end;
    }

    #[inline(never)]
    fn grow(&mut self, end: usize) {
        self.buf.resize(end.max(2 * self.buf.len()).max(4096), 0);
    }

    /// Bytes of room the buffer holds.
    pub(crate) fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Bytes appended so far.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bytes appended.
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Forgets the bytes, keeping the buffer.
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }
}

/// `dst.copy_from_slice(src)`, without a call to `memcpy` for a piece of at most 64 bytes.
///
/// Nearly every piece of a node's encoding is a step, a length or a hash of a few to 46 bytes,
/// and a node's hash copies three or four of them per binding: the library call (its
/// dispatch on the length) cost more than the copy, a tenth of the hashing threads' time. Two
/// fixed-size copies that overlap in the middle cover every length of a range, as `memcpy`
/// does inside.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    match n {
        0 => {}
        1..=3 => {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
        4..=7 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[n - 4..].copy_from_slice(&src[n - 4..]);
        }
        8..=16 => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..].copy_from_slice(&src[n - 8..]);
        }
        17..=32 => {
            dst[..16].copy_from_slice(&src[..16]);
            dst[n - 16..].copy_from_slice(&src[n - 16..]);
        }
        33..=64 => {
            dst[..32].copy_from_slice(&src[..32]);
            dst[n - 32..].copy_from_slice(&src[n - 32..]);
        }
        _ => dst.copy_from_slice(src),
    }
}

/// Blake2b-256 of the concatenation of `parts`, without building it.
pub fn blake2b_256(parts: &[&[u8]]) -> Hash {
    let mut state = blake2b_state();
    for part in parts {
        state.update(part);
    }
    finish(&state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::vec::Vec;

    #[test]
    fn feed_hashes_what_one_state_hashes() {
        // Pieces of every size around the buffer's length, so that every path of `put` runs:
        // one-shot, flushed runs, and a piece longer than the buffer.
        for sizes in [&[0usize][..], &[1, 2, 3], &[1023, 1], &[1024, 1], &[1000, 30, 5000, 7], &[64; 40]] {
            let mut feed = Feed::new();
            let mut all = Vec::new();
            for (i, &n) in sizes.iter().enumerate() {
                let piece: Vec<u8> = (0..n).map(|j| (i * 31 + j) as u8).collect();
                feed.put(&piece);
                all.extend_from_slice(&piece);
            }
            assert_eq!(feed.finish(), blake2b_256(&[&all]), "pieces {sizes:?}");
        }
    }

    #[test]
    fn short_copies_copy_every_length() {
        let src: Vec<u8> = (1..=100u8).collect();
        for n in 0..=src.len() {
            let mut dst = [0u8; 100];
            copy_short(&mut dst[..n], &src[..n]);
            assert_eq!(&dst[..n], &src[..n], "length {n}");
            assert!(dst[n..].iter().all(|&b| b == 0), "length {n} wrote past its end");
        }
    }

    const HEX: &str = "d81e60258ecc8bd7064c8703888aececfc54e29ff94f7a2d9a84667a500548e1";
    const B58: &str = "CoWHVKM5r2eiHQxhicqakkr5FwJfabahGBwCCWzRPCNPs79CoZty";

    #[test]
    fn from_str_takes_either_spelling_and_names_the_error() {
        let h: Hash = HEX.parse().unwrap();
        assert_eq!(h.to_base58().parse::<Hash>(), Ok(h));
        // Neither 64 hex characters nor a base58check hash: refused, with the reason.
        assert!("abc".parse::<Hash>().is_err());
        assert_eq!("0OIl".parse::<Hash>(), Err(HashParseError::Base58Char(0)));
        let mut bad = String::from(HEX);
        bad.replace_range(10..11, "x");
        assert_eq!(bad.parse::<Hash>(), Err(HashParseError::HexChar(10)));
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_uses_the_hex_string() {
        let h = Hash::from_hex(HEX).unwrap();
        let json = serde_json::to_string(&h).unwrap();
        assert_eq!(json, alloc::format!("\"{HEX}\""));
        assert_eq!(serde_json::from_str::<Hash>(&json).unwrap(), h);
        let b58 = alloc::format!("\"{}\"", h.to_base58());
        assert_eq!(serde_json::from_str::<Hash>(&b58).unwrap(), h);
        let err = alloc::string::ToString::to_string(&serde_json::from_str::<Hash>("\"0123\"").unwrap_err());
        assert!(err.contains("base58"), "{err}");
        assert!(serde_json::from_str::<Hash>("12").is_err());
    }

    #[test]
    fn hex_and_base58_agree() {
        let h = Hash::from_hex(HEX).unwrap();
        assert_eq!(h.to_hex(), HEX);
        assert_eq!(h.to_base58(), B58);
        assert_eq!(format!("{h}"), B58);
        assert_eq!(format!("{h:?}"), "Hash(d81e60258ecc8bd7…)");
        assert_eq!(Hash::from_base58(B58), Ok(h));
        assert_eq!(Hash::parse(B58), Ok(h));
        assert_eq!(Hash::parse(HEX), Ok(h));
        assert_eq!(Hash::parse(&HEX.to_uppercase()), Ok(h));
    }

    #[test]
    fn rejects_malformed() {
        assert_eq!(Hash::from_hex("abc"), Err(HashParseError::HexLength(3)));
        let mut bad = alloc::string::String::from(HEX);
        bad.replace_range(10..11, "g");
        assert_eq!(Hash::from_hex(&bad), Err(HashParseError::HexChar(10)));
        // Right checksum but another prefix (a block hash, "B…").
        let block = base58check_encode(&[0x01, 0x34], &[0u8; 32]);
        assert_eq!(Hash::from_base58(&block), Err(HashParseError::WrongPrefix));
        // Right prefix, short payload.
        let short = base58check_encode(&CONTEXT_HASH_PREFIX, &[0u8; 31]);
        assert_eq!(Hash::from_base58(&short), Err(HashParseError::PayloadLength(31)));
        // Flipped last character: checksum mismatch.
        let mut flipped = alloc::string::String::from(B58);
        flipped.pop();
        flipped.push('z');
        assert_eq!(Hash::parse(&flipped), Err(HashParseError::BadChecksum));
    }

    #[test]
    fn blake2b_256_hashes_the_concatenation() {
        let whole = blake2b_256(&[b"hello world"]);
        assert_eq!(blake2b_256(&[b"hello", b" ", b"world"]), whole);
        assert_eq!(blake2b_256(&[b"", b"hello world", b""]), whole);
        // Blake2b-256 of the empty string.
        assert_eq!(blake2b_256(&[]).to_hex(), "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8");
    }
}
