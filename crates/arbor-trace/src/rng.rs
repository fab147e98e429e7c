//! Deterministic pseudo-randomness: SplitMix64 (the workspace's) for streams and for hashing
//! indices, an approximate Zipf sampler, and an index scatterer.
//!
//! Everything here is a pure function of its inputs, so the initial state and
//! the generated traces are reproducible bit for bit (floating-point
//! functions are those of the platform's libm; the same build on the same
//! platform always gives the same trace).

pub(crate) use arbor_core::toolbox::splitmix::mix64;
/// The workspace's SplitMix64 generator, under the name this crate's generators use.
pub(crate) use arbor_core::toolbox::SplitMix64 as Rng;

/// A hash of `(seed, domain, a, b)`: used to derive identifiers and
/// per-entity random streams from indices, in O(1) and with no state.
#[inline]
pub(crate) fn hash4(seed: u64, domain: u64, a: u64, b: u64) -> u64 {
    let x = mix64(seed ^ domain.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let y = mix64(x ^ a.wrapping_add(0x632b_e59b_d9b4_e019));
    mix64(y ^ b.wrapping_add(0x8cb9_2ba7_2f3d_8dd7))
}

/// Samples ranks `0..n` with probability roughly proportional to
/// `1 / (rank + 1)^s` (inverse transform of the continuous power law).
#[derive(Clone, Debug)]
pub(crate) struct Zipf {
    n: u64,
    one_minus_s: f64,
    span: f64,
}

impl Zipf {
    /// A sampler over `n >= 1` ranks with exponent `0 <= s`, `s != 1`.
    pub(crate) fn new(n: u64, s: f64) -> Self {
        let n = n.max(1);
        let one_minus_s = 1.0 - s;
        let span = ((n + 1) as f64).powf(one_minus_s) - 1.0;
        Zipf { n, one_minus_s, span }
    }

    /// One rank in `0..n`; rank 0 is the most likely.
    #[inline]
    pub(crate) fn sample(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit();
        let x = (self.span * u + 1.0).powf(1.0 / self.one_minus_s);
        ((x as u64).saturating_sub(1)).min(self.n - 1)
    }
}

/// A bijection of `0..n` that spreads consecutive ranks over the range, so
/// that popular ranks land on unrelated indices: `i -> (i * mult + add) mod n`
/// with `mult` coprime to `n`.
#[derive(Clone, Debug)]
pub(crate) struct Scatter {
    n: u64,
    mult: u64,
    add: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Scatter {
    /// A scatterer over `0..n` (`n >= 1`) chosen by `key`.
    pub(crate) fn new(n: u64, key: u64) -> Self {
        let n = n.max(1);
        let mut mult = (mix64(key) % n).max(1);
        while gcd(mult, n) != 1 {
            mult += 1;
            if mult >= n {
                mult = 1;
            }
        }
        Scatter { n, mult, add: mix64(key ^ 0xa5a5) % n }
    }

    /// The image of `i < n`.
    #[inline]
    pub(crate) fn map(&self, i: u64) -> u64 {
        ((u128::from(i) * u128::from(self.mult) + u128::from(self.add)) % u128::from(self.n)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_prefers_low_ranks_and_stays_in_range() {
        let z = Zipf::new(1000, 0.9);
        let mut rng = Rng::new(7);
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            counts[z.sample(&mut rng) as usize] += 1;
        }
        assert!(counts[0] > counts[10] && counts[10] > counts[500]);
    }

    #[test]
    fn scatter_is_a_bijection() {
        for n in [1u64, 2, 10, 97, 1000] {
            let s = Scatter::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let j = s.map(i) as usize;
                assert!(!seen[j]);
                seen[j] = true;
            }
        }
    }
}
