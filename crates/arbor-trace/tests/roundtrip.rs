//! Random blocks survive a write/read round trip, with and without zstd.

use arbor_trace::{
    Block, CommitRecord, Compression, Digest, InitialState, Op, Parent, Path, Source, TraceHeader, TraceReader,
    TraceWriter, TreeSummary,
};
use proptest::prelude::*;

fn step() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        // Lowercase hex of even length (packed as bytes).
        prop::collection::vec(any::<u8>(), 1..8)
            .prop_map(|b| { b.iter().map(|x| format!("{x:02x}")).collect::<String>().into_bytes() }),
        // Canonical decimals (packed as varints) and non-canonical ones.
        any::<u32>().prop_map(|n| n.to_string().into_bytes()),
        "0[0-9]{1,3}".prop_map(String::into_bytes),
        // Names, odd-length or upper-case hex, raw bytes.
        "[a-z_]{1,10}".prop_map(String::into_bytes),
        "[0-9A-F]{1,5}".prop_map(String::into_bytes),
        prop::collection::vec(any::<u8>(), 1..6),
        // A few fixed steps so that paths share prefixes.
        prop::sample::select(vec!["data", "contracts", "index", "balance", "big_maps"])
            .prop_map(|s| s.as_bytes().to_vec()),
    ]
}

fn path() -> impl Strategy<Value = Path> {
    prop::collection::vec(step(), 0..7)
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..48)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (path(), prop::option::of(value())).prop_map(|(path, v)| Op::Find { path, result: v.map(|v| Digest::of(&v)) }),
        (path(), any::<bool>()).prop_map(|(path, result)| Op::Mem { path, result }),
        (path(), any::<bool>()).prop_map(|(path, result)| Op::MemTree { path, result }),
        (path(), prop::option::of(prop::option::of(any::<u64>()))).prop_map(|(path, r)| {
            Op::FindTree {
                path,
                result: r.map(|c| match c {
                    None => TreeSummary { is_value: true, children: 0 },
                    Some(children) => TreeSummary { is_value: false, children },
                }),
            }
        }),
        (path(), value()).prop_map(|(path, value)| Op::Add { path, value }),
        (path(), prop::collection::vec((path(), value()), 0..5)).prop_map(|(path, tree)| Op::AddTree { path, tree }),
        path().prop_map(|path| Op::Remove { path }),
        (path(), prop::option::of(any::<u32>()), prop::option::of(any::<u32>()), any::<u32>())
            .prop_map(|(path, offset, length, result)| Op::List { path, offset, length, result }),
        (path(), any::<u64>()).prop_map(|(path, result)| Op::Length { path, result }),
        (path(), prop::option::of(any::<u32>()), any::<u64>()).prop_map(|(path, depth, result)| Op::Fold {
            path,
            depth,
            result,
        }),
        (path(), path()).prop_map(|(path, to)| Op::Copy { path, to }),
    ]
}

fn block() -> impl Strategy<Value = Block> {
    (
        any::<u64>(),
        any::<u32>(),
        prop_oneof![Just(Parent::Genesis), Just(Parent::Previous), any::<[u8; 32]>().prop_map(Parent::Hash),],
        // Repeating the same path exercises the "same path" flag.
        prop::collection::vec(op(), 0..40).prop_map(|mut ops| {
            if ops.len() > 2 {
                let p = ops[0].path().clone();
                ops[1] = Op::Mem { path: p, result: true };
            }
            ops
        }),
        any::<i64>(),
        value(),
        value(),
        prop::option::of(any::<[u8; 32]>()),
    )
        .prop_map(|(level, transactions, parent, ops, date, message, author, hash)| Block {
            level,
            transactions,
            parent,
            ops,
            commit: CommitRecord { date, message, author, hash },
        })
}

fn header() -> impl Strategy<Value = TraceHeader> {
    prop_oneof![
        ".{0,20}".prop_map(|description| TraceHeader::new(Source::Recorded { description }, InitialState::None)),
        ("[a-z-]{1,15}", any::<u64>(), prop::collection::vec(("[a-z_]{1,8}", ".{0,8}"), 0..4), any::<u64>()).prop_map(
            |(profile, seed, params, values)| TraceHeader::new(
                Source::Generated { profile: profile.clone(), seed, params },
                InitialState::Generated { profile, seed, values },
            )
        ),
    ]
}

fn round_trip(h: &TraceHeader, blocks: &[Block], compression: Compression) -> (TraceHeader, Vec<Block>) {
    let mut w = TraceWriter::with_compression(Vec::new(), h, compression).unwrap();
    for b in blocks {
        w.write_block(b).unwrap();
    }
    let bytes = w.finish().unwrap();
    let mut r = TraceReader::new(bytes.as_slice()).unwrap();
    let header = r.header().clone();
    let mut out = Vec::new();
    while let Some(b) = r.next_block().unwrap() {
        out.push(b);
    }
    assert!(r.next_block().unwrap().is_none());
    (header, out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn blocks_round_trip(h in header(), blocks in prop::collection::vec(block(), 0..6)) {
        for c in [Compression::None, Compression::Zstd { level: 1 }] {
            let (h2, b2) = round_trip(&h, &blocks, c);
            prop_assert_eq!(&h2, &h);
            prop_assert_eq!(&b2, &blocks);
        }
    }
}

#[test]
fn empty_path_steps_are_rejected() {
    let h = TraceHeader::new(Source::Recorded { description: String::new() }, InitialState::None);
    let mut w = TraceWriter::new(Vec::new(), &h).unwrap();
    let block = Block {
        level: 1,
        transactions: 0,
        parent: Parent::Genesis,
        ops: vec![Op::Remove { path: vec![b"data".to_vec(), Vec::new()] }],
        commit: CommitRecord { date: 0, message: Vec::new(), author: Vec::new(), hash: None },
    };
    assert!(matches!(w.write_block(&block), Err(arbor_trace::TraceError::InvalidInput(_))));
    // The writer is still usable and the trace stays valid.
    let ok = Block { ops: Vec::new(), ..block };
    w.write_block(&ok).unwrap();
    let bytes = w.finish().unwrap();
    let blocks: Vec<Block> = TraceReader::new(bytes.as_slice()).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(blocks, vec![ok]);
}

#[test]
fn digests_are_exact_for_short_values_and_hashed_for_long_ones() {
    let short = Digest::of(b"abc");
    assert!(short.is_inline());
    assert_eq!(short.stored_bytes(), b"abc");
    assert!(short.matches(b"abc") && !short.matches(b"abd"));
    let long = Digest::of(&[7u8; 100]);
    assert!(!long.is_inline());
    assert_eq!(long.value_len(), 100);
    assert!(long.matches(&[7u8; 100]) && !long.matches(&[7u8; 99]));
}
