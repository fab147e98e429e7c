//! Folding over a tree with depth bounds (Tezos `Context.fold`).

use crate::error::{Error, Result};
use crate::path::{check_path, Step, MAX_PATH_STEPS};

use super::{Ptr, Tree};

/// Which depths a fold visits, counted from the folded tree (depth 0), as Tezos's
/// `` `Eq | `Le | `Lt | `Ge | `Gt ``.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Exactly this depth.
    Eq(usize),
    /// At most this depth.
    Le(usize),
    /// Less than this depth.
    Lt(usize),
    /// At least this depth.
    Ge(usize),
    /// More than this depth.
    Gt(usize),
}

impl Depth {
    fn admits(self, d: usize) -> bool {
        match self {
            Depth::Eq(n) => d == n,
            Depth::Le(n) => d <= n,
            Depth::Lt(n) => d < n,
            Depth::Ge(n) => d >= n,
            Depth::Gt(n) => d > n,
        }
    }

    /// Whether anything deeper than `d` can be admitted.
    fn goes_below(self, d: usize) -> bool {
        match self {
            Depth::Eq(n) | Depth::Le(n) => d < n,
            Depth::Lt(n) => d + 1 < n,
            Depth::Ge(_) | Depth::Gt(_) => true,
        }
    }
}

/// Order in which a fold visits the children of a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// By step bytes (costs a sort of each large directory).
    Sorted,
    /// Octez's order for `` `Undefined `` (`docs/ORDER.md`): a directory written or read and
    /// unchanged since comes in irmin-pack's stored order (sorted up to 32 entries, inode by
    /// inode above); one changed since, and not listed since, gives its unchanged entries in
    /// that order, then the changed ones still present, sorted; any other comes sorted.
    Undefined,
}

impl Tree {
    /// Visits, in pre-order, every subtree (directories and values) below `path` whose depth
    /// relative to `path` the `depth` bound admits (all of them, the root included, when None).
    /// `f` gets each subtree's path relative to `path`; it returns false to stop the fold.
    pub fn fold<S, F>(&self, path: &[S], depth: Option<Depth>, order: Order, mut f: F) -> Result<()>
    where
        S: AsRef<[u8]>,
        F: FnMut(&[Step], &Tree) -> Result<bool>,
    {
        check_path(path)?;
        let Some(start) = self.find_ptr(path)? else { return Ok(()) };
        let depth = depth.unwrap_or(Depth::Ge(0));
        let mut key = Vec::new();
        self.visit(&start, path.len(), &mut key, depth, order, &mut f)?;
        Ok(())
    }

    /// Visits `node`, `key` below the folded path, which is `at` steps down this tree.
    fn visit(
        &self,
        node: &Ptr,
        at: usize,
        key: &mut Vec<Step>,
        depth: Depth,
        order: Order,
        f: &mut dyn FnMut(&[Step], &Tree) -> Result<bool>,
    ) -> Result<bool> {
        let d = key.len();
        // No tree is deeper than the maximum, but a store written by another program (or
        // damaged) may hold one: refused here rather than followed until the stack ends.
        if at + d > MAX_PATH_STEPS {
            return Err(Error::PathTooDeep { steps: at + d, max: MAX_PATH_STEPS });
        }
        if depth.admits(d) && !f(key, &self.below(node.clone(), at + d))? {
            return Ok(false);
        }
        if !depth.goes_below(d) {
            return Ok(true);
        }
        let Some(dir) = self.ctx.dir_of(node)? else { return Ok(true) };
        let mut children = Vec::with_capacity(dir.len() as usize);
        let mut push = |s: &[u8], p: &Ptr| {
            children.push((Step::from_slice(s), p.clone()));
            Ok(true)
        };
        match order {
            Order::Sorted => {
                self.ctx.each_entry(&dir, &mut push)?;
                children.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            }
            Order::Undefined => self.ctx.each_in_octez_order(&dir, false, &mut push)?,
        }
        for (s, p) in children {
            key.push(s);
            let go_on = self.visit(&p, at, key, depth, order, f)?;
            key.pop();
            if !go_on {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
