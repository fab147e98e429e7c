//! Octez context traces (`tezos-context-trace`'s replayable actions traces): their bytes as
//! written from the OCaml definitions, damaged files refused with the block and event at
//! fault, and the import: every expressible call mapped, the rest counted, undone writes
//! left out, and blocks whose commit needs what arbor traces cannot say refused.

use arbor_trace::context_trace::{
    import_context_trace, BlockRow, ContextImportSummary, ContextTraceReader, ContextTraceWriter, Depth, Event, HashIn,
    HashOut, Header, Kind, Order, Raw, ScopeEnd, StartIn, StartOut, TestChainStatus, Tracked, TreeEvent,
};
use arbor_trace::{Block, Op, Parent, TraceError, TraceReader};

/// A context or tree used again later.
fn t(id: i64) -> Tracked {
    Tracked { scope: ScopeEnd::WillReoccur, id }
}

/// A context or tree at its last use.
fn last(id: i64) -> Tracked {
    Tracked { scope: ScopeEnd::LastOccurrence, id }
}

fn key(s: &str) -> Vec<Vec<u8>> {
    s.split('/').filter(|x| !x.is_empty()).map(|x| x.as_bytes().to_vec()).collect()
}

fn path(s: &str) -> Vec<Vec<u8>> {
    key(s)
}

fn checkout(h: u8, out: Tracked) -> Event {
    let hash = HashIn { start: StartIn::NotInstantiated, end: ScopeEnd::LastOccurrence, hash: vec![h; 32] };
    Event::Checkout { hash, out }
}

fn commit(ctx: Tracked, h: u8) -> Event {
    let hash = HashOut { start: StartOut::FirstInstantiation, end: ScopeEnd::WillReoccur, hash: vec![h; 32] };
    Event::Commit { time: 1_000 + i64::from(h), message: Some(format!("lvl {h}").into_bytes()), ctx, hash }
}

fn row(level: i64, ops: Vec<Event>) -> BlockRow {
    BlockRow { tzop_count: 4, tzop_count_tx: 3, tzop_count_contract: 1, ..BlockRow::new(level, ops) }
}

fn file(rows: &[BlockRow]) -> Vec<u8> {
    let header = Header { initial_block: None, last_block: (9, vec![9; 32]), block_count: rows.len() as i64 };
    let mut w = ContextTraceWriter::new(Vec::new(), &header).unwrap();
    for r in rows {
        w.write_row(r).unwrap();
    }
    w.finish().unwrap()
}

fn import(rows: &[BlockRow]) -> (Vec<Block>, ContextImportSummary) {
    let (trace, summary) = import_context_trace(file(rows).as_slice(), Vec::new(), "test").unwrap();
    let mut r = TraceReader::new(trace.as_slice()).unwrap();
    let mut blocks = Vec::new();
    while let Some(b) = r.next_block().unwrap() {
        blocks.push(b);
    }
    (blocks, summary)
}

fn import_err(rows: &[BlockRow]) -> (u64, Option<u64>, String) {
    match import_context_trace(file(rows).as_slice(), Vec::new(), "test") {
        Err(TraceError::ContextTrace { block, event, reason }) => (block, event, reason),
        Err(e) => panic!("unexpected error {e}"),
        Ok((_, s)) => panic!("the import should have been refused: {s:?}"),
    }
}

fn not_expressed(s: &ContextImportSummary, label: &str) -> u64 {
    s.not_expressed.iter().filter(|(k, _)| k.starts_with(label)).map(|(_, n)| n).sum()
}

#[test]
fn a_row_and_the_header_are_laid_out_as_repr_does() {
    let r = BlockRow {
        ops: vec![
            Event::Mem { ctx: t(3), key: key("a/bc"), result: true },
            Event::Tree(TreeEvent::Find { tree: last(200), key: vec![], found: false }),
            Event::FoldEnd,
        ],
        ..row(5, vec![])
    };
    let mut buf = Vec::new();
    r.encode(&mut buf);
    #[rustfmt::skip]
    let expected = [
        5, 4, 3, 1, 0, 0, 0, 0, 0,                // the record's nine ints
        3,                                        // three events
        7, 1, 3, 2, 1, b'a', 2, b'b', b'c', 0xff, // Mem: case 7, Will_reoccur 3, key, true
        0, 5, 0, 0xc8, 1, 0, 0,                   // Tree (0) Find (5): Last_occurence 200, [], false
        5,                                        // Fold_end: a constant case
        0,                                        // uses_patch_context = false
    ];
    assert_eq!(buf, expected);
    assert_eq!(BlockRow::decode(&buf), Ok(r));

    let h = Header { initial_block: Some((-1, vec![7])), last_block: (2, vec![1, 2]), block_count: 300 };
    let mut buf = Vec::new();
    h.encode(&mut buf);
    let minus_one = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
    let expected = [&[0xff][..], &minus_one, &[1, 7], &[2, 2, 1, 2], &[0xac, 2]].concat();
    assert_eq!(buf, expected);
    assert_eq!(Header::decode(&buf), Ok(h));

    // The file: magic, version 0 big-endian, the header with its length, then the rows.
    let bytes = file(&[]);
    assert_eq!(&bytes[..12], b"TezosRep\0\0\0\0");
    assert_eq!(bytes[12] as usize, bytes.len() - 13);
}

#[test]
fn every_event_survives_the_file() {
    let hin = HashIn { start: StartIn::Instantiated, end: ScopeEnd::WillReoccur, hash: vec![1; 32] };
    let hout = HashOut { start: StartOut::Reinstantiation, end: ScopeEnd::LastOccurrence, hash: vec![2; 32] };
    let raw = Raw::Tree(vec![(b"a".to_vec(), Raw::Value(b"1".to_vec())), (b"b".to_vec(), Raw::Tree(vec![]))]);
    let trees = vec![
        TreeEvent::Empty { ctx: t(1), out: t(2) },
        TreeEvent::OfValue { ctx: t(1), value: b"v".to_vec(), out: t(3) },
        TreeEvent::OfRaw { raw, out: t(4) },
        TreeEvent::Mem { tree: t(2), key: key("a"), result: true },
        TreeEvent::MemTree { tree: t(2), key: key("a"), result: false },
        TreeEvent::Find { tree: t(2), key: key("a/b"), found: true },
        TreeEvent::IsEmpty { tree: t(2), result: true },
        TreeEvent::Kind { tree: t(2), result: Kind::Value },
        TreeEvent::Hash { tree: t(2) },
        TreeEvent::Equal { a: t(2), b: t(3), result: false },
        TreeEvent::ToValue { tree: t(3), found: true },
        TreeEvent::Clear { depth: Some(-3), tree: t(3) },
        TreeEvent::FindTree { tree: t(2), key: key("x"), out: Some(t(5)) },
        TreeEvent::Add { tree: t(2), key: key("x"), value: vec![0; 300], out: t(6) },
        TreeEvent::AddTree { tree: t(2), key: key("x"), sub: t(3), out: t(7) },
        TreeEvent::Remove { tree: t(2), key: key("x"), out: last(8) },
        TreeEvent::FoldStart { depth: Some(Depth::Gt(2)), order: Order::Undefined, tree: t(2), key: vec![] },
        TreeEvent::FoldStepEnter(t(9)),
        TreeEvent::FoldStepExit(last(9)),
        TreeEvent::FoldEnd(1),
    ];
    let mut ops: Vec<Event> = trees.into_iter().map(Event::Tree).collect();
    ops.extend([
        Event::FindTree { ctx: t(1), key: key("k"), out: None },
        Event::FoldStart { depth: Some(Depth::Lt(4)), order: Order::Sorted, ctx: t(1), key: key("k") },
        Event::FoldStepEnter(t(10)),
        Event::FoldStepExit(t(10)),
        Event::FoldEnd,
        Event::AddTree { ctx: t(1), key: key("k"), tree: t(2), out: t(11) },
        Event::Mem { ctx: t(1), key: key("k"), result: false },
        Event::MemTree { ctx: t(1), key: key("k"), result: true },
        Event::Find { ctx: t(1), key: key("k"), found: true },
        Event::GetProtocol { ctx: t(1) },
        Event::Hash { time: -5, message: None, ctx: t(1) },
        Event::FindPredecessorBlockMetadataHash { ctx: t(1) },
        Event::FindPredecessorOpsMetadataHash { ctx: t(1) },
        Event::GetTestChain { ctx: t(1) },
        Event::Exists { hash: hin.clone(), result: true },
        Event::Add { ctx: t(1), key: key("k"), value: b"v".to_vec(), out: t(12) },
        Event::Remove { ctx: t(1), key: key("k"), out: t(13) },
        Event::AddProtocol { ctx: t(1), hash: vec![3; 32], out: t(14) },
        Event::AddPredecessorBlockMetadataHash { ctx: t(1), hash: vec![4; 32], out: t(15) },
        Event::AddPredecessorOpsMetadataHash { ctx: t(1), hash: vec![5; 32], out: t(16) },
        Event::AddTestChain {
            ctx: t(1),
            status: TestChainStatus::Running {
                chain_id: vec![1, 2, 3, 4],
                genesis: vec![6; 32],
                protocol: vec![7; 32],
                expiration: 99,
            },
            out: t(17),
        },
        Event::RemoveTestChain { ctx: t(1), out: t(18) },
        Event::ForkTestChain { ctx: t(1), protocol: vec![8; 32], expiration: 7, out: t(19) },
        Event::Checkout { hash: hin.clone(), out: t(20) },
        Event::CommitGenesisStart { chain_id: vec![1, 2, 3, 4], time: 1, protocol: vec![9; 32] },
        Event::CommitGenesisEnd { hash: hout.clone() },
        Event::ClearTestChain { chain_id: vec![1, 2, 3, 4] },
        Event::Commit { time: 3, message: Some(b"m".to_vec()), ctx: t(1), hash: hout },
        Event::Init { readonly: false },
        Event::PatchContextEnter(t(21)),
        Event::PatchContextExit { ctx: t(21), out: t(22) },
        Event::Gc { hash: hin },
        Event::Split,
    ]);
    let rows = [row(i64::MAX >> 1, ops), BlockRow { uses_patch_context: true, ..row(-4, vec![]) }];
    let bytes = file(&rows);
    let mut r = ContextTraceReader::new(bytes.as_slice()).unwrap();
    assert_eq!(r.header().block_count, 2);
    assert_eq!(r.next_row().unwrap().as_ref(), Some(&rows[0]));
    assert_eq!(r.next_row().unwrap().as_ref(), Some(&rows[1]));
    assert_eq!(r.next_row().unwrap(), None);
    // Every event has its own case number (the names tell them apart in reports).
    let names: std::collections::BTreeSet<&str> = rows[0].ops.iter().map(Event::name).collect();
    assert_eq!(names.len(), rows[0].ops.len());
}

#[test]
fn damaged_files_are_refused_with_their_block_and_event() {
    let good = file(&[row(1, vec![Event::Split, Event::Split]), row(2, vec![Event::Split])]);
    let mut magic = good.clone();
    magic[0] = b'X';
    let mut version = good.clone();
    version[11] = 1;
    // The first row's second event: case 33 (Split) becomes 34, no such event.
    let header_len = 13 + good[12] as usize;
    let mut event = good.clone();
    assert_eq!(event[header_len + 1 + 9 + 1 + 1], 33);
    event[header_len + 1 + 9 + 1 + 1] = 34;
    for (bytes, block, ev, what) in [
        (&magic[..], 0, None, "magic"),
        (&version[..], 0, None, "version 1"),
        (&event[..], 0, Some(1), "unknown event"),
        (&good[..good.len() - 1], 1, None, "inside a row"),
        (&good[..7], 0, None, "preamble"),
    ] {
        let err = ContextTraceReader::new(bytes).and_then(|mut r| {
            while r.next_row()?.is_some() {}
            Ok(())
        });
        match err {
            Err(TraceError::ContextTrace { block: b, event: e, reason }) => {
                assert_eq!((b, e), (block, ev), "{reason}");
                assert!(reason.contains(what), "{what}: {reason}");
            }
            other => panic!("{what}: expected a context trace error, got {other:?}"),
        }
    }
}

#[test]
fn context_calls_become_operations_under_data() {
    let rows = [
        row(
            7,
            vec![
                checkout(1, t(1)),
                Event::Mem { ctx: t(1), key: key("a/b"), result: false },
                Event::Add { ctx: last(1), key: key("a/b"), value: b"v".to_vec(), out: t(2) },
                Event::Find { ctx: t(2), key: key("a/b"), found: true },
                Event::AddProtocol { ctx: t(2), hash: vec![5; 32], out: t(3) },
                Event::Remove { ctx: last(3), key: key("z"), out: t(4) },
                commit(last(4), 2),
            ],
        ),
        row(8, vec![checkout(2, t(5)), Event::MemTree { ctx: t(5), key: key("a"), result: true }, commit(t(5), 3)]),
    ];
    let (blocks, s) = import(&rows);
    assert_eq!((s.rows, s.blocks, s.hashes, s.events), (2, 2, 2, 10));
    assert_eq!(s.not_expressed_total(), 0);
    let b = &blocks[0];
    assert_eq!((b.level, b.transactions, b.parent), (7, 3, Parent::Hash([1; 32])));
    assert_eq!(
        b.ops,
        [
            Op::Mem { path: path("data/a/b"), result: false },
            Op::Add { path: path("data/a/b"), value: b"v".to_vec() },
            Op::Mem { path: path("data/a/b"), result: true },
            Op::Add { path: path("protocol"), value: vec![5; 32] },
            Op::Remove { path: path("data/z") },
        ]
    );
    assert_eq!(b.commit.hash, Some([2; 32]));
    assert_eq!((b.commit.date, &b.commit.message[..], &b.commit.author[..]), (1_002, &b"lvl 2"[..], &b"Tezos"[..]));
    // The second block checks out the first one's commit.
    assert_eq!(blocks[1].parent, Parent::Previous);
    assert_eq!(blocks[1].ops, [Op::MemTree { path: path("data/a"), result: true }]);
}

#[test]
fn trees_read_from_the_context_are_read_and_grafted_there() {
    let rows = [row(
        1,
        vec![
            checkout(1, t(1)),
            Event::FindTree { ctx: t(1), key: key("a"), out: Some(t(10)) },
            Event::Tree(TreeEvent::Mem { tree: t(10), key: key("y"), result: true }),
            Event::Tree(TreeEvent::Add { tree: t(10), key: key("x"), value: b"1".to_vec(), out: t(11) }),
            // Read back where the edit is: not the context's content any more.
            Event::Tree(TreeEvent::Find { tree: t(11), key: key("x"), found: true }),
            // The unedited tree is the context's.
            Event::Tree(TreeEvent::Kind { tree: t(10), result: Kind::Tree }),
            // The edited tree grafted elsewhere: a copy, then its edit.
            Event::AddTree { ctx: t(1), key: key("b"), tree: t(11), out: t(2) },
            // Back where it came from (nothing written there since): only the edit.
            Event::AddTree { ctx: t(2), key: key("a"), tree: t(11), out: t(3) },
            // A tree built in memory: one add_tree.
            Event::Tree(TreeEvent::Empty { ctx: t(3), out: t(20) }),
            Event::Tree(TreeEvent::Add { tree: t(20), key: key("p"), value: b"2".to_vec(), out: t(21) }),
            Event::Tree(TreeEvent::Add { tree: t(21), key: key("q/r"), value: b"3".to_vec(), out: t(22) }),
            Event::AddTree { ctx: t(3), key: key("n"), tree: t(22), out: t(4) },
            Event::Tree(TreeEvent::OfValue { ctx: t(4), value: b"4".to_vec(), out: t(23) }),
            Event::AddTree { ctx: t(4), key: key("m"), tree: t(23), out: t(5) },
            commit(t(5), 2),
        ],
    )];
    let (blocks, s) = import(&rows);
    assert_eq!(
        blocks[0].ops,
        [
            Op::MemTree { path: path("data/a"), result: true },
            Op::Mem { path: path("data/a/y"), result: true },
            Op::Mem { path: path("data/a"), result: false },
            Op::Copy { path: path("data/a"), to: path("data/b") },
            Op::Add { path: path("data/b/x"), value: b"1".to_vec() },
            Op::Add { path: path("data/a/x"), value: b"1".to_vec() },
            Op::AddTree { path: path("data/n"), tree: vec![(path("p"), b"2".to_vec()), (path("q/r"), b"3".to_vec())] },
            Op::Add { path: path("data/m"), value: b"4".to_vec() },
        ]
    );
    assert_eq!(not_expressed(&s, "Tree.find: a tree built or changed in memory"), 1);
    assert_eq!(s.not_expressed_total(), 1);
}

#[test]
fn undone_writes_are_left_out_and_reads_kept_where_they_still_hold() {
    let rows = [row(
        3,
        vec![
            checkout(1, t(1)),
            Event::Add { ctx: t(1), key: key("a"), value: b"1".to_vec(), out: t(2) },
            // A failed operation: written on, then abandoned.
            Event::Add { ctx: t(2), key: key("b"), value: b"2".to_vec(), out: t(3) },
            Event::Mem { ctx: t(3), key: key("b"), result: true },
            Event::Mem { ctx: t(3), key: key("a"), result: true },
            // The block goes on from the context before it.
            Event::Add { ctx: t(2), key: key("c"), value: b"3".to_vec(), out: t(4) },
            // An older context read late still reads what it held.
            Event::Mem { ctx: t(1), key: key("a"), result: false },
            commit(t(4), 2),
        ],
    )];
    let (blocks, s) = import(&rows);
    assert_eq!(
        blocks[0].ops,
        [
            Op::Mem { path: path("data/a"), result: false },
            Op::Add { path: path("data/a"), value: b"1".to_vec() },
            Op::Mem { path: path("data/a"), result: true },
            Op::Add { path: path("data/c"), value: b"3".to_vec() },
        ]
    );
    assert_eq!(s.undone_writes, 1);
    assert_eq!(not_expressed(&s, "mem: read a context no commit kept"), 1);
}

#[test]
fn folds_become_arbor_folds_where_they_count_the_same() {
    let step = |id: i64| {
        [
            Event::FoldStepEnter(t(id)),
            Event::Tree(TreeEvent::Find { tree: t(id), key: vec![], found: true }),
            Event::FoldStepExit(last(id)),
        ]
    };
    let fold = |depth: Option<Depth>, steps: usize| {
        let mut evs = vec![Event::FoldStart { depth, order: Order::Sorted, ctx: t(1), key: key("d") }];
        for i in 0..steps {
            evs.extend(step(100 + i as i64));
        }
        evs.push(Event::FoldEnd);
        evs
    };
    let mut evs = vec![checkout(1, t(1))];
    evs.extend(fold(Some(Depth::Eq(1)), 3));
    // Without a depth, Octez counts the folded directory itself.
    evs.extend(fold(None, 4));
    evs.extend(fold(Some(Depth::Le(2)), 2));
    evs.extend(fold(Some(Depth::Ge(1)), 2));
    // A fold of a tree, with the count recorded at its end.
    evs.push(Event::FindTree { ctx: t(1), key: key("d"), out: Some(t(50)) });
    evs.push(Event::Tree(TreeEvent::FoldStart {
        depth: Some(Depth::Eq(1)),
        order: Order::Sorted,
        tree: t(50),
        key: key("e"),
    }));
    evs.push(Event::Tree(TreeEvent::FoldStepEnter(t(60))));
    evs.push(Event::Tree(TreeEvent::FoldStepExit(last(60))));
    evs.push(Event::Tree(TreeEvent::FoldEnd(1)));
    evs.push(commit(t(1), 2));
    let (blocks, s) = import(&[row(1, evs)]);
    let folds: Vec<&Op> = blocks[0].ops.iter().filter(|o| matches!(o, Op::Fold { .. })).collect();
    assert_eq!(
        folds,
        [
            &Op::Fold { path: path("data/d"), depth: Some(1), result: 3 },
            &Op::Fold { path: path("data/d"), depth: None, result: 3 },
            &Op::Fold { path: path("data/d"), depth: Some(2), result: 1 },
            &Op::Fold { path: path("data/d/e"), depth: Some(1), result: 1 },
        ]
    );
    assert_eq!(not_expressed(&s, "fold: a depth no arbor fold counts"), 1);
    assert_eq!(not_expressed(&s, "Tree.find: a tree a fold visited"), 11);

    // A recorded count that disagrees with the steps is a damaged trace.
    let bad = vec![
        checkout(1, t(1)),
        Event::FindTree { ctx: t(1), key: key("d"), out: Some(t(50)) },
        Event::Tree(TreeEvent::FoldStart { depth: None, order: Order::Sorted, tree: t(50), key: vec![] }),
        Event::Tree(TreeEvent::FoldEnd(2)),
    ];
    let (block, event, reason) = import_err(&[row(1, bad)]);
    assert_eq!((block, event), (0, Some(3)), "{reason}");
    assert!(reason.contains("2 entries but 0"), "{reason}");
}

#[test]
fn calls_arbor_cannot_express_are_counted_by_kind() {
    let hin = HashIn { start: StartIn::Instantiated, end: ScopeEnd::WillReoccur, hash: vec![1; 32] };
    let rows = [row(
        1,
        vec![
            Event::Init { readonly: false },
            checkout(1, t(1)),
            Event::Hash { time: 1, message: None, ctx: t(1) },
            Event::Exists { hash: hin.clone(), result: true },
            Event::GetProtocol { ctx: t(1) },
            Event::FindTree { ctx: t(1), key: key("k"), out: Some(t(2)) },
            Event::Tree(TreeEvent::Hash { tree: t(2) }),
            Event::Tree(TreeEvent::Equal { a: t(2), b: t(2), result: true }),
            Event::Gc { hash: hin },
            commit(t(1), 2),
        ],
    )];
    let (blocks, s) = import(&rows);
    assert_eq!(blocks[0].ops, [Op::MemTree { path: path("data/k"), result: true }]);
    for label in ["init:", "hash:", "exists:", "get_protocol:", "Tree.hash:", "Tree.equal:", "gc:"] {
        assert_eq!(not_expressed(&s, label), 1, "{label} in {:?}", s.not_expressed);
    }
    assert_eq!(s.not_expressed_total(), 7);
}

#[test]
fn a_commit_that_needs_an_inexpressible_write_is_refused_with_its_block_and_event() {
    // Grafting a tree a fold visited: its content is not in the trace.
    let fold_graft = vec![
        checkout(1, t(1)),
        Event::FoldStart { depth: Some(Depth::Eq(1)), order: Order::Sorted, ctx: t(1), key: key("d") },
        Event::FoldStepEnter(t(9)),
        Event::FoldStepExit(t(9)),
        Event::FoldEnd,
        Event::AddTree { ctx: t(1), key: key("e"), tree: t(9), out: t(2) },
        commit(t(2), 2),
    ];
    let ok = row(1, vec![checkout(1, t(1)), commit(t(1), 2)]);
    let (block, event, reason) = import_err(&[ok.clone(), row(2, fold_graft.clone())]);
    assert_eq!((block, event), (1, Some(5)), "{reason}");
    assert!(reason.contains("a tree a fold visited"), "{reason}");

    // Grafting a tree whose source was written since it was read.
    let stale = vec![
        checkout(1, t(1)),
        Event::FindTree { ctx: t(1), key: key("a"), out: Some(t(9)) },
        Event::Add { ctx: t(1), key: key("a/x"), value: b"1".to_vec(), out: t(2) },
        Event::AddTree { ctx: t(2), key: key("b"), tree: t(9), out: t(3) },
        commit(t(3), 2),
    ];
    let (block, event, reason) = import_err(&[row(1, stale)]);
    assert_eq!((block, event), (0, Some(3)), "{reason}");
    assert!(reason.contains("changed since"), "{reason}");

    // The same graft on a context no commit keeps costs nothing.
    let mut undone = fold_graft;
    undone[6] = commit(t(1), 2);
    let (blocks, s) = import(&[row(1, undone)]);
    assert_eq!(blocks[0].ops, [Op::Fold { path: path("data/d"), depth: Some(1), result: 1 }]);
    assert_eq!(s.undone_writes, 0);
}

#[test]
fn genesis_is_written_as_octez_commits_it() {
    let status = TestChainStatus::Forking { protocol: vec![2; 32], expiration: 0x0102 };
    let genesis = BlockRow {
        uses_patch_context: true,
        ..row(
            0,
            vec![
                Event::Init { readonly: false },
                Event::CommitGenesisStart { chain_id: vec![1, 2, 3, 4], time: 77, protocol: vec![9; 32] },
                Event::PatchContextEnter(t(1)),
                Event::Add { ctx: t(1), key: key("version"), value: b"genesis".to_vec(), out: t(2) },
                Event::PatchContextExit { ctx: last(1), out: last(2) },
                Event::CommitGenesisEnd {
                    hash: HashOut {
                        start: StartOut::FirstInstantiation,
                        end: ScopeEnd::WillReoccur,
                        hash: vec![4; 32],
                    },
                },
            ],
        )
    };
    let next = row(
        1,
        vec![
            Event::Checkout {
                hash: HashIn { start: StartIn::Instantiated, end: ScopeEnd::LastOccurrence, hash: vec![4; 32] },
                out: t(3),
            },
            Event::AddTestChain { ctx: t(3), status: status.clone(), out: t(4) },
            commit(t(4), 5),
        ],
    );
    let (blocks, _) = import(&[genesis, next]);
    let g = &blocks[0];
    assert_eq!(g.parent, Parent::Genesis);
    assert_eq!((g.commit.date, &g.commit.message[..], g.commit.hash), (77, &b"Genesis"[..], Some([4; 32])));
    assert_eq!(
        g.ops,
        [
            Op::Add { path: path("data/version"), value: b"genesis".to_vec() },
            Op::Add { path: path("protocol"), value: vec![9; 32] },
            Op::Add { path: path("test_chain"), value: vec![0] },
        ]
    );
    // The test chain status is stored in Octez's binary encoding: tag, protocol, expiration.
    let mut forking = vec![1];
    forking.extend_from_slice(&[2; 32]);
    forking.extend_from_slice(&0x0102i64.to_be_bytes());
    assert_eq!(blocks[1].parent, Parent::Previous);
    assert_eq!(blocks[1].ops, [Op::Add { path: path("test_chain"), value: forking }]);
}

#[test]
fn a_cut_last_row_is_counted_and_a_row_without_commit_in_the_middle_refused() {
    let rows = [
        row(1, vec![checkout(1, t(1)), commit(t(1), 2)]),
        row(2, vec![checkout(2, t(2)), Event::Mem { ctx: t(2), key: key("a"), result: true }]),
    ];
    let (blocks, s) = import(&rows);
    assert_eq!((blocks.len(), s.unfinished_events, s.header_blocks), (1, 2, 2));

    // A file cut inside its last row: the whole rows are imported, the cut is reported.
    let bytes = file(&rows);
    let (trace, s) = import_context_trace(&bytes[..bytes.len() - 3], Vec::new(), "t").unwrap();
    assert_eq!((s.rows, s.blocks, s.cut_row, s.unfinished_events), (1, 1, true, 0));
    assert!(TraceReader::new(trace.as_slice()).unwrap().next_block().unwrap().is_some());

    let rows = [rows[1].clone(), rows[0].clone()];
    let (block, event, reason) = import_err(&rows);
    assert_eq!((block, event), (0, Some(2)), "{reason}");
    assert!(reason.contains("without a commit"), "{reason}");
    // An event after the commit, and a commit of a context of an earlier block.
    let (block, event, _) = import_err(&[row(1, vec![checkout(1, t(1)), commit(t(1), 2), Event::Split])]);
    assert_eq!((block, event), (0, Some(2)));
    let (block, event, reason) =
        import_err(&[row(1, vec![checkout(1, t(1)), commit(t(1), 2)]), row(2, vec![commit(t(1), 3)])]);
    assert_eq!((block, event), (1, Some(0)));
    assert!(reason.contains("earlier block"), "{reason}");
}

#[test]
fn truncations_and_random_bytes_are_refused_or_read_without_a_panic() {
    let rows = [
        row(
            1,
            vec![
                checkout(1, t(1)),
                Event::Add { ctx: t(1), key: key("a"), value: vec![1; 40], out: t(2) },
                commit(t(2), 2),
            ],
        ),
        row(2, vec![checkout(2, t(3)), Event::FindTree { ctx: t(3), key: key("a"), out: Some(t(4)) }, commit(t(3), 3)]),
    ];
    let good = file(&rows);
    for cut in 0..good.len() {
        let _ = import_context_trace(&good[..cut], Vec::new(), "t");
    }
    // Every byte of the rows replaced by every value: an error or a trace, never a panic.
    let header_len = 13 + good[12] as usize;
    let mut bad = good.clone();
    for i in header_len..good.len() {
        for b in [0x00, 0x01, 0x21, 0x7f, 0x80, 0xff] {
            bad[i] = b;
            let _ = import_context_trace(bad.as_slice(), Vec::new(), "t");
        }
        bad[i] = good[i];
    }
    // A chain of grafts far deeper than the importer follows is refused, not a stack overflow.
    let mut evs = vec![checkout(1, t(1)), Event::Tree(TreeEvent::Empty { ctx: t(1), out: t(10) })];
    for i in 0..100_000 {
        evs.push(Event::Tree(TreeEvent::AddTree { tree: t(10 + i), key: key("a"), sub: t(10 + i), out: t(11 + i) }));
    }
    evs.push(Event::AddTree { ctx: t(1), key: key("x"), tree: t(100_010), out: t(2) });
    evs.push(commit(t(2), 2));
    let (_, _, reason) = import_err(&[row(1, evs)]);
    assert!(reason.contains("nest too deeply"), "{reason}");
}
