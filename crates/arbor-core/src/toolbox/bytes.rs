//! Equality and byte order of short byte strings, compared a word at a time in line.
//!
//! The steps a block walks are short: `balance`, `counter`, a big-map id, a contract's
//! 20-to-36-byte hash. Each comparison through `[u8]`'s `==` or `cmp` is a call to the C
//! library's `memcmp`, which for strings this short costs more in the call and its dispatch
//! than in the comparison: a replay of the tezos-mainnet workload spent 4.6% of its samples in
//! `memcmp`, from the lookup memo's path, the searches' long steps and the trails' checks.
//! These compare eight bytes at a time (the last word overlapping the one before it), so the
//! loop for a 32-byte step is four loads a side.

use core::cmp::Ordering;

/// Strings longer than this are compared by the slices' own methods: past it, `memcmp`'s
/// vector loop wins.
const IN_LINE: usize = 64;

/// The eight bytes of `s` from `at`, as a big-endian number: numbers compare as the bytes do.
#[inline(always)]
fn word(s: &[u8], at: usize) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_be_bytes(w)
}

/// Whether `a` and `b` hold the same bytes: once the lengths agree, a word at a time as
/// [`cmp`] reads them, but in the machine's byte order (equality needs no order, so no byte
/// swap), and a string of four to seven bytes as two overlapping 4-byte halves.
#[inline]
pub fn eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n > IN_LINE {
        return a == b;
    }
    if n >= 8 {
        let mut at = 0;
        loop {
            let here = at.min(n - 8);
            if native::<8>(a, here) != native::<8>(b, here) {
                return false;
            }
            if here + 8 == n {
                return true;
            }
            at += 8;
        }
    }
    if n >= 4 {
        return native::<4>(a, 0) == native::<4>(b, 0) && native::<4>(a, n - 4) == native::<4>(b, n - 4);
    }
    a.iter().zip(b).all(|(x, y)| x == y)
}

/// The `N` bytes of `s` from `at` (at most eight), as a number in the machine's byte order.
#[inline(always)]
fn native<const N: usize>(s: &[u8], at: usize) -> u64 {
    let mut w = [0; 8];
    w[..N].copy_from_slice(&s[at..at + N]);
    u64::from_ne_bytes(w)
}

/// The byte order of `a` and `b` (a prefix first), as `a.cmp(b)`.
#[inline]
pub fn cmp(a: &[u8], b: &[u8]) -> Ordering {
    let common = a.len().min(b.len());
    if common > IN_LINE {
        return a.cmp(b);
    }
    if common >= 8 {
        let mut at = 0;
        loop {
            // The last word ends where the shorter string does, overlapping the one before:
            // the bytes read twice were equal the first time.
            let here = at.min(common - 8);
            let order = word(a, here).cmp(&word(b, here));
            if order != Ordering::Equal {
                return order;
            }
            if here + 8 == common {
                break;
            }
            at += 8;
        }
    } else {
        for (x, y) in a.iter().zip(b) {
            if x != y {
                return x.cmp(y);
            }
        }
    }
    a.len().cmp(&b.len())
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use crate::toolbox::SplitMix64;

    /// Strings of every length up to past the in-line bound, mostly sharing long prefixes
    /// (where a comparison reads the most words), some differing at one byte or in length.
    fn strings(rng: &mut SplitMix64) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for len in 0..80 {
            let base: Vec<u8> = (0..len).map(|_| b"ab\x00\xff"[rng.below(4) as usize]).collect();
            for _ in 0..6 {
                let mut s = base.clone();
                match rng.below(4) {
                    0 if len > 0 => {
                        let at = rng.below(len as u64) as usize;
                        s[at] = rng.below(256) as u8;
                    }
                    1 => s.push(rng.below(256) as u8),
                    2 if len > 0 => {
                        s.pop();
                    }
                    _ => {}
                }
                out.push(s);
            }
        }
        out
    }

    #[test]
    fn equality_and_order_are_the_slices_own() {
        let mut rng = SplitMix64::new(7);
        let all = strings(&mut rng);
        let mut checked = 0;
        for a in &all {
            // Every string against those of nearby lengths, where lengths alone do not decide.
            for b in all.iter().filter(|b| b.len().abs_diff(a.len()) <= 1) {
                assert_eq!(super::eq(a, b), a == b, "eq of {a:?} and {b:?}");
                assert_eq!(super::cmp(a, b), a.cmp(b), "cmp of {a:?} and {b:?}");
                checked += 1;
            }
        }
        assert!(checked > 8_000, "{checked} pairs");
    }
}
