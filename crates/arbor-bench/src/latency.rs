//! Per-operation latency histograms of a replay: one operation in [`SAMPLE_EVERY`] of each
//! kind (and every commit) is timed and counted in a bucket of its duration (powers of two of
//! nanoseconds), so that the report can draw each kind's distribution and quote its
//! percentiles without keeping every sample.
//!
//! Why not every operation: two clock reads per operation cost about 2% of a block on a
//! virtual machine (clock_gettime through the vDSO, ~25 ns each, ~9,300 operations per
//! block), a cost the block time would carry. Every 8th operation of a kind is as good a
//! sample of its distribution and costs an eighth of that.

use serde::{Deserialize, Serialize};

/// Buckets of a histogram: bucket `i` holds durations in `[2^i, 2^(i+1))` ns (bucket 0 also
/// holds 0 ns); the last one is open-ended (2^39 ns is about 9 minutes).
pub const BUCKETS: usize = 40;

/// One operation of each kind in this many is timed (the first, the 9th, the 17th...).
pub const SAMPLE_EVERY: u64 = 8;

/// Durations of one kind of operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LatencyHistogram {
    /// Operations counted in each bucket (see [`BUCKETS`]); empty when nothing was counted.
    pub buckets: Vec<u64>,
    /// Operations timed.
    pub count: u64,
    /// Operations of this kind seen, timed or not.
    pub seen: u64,
    /// Their total time, nanoseconds.
    pub total_ns: u64,
    /// The longest, nanoseconds.
    pub max_ns: u64,
}

/// The bucket of a duration.
fn bucket(ns: u64) -> usize {
    (63 - (ns | 1).leading_zeros() as usize).min(BUCKETS - 1)
}

impl LatencyHistogram {
    /// Counts one more operation of this kind and says whether to time it: one in
    /// [`SAMPLE_EVERY`].
    #[inline]
    pub fn take_sample(&mut self) -> bool {
        self.seen += 1;
        self.seen % SAMPLE_EVERY == 1
    }

    /// Counts one operation that took `ns` nanoseconds.
    pub fn add(&mut self, ns: u64) {
        if self.buckets.is_empty() {
            self.buckets = vec![0; BUCKETS];
        }
        self.buckets[bucket(ns)] += 1;
        self.count += 1;
        self.total_ns += ns;
        self.max_ns = self.max_ns.max(ns);
    }

    /// Mean duration in nanoseconds (0 when empty).
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total_ns as f64 / self.count as f64
        }
    }

    /// The `q` quantile (0..=1), as the upper bound of the bucket that holds it: exact to a
    /// factor of two, which is what a histogram of powers of two can say.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return (1u64 << (i + 1)).min(self.max_ns.max(1));
            }
        }
        self.max_ns
    }
}

/// The kinds of operations timed, in the order the report shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// `find` and `find_tree`.
    Find,
    /// `mem` and `mem_tree`.
    Mem,
    /// `add`, `add_tree` and `copy`.
    Add,
    /// `remove`.
    Remove,
    /// `list`, `length` and `fold`.
    Walk,
    /// The block's commit: hashing, writing and syncing together.
    Commit,
    /// The commit's hashing of the changed tree.
    CommitHashing,
    /// The commit's encoding and writing of the changed nodes.
    CommitWriting,
    /// The commit's wait for durability (see `arbor::WriteStats::syncing`).
    CommitSyncing,
}

impl OpKind {
    /// Every kind, in report order.
    pub const ALL: [OpKind; 9] = [
        OpKind::Find,
        OpKind::Mem,
        OpKind::Add,
        OpKind::Remove,
        OpKind::Walk,
        OpKind::Commit,
        OpKind::CommitHashing,
        OpKind::CommitWriting,
        OpKind::CommitSyncing,
    ];

    /// The kind's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Find => "find",
            OpKind::Mem => "mem",
            OpKind::Add => "add",
            OpKind::Remove => "remove",
            OpKind::Walk => "list/length/fold",
            OpKind::Commit => "commit",
            OpKind::CommitHashing => "commit: hashing",
            OpKind::CommitWriting => "commit: writing",
            OpKind::CommitSyncing => "commit: syncing",
        }
    }
}

/// One histogram per kind of operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpLatencies {
    /// `find` and `find_tree`.
    pub find: LatencyHistogram,
    /// `mem` and `mem_tree`.
    pub mem: LatencyHistogram,
    /// `add`, `add_tree` and `copy`.
    pub add: LatencyHistogram,
    /// `remove`.
    pub remove: LatencyHistogram,
    /// `list`, `length` and `fold`.
    pub walk: LatencyHistogram,
    /// Commits (one per block), whole: every one is timed.
    pub commit: LatencyHistogram,
    /// The hashing part of each commit (as the store reports it).
    pub commit_hashing: LatencyHistogram,
    /// The writing part of each commit.
    pub commit_writing: LatencyHistogram,
    /// The wait for durability of each commit.
    pub commit_syncing: LatencyHistogram,
}

impl OpLatencies {
    /// The histogram of `kind`.
    pub fn get(&self, kind: OpKind) -> &LatencyHistogram {
        match kind {
            OpKind::Find => &self.find,
            OpKind::Mem => &self.mem,
            OpKind::Add => &self.add,
            OpKind::Remove => &self.remove,
            OpKind::Walk => &self.walk,
            OpKind::Commit => &self.commit,
            OpKind::CommitHashing => &self.commit_hashing,
            OpKind::CommitWriting => &self.commit_writing,
            OpKind::CommitSyncing => &self.commit_syncing,
        }
    }

    /// The histogram of `kind`, to count into.
    pub fn get_mut(&mut self, kind: OpKind) -> &mut LatencyHistogram {
        match kind {
            OpKind::Find => &mut self.find,
            OpKind::Mem => &mut self.mem,
            OpKind::Add => &mut self.add,
            OpKind::Remove => &mut self.remove,
            OpKind::Walk => &mut self.walk,
            OpKind::Commit => &mut self.commit,
            OpKind::CommitHashing => &mut self.commit_hashing,
            OpKind::CommitWriting => &mut self.commit_writing,
            OpKind::CommitSyncing => &mut self.commit_syncing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_powers_of_two() {
        assert_eq!([0, 1, 2, 3, 4, 1023, 1024].map(bucket), [0, 0, 1, 1, 2, 9, 10]);
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn one_operation_in_eight_is_sampled() {
        let mut h = LatencyHistogram::default();
        let taken: Vec<u64> = (1..=20).filter(|_| h.take_sample()).collect();
        // Operations 1, 9 and 17 of the kind are timed.
        assert_eq!(taken.len(), 3);
        assert_eq!(h.seen, 20);
    }

    #[test]
    fn quantiles_bound_the_samples() {
        let mut h = LatencyHistogram::default();
        assert_eq!(h.quantile_ns(0.5), 0);
        for ns in [100, 200, 300, 5_000] {
            h.add(ns);
        }
        assert_eq!(h.count, 4);
        assert_eq!(h.max_ns, 5_000);
        assert_eq!(h.mean_ns(), 1_400.0);
        // 200 is in [128, 256): the median is reported as at most 256.
        assert_eq!(h.quantile_ns(0.5), 256);
        // The top bucket is [4096, 8192), capped by the largest sample.
        assert_eq!(h.quantile_ns(1.0), 5_000);
    }
}
