//! The depth rule of grafts: no tree may get a path of more than [`MAX_PATH_STEPS`] steps.
//!
//! Paths are checked where they are given, so only a graft ([`Tree::add_tree`]) can make a
//! deeper tree, by putting a tall tree down a long path. Each tree carries a bound on its
//! height (`Tree::height`); a graft that the bound cannot prove within the maximum measures the
//! grafted tree, stopping as soon as a path proves too long.

use std::collections::HashMap;
use std::sync::Arc;

use arbor_core::ChildKind;

use super::{Ctx, Ptr, Tree};
use crate::error::{Error, Result};
use crate::path::MAX_PATH_STEPS;

/// A directory met by a measure: in memory by address, on disk by offset (a tree shares
/// subtrees, and a measure visits each once).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Seen {
    Mem(usize),
    Disk(u64),
}

impl Tree {
    /// The steps from the root of a tree with this one grafted `at` steps down to the deepest
    /// node of this one, refused with [`Error::PathTooDeep`] above [`MAX_PATH_STEPS`]. `at`
    /// is at most the maximum (a checked path's length).
    pub(crate) fn height_at(&self, at: usize) -> Result<usize> {
        let bound = at + self.height as usize;
        if bound <= MAX_PATH_STEPS {
            return Ok(bound);
        }
        let limit = MAX_PATH_STEPS - at;
        match measure(&self.ctx, &self.root, limit, &mut HashMap::new())? {
            Some(h) => Ok(at + h),
            // The first path found has one step more than the limit allows.
            None => Err(Error::PathTooDeep { steps: MAX_PATH_STEPS + 1, max: MAX_PATH_STEPS }),
        }
    }
}

/// The height of the subtree at `ptr` if it is at most `limit`, else None (found at the first
/// path longer than `limit`, without looking further). Values count 0 and are never loaded;
/// `seen` holds the heights of the directories measured so far. Recurses once per level, at
/// most `limit` + 1 deep, like every other walk of a tree.
fn measure(ctx: &Ctx, ptr: &Ptr, limit: usize, seen: &mut HashMap<Seen, usize>) -> Result<Option<usize>> {
    let key = match ptr {
        Ptr::Value(_) | Ptr::Small(_) => return Ok(Some(0)),
        Ptr::Disk(d) if d.kind == ChildKind::Contents => return Ok(Some(0)),
        Ptr::Disk(d) => Seen::Disk(d.offset),
        Ptr::Dir(d) => Seen::Mem(Arc::as_ptr(d.node()) as usize),
    };
    if let Some(&h) = seen.get(&key) {
        return Ok((h <= limit).then_some(h));
    }
    let Some(dir) = ctx.dir_of(ptr)? else { return Ok(Some(0)) };
    if dir.len() == 0 {
        return Ok(Some(0));
    }
    if limit == 0 {
        return Ok(None);
    }
    let (mut height, mut over) = (1, false);
    ctx.each_entry(&dir, &mut |_, child| {
        if child.kind() == ChildKind::Contents {
            return Ok(true);
        }
        match measure(ctx, child, limit - 1, seen)? {
            Some(h) => height = height.max(h + 1),
            None => over = true,
        }
        Ok(!over)
    })?;
    if over {
        return Ok(None);
    }
    seen.insert(key, height);
    Ok(Some(height))
}
