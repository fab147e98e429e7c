//! Shared helpers of the arbor-bench tests: a deterministic random workload recorded through
//! `RecordingStore`, and replaying a trace held in memory.

#![allow(dead_code)]

use arbor::{Hash, Order, Store};
use arbor_bench::{replay, RecordingStore, RecordingTree, ReplayError, ReplayOptions, ReplayReport};
use arbor_trace::TraceReader;

/// A small xorshift generator: the tests need no real randomness, only variety.
pub struct Rng(u64);

impl Rng {
    /// A generator from a non-zero seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const STEPS: [&str; 6] = ["a", "b", "c", "contracts", "index", "0123abcd"];

fn path(rng: &mut Rng) -> Vec<&'static str> {
    let len = 1 + rng.below(3) as usize;
    (0..len).map(|_| STEPS[rng.below(STEPS.len() as u64) as usize]).collect()
}

fn value(rng: &mut Rng) -> Vec<u8> {
    let len = rng.below(40) as usize;
    (0..len).map(|_| rng.below(256) as u8).collect()
}

/// Applies `n` random operations of every kind to `tree`.
fn random_ops(rng: &mut Rng, store: &Store, tree: &mut RecordingTree, n: usize) -> arbor_bench::record::Result<()> {
    for _ in 0..n {
        let p = path(rng);
        match rng.below(12) {
            0..=2 => tree.add(&p, &value(rng))?,
            3 => tree.remove(&p)?,
            4 => drop(tree.find(&p)?),
            5 => drop(tree.mem(&p)?),
            6 => drop(tree.mem_tree(&p)?),
            7 => drop(tree.find_tree(&p)?),
            8 => {
                let offset = (rng.below(3) > 0).then(|| rng.below(3) as usize);
                let length = (rng.below(3) > 0).then(|| rng.below(4) as usize);
                drop(tree.list(&p[..p.len() - 1], offset, length)?);
            }
            9 => drop(tree.length(&p[..p.len() - 1])?),
            10 => {
                let depth = (rng.below(2) == 0).then(|| rng.below(3) as u32);
                // Stop early now and then: the recorded count must still be the whole fold's.
                let mut budget = rng.below(4);
                tree.fold(&p[..p.len() - 1], depth, Order::Sorted, |_, _| {
                    budget = budget.saturating_sub(1);
                    Ok(budget > 0)
                })?;
            }
            _ => {
                // Graft a copy of another subtree, a fresh one, or nothing (a removal).
                let sub = match rng.below(3) {
                    0 => tree.tree().find_tree(&path(rng))?.unwrap_or_else(|| store.empty()),
                    1 => store.empty().add(&path(rng), &value(rng))?.add(&path(rng), &value(rng))?,
                    _ => store.empty(),
                };
                tree.add_tree(&p, &sub)?;
            }
        }
    }
    Ok(())
}

/// What [`record_random`] produced.
pub struct Recorded {
    /// The trace.
    pub trace: Vec<u8>,
    /// The commit of every block, in order.
    pub commits: Vec<Hash>,
}

/// Records `blocks` blocks of random operations into a trace. Most blocks continue from the
/// previous commit; some start from an older one or from the empty tree.
pub fn record_random(blocks: u64, seed: u64) -> Recorded {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut rec = RecordingStore::new(store.clone(), Vec::new(), "arbor-bench tests: random operations").unwrap();
    let mut rng = Rng::new(seed);
    let mut commits: Vec<Hash> = Vec::new();
    let mut tree = rec.empty();
    for level in 1..=blocks {
        if !commits.is_empty() {
            tree = match rng.below(6) {
                0 => rec.checkout(&commits[rng.below(commits.len() as u64) as usize]).unwrap(),
                1 => rec.empty(),
                2 => tree, // the committed tree goes on
                _ => rec.checkout(commits.last().unwrap()).unwrap(),
            };
        }
        let n = 30 + rng.below(60) as usize;
        random_ops(&mut rng, &store, &mut tree, n).unwrap();
        let date = 1_700_000_000 + 30 * level as i64;
        let message = format!("block {level}");
        let hash = rec.commit(&mut tree, date, b"Tezos", message.as_bytes(), level, rng.below(50) as u32).unwrap();
        assert_eq!(tree.recorded_ops(), 0);
        commits.push(hash);
    }
    assert_eq!(rec.blocks_written(), blocks);
    let (_, trace) = rec.finish().unwrap();
    Recorded { trace, commits }
}

/// Replays `trace` into a fresh store in `dir`, checking everything.
pub fn replay_into(trace: &[u8], dir: &std::path::Path) -> Result<(Store, ReplayReport), ReplayError> {
    let store = Store::open(dir).unwrap();
    let reader = TraceReader::new(trace)?;
    let report = replay(reader, &store, &ReplayOptions::default(), |_, _| {})?;
    Ok((store, report))
}
