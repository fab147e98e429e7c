//! The shape of the `tezos-mainnet` state: which entities exist initially,
//! their identifiers, paths and initial values — all pure functions of
//! `(seed, values)` and an entity index, so nothing is stored per key.
//!
//! Initial sections, in stream order (shares of what follows the fixed part):
//! globals, vote listings (one per baker), cycle data (cycles 0-5), implicit
//! accounts (8%), originated contracts (2%), big maps with their entries
//! (88%), commitments (the remainder, about 2%).

use super::fields::{entity_fields, field_kind, Entity, ORIGINATED_FIELDS};
use super::pathbuf::PathBuf;
use super::values::{make_value, skip_value};
use crate::rng::{hash4, Rng};

/// Real big map ids of the hot big maps of the Lima audit (section 3.3.2), given to
/// big maps 0-9.
pub(crate) const HOT_BIG_MAPS: [u64; 10] =
    [347_453, 347_455, 347_456, 103_258, 149_768, 149_787, 149_771, 149_772, 103_260, 149_776];
/// Big maps after the hot ones get ids from here on.
const BIG_MAP_ID_BASE: u64 = 400_000;
/// Leading bytes of the identifiers of implicit accounts 0, 1 and 2 (the hot
/// accounts of the Lima audit's single-block table).
const HOT_IMPLICIT: [[u8; 6]; 3] =
    [[0x00, 0x01, 0xf4, 0x6d, 0x63, 0xa0], [0x00, 0x00, 0x60, 0x27, 0xb7, 0x7a], [0x00, 0x02, 0x35, 0x8c, 0x86, 0x36]];
/// Leading bytes of originated contract 0 (the hot contract of the Lima audit).
const HOT_ORIGINATED: [u8; 6] = [0x01, 0xe1, 0x2d, 0x94, 0xda, 0x00];
/// Leading bytes of the key hash of entry 0 of big map 9 (149776).
const HOT_ENTRY: [u8; 6] = [0xaf, 0x06, 0x7e, 0xf3, 0x5b, 0xad];
/// Cycles whose data exists initially: `0..INITIAL_CYCLES`.
pub(crate) const INITIAL_CYCLES: u64 = 6;
/// Number of hot (non-baker) implicit accounts before the bakers.
pub(crate) const HOT_ACCOUNTS: u64 = 2;

// Domains separating the hash streams.
const DOM_IMPLICIT: u64 = 1;
const DOM_ORIGINATED: u64 = 2;
const DOM_ENTRY: u64 = 3;
const DOM_COMMITMENT: u64 = 4;
const DOM_VALUES: u64 = 5;
const DOM_ENTRY_VALUES: u64 = 6;

/// Implicit account kinds by leaf count, repeating over regular accounts:
/// plain (2 leaves), revealed (3), delegated (4), revealed (3).
const REGULAR_PATTERN: [u64; 4] = [2, 3, 4, 3];
const REGULAR_PREFIX: [u64; 5] = [0, 2, 5, 9, 12];

/// Section sizes of one `(seed, values)` state.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    /// Seed of every derived identifier and value.
    pub(crate) seed: u64,
    /// Bakers (implicit accounts `2..2 + bakers`).
    pub(crate) bakers: u64,
    /// Implicit accounts.
    pub(crate) implicit: u64,
    /// Originated contracts.
    pub(crate) originated: u64,
    /// Big maps.
    pub(crate) big_maps: u64,
    /// `entries_before[b]` = entries of big maps `0..b` (length `big_maps+1`).
    pub(crate) entries_before: Vec<u64>,
    /// Commitments.
    pub(crate) commitments: u64,
}

/// Number of global leaves (see [`super::fields::GLOBALS`]).
fn fixed_leaves(bakers: u64) -> u64 {
    super::fields::GLOBALS.len() as u64 + bakers + INITIAL_CYCLES * 4
}

fn regular_leaves(n: u64) -> u64 {
    (n / 4) * REGULAR_PREFIX[4] + REGULAR_PREFIX[(n % 4) as usize]
}

impl Layout {
    /// The layout of `values` leaves drawn with `seed`.
    pub(crate) fn new(seed: u64, values: u64) -> Self {
        let bakers = (values / 2500).clamp(8, 400);
        let rest = values.saturating_sub(fixed_leaves(bakers));
        // Implicit accounts: hot ones, bakers, then the regular pattern.
        let budget = rest * 8 / 100;
        let head = HOT_ACCOUNTS * 4 + bakers * 7;
        let implicit = if budget < head {
            (budget / 7).min(HOT_ACCOUNTS + bakers)
        } else {
            let b = budget - head;
            let extra = (0..4u64).rev().find(|&k| REGULAR_PREFIX[k as usize] <= b % 12).unwrap_or(0);
            HOT_ACCOUNTS + bakers + (b / 12) * 4 + extra
        };
        let originated = (rest * 2 / 100) / ORIGINATED_FIELDS.len() as u64;
        let bm_budget = rest * 88 / 100;
        let big_maps = (bm_budget / 400).max(11).min(bm_budget / 3);
        let entries = (bm_budget - 3 * big_maps) / 2;
        let entries_before = big_map_sizes(big_maps, entries);
        let mut layout = Layout { seed, bakers, implicit, originated, big_maps, entries_before, commitments: 0 };
        let used = layout.fixed()
            + layout.implicit_leaves(implicit)
            + originated * ORIGINATED_FIELDS.len() as u64
            + 3 * big_maps
            + 2 * entries;
        layout.commitments = values.saturating_sub(used);
        layout
    }

    /// Leaves of the globals, listings and initial cycles.
    pub(crate) fn fixed(&self) -> u64 {
        fixed_leaves(self.bakers)
    }

    /// Leaves of implicit accounts `0..n`.
    pub(crate) fn implicit_leaves(&self, n: u64) -> u64 {
        let hot = n.min(HOT_ACCOUNTS);
        let bakers = n.saturating_sub(HOT_ACCOUNTS).min(self.bakers);
        let regular = n.saturating_sub(HOT_ACCOUNTS + self.bakers);
        hot * 4 + bakers * 7 + regular_leaves(regular)
    }

    /// Leaf count of implicit account `a` (its kind).
    pub(crate) fn implicit_kind(&self, a: u64) -> u64 {
        if a < HOT_ACCOUNTS {
            4
        } else if a < HOT_ACCOUNTS + self.bakers {
            7
        } else {
            REGULAR_PATTERN[((a - HOT_ACCOUNTS - self.bakers) % 4) as usize]
        }
    }

    /// Initial entries of big map `b`.
    pub(crate) fn entries(&self, b: u64) -> u64 {
        if b < self.big_maps {
            self.entries_before[b as usize + 1] - self.entries_before[b as usize]
        } else {
            0
        }
    }

    /// Implicit account index of baker `j`.
    pub(crate) fn baker(&self, j: u64) -> u64 {
        HOT_ACCOUNTS + j
    }

    /// Whether `e` has leaves in the initial state.
    pub(crate) fn exists_initially(&self, e: Entity) -> bool {
        match e {
            Entity::Globals | Entity::Listings => true,
            Entity::Cycle(c) => c < INITIAL_CYCLES,
            Entity::Implicit(a) => a < self.implicit,
            Entity::Originated(o) => o < self.originated,
            Entity::BigMap(b) => b < self.big_maps,
            Entity::Entry(b, i) => i < self.entries(b),
            Entity::Commitment(k) => k < self.commitments,
            Entity::Snapshot(_) => false,
        }
    }

    /// The 22-byte identifier of implicit account `a`.
    pub(crate) fn implicit_id(&self, a: u64) -> [u8; 22] {
        let mut id = [0u8; 22];
        fill_hash(self.seed, DOM_IMPLICIT, a, 0, &mut id[2..]);
        id[0] = 0x00;
        id[1] = (hash4(self.seed, DOM_IMPLICIT, a, 99) % 3) as u8;
        if let Some(prefix) = HOT_IMPLICIT.get(a as usize) {
            id[..6].copy_from_slice(prefix);
        }
        id
    }

    /// The 22-byte identifier of originated contract `o`.
    pub(crate) fn originated_id(&self, o: u64) -> [u8; 22] {
        let mut id = [0u8; 22];
        fill_hash(self.seed, DOM_ORIGINATED, o, 0, &mut id[1..21]);
        id[0] = 0x01;
        id[21] = 0x00;
        if o == 0 {
            id[..6].copy_from_slice(&HOT_ORIGINATED);
        }
        id
    }

    /// The decimal id of big map `b`.
    pub(crate) fn big_map_id(&self, b: u64) -> u64 {
        match HOT_BIG_MAPS.get(b as usize) {
            Some(&id) => id,
            None => BIG_MAP_ID_BASE + b,
        }
    }

    /// The 32-byte key hash of entry `i` of big map `b`.
    pub(crate) fn entry_hash(&self, b: u64, i: u64) -> [u8; 32] {
        let mut h = [0u8; 32];
        fill_hash(self.seed, DOM_ENTRY, b, i, &mut h);
        if b == 9 && i == 0 {
            h[..6].copy_from_slice(&HOT_ENTRY);
        }
        h
    }

    /// Appends the directory path of `e` to `pb` (after clearing it).
    pub(crate) fn entity_path(&self, e: Entity, pb: &mut PathBuf) {
        pb.clear();
        match e {
            Entity::Globals => {}
            Entity::Listings => pb.extend(&[b"data", b"votes", b"listings"]),
            Entity::Cycle(c) => {
                pb.extend(&[b"data", b"cycle"]);
                pb.push_dec(c);
            }
            Entity::Implicit(a) => {
                pb.extend(&[b"data", b"contracts", b"index"]);
                pb.push_hex(&self.implicit_id(a));
            }
            Entity::Originated(o) => {
                pb.extend(&[b"data", b"contracts", b"index"]);
                pb.push_hex(&self.originated_id(o));
            }
            Entity::BigMap(b) => {
                pb.extend(&[b"data", b"big_maps", b"index"]);
                pb.push_dec(self.big_map_id(b));
            }
            Entity::Entry(b, i) => {
                pb.extend(&[b"data", b"big_maps", b"index"]);
                pb.push_dec(self.big_map_id(b));
                pb.push(b"contents");
                pb.push_hex(&self.entry_hash(b, i));
            }
            Entity::Commitment(k) => {
                let mut id = [0u8; 20];
                fill_hash(self.seed, DOM_COMMITMENT, k, 0, &mut id);
                pb.extend(&[b"data", b"commitments"]);
                pb.push_hex(&id);
            }
            Entity::Snapshot(c) => {
                pb.extend(&[b"data", b"rolls", b"owner", b"snapshot"]);
                pb.push_dec(c);
            }
        }
    }

    /// Appends field `f` of `e` to a `pb` that holds the path of `e`.
    pub(crate) fn push_field(&self, e: Entity, f: u32, pb: &mut PathBuf) {
        match e {
            Entity::Listings => pb.push_hex(&self.implicit_id(self.baker(u64::from(f)))),
            Entity::Snapshot(_) => pb.push_dec(u64::from(f)),
            _ => pb.extend(super::fields::field_steps(e, f)),
        }
    }

    /// The initial value of field `f` of `e` into `out`; false when absent.
    /// Only that value's bytes are produced (the others are skipped).
    pub(crate) fn initial_value(&self, e: Entity, f: u32, out: &mut Vec<u8>) -> bool {
        if !self.exists_initially(e) {
            return false;
        }
        let mut rng = self.entity_rng(e);
        let (list, range) = entity_fields(self, e);
        let count = range.map_or(list.len(), |n| n as usize);
        let mut last_len = 0;
        for g in (0..count).map(|k| range.map_or_else(|| list[k], |_| k as u32)) {
            let kind = field_kind(e, g);
            if g == f {
                make_value(kind, last_len, &mut rng, out);
                return true;
            }
            last_len = skip_value(kind, last_len, &mut rng);
        }
        false
    }

    fn entity_rng(&self, e: Entity) -> Rng {
        Rng::new(match e {
            Entity::Entry(b, i) => hash4(self.seed, DOM_ENTRY_VALUES, b, i),
            _ => hash4(self.seed, DOM_VALUES, e.domain(), e.index()),
        })
    }

    /// The initial leaves of `e` as `(field, value)` in field order; empty
    /// when `e` does not exist initially. The value buffers already in `out`
    /// are reused.
    pub(crate) fn initial_leaves(&self, e: Entity, out: &mut Vec<(u32, Vec<u8>)>) {
        if !self.exists_initially(e) {
            out.clear();
            return;
        }
        let mut rng = self.entity_rng(e);
        let (list, range) = entity_fields(self, e);
        let count = range.map_or(list.len(), |n| n as usize);
        let mut last_len = 0;
        let fields = (0..count).map(|k| range.map_or_else(|| list[k], |_| k as u32));
        for (k, f) in fields.enumerate() {
            if k == out.len() {
                out.push((f, Vec::new()));
            }
            let slot = &mut out[k];
            slot.0 = f;
            // A `len/x` field follows `x` in generation order.
            make_value(field_kind(e, f), last_len, &mut rng, &mut slot.1);
            last_len = slot.1.len();
        }
        out.truncate(count);
        if range.is_none() && !list.windows(2).all(|w| w[0] < w[1]) {
            out.sort_unstable_by_key(|(f, _)| *f);
        }
    }
}

/// Fills `out` with bytes derived from `(seed, domain, a, b)`.
fn fill_hash(seed: u64, domain: u64, a: u64, b: u64, out: &mut [u8]) {
    for (k, chunk) in out.chunks_mut(8).enumerate() {
        let w = hash4(seed, domain, a, b.wrapping_mul(31).wrapping_add(k as u64)).to_le_bytes();
        chunk.copy_from_slice(&w[..chunk.len()]);
    }
}

/// Splits `entries` over `n` big maps: the three hot DEX ledgers take 3%
/// each, big map 3 2%, big maps 4-9 0.7% each, the rest follow `1/rank`;
/// returns the prefix sums.
fn big_map_sizes(n: u64, entries: u64) -> Vec<u64> {
    let mut weights: Vec<f64> = (0..n)
        .map(|b| match b {
            0..=2 => 0.03,
            3 => 0.02,
            4..=9 => 0.007,
            _ => 0.0,
        })
        .collect();
    let hot: f64 = weights.iter().sum();
    let tail_norm: f64 = (10..n).map(|b| 1.0 / (b - 9) as f64).sum();
    for b in 10..n {
        weights[b as usize] = (1.0 - hot) / tail_norm / (b - 9) as f64;
    }
    let total: f64 = weights.iter().sum();
    let mut sizes: Vec<u64> = weights.iter().map(|w| (entries as f64 * w / total) as u64).collect();
    let assigned: u64 = sizes.iter().sum();
    let mut missing = entries.saturating_sub(assigned);
    let count = sizes.len();
    let mut b = 0usize;
    while missing > 0 && count > 0 {
        sizes[b % count] += 1;
        missing -= 1;
        b += 1;
    }
    let mut before = Vec::with_capacity(sizes.len() + 1);
    let mut acc = 0;
    before.push(0);
    for s in sizes {
        acc += s;
        before.push(acc);
    }
    before
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_add_up_to_values() {
        for values in [1_000u64, 10_000, 100_000, 1_000_000, 12_345_678] {
            let l = Layout::new(3, values);
            let total = l.fixed()
                + l.implicit_leaves(l.implicit)
                + l.originated * ORIGINATED_FIELDS.len() as u64
                + 3 * l.big_maps
                + 2 * l.entries_before[l.big_maps as usize]
                + l.commitments;
            assert_eq!(total, values, "values = {values}");
            assert!(l.commitments <= values / 20 + 20, "{l:?}");
        }
    }
}
