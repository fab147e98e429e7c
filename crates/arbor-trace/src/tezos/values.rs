//! Value sizes of the `tezos-mainnet` profile.
//!
//! Each field kind draws its length from a distribution over log2 buckets
//! (bucket `b` holds lengths `2^b ..= 2^(b+1) - 1`, uniformly); the mix of
//! kinds in the initial state is tuned so that the whole state matches the
//! content-size table of the Lima audit, section 3.3.1 (see `docs/WORKLOAD.md`).
//! Contents are random bytes: their sizes matter to a store, not their
//! meaning.

use crate::rng::Rng;

/// How the value of a field is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ValueKind {
    /// Exactly this many random bytes.
    Fixed(u32),
    /// A length drawn from `(bucket, weight)` pairs (weights sum to 1000).
    Buckets(&'static [(u8, u16)]),
    /// A 4-byte big-endian length of a sibling value (carbonated storage
    /// `len` fields); the caller supplies the length.
    Len4,
}

/// Mutez balances: Zarith naturals, mostly 4-7 bytes.
pub(crate) const BALANCE: ValueKind = ValueKind::Buckets(&[(1, 120), (2, 800), (3, 80)]);
/// Manager counters: Zarith, 2-5 bytes.
pub(crate) const COUNTER: ValueKind = ValueKind::Buckets(&[(1, 800), (2, 200)]);
/// Manager keys: a 21-byte key hash before reveal, a 33/34-byte public key
/// after.
pub(crate) const MANAGER: ValueKind = ValueKind::Buckets(&[(4, 400), (5, 600)]);
/// A public key hash (tag + 20 bytes).
pub(crate) const KEY_HASH: ValueKind = ValueKind::Fixed(21);
/// A 32-bit integer (cycle numbers, levels).
pub(crate) const INT32: ValueKind = ValueKind::Fixed(4);
/// 64-bit integers (stakes, voting powers).
pub(crate) const INT64: ValueKind = ValueKind::Fixed(8);
/// Frozen deposits: a pair of tez amounts.
pub(crate) const DEPOSITS: ValueKind = ValueKind::Buckets(&[(3, 1000)]);
/// Staking balances.
pub(crate) const STAKE: ValueKind = ValueKind::Buckets(&[(2, 600), (3, 400)]);
/// Small Zarith counters of bytes (`used_bytes`, `paid_bytes`,
/// `total_bytes`).
pub(crate) const SMALL_Z: ValueKind = ValueKind::Buckets(&[(1, 800), (2, 200)]);
/// Michelson code of a contract.
pub(crate) const CODE: ValueKind = ValueKind::Buckets(&[(9, 200), (10, 300), (11, 450), (12, 50)]);
/// Michelson storage of a contract.
pub(crate) const STORAGE: ValueKind = ValueKind::Buckets(&[(4, 100), (5, 200), (6, 400), (7, 150), (8, 100), (9, 50)]);
/// Michelson types of a big map's keys and values.
pub(crate) const MICHELINE_TYPE: ValueKind = ValueKind::Buckets(&[(1, 500), (3, 300), (4, 200)]);
/// Big map values: mostly tiny naturals (token balances), some pairs and
/// addresses, a few larger records.
pub(crate) const BIG_MAP_DATA: ValueKind =
    ValueKind::Buckets(&[(0, 17), (1, 594), (3, 22), (4, 52), (5, 90), (6, 207), (7, 14), (8, 4)]);
/// A 32-byte hash.
pub(crate) const HASH32: ValueKind = ValueKind::Fixed(32);
/// A block hash with its round (36 bytes).
pub(crate) const BRANCH: ValueKind = ValueKind::Fixed(36);
/// The protocol constants record.
pub(crate) const CONSTANTS: ValueKind = ValueKind::Buckets(&[(9, 1000)]);
/// The cycle eras list.
pub(crate) const CYCLE_ERAS: ValueKind = ValueKind::Fixed(30);
/// The version string.
pub(crate) const VERSION: ValueKind = ValueKind::Fixed(8);
/// A one-byte flag.
pub(crate) const FLAG: ValueKind = ValueKind::Fixed(1);
/// A stake distribution (one entry per baker).
pub(crate) const STAKE_DISTRIBUTION: ValueKind = ValueKind::Buckets(&[(12, 1000)]);
/// A delegate sampler state (alias tables).
pub(crate) const SAMPLER_STATE: ValueKind = ValueKind::Buckets(&[(13, 1000)]);
/// A contract identifier (22 bytes).
pub(crate) const CONTRACT_ID: ValueKind = ValueKind::Fixed(22);

/// Draws a length for `kind` (`sibling_len` is used by [`ValueKind::Len4`]).
fn draw_len(kind: ValueKind, rng: &mut Rng) -> usize {
    match kind {
        ValueKind::Fixed(n) => n as usize,
        ValueKind::Len4 => 4,
        ValueKind::Buckets(table) => {
            let mut pick = rng.below(1000) as u16;
            let mut bucket = table[table.len() - 1].0;
            for &(b, w) in table {
                if pick < w {
                    bucket = b;
                    break;
                }
                pick -= w;
            }
            let lo = 1u64 << bucket;
            rng.range(lo, 2 * lo - 1) as usize
        }
    }
}

/// Replaces `out` with a fresh value of `kind`. For [`ValueKind::Len4`] the
/// value is `sibling_len` as 4 big-endian bytes.
pub(crate) fn make_value(kind: ValueKind, sibling_len: usize, rng: &mut Rng, out: &mut Vec<u8>) {
    out.clear();
    if kind == ValueKind::Len4 {
        out.extend_from_slice(&(sibling_len as u32).to_be_bytes());
        return;
    }
    let n = draw_len(kind, rng);
    out.resize(n, 0);
    rng.fill(out);
}

/// Advances `rng` exactly as [`make_value`] would, without producing the
/// bytes; returns the length the value would have.
pub(crate) fn skip_value(kind: ValueKind, sibling_len: usize, rng: &mut Rng) -> usize {
    if kind == ValueKind::Len4 {
        return 4;
    }
    let _ = sibling_len;
    let n = draw_len(kind, rng);
    rng.skip(n.div_ceil(8) as u64);
    n
}

/// Log2 bucket of a length, as in the seed's table (0 and 1 both in bucket 0;
/// the last bucket collects everything from 2^12 up).
pub fn size_bucket(len: u64) -> usize {
    if len <= 1 {
        0
    } else {
        (63 - len.leading_zeros() as usize).min(SIZE_BUCKETS - 1)
    }
}

/// Number of buckets of [`size_bucket`] (`12+` is the last).
pub const SIZE_BUCKETS: usize = 13;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_fall_in_their_bucket() {
        let mut rng = Rng::new(1);
        let mut v = Vec::new();
        for _ in 0..1000 {
            make_value(BIG_MAP_DATA, 0, &mut rng, &mut v);
            assert!(matches!(size_bucket(v.len() as u64), 0 | 1 | 3..=8));
            make_value(ValueKind::Len4, 300, &mut rng, &mut v);
            assert_eq!(v, 300u32.to_be_bytes());
            let (mut a, mut b) = (rng.clone(), rng.clone());
            let n = skip_value(CODE, 0, &mut a);
            make_value(CODE, 0, &mut b, &mut v);
            assert_eq!(n, v.len());
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_eq!(size_bucket(4096), 12);
        assert_eq!(size_bucket(1 << 20), 12);
        assert_eq!(size_bucket(7), 2);
    }
}
