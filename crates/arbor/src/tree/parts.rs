//! The parts a changed tree is cut into for hashing on two threads, and how a commit shares
//! them out between the thread that writes it and one helper.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arbor_core::HashBatch;

use super::batched;
use super::node::{hashing_alone, Dir, DirBody, IPtr, Inode, InodeBody, Ptr};

/// The parts of a changed tree that can be hashed apart from each other while the commit
/// writes it: below the first large directory on each changed path (`contracts/index`,
/// `big_maps/index`, ...), the changed children of its root inode, in slot order (the order
/// the writer meets them). Nothing below them is searched, nothing above them is a part.
pub(crate) fn hash_units(root: &Ptr) -> Vec<Arc<Inode>> {
    /// Each directory once: a directory shared under several names (a subtree grafted twice,
    /// level after level) would otherwise be searched once per path to it, exponentially.
    fn dir(d: &Dir, seen: &mut rustc_hash::FxHashSet<*const Dir>, out: &mut Vec<Arc<Inode>>) {
        if d.cached_hash().is_some() || !seen.insert(std::ptr::from_ref(d)) {
            return;
        }
        match &d.body {
            DirBody::Flat(entries) => {
                for (_, child) in entries {
                    if let Ptr::Dir(sub) = child {
                        dir(sub, seen, out);
                    }
                }
            }
            DirBody::Large(root) => {
                if let InodeBody::Tree(slots) = &root.body {
                    for slot in slots {
                        if let IPtr::Mem(sub) = slot {
                            if sub.cached_hash().is_none() && !out.iter().any(|u| Arc::ptr_eq(u, sub.node())) {
                                out.push(sub.node().clone());
                            }
                        }
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    if let Ptr::Dir(d) = root {
        dir(d, &mut rustc_hash::FxHashSet::default(), &mut out);
    }
    out
}

/// A commit's hashing, shared out: a helper thread hashes the parts ([`hash_units`]) from the
/// first on, while the writer writes each part as soon as it is hashed, in whatever order
/// they come (parts are apart from each other, and only their parents, written after them,
/// point at them). With no part ready, the writer hashes the last parts nobody has started
/// (a few together, as the helper takes them), and waits only when the helper holds every
/// part left. Both threads stay busy until every
/// part is hashed, and the writer writes while the helper hashes.
///
/// Measured against the pool hashing the parts in its own order (the writer then waited for
/// most of them): 6.9 -> 5.3 ms per commit on the tezos-mainnet bench. Against the writer
/// writing the parts in tree order (stealing parts from the end while it waited for the next
/// one, so that it hashed as much as the helper and wrote everything besides): see
/// ARCHITECTURE.md, "Performance today".
///
/// Both threads hash alone ([`hashing_alone`]): neither waits for the pool, so the only waits
/// are the writer's for a part the helper holds, and the helper waits for nothing.
pub(crate) struct Parts {
    units: Vec<Arc<Inode>>,
    claimed: Vec<AtomicBool>,
}

impl Parts {
    /// How many parts a thread takes and hashes together ([`batched::hash_together`]): enough
    /// for the upper ranks, a node or two a part, to fill the four lanes of the hashing.
    const TOGETHER: usize = 4;

    /// How many parts a thread takes at a time here: [`Parts::TOGETHER`], but never more than
    /// half of them, so that a commit of a few parts still gives each thread some.
    fn together(&self) -> usize {
        Self::TOGETHER.min(self.units.len().div_ceil(2))
    }

    /// The parts of the changed tree below `root`.
    pub fn of(root: &Ptr) -> Parts {
        let units = hash_units(root);
        let claimed = units.iter().map(|_| AtomicBool::new(false)).collect();
        Parts { units, claimed }
    }

    /// How many parts there are (a helper is worth starting for two or more).
    pub fn len(&self) -> usize {
        self.units.len()
    }

    /// Takes part `i` for the calling thread, unless some thread took it already.
    fn claim(&self, i: usize) -> bool {
        !self.claimed[i].load(Ordering::Relaxed) && !self.claimed[i].swap(true, Ordering::AcqRel)
    }

    /// The helper's side: hashes every part nobody has taken, first to last,
    /// [`Parts::together`] at a time, the inputs of their nodes in `batch`.
    pub fn help(&self, batch: &mut HashBatch) {
        hashing_alone(|| {
            let together = self.together();
            let mut group = Vec::with_capacity(together);
            for (i, unit) in self.units.iter().enumerate() {
                if self.claim(i) {
                    group.push(&**unit);
                }
                if group.len() == together {
                    batched::hash_together(&group, batch);
                    group.clear();
                }
            }
            if !group.is_empty() {
                batched::hash_together(&group, batch);
            }
        });
    }

    /// The writer's side: calls `write` on every part once it is hashed, the parts the
    /// helper has finished first; hashes the last parts nobody has started (up to
    /// [`Parts::together`]) when none is ready, and otherwise waits for the first part the
    /// helper holds.
    /// Stops at the first error `write` returns. The inputs of the nodes it hashes go in
    /// `batch`.
    pub fn write_each<E>(
        &self,
        batch: &mut HashBatch,
        mut write: impl FnMut(&Inode) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut written = vec![false; self.units.len()];
        // Parts before this one are all written.
        let mut first = 0;
        while first < self.units.len() {
            let ready = (first..self.units.len()).find(|&i| !written[i] && self.units[i].cached_hash().is_some());
            let next = ready.unwrap_or_else(|| {
                let mine: Vec<usize> = (first..self.units.len())
                    .rev()
                    .filter(|&j| !written[j] && self.claim(j))
                    .take(self.together())
                    .collect();
                match mine.first() {
                    Some(&last) => {
                        let group: Vec<&Inode> = mine.iter().map(|&j| &*self.units[j]).collect();
                        batched::hash_together(&group, batch);
                        last
                    }
                    None => {
                        // Without a part of its own to hash, the writer waits for the
                        // helper's first (a second caller of a hash being computed waits
                        // for it).
                        batched::hash(&self.units[first], batch);
                        first
                    }
                }
            });
            write(&self.units[next])?;
            written[next] = true;
            while written.get(first) == Some(&true) {
                first += 1;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arbor_core::{HashBatch, InodeConfig};

    use super::Parts;
    use crate::tree::Tree;

    fn id(n: u64) -> String {
        format!("{:016x}", n.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    /// `dirs` large directories of `accounts` accounts each (a value each), hashed, then
    /// with the first `changed` accounts of each changed again (all of them if None).
    fn accounts(cfg: InodeConfig, dirs: u64, accounts: u64, changed: Option<u64>) -> Tree {
        let mut t = Tree::empty_with(cfg);
        let set = |t: &mut Tree, n: u64, round: u64| {
            for d in 0..dirs {
                t.add_mut(&[&format!("d{d}"), "index", &id(n), "balance"], &(n + round).to_le_bytes()).unwrap();
            }
        };
        for n in 0..accounts {
            set(&mut t, n, 0);
        }
        if let Some(changed) = changed {
            let _ = t.hash();
            for n in 0..changed {
                set(&mut t, n, 1);
            }
        }
        t
    }

    /// However many parts a commit has (two to dozens, some already hashed), the helper and
    /// the writer between them hash every part, the writer writes each once, and the tree has
    /// the hash it has when hashed node by node.
    #[test]
    fn two_threads_hash_every_part_and_write_each_once() {
        let small = InodeConfig::SMALL_TEST;
        let cases = [
            (small, 1, 40, None),
            (small, 2, 40, None),
            (small, 3, 40, None),
            (InodeConfig::TEZOS, 1, 300, Some(3)),
            (InodeConfig::TEZOS, 1, 300, Some(5)),
            (InodeConfig::TEZOS, 2, 300, None),
            (InodeConfig::TEZOS, 1, 3_000, None),
        ];
        for (cfg, dirs, n, changed) in cases {
            let case = format!("{cfg:?}, {dirs} directories of {n} accounts, {changed:?} changed");
            let t = accounts(cfg, dirs, n, changed);
            let parts = Parts::of(&t.root);
            assert!(parts.len() >= 2, "{case}: {} parts", parts.len());
            let mut written = Vec::new();
            let (mut mine, mut theirs) = (HashBatch::new(), HashBatch::new());
            std::thread::scope(|scope| {
                scope.spawn(|| parts.help(&mut theirs));
                parts
                    .write_each(&mut mine, |part| {
                        assert!(part.cached_hash().is_some(), "{case}: a part is written once hashed");
                        written.push(std::ptr::from_ref(part));
                        Ok::<(), ()>(())
                    })
                    .unwrap();
            });
            let mut expected: Vec<_> = parts.units.iter().map(Arc::as_ptr).collect();
            expected.sort_unstable();
            written.sort_unstable();
            assert_eq!(written, expected, "{case}: each of {} parts written once", parts.len());
            assert_eq!(t.hash(), accounts(cfg, dirs, n, changed).hash(), "{case}");
        }
    }
}
