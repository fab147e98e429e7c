//! The commits and named heads a store knows, as its handles see them.

use std::collections::BTreeMap;

use parking_lot::{RwLock, RwLockWriteGuard};

use super::index::CommitMap;
use arbor_core::Hash;

/// Commits by hash and in log order, and the named heads. Each has its own lock; readers
/// never wait for the writer's log or for a garbage collection.
#[derive(Debug)]
pub(super) struct Catalog {
    /// Every commit's offset by hash, dropped ones included (a checkout names the collection
    /// that dropped it).
    commits: RwLock<CommitMap>,
    /// Commits in log order (hash, offset), for `log` and iteration; dropped ones leave it.
    order: RwLock<Vec<(Hash, u64)>>,
    /// Named heads: commit hash and offset.
    heads: RwLock<BTreeMap<String, (Hash, u64)>>,
}

impl Catalog {
    pub fn new(order: Vec<(Hash, u64)>, heads: BTreeMap<String, (Hash, u64)>) -> Catalog {
        let commits = order.iter().copied().collect();
        Catalog { commits: RwLock::new(commits), order: RwLock::new(order), heads: RwLock::new(heads) }
    }

    /// The offset of the commit `hash`, if this store has it (dropped or not).
    pub fn offset(&self, hash: &Hash) -> Option<u64> {
        self.commits.read().get(hash).copied()
    }

    /// Makes commits written to the log, in log order, visible.
    pub fn publish(&self, found: &[(Hash, u64)]) {
        let mut commits = self.commits.write();
        let mut order = self.order.write();
        for &(h, o) in found {
            commits.insert(h, o);
            order.push((h, o));
        }
    }

    /// Takes the commits below `floor` out of the history (a collection dropped them);
    /// returns how many.
    pub fn forget_below(&self, floor: u64) -> usize {
        let mut order = self.order.write();
        let before = order.len();
        order.retain(|(_, o)| *o >= floor);
        before - order.len()
    }

    /// The last commit in log order.
    pub fn last(&self) -> Option<(Hash, u64)> {
        self.order.read().last().copied()
    }

    /// The history in log order.
    pub fn order(&self) -> Vec<(Hash, u64)> {
        self.order.read().clone()
    }

    /// The commit a head names.
    pub fn head(&self, name: &str) -> Option<(Hash, u64)> {
        self.heads.read().get(name).copied()
    }

    /// Every head: name, commit hash and offset.
    pub fn heads(&self) -> Vec<(String, Hash, u64)> {
        self.heads.read().iter().map(|(n, (h, o))| (n.clone(), *h, *o)).collect()
    }

    /// The heads, locked for a change.
    pub fn heads_mut(&self) -> RwLockWriteGuard<'_, BTreeMap<String, (Hash, u64)>> {
        self.heads.write()
    }
}
