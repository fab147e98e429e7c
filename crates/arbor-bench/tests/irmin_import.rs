//! irmin-bench replayable traces, built with our own encoder from the format's definition,
//! imported and replayed: every recorded result and commit hash is checked, and a wrong
//! commit hash is reported with its block. Expected hashes come from the plain `RefTree`
//! oracle of `arbor-core`, not from the engine.

mod common;

use std::collections::BTreeMap;

use arbor_bench::ReplayError;
use arbor_core::reference::RefTree;
use arbor_core::{commit_hash, Hash, InodeConfig};
use arbor_trace::irmin::{import_irmin, IrminWriter, Row, Scope};
use arbor_trace::{Op, Parent, TraceReader};
use common::replay_into;

/// A tree as its leaves; turned into a `RefTree` to hash it.
type Leaves = BTreeMap<Vec<Vec<u8>>, Vec<u8>>;

fn key(steps: &[&str]) -> Vec<Vec<u8>> {
    steps.iter().map(|s| s.as_bytes().to_vec()).collect()
}

fn tree_hash(leaves: &Leaves) -> Hash {
    fn insert(node: &mut BTreeMap<Vec<u8>, RefTree>, path: &[Vec<u8>], value: &[u8]) {
        if path.len() == 1 {
            node.insert(path[0].clone(), RefTree::Contents(value.to_vec()));
            return;
        }
        let child = node.entry(path[0].clone()).or_insert_with(|| RefTree::Node(BTreeMap::new()));
        if let RefTree::Node(m) = child {
            insert(m, &path[1..], value);
        }
    }
    let mut root = BTreeMap::new();
    for (p, v) in leaves {
        insert(&mut root, p, v);
    }
    RefTree::Node(root).hash(InodeConfig::TEZOS)
}

fn ctx(id: i64) -> Scope<i64> {
    Scope::Keep(id)
}

fn co(h: Hash) -> Scope<Vec<u8>> {
    Scope::Keep(h.to_base58().into_bytes())
}

/// Four commits: genesis on the empty tree, two blocks in a chain, and a fourth block
/// that checks out genesis again (a second child of it). Returns the rows and the commit
/// hashes, in order.
fn scenario() -> (Vec<Row>, Vec<Hash>) {
    let mut rows = Vec::new();
    let mut hashes = Vec::new();
    let long = b"a value longer than eight bytes".to_vec();

    // Genesis: contexts 0 -> 1 -> 2.
    let mut s0 = Leaves::new();
    rows.push(Row::Add { key: key(&["a", "b"]), value: b"1".to_vec(), input: ctx(0), out: ctx(1) });
    rows.push(Row::Add { key: key(&["c"]), value: long.clone(), input: ctx(1), out: ctx(2) });
    s0.insert(key(&["a", "b"]), b"1".to_vec());
    s0.insert(key(&["c"]), long.clone());
    rows.push(Row::Mem { key: key(&["a", "b"]), result: true, input: ctx(2) });
    rows.push(Row::MemTree { key: key(&["a"]), result: true, input: ctx(2) });
    rows.push(Row::Mem { key: key(&["a"]), result: false, input: ctx(2) });
    rows.push(Row::Find { key: key(&["c"]), found: true, input: ctx(2) });
    rows.push(Row::Find { key: key(&["x"]), found: false, input: ctx(2) });
    let h0 = commit_hash(&tree_hash(&s0), &[], 0, b"Tezos", b"genesis");
    rows.push(Row::Commit { hash: co(h0), date: 0, message: b"genesis".to_vec(), parents: vec![], input: ctx(2) });
    hashes.push(h0);

    // Block 1: copy a to d, remove c.
    let mut s1 = s0.clone();
    rows.push(Row::Checkout { hash: co(h0), out: ctx(3) });
    rows.push(Row::Copy { from: key(&["a"]), to: key(&["d"]), input: ctx(3), out: ctx(4) });
    rows.push(Row::Remove { key: key(&["c"]), input: ctx(4), out: ctx(5) });
    s1.insert(key(&["d", "b"]), b"1".to_vec());
    s1.remove(&key(&["c"]));
    rows.push(Row::Find { key: key(&["d", "b"]), found: true, input: ctx(5) });
    rows.push(Row::Mem { key: key(&["c"]), result: false, input: ctx(5) });
    let h1 = commit_hash(&tree_hash(&s1), &[h0], 60, b"Tezos", b"block 1");
    rows.push(Row::Commit {
        hash: co(h1),
        date: 60,
        message: b"block 1".to_vec(),
        parents: vec![Scope::Forget(h0.to_base58().into_bytes())],
        input: Scope::Forget(5),
    });
    hashes.push(h1);

    // Block 2: on block 1.
    let mut s2 = s1.clone();
    rows.push(Row::Checkout { hash: co(h1), out: ctx(6) });
    rows.push(Row::Add { key: key(&["e"]), value: b"2".to_vec(), input: ctx(6), out: ctx(7) });
    s2.insert(key(&["e"]), b"2".to_vec());
    let h2 = commit_hash(&tree_hash(&s2), &[h1], 120, b"Tezos", b"block 2");
    rows.push(Row::Commit {
        hash: co(h2),
        date: 120,
        message: b"block 2".to_vec(),
        parents: vec![co(h1)],
        input: ctx(7),
    });
    hashes.push(h2);

    // Block 3: back on genesis.
    let mut s3 = s0.clone();
    rows.push(Row::Checkout { hash: co(h0), out: ctx(8) });
    rows.push(Row::Add { key: key(&["f"]), value: b"3".to_vec(), input: ctx(8), out: ctx(9) });
    s3.insert(key(&["f"]), b"3".to_vec());
    let h3 = commit_hash(&tree_hash(&s3), &[h0], 180, b"Tezos", b"block 3");
    rows.push(Row::Commit {
        hash: co(h3),
        date: 180,
        message: b"block 3".to_vec(),
        parents: vec![co(h0)],
        input: ctx(9),
    });
    hashes.push(h3);
    (rows, hashes)
}

fn irmin_file(rows: &[Row]) -> Vec<u8> {
    let mut w = IrminWriter::new(Vec::new()).unwrap();
    for r in rows {
        w.write_row(r).unwrap();
    }
    w.finish().unwrap()
}

fn import(rows: &[Row]) -> Vec<u8> {
    let (trace, summary) = import_irmin(irmin_file(rows).as_slice(), Vec::new(), "test").unwrap();
    assert_eq!(summary.rows, rows.len() as u64);
    trace
}

#[test]
fn an_irmin_trace_replays_with_every_result_and_commit_hash_checked() {
    let (rows, hashes) = scenario();
    let trace = import(&rows);

    let mut reader = TraceReader::new(trace.as_slice()).unwrap();
    let mut blocks = Vec::new();
    while let Some(b) = reader.next_block().unwrap() {
        blocks.push(b);
    }
    assert_eq!(blocks.len(), 4);
    let parents: Vec<Parent> = blocks.iter().map(|b| b.parent).collect();
    assert_eq!(parents, [Parent::Genesis, Parent::Previous, Parent::Previous, Parent::Hash(hashes[0].0)]);
    assert!(matches!(&blocks[1].ops[0], Op::Copy { path, to } if *path == key(&["a"]) && *to == key(&["d"])));
    assert_eq!(blocks[0].ops[5], Op::Mem { path: key(&["c"]), result: true }, "a find becomes a mem");
    for (b, h) in blocks.iter().zip(&hashes) {
        assert_eq!(b.commit.hash, Some(h.0));
        assert_eq!(b.commit.author, b"Tezos");
    }

    let dir = tempfile::tempdir().unwrap();
    let (store, report) = replay_into(&trace, dir.path()).unwrap();
    assert_eq!(report.summary.checked_hashes, 4);
    // 5 reads in genesis, 2 in block 1.
    assert_eq!(report.summary.checked_results, 7);
    for h in &hashes {
        assert!(store.contains(h), "commit {h} missing");
    }
}

#[test]
fn a_wrong_commit_hash_is_reported_with_its_block() {
    let (mut rows, hashes) = scenario();
    let wrong = Hash([0x5a; 32]);
    let at = rows.iter().position(|r| matches!(r, Row::Commit { hash, .. } if *hash == co(hashes[2]))).unwrap();
    if let Row::Commit { hash, .. } = &mut rows[at] {
        *hash = co(wrong);
    }
    let trace = import(&rows);
    let dir = tempfile::tempdir().unwrap();
    match replay_into(&trace, dir.path()).map(|_| ()) {
        Err(ReplayError::Mismatch { block, level, op, what }) => {
            assert_eq!((block, level, op), (2, 2, 1), "{what}");
            assert!(what.contains(&wrong.to_string()) && what.contains(&hashes[2].to_string()), "{what}");
        }
        other => panic!("expected a commit hash mismatch in block 2, got {other:?}"),
    }
}

#[test]
fn a_wrong_read_result_is_reported() {
    let (mut rows, _) = scenario();
    // Block 1's `mem c` recorded as true, though c was removed.
    let at =
        rows.iter().position(|r| matches!(r, Row::Mem { key: k, result: false, .. } if *k == key(&["c"]))).unwrap();
    if let Row::Mem { result, .. } = &mut rows[at] {
        *result = true;
    }
    let trace = import(&rows);
    let dir = tempfile::tempdir().unwrap();
    match replay_into(&trace, dir.path()).map(|_| ()) {
        Err(ReplayError::Mismatch { block, op, what, .. }) => assert_eq!((block, op), (1, 3), "{what}"),
        other => panic!("expected a read mismatch, got {other:?}"),
    }
}

#[test]
fn a_copy_from_an_absent_path_is_reported() {
    let (mut rows, _) = scenario();
    let at = rows.iter().position(|r| matches!(r, Row::Copy { .. })).unwrap();
    if let Row::Copy { from, .. } = &mut rows[at] {
        *from = key(&["nowhere"]);
    }
    let trace = import(&rows);
    let dir = tempfile::tempdir().unwrap();
    match replay_into(&trace, dir.path()).map(|_| ()) {
        Err(ReplayError::Mismatch { block, op, what, .. }) => {
            assert_eq!((block, op), (1, 0));
            assert!(what.contains("absent"), "{what}");
        }
        other => panic!("expected a copy mismatch, got {other:?}"),
    }
}
