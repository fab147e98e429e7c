//! The commit's hashing helper: a thread of the writer's that hashes the parts of each
//! commit's changed tree ([`Parts::help`]) while the committing thread writes them, kept from
//! commit to commit.
//!
//! A thread started for each commit began every commit with a `clone3` and an empty
//! allocator heap, whose first allocations took fresh pages from the kernel, each zeroed
//! when first touched; with transparent huge pages, 2 MiB at a time, inside the commit. A
//! thread that outlives the commit keeps its heap, and its input buffer, warm. (A job on
//! rayon's pool, tried before, made its idle workers spin beside the adopting thread:
//! ARCHITECTURE.md, "Performance today".)

use std::sync::{mpsc, Arc};
use std::time::Instant;

use arbor_core::HashBatch;

use super::HASH_BATCH_KEPT;
use crate::tree::Parts;

/// The helper thread, started with the first commit that has parts to share, and ended when
/// the writer (the jobs' sender) goes.
#[derive(Debug)]
pub(super) struct HashHelper {
    jobs: mpsc::Sender<Job>,
}

/// One commit's parts to help with, and where to say when every part the helper took is
/// hashed.
struct Job {
    parts: Arc<Parts>,
    done: mpsc::SyncSender<Instant>,
}

/// A commit's parts being hashed beside it ([`HashHelper::help`]).
#[must_use = "the helper holds the parts until waited for"]
pub(super) struct Helping {
    done: mpsc::Receiver<Instant>,
}

impl HashHelper {
    fn start() -> std::io::Result<HashHelper> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new().name("arbor-hash".into()).spawn(move || {
            // The inputs of the nodes it hashes: kept from commit to commit, a bulk load's
            // tens of MiB given back.
            let mut batch = HashBatch::new();
            for Job { parts, done } in queue {
                parts.help(&mut batch);
                // Let go of the parts before saying so: the commit's eviction changes only
                // what nothing else holds.
                drop(parts);
                batch.shrink_to(HASH_BATCH_KEPT);
                let _ = done.send(Instant::now());
            }
        })?;
        Ok(HashHelper { jobs })
    }

    /// Hands `parts` to the helper (started if it is not running: again if it died), to hash
    /// every part nobody has taken while the caller writes them ([`Parts::write_each`]).
    /// None when no thread could take them: the caller then hashes every part itself.
    pub fn help(helper: &mut Option<HashHelper>, parts: &Arc<Parts>) -> Option<Helping> {
        for _ in 0..2 {
            let running = match helper {
                Some(h) => h,
                None => helper.insert(HashHelper::start().ok()?),
            };
            let (done_tx, done) = mpsc::sync_channel(1);
            if running.jobs.send(Job { parts: parts.clone(), done: done_tx }).is_ok() {
                return Some(Helping { done });
            }
            // The thread is gone (it panicked): start another.
            *helper = None;
        }
        None
    }
}

impl Helping {
    /// Waits until the helper is done with the parts and no longer holds them; returns when
    /// it had hashed the last part it took (now, if it died).
    pub fn wait(self) -> Instant {
        self.done.recv().unwrap_or_else(|_| Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::io::MemFs;
    use crate::tree::Tree;
    use crate::{Config, Store};

    /// Commits whose trees have several parts (two large directories, a few accounts of each
    /// changed each time) are hashed with the helper, started once and kept: each commit's
    /// tree hash is the hash the same tree has when hashed by itself, and the tree checked
    /// out again reads every value back.
    #[test]
    fn commits_hashed_with_the_kept_helper_have_the_hashes_of_their_trees() {
        let store = Store::open_with("/s", Config::default().with_fs(Arc::new(MemFs::new()))).unwrap();
        let id = |n: u64| format!("{:040x}", arbor_core::toolbox::splitmix::mix64(n));
        let set = |tree: &mut Tree, n: u64, round: u64| {
            for dir in ["contracts", "big_maps"] {
                tree.add_mut(&[dir, "index", &id(n), "balance"], &(n * 10 + round).to_le_bytes()).unwrap();
            }
        };
        let mut expected = Tree::empty();
        let mut tree = store.empty();
        for n in 0..600 {
            set(&mut expected, n, 0);
            set(&mut tree, n, 0);
        }
        let mut head = store.commit(&tree, &[], 0, "t", "base").unwrap();
        for round in 1..=4u64 {
            let mut tree = store.checkout(&head).unwrap();
            for n in (round..600).step_by(37) {
                set(&mut expected, n, round);
                set(&mut tree, n, round);
            }
            assert!(crate::tree::Parts::of(&tree.root).len() >= 2, "round {round}: parts to share");
            head = store.commit(&tree, &[head], round as i64, "t", "block").unwrap();
            assert!(store.shared.writer.lock().as_ref().is_some_and(|w| w.hash_helper.is_some()), "round {round}");
            assert_eq!(store.commit_info(&head).unwrap().tree, expected.hash(), "round {round}");
            let tree = store.checkout(&head).unwrap();
            for n in (0..600).step_by(29) {
                let last = (0..=round).rev().find(|&r| r == 0 || (n >= r && (n - r) % 37 == 0)).unwrap();
                let found = tree.find(&["big_maps", "index", &id(n), "balance"]).unwrap();
                assert_eq!(found.as_deref(), Some(&(n * 10 + last).to_le_bytes()[..]), "round {round}, account {n}");
            }
        }
    }
}
