//! Translating a trace into the flat operation stream ([`crate::flat`]) the peers replay.
//!
//! The translator keeps an index of every path that holds a value (all of them, in memory,
//! in this process only), which is what lets it turn directory operations into operations
//! on single keys:
//!
//! - `find` is a get, `mem` an existence test, both checked against the trace.
//! - `mem_tree` and `find_tree` are existence tests of the path's key. When the trace's
//!   answer is about a value or an absent path, it is checked; when the path is a directory
//!   a flat store cannot know it, so the test is made (it costs a lookup) but not checked,
//!   and counted.
//! - `add` is a put, preceded by deletes of every value below the path (an `add` replaces a
//!   subtree) and of every ancestor that held a value (it becomes a directory).
//! - `add_tree` deletes the whole subtree (every value at or below the path), then puts each
//!   leaf as an `add` would; `remove` deletes every value at or below the path.
//! - `list`, `length` and `fold` enumerate a directory, which hashed keys cannot do: they
//!   are skipped and counted.

use std::collections::BTreeSet;
use std::io::{Read, Write};

use arbor_trace::{Op, Parent, TraceReader, TreeSummary};
use serde::{Deserialize, Serialize};

use crate::error::{CompareError, IoContext, Result};
use crate::flat::{Expect, Expect::*};
use crate::flat::{FlatBlock, FlatOp, FlatWriter, Key};

/// Initial-state operations per `I` frame (each one commit on the peers).
pub const LOAD_BATCH: usize = 100_000;

/// What the translation did, by kind: the figures `docs/COMPARE.md` explains.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct FlattenStats {
    /// Blocks translated.
    pub blocks: u64,
    /// Operations of those blocks in the trace.
    pub trace_ops: u64,
    /// Values of the initial state.
    pub initial_values: u64,
    /// `find`: gets checked against the recorded value.
    pub finds: u64,
    /// `mem`: existence tests checked against the trace.
    pub mems: u64,
    /// `mem_tree` and `find_tree` on values or absent paths: existence tests, checked.
    pub tree_tests_answered: u64,
    /// `mem_tree` and `find_tree` on directories: existence tests made but not checked.
    pub tree_tests_on_directories: u64,
    /// `add` operations.
    pub adds: u64,
    /// `add_tree` operations.
    pub add_trees: u64,
    /// Leaves written by `add_tree`.
    pub add_tree_leaves: u64,
    /// `remove` operations.
    pub removes: u64,
    /// Deletes of values below a removed or replaced path (subtree removal, expanded).
    pub subtree_deletes: u64,
    /// Deletes of a removed path that held a value itself.
    pub path_deletes: u64,
    /// Deletes of ancestors that held a value and became directories.
    pub ancestor_deletes: u64,
    /// `list` operations skipped.
    pub lists_skipped: u64,
    /// `length` operations skipped.
    pub lengths_skipped: u64,
    /// `fold` operations skipped.
    pub folds_skipped: u64,
    /// Reads whose recorded answer disagrees with the translator's index (should be 0).
    pub index_disagreements: u64,
    /// Flat gets written.
    pub flat_gets: u64,
    /// Flat existence tests written.
    pub flat_tests: u64,
    /// Flat puts written.
    pub flat_puts: u64,
    /// Flat deletes written.
    pub flat_deletes: u64,
    /// Paths holding a value after the last block.
    pub final_values: u64,
}

/// The set of paths holding a value, encoded as steps joined by NUL bytes (sorted so that
/// the values below a path are one contiguous range).
#[derive(Default)]
struct Index {
    leaves: BTreeSet<Vec<u8>>,
}

fn encode(path: &[Vec<u8>]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(path.iter().map(|s| s.len() + 1).sum());
    for (i, step) in path.iter().enumerate() {
        if step.contains(&0) {
            return Err(CompareError::Unsupported("a path step holds a NUL byte".into()));
        }
        if i > 0 {
            out.push(0);
        }
        out.extend_from_slice(step);
    }
    Ok(out)
}

/// The flat key of an encoded path: NUL separators become `/` (as [`crate::flat::key_of`]).
fn key_of_encoded(enc: &[u8]) -> Key {
    let joined: Vec<u8> = enc.iter().map(|&b| if b == 0 { b'/' } else { b }).collect();
    let mut key = [0u8; 32];
    key.copy_from_slice(blake2b_simd::Params::new().hash_length(32).hash(&joined).as_bytes());
    key
}

impl Index {
    /// Encoded paths of the values strictly below `enc` (every value when `enc` is the root).
    fn below(&self, enc: &[u8]) -> Vec<Vec<u8>> {
        let mut prefix = enc.to_vec();
        if !enc.is_empty() {
            prefix.push(0);
        }
        self.leaves.range(prefix.clone()..).take_while(|k| k.starts_with(&prefix)).cloned().collect()
    }

    fn is_dir(&self, enc: &[u8]) -> bool {
        let mut prefix = enc.to_vec();
        if !enc.is_empty() {
            prefix.push(0);
        }
        self.leaves.range(prefix.clone()..).next().is_some_and(|k| k.starts_with(&prefix))
    }
}

/// The translator's state across blocks.
struct Translator {
    index: Index,
    stats: FlattenStats,
}

impl Translator {
    fn del_below(&mut self, enc: &[u8], out: &mut Vec<FlatOp>) {
        for leaf in self.index.below(enc) {
            self.index.leaves.remove(&leaf);
            out.push(FlatOp::Del(key_of_encoded(&leaf)));
            self.stats.subtree_deletes += 1;
        }
    }

    fn remove(&mut self, path: &[Vec<u8>], out: &mut Vec<FlatOp>) -> Result<()> {
        let enc = encode(path)?;
        if self.index.leaves.remove(&enc) {
            out.push(FlatOp::Del(key_of_encoded(&enc)));
            self.stats.path_deletes += 1;
        }
        self.del_below(&enc, out);
        Ok(())
    }

    fn add(&mut self, path: &[Vec<u8>], value: &[u8], out: &mut Vec<FlatOp>) -> Result<()> {
        if path.is_empty() {
            return Err(CompareError::Unsupported("a value at the root path".into()));
        }
        let enc = encode(path)?;
        self.del_below(&enc, out);
        for i in 1..path.len() {
            let anc = encode(&path[..i])?;
            if self.index.leaves.remove(&anc) {
                out.push(FlatOp::Del(key_of_encoded(&anc)));
                self.stats.ancestor_deletes += 1;
            }
        }
        self.index.leaves.insert(enc.clone());
        out.push(FlatOp::Put(key_of_encoded(&enc), value.to_vec()));
        Ok(())
    }

    fn agree(&mut self, enc: &[u8], recorded_value: bool) {
        if self.index.leaves.contains(enc) != recorded_value {
            self.stats.index_disagreements += 1;
        }
    }

    fn tree_test(&mut self, path: &[Vec<u8>], recorded: Option<bool>, out: &mut Vec<FlatOp>) -> Result<()> {
        // `recorded`: Some(true) a value, Some(false) absent, None a directory.
        let enc = encode(path)?;
        let key = key_of_encoded(&enc);
        let expect = match recorded {
            Some(is_value) => {
                self.agree(&enc, is_value);
                self.stats.tree_tests_answered += 1;
                if is_value {
                    Present
                } else {
                    Absent
                }
            }
            None => {
                if !self.index.is_dir(&enc) {
                    self.stats.index_disagreements += 1;
                }
                self.stats.tree_tests_on_directories += 1;
                Unchecked
            }
        };
        out.push(FlatOp::Has(key, expect));
        Ok(())
    }

    fn op(&mut self, op: &Op, out: &mut Vec<FlatOp>) -> Result<()> {
        match op {
            Op::Find { path, result } => {
                let enc = encode(path)?;
                self.agree(&enc, result.is_some());
                self.stats.finds += 1;
                let expect = result.map_or(Absent, Expect::Value);
                out.push(FlatOp::Get(key_of_encoded(&enc), expect));
            }
            Op::Mem { path, result } => {
                let enc = encode(path)?;
                self.agree(&enc, *result);
                self.stats.mems += 1;
                out.push(FlatOp::Has(key_of_encoded(&enc), if *result { Present } else { Absent }));
            }
            Op::MemTree { path, result } => {
                let enc = encode(path)?;
                let shape = if !*result {
                    Some(false)
                } else if self.index.leaves.contains(&enc) {
                    Some(true)
                } else {
                    None
                };
                self.tree_test(path, shape, out)?;
            }
            Op::FindTree { path, result } => {
                let shape = match result {
                    None => Some(false),
                    Some(TreeSummary { is_value: true, .. }) => Some(true),
                    Some(_) => None,
                };
                self.tree_test(path, shape, out)?;
            }
            Op::Add { path, value } => {
                self.stats.adds += 1;
                self.add(path, value, out)?;
            }
            Op::AddTree { path, tree } => {
                self.stats.add_trees += 1;
                self.remove(path, out)?;
                for (rel, value) in tree {
                    self.stats.add_tree_leaves += 1;
                    let full: Vec<Vec<u8>> = path.iter().chain(rel.iter()).cloned().collect();
                    self.add(&full, value, out)?;
                }
            }
            Op::Remove { path } => {
                self.stats.removes += 1;
                self.remove(path, out)?;
            }
            Op::List { .. } => self.stats.lists_skipped += 1,
            Op::Length { .. } => self.stats.lengths_skipped += 1,
            Op::Fold { .. } => self.stats.folds_skipped += 1,
            Op::Copy { .. } => {
                return Err(CompareError::Unsupported(
                    "copy operations (imported irmin traces) are not flattened".into(),
                ))
            }
        }
        Ok(())
    }
}

fn count(stats: &mut FlattenStats, ops: &[FlatOp]) {
    for op in ops {
        match op {
            FlatOp::Get(..) => stats.flat_gets += 1,
            FlatOp::Has(..) => stats.flat_tests += 1,
            FlatOp::Put(..) => stats.flat_puts += 1,
            FlatOp::Del(..) => stats.flat_deletes += 1,
        }
    }
}

/// Translates the initial state and up to `max_blocks` blocks of `reader` into a flat stream
/// written to `out`. Forked traces (explicit parent hashes) are refused.
pub fn flatten<R: Read, W: Write>(mut reader: TraceReader<R>, out: W, max_blocks: Option<u64>) -> Result<FlattenStats> {
    let mut t = Translator { index: Index::default(), stats: FlattenStats::default() };
    let mut w = FlatWriter::new(out).ctx(|| "writing the flat stream".into())?;
    let mut batch = Vec::new();
    if let Some(stream) = reader.header().initial_state.stream()? {
        for (path, value) in stream {
            t.stats.initial_values += 1;
            t.add(&path, &value, &mut batch)?;
            if batch.len() >= LOAD_BATCH {
                w.initial(&batch).ctx(|| "writing the flat stream".into())?;
                batch.clear();
            }
        }
        if !batch.is_empty() {
            w.initial(&batch).ctx(|| "writing the flat stream".into())?;
        }
        // The initial state's own deletes (if any) are not part of the replayed work.
        t.stats.subtree_deletes = 0;
        t.stats.ancestor_deletes = 0;
    }
    let limit = max_blocks.unwrap_or(u64::MAX);
    while t.stats.blocks < limit {
        let Some(block) = reader.next_block()? else { break };
        if let Parent::Hash(_) = block.parent {
            return Err(CompareError::Unsupported("a block with an explicit parent (a fork)".into()));
        }
        let mut ops = Vec::with_capacity(block.ops.len());
        for op in &block.ops {
            t.op(op, &mut ops)?;
        }
        count(&mut t.stats, &ops);
        t.stats.blocks += 1;
        t.stats.trace_ops += block.ops.len() as u64;
        let fb =
            FlatBlock { level: block.level, trace_ops: block.ops.len() as u32, transactions: block.transactions, ops };
        w.block(&fb).ctx(|| "writing the flat stream".into())?;
    }
    w.finish().ctx(|| "writing the flat stream".into())?;
    t.stats.final_values = t.index.leaves.len() as u64;
    Ok(t.stats)
}
