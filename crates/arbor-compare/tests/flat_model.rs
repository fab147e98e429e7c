//! The flat translation of a generated trace, replayed into a plain in-memory map through
//! the same driver the peers use, reproduces every read the trace recorded.

use std::collections::HashMap;

use arbor_compare::backend::{replay_flat, FlatStore};
use arbor_compare::flat::Key;
use arbor_compare::flatten::flatten;
use arbor_compare::result::BackendRun;
use arbor_compare::Result;
use arbor_trace::{generate, GeneratorParams, TraceReader};

/// A flat store in memory: what every peer should behave like.
#[derive(Default)]
struct MapStore {
    map: HashMap<Key, Vec<u8>>,
    commits: u64,
}

impl FlatStore for MapStore {
    fn begin_block(&mut self) -> Result<()> {
        Ok(())
    }
    fn get(&mut self, key: &Key) -> Result<Option<Vec<u8>>> {
        Ok(self.map.get(key).cloned())
    }
    fn commit(&mut self, _level: u64, writes: Vec<(Key, Option<Vec<u8>>)>) -> Result<()> {
        assert!(writes.windows(2).all(|w| w[0].0 < w[1].0), "writes sorted, one per key");
        for (k, v) in writes {
            match v {
                Some(v) => self.map.insert(k, v),
                None => self.map.remove(&k),
            };
        }
        self.commits += 1;
        Ok(())
    }
    fn root(&self) -> String {
        format!("{} keys after {} commits", self.map.len(), self.commits)
    }
    fn close(self: Box<Self>) -> Result<Vec<String>> {
        Ok(vec![self.root()])
    }
}

#[test]
fn flat_replay_matches_the_trace() {
    let params = GeneratorParams { blocks: 12, values: 20_000, cycle_length: 10, ..GeneratorParams::default() };
    let mut trace = Vec::new();
    generate(params, &mut trace).unwrap();
    let dir = std::env::temp_dir().join(format!("arbor-compare-flat-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let flat = dir.join("flat.bin");
    let stats =
        flatten(TraceReader::new(trace.as_slice()).unwrap(), std::fs::File::create(&flat).unwrap(), None).unwrap();
    assert_eq!(stats.blocks, 12);
    assert_eq!(stats.initial_values, 20_000);
    assert_eq!(stats.index_disagreements, 0);
    // The cycle end (block 10) removes whole directories: their values become deletes.
    assert!(stats.subtree_deletes > 0);
    assert_eq!(stats.lists_skipped, 12);
    let mut run = BackendRun::default();
    replay_flat(Box::<MapStore>::default(), &dir, &flat, &mut run).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(run.blocks.len(), 12);
    assert_eq!(run.mismatches, 0, "every checked read matches the trace");
    assert_eq!(run.checked_reads, stats.finds + stats.mems + stats.tree_tests_answered);
    assert_eq!(run.unchecked_reads, stats.tree_tests_on_directories);
    assert_eq!(run.notes, vec![format!("{} keys after {} commits", stats.final_values, 12 + 1)]);
}

#[test]
fn only_blocks_asked_for_are_translated() {
    let params = GeneratorParams { blocks: 5, values: 20_000, ..GeneratorParams::default() };
    let mut trace = Vec::new();
    generate(params, &mut trace).unwrap();
    let stats = flatten(TraceReader::new(trace.as_slice()).unwrap(), std::io::sink(), Some(2)).unwrap();
    assert_eq!(stats.blocks, 2);
}
