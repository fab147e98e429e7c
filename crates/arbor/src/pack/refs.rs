//! The objects a record points at, for garbage collection: the only code that follows
//! pointers without building tree nodes.

use super::record::{kind, ChildRef, CommitBody, DecodeError, Reader};
use crate::path::Step;

/// What a delta record replaces in its base: the bindings of these steps (sorted), or these
/// slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Overrides {
    /// FLAT_DIR_DELTA, INODE_VALUES_DELTA: the steps the delta changes, adds or removes.
    Steps(Vec<Step>),
    /// INODE_TREE_DELTA: one bit per changed slot.
    Slots(u64),
}

impl Overrides {
    fn step(&self, step: &[u8]) -> bool {
        matches!(self, Overrides::Steps(s) if s.binary_search_by(|x| x[..].cmp(step)).is_ok())
    }

    fn slot(&self, slot: u32) -> bool {
        matches!(self, Overrides::Slots(b) if b & (1 << slot) != 0)
    }
}

/// The base of a delta record and what the delta overrides there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeltaBase {
    /// Global offset of the full record the delta is a version of.
    pub base: u64,
    /// What of the base the delta replaces: the base's pointers there are not the node's.
    pub overrides: Overrides,
}

fn target(at: u64, back: u64) -> Result<u64, DecodeError> {
    if back == 0 || back > at {
        Err("pointer outside the log")
    } else {
        Ok(at - back)
    }
}

/// Appends to `out` the global offsets the record of `kind` and `body` at offset `at` points
/// at: children of directories and inodes, and a commit's tree (not its parents: history is
/// not reachability, and a commit's parents may be dropped while it is kept). A delta's base
/// is not among them: see [`delta_base`]; the node reaches only part of its base.
pub(crate) fn children(record_kind: u8, body: &[u8], at: u64, out: &mut Vec<u64>) -> Result<(), DecodeError> {
    children_except(record_kind, body, at, None, out)
}

/// [`children`], leaving out the children that `overrides` replace (the record being a
/// delta's base).
pub(crate) fn children_except(
    record_kind: u8,
    body: &[u8],
    at: u64,
    overrides: Option<&Overrides>,
    out: &mut Vec<u64>,
) -> Result<(), DecodeError> {
    let mut r = Reader::new(body);
    match record_kind {
        kind::CONTENTS | kind::HEAD => {}
        kind::FLAT_DIR | kind::INODE_VALUES | kind::FLAT_DIR_DELTA | kind::INODE_VALUES_DELTA => {
            if matches!(record_kind, kind::INODE_VALUES | kind::INODE_VALUES_DELTA) {
                r.leb()?;
            }
            if matches!(record_kind, kind::FLAT_DIR_DELTA | kind::INODE_VALUES_DELTA) {
                r.leb()?;
                r.leb()?;
            }
            let n = r.len()?;
            for _ in 0..n {
                if let (step, Some(ChildRef::Ref { back, .. })) = r.change()? {
                    if !overrides.is_some_and(|o| o.step(&step)) {
                        out.push(target(at, back)?);
                    }
                }
            }
        }
        kind::INODE_TREE | kind::INODE_TREE_DELTA => {
            r.leb()?;
            if record_kind == kind::INODE_TREE_DELTA {
                r.leb()?;
            }
            r.leb()?;
            let listed = r.leb()?;
            for slot in (0..64).filter(|s| listed & (1 << s) != 0) {
                let back = r.leb()?;
                // Back distance 0 marks a slot a delta emptied (FORMAT.md 5.8).
                if back == 0 && record_kind == kind::INODE_TREE_DELTA {
                    continue;
                }
                r.hash()?;
                if !overrides.is_some_and(|o| o.slot(slot)) {
                    out.push(target(at, back)?);
                }
            }
        }
        kind::COMMIT => {
            let c = CommitBody::decode(body)?;
            out.push(target(at, c.tree_back)?);
        }
        _ => return Err("unknown record kind"),
    }
    Ok(())
}

/// For a delta record (FLAT_DIR_DELTA, INODE_VALUES_DELTA, INODE_TREE_DELTA) at `at`: the full
/// record it is a version of, and what it overrides there; None for any other kind.
pub(crate) fn delta_base(record_kind: u8, body: &[u8], at: u64) -> Result<Option<DeltaBase>, DecodeError> {
    let mut r = Reader::new(body);
    match record_kind {
        kind::FLAT_DIR_DELTA => {}
        kind::INODE_VALUES_DELTA | kind::INODE_TREE_DELTA => {
            r.leb()?;
        }
        _ => return Ok(None),
    }
    let base = target(at, r.leb()?)?;
    r.leb()?;
    let overrides = if record_kind == kind::INODE_TREE_DELTA {
        Overrides::Slots(r.leb()?)
    } else {
        let n = r.len()?;
        let mut steps = Vec::with_capacity(n);
        for _ in 0..n {
            steps.push(r.change()?.0);
        }
        Overrides::Steps(steps)
    };
    Ok(Some(DeltaBase { base, overrides }))
}
