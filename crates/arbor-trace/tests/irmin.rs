//! Reading irmin-bench replayable traces: the file's framing, and the traces an import
//! must refuse (with the row at fault) rather than convert wrongly.

use arbor_trace::irmin::{import_irmin, IrminReader, IrminWriter, Row, Scope};
use arbor_trace::TraceError;

fn key(s: &str) -> Vec<Vec<u8>> {
    vec![s.as_bytes().to_vec()]
}

fn file(rows: &[Row]) -> Vec<u8> {
    let mut w = IrminWriter::new(Vec::new()).unwrap();
    for r in rows {
        w.write_row(r).unwrap();
    }
    w.finish().unwrap()
}

fn add(k: &str, input: i64, out: i64) -> Row {
    Row::Add { key: key(k), value: b"v".to_vec(), input: Scope::Keep(input), out: Scope::Keep(out) }
}

fn commit(input: i64, hash: [u8; 32], parents: Vec<[u8; 32]>) -> Row {
    Row::Commit {
        hash: Scope::Keep(hash.to_vec()),
        date: 0,
        message: Vec::new(),
        parents: parents.into_iter().map(|p| Scope::Keep(p.to_vec())).collect(),
        input: Scope::Forget(input),
    }
}

fn import_err(rows: &[Row]) -> (u64, String) {
    match import_irmin(file(rows).as_slice(), Vec::new(), "t") {
        Err(TraceError::Irmin { row, reason }) => (row, reason),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("the import should have been refused"),
    }
}

#[test]
fn the_preamble_is_magic_version_and_an_empty_header() {
    let bytes = file(&[]);
    assert_eq!(bytes, b"IrmRepBT\x00\x00\x00\x00\x00");
    let rows = [add("a", 0, 1), Row::Find { key: key("a"), found: true, input: Scope::Forget(1) }];
    let bytes = file(&rows);
    let mut r = IrminReader::new(bytes.as_slice()).unwrap();
    assert_eq!(r.next_row().unwrap().as_ref(), Some(&rows[0]));
    assert_eq!(r.next_row().unwrap().as_ref(), Some(&rows[1]));
    assert_eq!(r.next_row().unwrap(), None);
}

#[test]
fn damaged_files_are_refused_with_their_row() {
    let good = file(&[add("a", 0, 1), add("b", 1, 2)]);
    let mut bad_magic = good.clone();
    bad_magic[0] = b'X';
    let mut version = good.clone();
    version[11] = 1;
    let mut header = good.clone();
    header[12] = 1;
    for (bytes, row, what) in [
        (&bad_magic[..], 0, "magic"),
        (&version[..], 0, "version 1"),
        (&header[..], 0, "header"),
        (&good[..good.len() - 1], 1, "inside a row"),
        (&good[..5], 0, "preamble"),
    ] {
        let err = IrminReader::new(bytes).and_then(|mut r| {
            while r.next_row()?.is_some() {}
            Ok(())
        });
        match err {
            Err(TraceError::Irmin { row: r, reason }) => {
                assert_eq!(r, row, "{reason}");
                assert!(reason.contains(what), "{reason}");
            }
            other => panic!("{what}: expected an irmin error, got {other:?}"),
        }
    }
}

#[test]
fn forked_contexts_are_refused() {
    // Two operations both read context 1: the second works on a fork.
    let (row, reason) = import_err(&[add("a", 0, 1), add("b", 1, 2), add("c", 1, 3)]);
    assert_eq!(row, 2);
    assert!(reason.contains("forked"), "{reason}");
}

#[test]
fn abandoned_contexts_are_refused() {
    let h = [7; 32];
    let rows =
        [add("a", 0, 1), commit(1, h, vec![]), Row::Checkout { hash: Scope::Keep(h.to_vec()), out: Scope::Keep(2) }];
    let mut rows = rows.to_vec();
    rows.push(add("b", 2, 3));
    rows.push(Row::Checkout { hash: Scope::Keep(h.to_vec()), out: Scope::Keep(4) });
    let (row, reason) = import_err(&rows);
    assert_eq!(row, 4);
    assert!(reason.contains("abandoned"), "{reason}");
}

#[test]
fn commits_with_other_parents_than_their_checkout_are_refused() {
    let (a, b) = ([1; 32], [2; 32]);
    let rows = [
        add("a", 0, 1),
        commit(1, a, vec![]),
        Row::Checkout { hash: Scope::Keep(a.to_vec()), out: Scope::Keep(2) },
        add("b", 2, 3),
        commit(3, b, vec![a, a]),
    ];
    let (row, reason) = import_err(&rows);
    assert_eq!(row, 4);
    assert!(reason.contains("2 parent(s)"), "{reason}");
}

#[test]
fn commit_hashes_must_be_context_hashes() {
    let mut c = commit(1, [0; 32], vec![]);
    if let Row::Commit { hash, .. } = &mut c {
        *hash = Scope::Keep(b"CoNotAHash".to_vec());
    }
    let (row, reason) = import_err(&[add("a", 0, 1), c]);
    assert_eq!(row, 1);
    assert!(reason.contains("CoNotAHash"), "{reason}");
}

#[test]
fn operations_after_the_last_commit_are_counted_not_written() {
    let rows = [
        add("a", 0, 1),
        commit(1, [3; 32], vec![]),
        Row::Checkout { hash: Scope::Keep(vec![3; 32]), out: Scope::Keep(2) },
        add("b", 2, 3),
    ];
    let (trace, s) = import_irmin(file(&rows).as_slice(), Vec::new(), "t").unwrap();
    assert_eq!((s.blocks, s.ops, s.unfinished_ops), (1, 1, 1));
    let mut r = arbor_trace::TraceReader::new(trace.as_slice()).unwrap();
    assert!(r.next_block().unwrap().is_some());
    assert!(r.next_block().unwrap().is_none());
}

#[test]
fn a_file_cut_inside_a_row_imports_up_to_its_last_whole_row() {
    let rows = [
        add("a", 0, 1),
        commit(1, [3; 32], vec![]),
        Row::Checkout { hash: Scope::Keep(vec![3; 32]), out: Scope::Keep(2) },
    ];
    let whole = file(&rows);
    // Cut inside the checkout, as the recordings published for irmin-bench are.
    let (trace, s) = import_irmin(&whole[..whole.len() - 5], Vec::new(), "t").unwrap();
    assert_eq!((s.rows, s.blocks, s.cut_row), (2, 1, true));
    let mut r = arbor_trace::TraceReader::new(trace.as_slice()).unwrap();
    assert_eq!(r.next_block().unwrap().unwrap().commit.hash, Some([3; 32]));
    // The whole file is not cut; the strict reader still refuses the cut one.
    let (_, s) = import_irmin(whole.as_slice(), Vec::new(), "t").unwrap();
    assert_eq!((s.rows, s.cut_row), (3, false));
    let mut r = IrminReader::new(&whole[..whole.len() - 5]).unwrap();
    r.next_row().unwrap();
    r.next_row().unwrap();
    assert!(r.next_row().is_err());
}
