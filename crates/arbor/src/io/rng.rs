//! [`SplitMix64`]: the small seedable generator the fault-injecting layers
//! use to choose tear points, fault instants and garbage bytes, over the step of
//! `arbor_core::toolbox::SplitMix64`.
//!
//! Public so that crash harnesses drive their workloads from the same
//! generator (`rand` is only a dev-dependency of this crate).

/// SplitMix64: a 64-bit state, a fixed increment and a strong output mixer.
/// Deterministic for a seed, which is what lets a failing crash test replay.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        // The workspace's one SplitMix64 step (arbor-core's toolbox); this type adds the
        // draws the fault layers use.
        arbor_core::toolbox::SplitMix64::step(&mut self.0)
    }

    /// Uniform in `0..n`; 0 when `n` is 0 (modulo bias is irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// Uniform in `lo..=hi` (`lo <= hi`).
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        debug_assert!(lo <= hi);
        lo + (self.next_u64() % (hi as u64 - lo as u64 + 1)) as usize
    }

    /// True with probability `num / den` (`den > 0`).
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_is_inclusive() {
        let mut rng = SplitMix64::new(1);
        let mut seen = [false; 3];
        for _ in 0..100 {
            seen[rng.range(2, 4) - 2] = true;
        }
        assert_eq!(seen, [true; 3]);
    }

    #[test]
    fn same_seed_same_stream() {
        let (mut a, mut b) = (SplitMix64::new(7), SplitMix64::new(7));
        assert!((0..16).all(|_| a.next_u64() == b.next_u64()));
        assert_ne!(SplitMix64::new(8).next_u64(), SplitMix64::new(7).next_u64());
    }
}
