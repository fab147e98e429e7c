//! The extra work of the last block of a cycle: deposits and rewards of the
//! bakers, balance updates of delegators, a stake snapshot written entry by
//! entry, the seed and stake distribution of a future cycle, and the removal
//! of old cycle data. Every fifth cycle also rewrites the vote listings and
//! takes a bigger snapshot.
//!
//! The Plebeia benchmark shows "medium sized peaks for each cycle boundary" and "very
//! large peaks over 30,000 objects every 5 cycles"; the targets below are
//! write counts for the boundary work alone (the block's ordinary traffic,
//! about 3,200 writes, comes on top).

use super::ctx::Ctx;
use super::fields::*;
use crate::error::Result;
use crate::rng::Scatter;

/// Writes of an ordinary cycle end (about 6x an ordinary block in all).
pub(crate) const BOUNDARY_WRITES: u64 = 18_000;
/// Writes of every fifth cycle end (over 30,000 in all, as in the Plebeia benchmark).
pub(crate) const BIG_BOUNDARY_WRITES: u64 = 33_000;
/// Cycles of seed/stake data kept ahead of the current one.
const CYCLES_AHEAD: u64 = 6;
/// Past cycles whose data is kept.
const CYCLES_KEPT: u64 = 2;
/// Snapshots kept.
const SNAPSHOTS_KEPT: u64 = 7;

/// Whether the end of cycle `cycle` is a big one (every fifth).
pub(crate) fn is_big(cycle: u64) -> bool {
    (cycle + 1).is_multiple_of(5)
}

/// Emits the cycle-end work for the end of `cycle`.
pub(crate) fn cycle_end(cx: &mut Ctx<'_>, cycle: u64) -> Result<()> {
    let l = cx.layout;
    let big = is_big(cycle);
    let target = if big { BIG_BOUNDARY_WRITES } else { BOUNDARY_WRITES };
    let mut writes = 0u64;

    // Bakers: activity check, deposits and rewards.
    for j in 0..l.bakers {
        let b = Entity::Implicit(l.baker(j));
        cx.find(b, C_DESACTIVATION)?;
        cx.update(b, C_FROZEN)?;
        cx.find(b, C_BALANCE)?;
        cx.write(b, C_BALANCE)?;
        writes += 2;
    }
    if big {
        // New voting period: one listing per baker.
        for j in 0..l.bakers {
            cx.write(Entity::Listings, j as u32)?;
            writes += 1;
        }
    }

    // Delegators' balances: distinct accounts, from a random start.
    let accounts = (target * 4 / 10).min(l.implicit / 2);
    let scatter = Scatter::new(l.implicit.max(1), cycle ^ l.seed);
    let start = cx.rng.below(l.implicit.max(1));
    for k in 0..accounts {
        let a = Entity::Implicit(scatter.map((start + k) % l.implicit));
        cx.find(a, C_BALANCE)?;
        cx.write(a, C_BALANCE)?;
        writes += 1;
    }

    // Future cycle data, old cycle data and snapshots.
    cx.add_tree(Entity::Cycle(cycle + CYCLES_AHEAD), &[0, 1, 2, 3])?;
    writes += 1;
    if cycle >= CYCLES_KEPT {
        cx.remove(Entity::Cycle(cycle - CYCLES_KEPT))?;
        writes += 1;
    }
    if cycle >= SNAPSHOTS_KEPT {
        cx.remove(Entity::Snapshot(cycle - SNAPSHOTS_KEPT))?;
        writes += 1;
    }

    // The stake snapshot makes up the rest, one entry per write.
    let snapshot = Entity::Snapshot(cycle);
    for i in 0..target.saturating_sub(writes) {
        cx.write(snapshot, i as u32)?;
    }
    Ok(())
}
