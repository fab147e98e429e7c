//! A reusable path builder that hands out borrowed steps without allocating.

use crate::types::Path;
use arbor_core::toolbox::hex;

/// Most steps a generated path has.
pub(crate) const MAX_STEPS: usize = 10;

/// Steps packed in one byte buffer; reused from path to path.
#[derive(Default, Clone)]
pub(crate) struct PathBuf {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl PathBuf {
    /// Forgets all steps.
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Number of steps.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Keeps the first `n` steps.
    pub(crate) fn truncate(&mut self, n: usize) {
        if n < self.ends.len() {
            self.ends.truncate(n);
            self.bytes.truncate(self.ends.last().copied().unwrap_or(0));
        }
    }

    /// Appends a step.
    pub(crate) fn push(&mut self, step: &[u8]) {
        self.bytes.extend_from_slice(step);
        self.ends.push(self.bytes.len());
    }

    /// Appends the lowercase hex spelling of `raw` as one step.
    pub(crate) fn push_hex(&mut self, raw: &[u8]) {
        hex::encode_into(raw, &mut self.bytes);
        self.ends.push(self.bytes.len());
    }

    /// Appends the decimal spelling of `n` as one step.
    pub(crate) fn push_dec(&mut self, n: u64) {
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
        self.push(&digits[i..]);
    }

    /// Appends several static steps.
    pub(crate) fn extend(&mut self, steps: &[&[u8]]) {
        for s in steps {
            self.push(s);
        }
    }

    /// The steps as borrowed slices, in an array of which the first
    /// [`PathBuf::len`] entries are meaningful.
    pub(crate) fn slices(&self) -> [&[u8]; MAX_STEPS] {
        let mut out: [&[u8]; MAX_STEPS] = [&[]; MAX_STEPS];
        let mut start = 0;
        for (i, &end) in self.ends.iter().enumerate() {
            out[i] = &self.bytes[start..end];
            start = end;
        }
        out
    }

    /// An owned copy of the path.
    pub(crate) fn to_path(&self) -> Path {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let s = self.bytes[start..end].to_vec();
                start = end;
                s
            })
            .collect()
    }

    /// The steps from position `from` on, as an owned relative path.
    pub(crate) fn suffix(&self, from: usize) -> Path {
        let mut p = self.to_path();
        p.drain(..from.min(p.len()));
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_paths() {
        let mut pb = PathBuf::default();
        pb.extend(&[b"data", b"cycle"]);
        pb.push_dec(558);
        pb.push_hex(&[0x00, 0xaf]);
        let s = pb.slices();
        assert_eq!(&s[..pb.len()], &[&b"data"[..], b"cycle", b"558", b"00af"]);
        pb.truncate(2);
        pb.push_dec(0);
        assert_eq!(pb.to_path(), vec![b"data".to_vec(), b"cycle".to_vec(), b"0".to_vec()]);
        assert_eq!(pb.suffix(2), vec![b"0".to_vec()]);
    }
}
