//! One memory budget (`Config::cache_bytes`) for the object cache and the writer's working
//! tree.
//!
//! Both hold decoded nodes: the working tree the ones the last commits wrote, linked in
//! place, and the cache the ones read or evicted from it. The working tree is bounded by
//! recency (what the last `working_commits` commits and one cycle of the shares wrote,
//! `tree::evict`), and it used to
//! come on top of the cache's budget: the 10M-value replay with a 256 MiB budget held
//! 439 MiB at most with a window of 32 commits and 567 MiB with one of 128.
//!
//! Each eviction weighs what stays in the one share of the tree it visits; the budget keeps
//! the last weight of each share, and the cache gets what their sum leaves of the budget.
//! The cache never gets less than a quarter of it (a read of what the working tree does not
//! hold needs a cache too). A working tree of more than three quarters of the budget is
//! pressed ([`Budget::pressed`]): each eviction then lets go of everything in its share that
//! commits before the last one wrote, instead of keeping `working_commits` commits of it, so
//! the working tree shrinks to what one cycle of the shares wrote (32 commits at most; two
//! cycles by default when not pressed). Until it has, the process is past the budget by the
//! difference.

use parking_lot::Mutex;

use super::load::{ObjectCache, MIN_CACHE_BYTES};
use crate::tree::Share;

/// The budget, and what the working tree holds of it.
#[derive(Debug)]
pub(crate) struct Budget {
    bytes: u64,
    /// What stays in each share of the working tree, as weighed at its last eviction, and
    /// the cache's part last given (the cache rounds its capacity up to a multiple of its
    /// shard count, so it cannot be read back from the cache).
    shares: Mutex<(Vec<u64>, u64)>,
}

impl Budget {
    pub fn new(bytes: u64) -> Budget {
        Budget { bytes, shares: Mutex::new((Vec::new(), bytes)) }
    }

    /// The cache's part of the budget while the working tree holds `held` bytes.
    pub fn cache_part(&self, held: u64) -> u64 {
        self.bytes.saturating_sub(held).max(self.bytes / 4).max(MIN_CACHE_BYTES)
    }

    /// Whether the working tree, as last weighed, holds more than three quarters of the
    /// budget (the cache is then down to its least part).
    pub fn pressed(&self) -> bool {
        self.held() > self.bytes - self.bytes / 4
    }

    /// What the working tree holds in all, as last weighed.
    pub fn held(&self) -> u64 {
        self.shares.lock().0.iter().sum()
    }

    /// The cache's part last given.
    #[cfg(test)]
    pub fn cache_given(&self) -> u64 {
        self.shares.lock().1
    }

    /// Notes that share `share` of the working tree holds `held` bytes after its eviction,
    /// and gives the cache what the working tree leaves of the budget.
    pub fn share_held(&self, share: Share, held: u64, cache: &ObjectCache) {
        let mut state = self.shares.lock();
        let (shares, given) = &mut *state;
        shares.resize(share.count as usize, 0);
        shares[share.index as usize] = held;
        let part = self.cache_part(shares.iter().sum());
        if *given != part {
            cache.set_capacity(part);
            *given = part;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_gets_what_the_working_tree_leaves_down_to_a_quarter() {
        let budget = Budget::new(64 << 20);
        let cache = crate::store::load::new_cache(budget.cache_part(0));
        // (Multiples of a MiB: the cache splits its capacity evenly between its shards.)
        assert_eq!(cache.capacity(), 64 << 20);
        budget.share_held(Share { index: 0, count: 4 }, 10 << 20, &cache);
        budget.share_held(Share { index: 3, count: 4 }, 6 << 20, &cache);
        assert_eq!(budget.held(), 16 << 20);
        assert!(!budget.pressed());
        budget.share_held(Share { index: 1, count: 4 }, 32 << 20, &cache);
        assert!(!budget.pressed(), "48 MiB of 64: three quarters exactly");
        budget.share_held(Share { index: 2, count: 4 }, 1, &cache);
        assert!(budget.pressed());
        budget.share_held(Share { index: 2, count: 4 }, 0, &cache);
        budget.share_held(Share { index: 1, count: 4 }, 0, &cache);
        assert_eq!((cache.capacity(), budget.cache_given()), (48 << 20, 48 << 20));
        // A share weighed again replaces its last weight.
        budget.share_held(Share { index: 0, count: 4 }, 2 << 20, &cache);
        assert_eq!(cache.capacity(), 56 << 20);
        budget.share_held(Share { index: 1, count: 4 }, 100 << 20, &cache);
        assert_eq!(cache.capacity(), 16 << 20, "a quarter of the budget at least");
    }
}
