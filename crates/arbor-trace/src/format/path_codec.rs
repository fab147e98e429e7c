//! Compact path encoding, reset at the start of every block.
//!
//! A path is written as the number of leading steps it shares with the
//! previous path of the block, the number of new steps, then each new step.
//! A step is either a reference into the block's step table or a definition
//! that appends to it; definitions pack canonical decimal numbers as varints
//! and lowercase even-length hex strings as their bytes. See `docs/TRACE.md`.

use crate::format::DecodeResult;
use arbor_core::leb128;
use arbor_core::toolbox::{hex, Cursor};
use rustc_hash::FxHashMap;

/// Step code: a raw byte string follows.
const STEP_RAW: u64 = 0;
/// Step code: the bytes of a lowercase hex string follow.
const STEP_HEX: u64 = 1;
/// Step code: a canonical decimal number follows as a varint.
const STEP_DEC: u64 = 2;
/// First step code that refers to the table (`code - STEP_REF` is the index).
const STEP_REF: u64 = 3;

/// Path header byte announcing two varints (shared, fresh) instead of the
/// packed form `shared << 4 | fresh`.
const LONG_HEADER: u8 = 0xff;

/// How a step is packed when first defined.
enum StepForm {
    Raw,
    Hex,
    Dec(u64),
}

fn classify(step: &[u8]) -> StepForm {
    if let Some(n) = canonical_decimal(step) {
        return StepForm::Dec(n);
    }
    if step.len() >= 2
        && step.len().is_multiple_of(2)
        && step.iter().all(|&c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
    {
        return StepForm::Hex;
    }
    StepForm::Raw
}

/// The number spelled by `step` when it is written exactly as `u64`'s
/// `to_string` would write it (no sign, no leading zero).
fn canonical_decimal(step: &[u8]) -> Option<u64> {
    if step.is_empty() || step.len() > 19 || !step.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if step.len() > 1 && step[0] == b'0' {
        return None;
    }
    let mut n: u64 = 0;
    for &c in step {
        n = n * 10 + u64::from(c - b'0');
    }
    Some(n)
}

/// Checks that every step of `path` is non-empty.
pub(crate) fn check_path<S: AsRef<[u8]>>(path: &[S]) -> Result<(), &'static str> {
    if path.iter().any(|s| s.as_ref().is_empty()) {
        Err("empty path step")
    } else {
        Ok(())
    }
}

/// Encoder side of the per-block path state.
#[derive(Default)]
pub(crate) struct PathEncoder {
    table: FxHashMap<Vec<u8>, u64>,
    /// Steps of the previous path; only the first `prev_len` are meaningful
    /// (the rest keep their allocations for reuse).
    prev: Vec<Vec<u8>>,
    prev_len: usize,
    scratch: Vec<u8>,
}

impl PathEncoder {
    /// Forgets the step table and the previous path (start of a block).
    pub(crate) fn reset(&mut self) {
        self.table.clear();
        self.prev_len = 0;
    }

    /// Appends the encoding of `path` to `buf`.
    pub(crate) fn encode<S: AsRef<[u8]>>(&mut self, buf: &mut Vec<u8>, path: &[S]) -> Result<(), &'static str> {
        check_path(path)?;
        let shared =
            path.iter().zip(&self.prev[..self.prev_len]).take_while(|(a, b)| a.as_ref() == b.as_slice()).count();
        let fresh = path.len() - shared;
        if shared < 15 && fresh < 16 {
            buf.push(((shared as u8) << 4) | fresh as u8);
        } else {
            buf.push(LONG_HEADER);
            leb128::write_u64(buf, shared as u64);
            leb128::write_u64(buf, fresh as u64);
        }
        for (i, step) in path.iter().enumerate().skip(shared) {
            let step = step.as_ref();
            self.encode_step(buf, step);
            if i < self.prev.len() {
                self.prev[i].clear();
                self.prev[i].extend_from_slice(step);
            } else {
                self.prev.push(step.to_vec());
            }
        }
        self.prev_len = path.len();
        Ok(())
    }

    /// Whether `path` is exactly the previous path of the block.
    pub(crate) fn is_previous<S: AsRef<[u8]>>(&self, path: &[S]) -> bool {
        path.len() == self.prev_len && path.iter().zip(&self.prev).all(|(a, b)| a.as_ref() == b.as_slice())
    }

    fn encode_step(&mut self, buf: &mut Vec<u8>, step: &[u8]) {
        if let Some(&idx) = self.table.get(step) {
            leb128::write_u64(buf, STEP_REF + idx);
            return;
        }
        match classify(step) {
            StepForm::Dec(n) => {
                leb128::write_u64(buf, STEP_DEC);
                leb128::write_u64(buf, n);
            }
            StepForm::Hex => {
                self.scratch.clear();
                self.scratch.resize(step.len() / 2, 0);
                // `classify` saw an even count of lower-case hex digits, so this cannot fail.
                let decoded = hex::decode_to_slice(step, &mut self.scratch);
                debug_assert!(decoded.is_ok());
                leb128::write_u64(buf, STEP_HEX);
                leb128::write_bytes(buf, &self.scratch);
            }
            StepForm::Raw => {
                leb128::write_u64(buf, STEP_RAW);
                leb128::write_bytes(buf, step);
            }
        }
        let idx = self.table.len() as u64;
        self.table.insert(step.to_vec(), idx);
    }
}

/// Decoder side of the per-block path state. Step buffers are reused from
/// block to block, so decoding allocates only when a longer step than ever
/// before appears.
#[derive(Default)]
pub(crate) struct PathDecoder {
    table: Vec<Vec<u8>>,
    table_len: usize,
    prev: Vec<Vec<u8>>,
    prev_len: usize,
}

/// Writes a decoded step definition into `out`.
fn define_step(code: u64, c: &mut Cursor<'_>, out: &mut Vec<u8>) -> DecodeResult<()> {
    out.clear();
    match code {
        STEP_RAW => {
            let b = c.bytes()?;
            if b.is_empty() {
                return Err("empty path step");
            }
            out.extend_from_slice(b);
        }
        STEP_HEX => {
            let b = c.bytes()?;
            if b.is_empty() {
                return Err("empty hex path step");
            }
            hex::encode_into(b, out);
        }
        _ => {
            let n = c.leb128()?;
            let mut digits = [0u8; 20];
            let mut i = digits.len();
            let mut v = n;
            loop {
                i -= 1;
                digits[i] = b'0' + (v % 10) as u8;
                v /= 10;
                if v == 0 {
                    break;
                }
            }
            out.extend_from_slice(&digits[i..]);
        }
    }
    Ok(())
}

impl PathDecoder {
    /// Forgets the step table and the previous path (start of a block).
    pub(crate) fn reset(&mut self) {
        self.table_len = 0;
        self.prev_len = 0;
    }

    /// Decodes one path; it is then [`PathDecoder::current`].
    pub(crate) fn decode(&mut self, c: &mut Cursor<'_>) -> DecodeResult<()> {
        let b = c.u8()?;
        let (shared, fresh) = if b == LONG_HEADER {
            (c.leb128()?, c.count()?)
        } else if b < 0xf0 {
            (u64::from(b >> 4), usize::from(b & 15))
        } else {
            return Err("reserved path header byte");
        };
        if shared > self.prev_len as u64 {
            return Err("path shares more steps than the previous path has");
        }
        let shared = shared as usize;
        for i in shared..shared + fresh {
            if i == self.prev.len() {
                self.prev.push(Vec::new());
            }
            let code = c.leb128()?;
            let slot = &mut self.prev[i];
            if code >= STEP_REF {
                let step = usize::try_from(code - STEP_REF)
                    .ok()
                    .filter(|&k| k < self.table_len)
                    .map(|k| &self.table[k])
                    .ok_or("reference to an undefined path step")?;
                slot.clear();
                slot.extend_from_slice(step);
            } else {
                define_step(code, c, slot)?;
                if self.table_len == self.table.len() {
                    self.table.push(Vec::new());
                }
                let entry = &mut self.table[self.table_len];
                entry.clear();
                entry.extend_from_slice(slot);
                self.table_len += 1;
            }
        }
        self.prev_len = shared + fresh;
        Ok(())
    }

    /// The last decoded path.
    pub(crate) fn current(&self) -> &[Vec<u8>] {
        &self.prev[..self.prev_len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Path;

    fn p(s: &str) -> Path {
        if s.is_empty() {
            return Vec::new();
        }
        s.split('/').map(|x| x.as_bytes().to_vec()).collect()
    }

    #[test]
    fn paths_round_trip_and_share_prefixes() {
        let paths = [
            p("data/contracts/index/0001f46d63a0/balance"),
            p("data/contracts/index/0001f46d63a0/balance"),
            p("data/contracts/index/0001f46d63a0/counter"),
            p("data/big_maps/index/347456/total_bytes"),
            p("data/cycle/0558/random_seed"),
            p("data/cycle/558/0"),
            p("AB/abc/0x/-1/00"),
            p(""),
            p("data"),
        ];
        let mut enc = PathEncoder::default();
        let mut buf = Vec::new();
        for path in &paths {
            enc.encode(&mut buf, path).unwrap();
        }
        let mut dec = PathDecoder::default();
        let mut c = Cursor::new(&buf);
        for path in &paths {
            dec.decode(&mut c).unwrap();
            assert_eq!(dec.current(), path.as_slice());
        }
        assert!(c.is_empty());
    }

    #[test]
    fn empty_step_is_rejected() {
        let mut enc = PathEncoder::default();
        let path: Vec<&[u8]> = vec![b"data", b""];
        assert!(enc.encode(&mut Vec::new(), &path).is_err());
    }

    #[test]
    fn decimal_detection_is_canonical() {
        assert!(canonical_decimal(b"0").is_some());
        assert!(canonical_decimal(b"347456").is_some());
        assert!(canonical_decimal(b"01").is_none());
        assert!(canonical_decimal(b"99999999999999999999").is_none());
    }
}
