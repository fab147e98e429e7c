//! `arbor trace import` of other tools' traces, end to end: an Octez context trace built with
//! our own encoder imports and replays with every commit hash verified, a wrong hash is
//! reported with its block, and a real irmin-bench recording (when one is at hand) replays
//! to the hash Octez gave its commit.

mod support;

use std::path::{Path, PathBuf};

use arbor_core::{commit_hash, contents_hash, flat_node_hash, ChildKind, Hash};
use arbor_trace::context_trace::{
    BlockRow, ContextTraceWriter, Event, HashIn, HashOut, Header, Order, ScopeEnd, StartIn, StartOut, Tracked,
    TreeEvent,
};
use support::{run, stderr, stdout};

fn t(id: i64) -> Tracked {
    Tracked { scope: ScopeEnd::WillReoccur, id }
}

fn key(s: &str) -> Vec<Vec<u8>> {
    s.split('/').filter(|x| !x.is_empty()).map(|x| x.as_bytes().to_vec()).collect()
}

fn flat(entries: &[(&str, ChildKind, Hash)]) -> Hash {
    flat_node_hash(entries.iter().map(|(s, k, h)| (s.as_bytes(), *k, h)))
}

/// A genesis block and one block on it, as Octez would have recorded them; `second` is the
/// hash recorded for the second commit (`None`: the right one).
fn octez_trace(dir: &Path, second: Option<Hash>) -> PathBuf {
    let protocol = [9u8; 32];
    let (hp, ht) = (contents_hash(&protocol), contents_hash(&[0]));
    // Genesis holds the protocol and the test chain status Octez's commit_genesis adds.
    let root0 = flat(&[("protocol", ChildKind::Contents, hp), ("test_chain", ChildKind::Contents, ht)]);
    let h0 = commit_hash(&root0, &[], 100, b"Tezos", b"Genesis");
    // Block 1 writes data/a, and data/b/c through a tree grafted back where it was read.
    let hb = flat(&[("c", ChildKind::Contents, contents_hash(b"w"))]);
    let hd = flat(&[("a", ChildKind::Contents, contents_hash(b"v")), ("b", ChildKind::Node, hb)]);
    let root1 = flat(&[
        ("data", ChildKind::Node, hd),
        ("protocol", ChildKind::Contents, hp),
        ("test_chain", ChildKind::Contents, ht),
    ]);
    let h1 = second.unwrap_or_else(|| commit_hash(&root1, &[h0], 130, b"Tezos", b"lvl 1"));
    let out = |h: Hash| HashOut { start: StartOut::FirstInstantiation, end: ScopeEnd::WillReoccur, hash: h.0.to_vec() };
    let rows = [
        BlockRow::new(
            0,
            vec![
                Event::Init { readonly: false },
                Event::CommitGenesisStart { chain_id: vec![1, 2, 3, 4], time: 100, protocol: protocol.to_vec() },
                Event::CommitGenesisEnd { hash: out(h0) },
            ],
        ),
        BlockRow::new(
            1,
            vec![
                Event::Checkout {
                    hash: HashIn { start: StartIn::Instantiated, end: ScopeEnd::LastOccurrence, hash: h0.0.to_vec() },
                    out: t(1),
                },
                Event::Mem { ctx: t(1), key: key("a"), result: false },
                Event::Add { ctx: t(1), key: key("a"), value: b"v".to_vec(), out: t(2) },
                Event::FindTree { ctx: t(2), key: vec![], out: Some(t(5)) },
                Event::Tree(TreeEvent::Add { tree: t(5), key: key("b/c"), value: b"w".to_vec(), out: t(6) }),
                Event::AddTree { ctx: t(2), key: vec![], tree: t(6), out: t(3) },
                Event::Find { ctx: t(3), key: key("b/c"), found: true },
                Event::Commit { time: 130, message: Some(b"lvl 1".to_vec()), ctx: t(3), hash: out(h1) },
            ],
        ),
    ];
    let header = Header { initial_block: None, last_block: (1, h1.0.to_vec()), block_count: 2 };
    let path = dir.join("octez.trace");
    let mut w = ContextTraceWriter::new(std::fs::File::create(&path).unwrap(), &header).unwrap();
    for r in &rows {
        w.write_row(r).unwrap();
    }
    w.finish().unwrap();
    path
}

fn import(format: &str, input: &Path, out: &Path) -> String {
    let o =
        run(&["trace", "import", "--from", format, input.to_str().unwrap(), "--out", out.to_str().unwrap()], &[], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

fn replay(trace: &Path, store: &Path) -> std::process::Output {
    run(&["replay", trace.to_str().unwrap(), "--store", store.to_str().unwrap(), "--quiet"], &[], b"")
}

#[test]
fn an_octez_context_trace_imports_and_replays_with_its_commit_hashes_verified() {
    let dir = tempfile::tempdir().unwrap();
    let input = octez_trace(dir.path(), None);
    let trace = dir.path().join("t.trace");
    let text = import("octez-context-trace", &input, &trace);
    assert!(text.contains("blocks          2 (2 with a recorded commit hash)"), "{text}");
    assert!(text.contains("operations      7"), "{text}");
    assert!(text.contains("not expressible 1 events") && text.contains("init: opens the store"), "{text}");

    let o = replay(&trace, &dir.path().join("store"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).trim_end().ends_with("2 commit hashes verified"), "{}", stdout(&o));

    // arbor replay given the Octez file itself says what it is and how to convert it.
    let o = replay(&input, &dir.path().join("s2"));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--from octez-context-trace"), "{}", stderr(&o));
}

#[test]
fn a_wrong_commit_hash_is_reported_with_its_block() {
    let dir = tempfile::tempdir().unwrap();
    let input = octez_trace(dir.path(), Some(Hash([7; 32])));
    let trace = dir.path().join("t.trace");
    import("octez-context-trace", &input, &trace);
    let o = replay(&trace, &dir.path().join("store"));
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("mismatch in block 1 (level 1)"), "{err}");
    assert!(err.contains(&format!("commit hash: expected {}", Hash([7; 32]))), "{err}");
}

#[test]
fn a_cut_file_imports_its_whole_rows_and_a_refused_one_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(octez_trace(dir.path(), None)).unwrap();
    // Two bytes short: the second row's end is missing.
    bytes.truncate(bytes.len() - 2);
    let cut = dir.path().join("cut.trace");
    std::fs::write(&cut, &bytes).unwrap();
    let text = import("octez-context-trace", &cut, &dir.path().join("t.trace"));
    assert!(text.contains("blocks          1 (1 with"), "{text}");
    assert!(text.contains("the file ends inside row 1"), "{text}");

    // A block whose commit needs a graft of a tree the trace does not give (one a fold
    // visited) is refused, naming the block and the event.
    let fold_graft = vec![
        Event::Checkout {
            hash: HashIn { start: StartIn::NotInstantiated, end: ScopeEnd::LastOccurrence, hash: vec![1; 32] },
            out: t(1),
        },
        Event::FoldStart { depth: None, order: Order::Sorted, ctx: t(1), key: key("d") },
        Event::FoldStepEnter(t(9)),
        Event::FoldStepExit(t(9)),
        Event::FoldEnd,
        Event::AddTree { ctx: t(1), key: key("e"), tree: t(9), out: t(2) },
        Event::Commit {
            time: 0,
            message: None,
            ctx: t(2),
            hash: HashOut { start: StartOut::FirstInstantiation, end: ScopeEnd::LastOccurrence, hash: vec![2; 32] },
        },
    ];
    let input = dir.path().join("graft.trace");
    let header = Header { initial_block: None, last_block: (4, vec![2; 32]), block_count: 1 };
    let mut w = ContextTraceWriter::new(std::fs::File::create(&input).unwrap(), &header).unwrap();
    w.write_row(&BlockRow::new(4, fold_graft)).unwrap();
    w.finish().unwrap();
    let out = dir.path().join("refused.trace");
    let args =
        ["trace", "import", "--from", "octez-context-trace", input.to_str().unwrap(), "--out", out.to_str().unwrap()];
    let o = run(&args, &[], b"");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("Octez context trace, block 0, event 5: the committed context needs"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

/// Real data: `test/irmin-bench/data/tezos_actions_1commit.repr` of the mirage/irmin
/// repository, 300 bytes irmin-bench recorded from an Octez node: the genesis block of
/// Tezos mainnet, whose context hash is CoV8SQumiVU9saiu3FVNeDNewJaJH8yWdsGF3WLdsRr2P9S7MzCj.
/// It is not part of this repository (third-party data), so the test is ignored unless asked
/// for (`--ignored`), and then needs the file in `$ARBOR_REAL_DATA` or the shared data beside
/// the checkout; `.ci/run` asks for it when the file is there.
#[test]
#[ignore = "needs irmin's real recording (not in the repository): put it in $ARBOR_REAL_DATA or shared/real-data and run with --ignored"]
fn a_real_irmin_bench_recording_replays_to_its_recorded_commit_hash() {
    let name = "irmin-bench/tezos_actions_1commit.repr";
    let dirs = [
        std::env::var_os("ARBOR_REAL_DATA").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/real-data")),
    ];
    let Some(input) = dirs.into_iter().flatten().map(|d| d.join(name)).find(|p| p.exists()) else {
        panic!("{name} is in neither $ARBOR_REAL_DATA nor shared/real-data");
    };
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.trace");
    let text = import("irmin", &input, &trace);
    assert!(text.contains("blocks          1 (1 with a recorded commit hash)"), "{text}");
    let o = replay(&trace, &dir.path().join("store"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).trim_end().ends_with("1 commit hashes verified"), "{}", stdout(&o));
}
