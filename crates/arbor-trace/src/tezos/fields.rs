//! Entities of the `tezos-mainnet` state and their fields.
//!
//! An entity is a small directory whose leaves the generator tracks together
//! (an account, a big map entry, a cycle's data); a field is one leaf of it,
//! named by a small integer.

use super::layout::Layout;
use super::values::{self, ValueKind};

/// A directory of related leaves.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Entity {
    /// Protocol-wide values ([`GLOBALS`]); fields index that table.
    Globals,
    /// `data/votes/listings/<baker id>`; field `j` is baker `j`.
    Listings,
    /// `data/cycle/<c>/…`; fields index [`CYCLE_FIELDS`].
    Cycle(u64),
    /// `data/contracts/index/<implicit id>/…`; contract fields.
    Implicit(u64),
    /// `data/contracts/index/<originated id>/…`; contract fields.
    Originated(u64),
    /// `data/big_maps/index/<id>/{key_type,value_type,total_bytes}`.
    BigMap(u64),
    /// `data/big_maps/index/<id>/contents/<key hash>/{data,len}`.
    Entry(u64, u64),
    /// `data/commitments/<blinded key hash>`: a single value (field 0).
    Commitment(u64),
    /// `data/rolls/owner/snapshot/<cycle>/<i>`: written at cycle ends.
    Snapshot(u64),
}

impl Entity {
    /// A number separating entity kinds in hash domains.
    pub(crate) fn domain(self) -> u64 {
        match self {
            Entity::Globals => 10,
            Entity::Listings => 11,
            Entity::Cycle(_) => 12,
            Entity::Implicit(_) => 13,
            Entity::Originated(_) => 14,
            Entity::BigMap(_) => 15,
            Entity::Entry(..) => 16,
            Entity::Commitment(_) => 17,
            Entity::Snapshot(_) => 18,
        }
    }

    /// The entity's index within its kind.
    pub(crate) fn index(self) -> u64 {
        match self {
            Entity::Globals | Entity::Listings => 0,
            Entity::Cycle(i)
            | Entity::Implicit(i)
            | Entity::Originated(i)
            | Entity::BigMap(i)
            | Entity::Commitment(i)
            | Entity::Snapshot(i) => i,
            Entity::Entry(_, i) => i,
        }
    }
}

/// Global values: full path and value kind. Indices are the `G_*` constants.
pub(crate) const GLOBALS: [(&[&[u8]], ValueKind); 13] = [
    (&[b"data", b"version"], values::VERSION),
    (&[b"data", b"v1", b"constants"], values::CONSTANTS),
    (&[b"data", b"v1", b"cycle_eras"], values::CYCLE_ERAS),
    (&[b"data", b"endorsement_branch"], values::BRANCH),
    (&[b"data", b"grand_parent_branch"], values::BRANCH),
    (&[b"data", b"first_level_of_protocol"], values::INT32),
    (&[b"data", b"votes", b"current_period"], ValueKind::Fixed(13)),
    (&[b"data", b"votes", b"participation_ema"], values::INT32),
    (&[b"data", b"contracts", b"global_counter"], ValueKind::Fixed(5)),
    (&[b"data", b"big_maps", b"next"], ValueKind::Fixed(3)),
    (&[b"data", b"liquidity_baking_escape_ema"], values::INT32),
    (&[b"protocol"], values::HASH32),
    (&[b"test_chain"], values::FLAG),
];
/// `data/version`.
pub(crate) const G_VERSION: u32 = 0;
/// `data/v1/constants`.
pub(crate) const G_CONSTANTS: u32 = 1;
/// `data/v1/cycle_eras`.
pub(crate) const G_CYCLE_ERAS: u32 = 2;
/// `data/endorsement_branch`.
pub(crate) const G_ENDORSEMENT_BRANCH: u32 = 3;
/// `data/grand_parent_branch`.
pub(crate) const G_GRAND_PARENT_BRANCH: u32 = 4;
/// `data/first_level_of_protocol`.
pub(crate) const G_FIRST_LEVEL: u32 = 5;
/// `data/votes/current_period`.
pub(crate) const G_CURRENT_PERIOD: u32 = 6;
/// `data/votes/participation_ema`.
pub(crate) const G_PARTICIPATION_EMA: u32 = 7;
/// `data/contracts/global_counter`.
pub(crate) const G_GLOBAL_COUNTER: u32 = 8;
/// `data/big_maps/next`.
pub(crate) const G_BIG_MAPS_NEXT: u32 = 9;
/// `data/liquidity_baking_escape_ema`.
pub(crate) const G_LB_EMA: u32 = 10;

/// Contract fields: relative path and value kind. Indices are the `C_*`
/// constants.
const CONTRACT_FIELDS: [(&[&[u8]], ValueKind); 13] = [
    (&[b"balance"], values::BALANCE),
    (&[b"counter"], values::COUNTER),
    (&[b"manager"], values::MANAGER),
    (&[b"delegate"], values::KEY_HASH),
    (&[b"delegate_desactivation"], values::INT32),
    (&[b"frozen_deposits"], values::DEPOSITS),
    (&[b"staking_balance"], values::STAKE),
    (&[b"used_bytes"], values::SMALL_Z),
    (&[b"paid_bytes"], values::SMALL_Z),
    (&[b"code"], values::CODE),
    (&[b"storage"], values::STORAGE),
    (&[b"len", b"code"], ValueKind::Len4),
    (&[b"len", b"storage"], ValueKind::Len4),
];
/// `balance`.
pub(crate) const C_BALANCE: u32 = 0;
/// `counter`.
pub(crate) const C_COUNTER: u32 = 1;
/// `manager`.
pub(crate) const C_MANAGER: u32 = 2;
/// `delegate`.
pub(crate) const C_DELEGATE: u32 = 3;
/// `delegate_desactivation`.
pub(crate) const C_DESACTIVATION: u32 = 4;
/// `frozen_deposits`.
pub(crate) const C_FROZEN: u32 = 5;
/// `staking_balance`.
pub(crate) const C_STAKING: u32 = 6;
/// `used_bytes`.
pub(crate) const C_USED_BYTES: u32 = 7;
/// `paid_bytes`.
pub(crate) const C_PAID_BYTES: u32 = 8;
/// `code`.
pub(crate) const C_CODE: u32 = 9;
/// `storage`.
pub(crate) const C_STORAGE: u32 = 10;
/// `len/code`.
pub(crate) const C_LEN_CODE: u32 = 11;
/// `len/storage`.
pub(crate) const C_LEN_STORAGE: u32 = 12;

/// Fields of an originated contract, in generation order (each `len/x`
/// right after `x`).
pub(crate) const ORIGINATED_FIELDS: [u32; 7] =
    [C_BALANCE, C_USED_BYTES, C_PAID_BYTES, C_CODE, C_LEN_CODE, C_STORAGE, C_LEN_STORAGE];
const PLAIN: [u32; 2] = [C_BALANCE, C_COUNTER];
const REVEALED: [u32; 3] = [C_BALANCE, C_COUNTER, C_MANAGER];
const DELEGATED: [u32; 4] = [C_BALANCE, C_COUNTER, C_MANAGER, C_DELEGATE];
const BAKER: [u32; 7] = [C_BALANCE, C_COUNTER, C_MANAGER, C_DELEGATE, C_DESACTIVATION, C_FROZEN, C_STAKING];

const BIG_MAP_FIELDS: [(&[&[u8]], ValueKind); 3] = [
    (&[b"key_type"], values::MICHELINE_TYPE),
    (&[b"value_type"], values::MICHELINE_TYPE),
    (&[b"total_bytes"], values::SMALL_Z),
];
/// `total_bytes` of a big map.
pub(crate) const BM_TOTAL_BYTES: u32 = 2;

const ENTRY_FIELDS: [(&[&[u8]], ValueKind); 2] = [(&[b"data"], values::BIG_MAP_DATA), (&[b"len"], ValueKind::Len4)];
/// `data` of a big map entry.
pub(crate) const E_DATA: u32 = 0;
/// `len` of a big map entry.
pub(crate) const E_LEN: u32 = 1;

/// Cycle fields.
pub(crate) const CYCLE_FIELDS: [(&[&[u8]], ValueKind); 4] = [
    (&[b"random_seed"], values::HASH32),
    (&[b"selected_stake_distribution"], values::STAKE_DISTRIBUTION),
    (&[b"total_active_stake"], values::INT64),
    (&[b"delegate_sampler_state"], values::SAMPLER_STATE),
];
/// `random_seed` of a cycle.
pub(crate) const CY_RANDOM_SEED: u32 = 0;
/// `selected_stake_distribution` of a cycle.
pub(crate) const CY_STAKE_DISTRIBUTION: u32 = 1;

/// Static relative steps of field `f` of `e` (empty for single-value
/// entities and for fields whose step is computed).
pub(crate) fn field_steps(e: Entity, f: u32) -> &'static [&'static [u8]] {
    let f = f as usize;
    match e {
        Entity::Globals => GLOBALS[f].0,
        Entity::Cycle(_) => CYCLE_FIELDS[f].0,
        Entity::Implicit(_) | Entity::Originated(_) => CONTRACT_FIELDS[f].0,
        Entity::BigMap(_) => BIG_MAP_FIELDS[f].0,
        Entity::Entry(..) => ENTRY_FIELDS[f].0,
        Entity::Commitment(_) | Entity::Listings | Entity::Snapshot(_) => &[],
    }
}

/// The value kind of field `f` of `e`.
pub(crate) fn field_kind(e: Entity, f: u32) -> ValueKind {
    let i = f as usize;
    match e {
        Entity::Globals => GLOBALS[i].1,
        Entity::Cycle(_) => CYCLE_FIELDS[i].1,
        Entity::Implicit(_) | Entity::Originated(_) => CONTRACT_FIELDS[i].1,
        Entity::BigMap(_) => BIG_MAP_FIELDS[i].1,
        Entity::Entry(..) => ENTRY_FIELDS[i].1,
        Entity::Commitment(_) => values::BALANCE,
        Entity::Listings => values::INT64,
        Entity::Snapshot(_) => values::CONTRACT_ID,
    }
}

/// Field numbers `0..N`, for entities whose fields are a plain range.
const RANGE: [u32; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

/// The initial fields of `e`, in generation order: a static list, or the
/// range `0..n` when the second element is `Some(n)` (vote listings).
pub(crate) fn entity_fields(layout: &Layout, e: Entity) -> (&'static [u32], Option<u32>) {
    match e {
        Entity::Globals => (&RANGE[..GLOBALS.len()], None),
        Entity::Listings => (&[], Some(layout.bakers as u32)),
        Entity::Cycle(_) => (&RANGE[..CYCLE_FIELDS.len()], None),
        Entity::Implicit(a) => (
            match layout.implicit_kind(a) {
                2 => &PLAIN[..],
                3 => &REVEALED[..],
                4 => &DELEGATED[..],
                _ => &BAKER[..],
            },
            None,
        ),
        Entity::Originated(_) => (&ORIGINATED_FIELDS[..], None),
        Entity::BigMap(_) => (&RANGE[..BIG_MAP_FIELDS.len()], None),
        Entity::Entry(..) => (&[E_DATA, E_LEN], None),
        Entity::Commitment(_) => (&RANGE[..1], None),
        Entity::Snapshot(_) => (&[], None),
    }
}

/// Shape of the directory of `e` given its present fields (sorted): its
/// number of direct children and the number of entries a fold down to
/// `depth` visits. `None` when the entity is a single value (commitments).
pub(crate) fn dir_shape(e: Entity, present: &[u32], depth: Option<u32>) -> Option<(u64, u64)> {
    match e {
        Entity::Commitment(_) => None,
        Entity::Listings | Entity::Snapshot(_) => {
            let n = present.len() as u64;
            Some((n, if depth == Some(0) { 0 } else { n }))
        }
        _ => {
            // Distinct first steps are the children; a field two steps deep
            // (len/x) adds the shared inner node once.
            let mut firsts: Vec<&[u8]> = present.iter().map(|&f| field_steps(e, f)[0]).collect();
            firsts.sort_unstable();
            firsts.dedup();
            let children = firsts.len() as u64;
            let deep = present.iter().filter(|&&f| field_steps(e, f).len() > 1).count() as u64;
            let visited = match depth {
                Some(0) => 0,
                Some(1) => children,
                _ => children + deep,
            };
            Some((children, visited))
        }
    }
}
