//! What the swarm knows between writer processes, and the plans it draws from it.

use std::path::PathBuf;
use std::sync::Arc;

use arbor::io::SplitMix64;
use arbor::{GcMode, Hash, InodeConfig};

use super::Params;
use crate::model::Model;
use crate::plan::Action;
use crate::verify::{Planned, StoreState};
use crate::workload::commit_ops;

/// What the swarm expects of one planned action once it is acknowledged.
pub(super) enum Expect {
    Commit(Hash),
    Gc { dropped: Vec<Hash> },
    Export { file: String, commit: Hash },
    Import(Hash),
    Reopen,
}

pub(super) struct World {
    pub(super) work: PathBuf,
    pub(super) inode: InodeConfig,
    pub(super) gc_mode: GcMode,
    pub(super) main: StoreState,
    pub(super) import: StoreState,
    /// Acknowledged snapshots: file name and commit.
    pub(super) exports: Vec<(String, Hash)>,
    pub(super) next_date: i64,
    pub(super) next_file: u64,
    /// The `keep_from` of every collection planned (acknowledged or not): the next one must
    /// not keep from a commit older than any of them that is still there, as that one may
    /// be the floor now (the engine refuses to move the floor back, with `CommitDropped`,
    /// even in archive mode where the older commit is still readable).
    pub(super) keeps: Vec<Hash>,
}

impl World {
    /// Draws a plan from the current state.
    pub(super) fn plan(&mut self, rng: &mut SplitMix64, p: &Params) -> (Vec<Action>, Vec<Expect>) {
        let mut order = self.main.present.clone();
        let mut plan = Vec::new();
        let mut expect = Vec::new();
        let mut exported_here: Vec<(String, Hash)> = Vec::new();
        for _ in 0..1 + rng.below(p.max_actions) {
            let roll = rng.below(20);
            if roll < 13 || order.is_empty() {
                let parent = match (order.last(), rng.below(20)) {
                    (None, _) | (Some(_), 0) => None,
                    (Some(_), 1..=3) => Some(order[rng.below(order.len() as u64) as usize]),
                    (Some(last), _) => Some(*last),
                };
                let base = parent.map_or_else(Model::default, |h| self.main.known[&h].model.clone());
                let date = self.next_date;
                self.next_date += 1;
                let count = 1 + rng.below(p.max_ops) as usize;
                let (ops, model) = commit_ops(rng, &base, date, count);
                let planned =
                    Planned { tree: model.hash(self.inode), model, parent, date, message: format!("c{date}") };
                let h = planned.hash();
                self.main.known.insert(h, Arc::new(planned));
                plan.push(Action::Commit { parent, date, message: format!("c{date}"), ops });
                expect.push(Expect::Commit(h));
                order.push(h);
            } else if roll < 15 && order.len() >= 3 {
                let lo = self.keeps.iter().filter_map(|k| order.iter().position(|h| h == k)).max().unwrap_or(0);
                let i = order.len() - 1 - rng.below((order.len() - lo).min(3) as u64) as usize;
                let keep_from = order[i];
                self.keeps.push(keep_from);
                // Log order: what precedes the kept commit goes (in drop mode).
                let dropped: Vec<Hash> =
                    if self.gc_mode == GcMode::Drop { order.drain(..i).collect() } else { Vec::new() };
                plan.push(Action::Gc { keep_from, mode: self.gc_mode });
                expect.push(Expect::Gc { dropped });
            } else if roll < 17 {
                let commit = order[rng.below(order.len() as u64) as usize];
                let file = format!("snap-{}", self.next_file);
                self.next_file += 1;
                plan.push(Action::Export { commit, file: file.clone() });
                expect.push(Expect::Export { file: file.clone(), commit });
                exported_here.push((file, commit));
            } else if roll < 19 && !(self.exports.is_empty() && exported_here.is_empty()) {
                let all: Vec<&(String, Hash)> = self.exports.iter().chain(&exported_here).collect();
                let (file, commit) = all[rng.below(all.len() as u64) as usize].clone();
                let planned = self.main.known[&commit].clone();
                self.import.known.insert(commit, planned);
                plan.push(Action::Import { file });
                expect.push(Expect::Import(commit));
            } else {
                plan.push(Action::Reopen);
                expect.push(Expect::Reopen);
            }
        }
        (plan, expect)
    }
}
