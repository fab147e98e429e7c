//! A trace recorded through `RecordingStore` replays into a fresh store with every result
//! and commit hash verified, and a replay catches a wrong result or a damaged trace.

mod common;

use std::collections::HashSet;

use arbor_bench::ReplayError;
use arbor_trace::{Digest, Op, OpKind, Parent, TraceError, TraceReader, TraceWriter};
use common::{record_random, replay_into};

#[test]
fn recorded_trace_replays_with_every_hash_verified() {
    let recorded = record_random(12, 7);
    let dir = tempfile::tempdir().unwrap();
    let (store, report) = replay_into(&recorded.trace, dir.path()).unwrap();
    let s = &report.summary;
    assert_eq!(s.blocks, 12);
    assert_eq!(s.checked_hashes, s.blocks);
    assert!(s.checked_results > 100, "{} results checked", s.checked_results);
    assert_eq!(report.blocks.len(), 12);
    // The replaying store holds the very commits the application made.
    for h in &recorded.commits {
        assert!(store.contains(h), "commit {h} missing after the replay");
    }
    assert_eq!(store.last_commit(), recorded.commits.last().copied());
}

#[test]
fn recorded_blocks_name_their_parents_and_hold_every_kind() {
    let recorded = record_random(12, 7);
    let mut reader = TraceReader::new(recorded.trace.as_slice()).unwrap();
    let (mut i, mut parents, mut kinds) = (0, HashSet::new(), HashSet::new());
    while let Some(block) = reader.next_block().unwrap() {
        assert_eq!(block.level, i as u64 + 1);
        assert_eq!(block.commit.hash, Some(recorded.commits[i].0));
        assert_eq!(block.commit.message, format!("block {}", i + 1).into_bytes());
        if i == 0 {
            assert_eq!(block.parent, Parent::Genesis);
        }
        parents.insert(match block.parent {
            Parent::Genesis => "genesis",
            Parent::Previous => "previous",
            Parent::Hash(h) => {
                assert!(recorded.commits[..i].iter().any(|c| c.0 == h), "block {i} names an unknown parent");
                "hash"
            }
        });
        kinds.extend(block.ops.iter().map(Op::kind));
        i += 1;
    }
    assert_eq!(i, 12);
    assert_eq!(parents.len(), 3, "{parents:?}");
    // Every kind but `copy`, which only imported Irmin traces hold (the recorder offers the
    // tree API, where a copy is a `find_tree` then an `add_tree`).
    assert!(!kinds.contains(&OpKind::Copy));
    assert_eq!(kinds.len(), OpKind::ALL.len() - 1, "{kinds:?}");
}

/// Decodes `trace`, lets `change` alter its blocks, and encodes it again.
fn rewrite(trace: &[u8], change: impl FnOnce(&mut Vec<arbor_trace::Block>)) -> Vec<u8> {
    let mut reader = TraceReader::new(trace).unwrap();
    let header = reader.header().clone();
    let mut blocks = Vec::new();
    while let Some(b) = reader.next_block().unwrap() {
        blocks.push(b);
    }
    change(&mut blocks);
    let mut writer = TraceWriter::new(Vec::new(), &header).unwrap();
    for b in &blocks {
        writer.write_block(b).unwrap();
    }
    writer.finish().unwrap()
}

/// A long value read (one the trace records by hash, checked once the block's time is taken)
/// that differs from the recorded one is a mismatch naming its block and operation, as a
/// short one is.
#[test]
fn a_wrong_long_value_read_is_a_mismatch_naming_block_and_operation() {
    let recorded = record_random(8, 11);
    let mut target = None;
    let altered = rewrite(&recorded.trace, |blocks| {
        for (b, block) in blocks.iter_mut().enumerate() {
            let long_find = block.ops.iter_mut().enumerate().find(
                |(_, op)| matches!(op, Op::Find { result: Some(d), .. } if d.value_len() > Digest::INLINE_MAX as u64),
            );
            if let Some((i, Op::Find { result, .. })) = long_find {
                let len = result.expect("a long value").value_len() as usize;
                *result = Some(Digest::of(&vec![0x5a; len]));
                target = Some((b, i));
                return;
            }
        }
    });
    let (target_block, target_op) = target.expect("a find of a value longer than its digest");
    let dir = tempfile::tempdir().unwrap();
    match replay_into(&altered, dir.path()) {
        Err(ReplayError::Mismatch { block, op, what, .. }) => {
            assert_eq!((block, op), (target_block as u64, target_op));
            assert!(what.starts_with("find ") && what.contains("expected"), "{what}");
        }
        other => panic!("expected a mismatch, got {:?}", other.map(|(_, r)| r.summary)),
    }
}

#[test]
fn a_wrong_find_result_is_a_mismatch_naming_block_and_operation() {
    let recorded = record_random(8, 11);
    let target_block = 5;
    let mut target_op = None;
    let altered = rewrite(&recorded.trace, |blocks| {
        let ops = &mut blocks[target_block].ops;
        let (i, op) = ops.iter_mut().enumerate().find(|(_, op)| matches!(op, Op::Find { .. })).expect("a find");
        if let Op::Find { result, .. } = op {
            *result = match result {
                Some(_) => None,
                None => Some(Digest::of(b"not what the store holds")),
            };
        }
        target_op = Some(i);
    });
    let dir = tempfile::tempdir().unwrap();
    match replay_into(&altered, dir.path()) {
        Err(ReplayError::Mismatch { block, level, op, what }) => {
            assert_eq!(block, target_block as u64);
            assert_eq!(level, target_block as u64 + 1);
            assert_eq!(Some(op), target_op);
            assert!(what.starts_with("find "), "{what}");
        }
        other => panic!("expected a mismatch, got {:?}", other.map(|(_, r)| r.summary)),
    }
    // The unaltered trace replays.
    let dir = tempfile::tempdir().unwrap();
    replay_into(&recorded.trace, dir.path()).unwrap();
}

#[test]
fn a_flipped_byte_is_a_trace_error() {
    let recorded = record_random(8, 3);
    let mut damaged = recorded.trace.clone();
    let at = damaged.len() / 2;
    damaged[at] ^= 0x10;
    let dir = tempfile::tempdir().unwrap();
    match replay_into(&damaged, dir.path()) {
        Err(ReplayError::Trace(TraceError::CorruptBlock { block, .. })) => assert!(block < 8),
        other => panic!("expected a corrupt block, got {:?}", other.map(|(_, r)| r.summary)),
    }
}
