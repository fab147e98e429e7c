//! The order in which irmin-pack hands out a directory's entries when the
//! caller does not ask for sorted order: `list ?offset ?length` and
//! `fold ~order:Undefined` under Octez (`docs/ORDER.md` states the rules and
//! where they come from).
//!
//! irmin-pack stores a directory of more than `entries` (32) bindings as a
//! tree of inodes, whatever its hashing form (a directory of 33 to 256 entries
//! is stored as an inode tree but hashed flat), and walks that tree slot by
//! slot. These functions compute that order from the steps alone; they are
//! pure and allocate only their result and scratch index lists.

use alloc::vec::Vec;

use crate::tezos::InodeConfig;

/// Why no order can be given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderError {
    /// More than `entries` steps share their slot at every depth irmin-pack
    /// allows; irmin-pack itself fails on such a directory.
    TooDeep {
        /// The depth at which another split was needed.
        depth: u32,
    },
}

/// The deepest inode irmin-pack splits: `floor(50 / log2(entries))`, so that
/// at most 50 bits of the steps' hashes choose the slots (10 for 32 slots).
pub fn max_depth(cfg: InodeConfig) -> u32 {
    let bits_per_level = u32::BITS - 1 - cfg.entries.max(2).leading_zeros();
    50 / bits_per_level
}

/// The order of the entries of a directory as it was committed (read back
/// from the store, unchanged since): the indices of `steps` in the order
/// irmin-pack's `list` and `fold ~order:Undefined` return them.
///
/// `steps` are the directory's distinct entry names, in any order. A
/// directory of at most `entries` steps comes out sorted by step bytes; a
/// larger one comes out slot by slot (slot `caml_hash(depth, step) mod
/// entries`, increasing), each slot's bindings ordered by the same rule one
/// depth down. `list ~offset ~length` returns the slice `[offset ..
/// offset + length]` of this order.
pub fn irmin_order(cfg: InodeConfig, steps: &[&[u8]]) -> Result<Vec<usize>, OrderError> {
    let mut out = Vec::with_capacity(steps.len());
    // An explicit stack of (depth, bindings) keeps deep splits off the call stack;
    // pushing slots in reverse makes the lowest slot come out first.
    let mut stack: Vec<(u32, Vec<usize>)> = Vec::new();
    stack.push((0, (0..steps.len()).collect()));
    let entries = cfg.entries.max(1) as usize;
    while let Some((depth, mut group)) = stack.pop() {
        if group.len() <= entries {
            group.sort_unstable_by(|&a, &b| steps[a].cmp(steps[b]));
            out.extend_from_slice(&group);
            continue;
        }
        if depth >= max_depth(cfg) {
            return Err(OrderError::TooDeep { depth });
        }
        let mut slots: Vec<Vec<usize>> = (0..entries).map(|_| Vec::new()).collect();
        for i in group {
            slots[cfg.slot(depth, steps[i]) as usize].push(i);
        }
        for slot in slots.into_iter().rev().filter(|s| !s.is_empty()) {
            stack.push((depth + 1, slot));
        }
    }
    Ok(out)
}

/// What happened to one step of a committed directory since it was
/// committed, in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update<'a> {
    /// The step was added or given a new child.
    Add(&'a [u8]),
    /// The step was removed.
    Remove(&'a [u8]),
}

impl Update<'_> {
    fn step(&self) -> &[u8] {
        match self {
            Update::Add(s) | Update::Remove(s) => s,
        }
    }
}

/// The steps `fold ~order:Undefined` visits, in order, for a committed
/// directory changed in memory and not listed since (a `list` makes Irmin
/// build the sorted map, and everything after it is sorted):
/// the committed steps in [`irmin_order`], minus every step an update
/// touched, then the steps added or replaced, sorted by their bytes.
/// `updates` are in the order they were made; the last one for a step wins.
pub fn irmin_fold_order_after_updates<'a>(
    cfg: InodeConfig,
    committed: &[&'a [u8]],
    updates: &[Update<'a>],
) -> Result<Vec<&'a [u8]>, OrderError> {
    // The last update of each step, sorted by step.
    let mut last: Vec<(usize, &Update<'a>)> = updates.iter().enumerate().collect();
    last.sort_by(|(ia, a), (ib, b)| a.step().cmp(b.step()).then(ib.cmp(ia)));
    last.dedup_by(|later, kept| later.1.step() == kept.1.step());
    let touched = |s: &[u8]| last.binary_search_by(|(_, u)| u.step().cmp(s)).is_ok();
    let mut out: Vec<&'a [u8]> =
        irmin_order(cfg, committed)?.into_iter().map(|i| committed[i]).filter(|s| !touched(s)).collect();
    out.extend(last.iter().filter_map(|(_, u)| match u {
        Update::Add(s) => Some(*s),
        Update::Remove(_) => None,
    }));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_depth_is_irmin_packs() {
        assert_eq!(max_depth(InodeConfig::TEZOS), 10);
        assert_eq!(max_depth(InodeConfig::SMALL_TEST), 50);
    }

    #[test]
    fn small_directories_are_sorted() {
        let steps: [&[u8]; 4] = [b"b", b"a", b"ab", b"\xff"];
        assert_eq!(irmin_order(InodeConfig::TEZOS, &steps).unwrap(), [1, 2, 0, 3]);
        assert_eq!(irmin_order(InodeConfig::TEZOS, &[]).unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn updates_go_last_in_step_order() {
        let committed: [&[u8]; 3] = [b"a", b"b", b"c"];
        let updates =
            [Update::Add(b"z"), Update::Remove(b"a"), Update::Add(b"b"), Update::Add(b"y"), Update::Remove(b"y")];
        let got = irmin_fold_order_after_updates(InodeConfig::TEZOS, &committed, &updates).unwrap();
        let expected: [&[u8]; 3] = [b"c", b"b", b"z"];
        assert_eq!(got, expected);
    }
}
