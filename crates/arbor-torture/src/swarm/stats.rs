//! The knobs of a run, what it did, and how it failed.

use std::collections::BTreeMap;

/// The knobs of a run.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    /// Writer processes per seed.
    pub children: u64,
    /// Crash operations are drawn from `1..=op_budget`: about the I/O operations a plan takes,
    /// so that most children die part-way and some finish.
    pub op_budget: u64,
    /// The same for crash operations counted among disk-changing operations only.
    pub mutation_budget: u64,
    /// Largest number of actions in a plan.
    pub max_actions: u64,
    /// Largest number of changes in a commit.
    pub max_ops: u64,
    /// Fail on a reader's error during a collection too (the default). Without it, such an
    /// error (issue 14 item 5, fixed: a reader meeting a collection's switch reported
    /// corruption that was not there) is counted and printed, and the run goes on.
    pub strict_readers: bool,
}

/// What a run did, for the report.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Writer processes run.
    pub children: u64,
    /// Writers killed at their crash operation (each one a crash point survived).
    pub kills: u64,
    /// Of those, kills part-way through a write (torn writes).
    pub torn: u64,
    /// Of those, power losses: the file data not yet synced was undone first.
    pub power: u64,
    /// Unsynced writes those power losses undid.
    pub writes_undone: u64,
    /// Writers whose action failed on an injected ENOSPC or EIO (then reopened the store).
    pub faulted: u64,
    /// Writers that ran their whole plan.
    pub completed: u64,
    /// Actions acknowledged.
    pub acked: u64,
    /// Commits compared value by value in checks.
    pub commits_checked: u64,
    /// Reader processes run.
    pub readers: u64,
    /// Reader errors while the writer ran a collection (issue 14 item 5), each with its seed
    /// and writer process, when not strict.
    pub reader_gc_errors: Vec<String>,
    /// Readers whose errors were not judged: the writer beside them died of a simulated power
    /// loss, which undoes file data they may already have read.
    pub readers_cut_by_power: u64,
    /// Distinct kill points: call, file kind and crash style.
    pub points: BTreeMap<String, u64>,
    /// Injected failures an action did not report (it succeeded all the same), by call, kind
    /// of file and fault.
    pub absorbed: BTreeMap<String, u64>,
}

impl Stats {
    /// Adds another run's figures.
    pub fn add(&mut self, o: &Stats) {
        self.children += o.children;
        self.kills += o.kills;
        self.torn += o.torn;
        self.power += o.power;
        self.writes_undone += o.writes_undone;
        self.faulted += o.faulted;
        self.completed += o.completed;
        self.acked += o.acked;
        self.commits_checked += o.commits_checked;
        self.readers += o.readers;
        self.reader_gc_errors.extend(o.reader_gc_errors.iter().cloned());
        self.readers_cut_by_power += o.readers_cut_by_power;
        for (k, n) in &o.points {
            *self.points.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &o.absorbed {
            *self.absorbed.entry(k.clone()).or_default() += n;
        }
    }
}

/// A failure: which child of the run found it, and what.
#[derive(Debug)]
pub struct Failure {
    /// Index of the writer process (from 0) after which the check failed.
    pub child: u64,
    /// What went wrong.
    pub what: String,
}
