//! SplitMix64: a tiny, fast, seedable generator with a 64-bit state. Every test, benchmark
//! and workload generator of the workspace draws from it, so that a seed reproduces a run
//! bit for bit. Not for secrets.

/// The increment of the state: the odd integer closest to 2^64 / φ.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 output function: a strong 64-bit mixer, also usable alone to hash an index.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The generator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed` (every seed is fine, 0 included).
    pub const fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        Self::step(&mut self.state)
    }

    /// The same step on a bare `u64` state, for callers that keep the state themselves.
    #[inline]
    pub fn step(state: &mut u64) -> u64 {
        *state = state.wrapping_add(GAMMA);
        mix64(*state)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-high: no division, bias below 2^-32 for
    /// ranges under 2^32.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi` (`lo <= hi`, and not the whole `u64` range).
    #[inline]
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// Uniform in `[0, 1)`, with 53 random bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Skips `n` outputs in O(1), leaving the generator exactly where `n` calls to
    /// [`SplitMix64::next_u64`] would.
    pub fn skip(&mut self, n: u64) {
        self.state = self.state.wrapping_add(n.wrapping_mul(GAMMA));
    }

    /// Fills `out` with random bytes (one output per 8 bytes, little-endian).
    pub fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let w = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }

    /// Shuffles `v` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i as u64 + 1) as usize);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_outputs_and_skip() {
        // The first outputs for seed 0 of the reference SplitMix64.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        let (mut a, mut b) = (SplitMix64::new(5), SplitMix64::new(5));
        for _ in 0..13 {
            a.next_u64();
        }
        b.skip(13);
        assert_eq!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn ranges_stay_in_bounds() {
        let mut r = SplitMix64::new(7);
        for _ in 0..10_000 {
            assert!(r.below(10) < 10);
            assert!((3..=5).contains(&r.range(3, 5)));
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
        }
        let mut v = [1, 2, 3, 4, 5];
        r.shuffle(&mut v);
        v.sort_unstable();
        assert_eq!(v, [1, 2, 3, 4, 5]);
    }
}
