//! End-to-end tests of the `arbor` binary: each runs the real executable on a temporary store.

mod support;

use arbor::{Hash, Store, Tree};
use arbor_core::toolbox::hex::encode as hex;
use support::{arbor, commit, ok, stderr, stdout};

/// The demo protocol's genesis commit, as published by Octez.
const GENESIS: &str = "CoVea41f9dPhkymYEfPsXV5FmyzDb91iz1Grk6zasb31zv9nEZjN";

/// The 32 bytes of the demo protocol hash, which genesis stores at `protocol`.
fn demo_protocol() -> Vec<u8> {
    arbor_core::base58::base58check_decode("ProtoDemoNoopsDemoNoopsDemoNoopsDemoNoopsDemo6XBoYp", 2).unwrap().1
}

#[test]
fn genesis_vector_and_a_child_commit() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let ops = format!("add protocol {}\nadd test_chain 00\n", hex(&demo_protocol()));
    let g = commit(s, &["--date", "0", "--message", "Genesis"], &ops);
    assert_eq!(g.to_string(), GENESIS);

    // Octez's test_context.ml `data/` tree on top of genesis, as text values.
    let mut ops = String::from("# data tree\nadd data/a/aaaaaaa foo1\n\nadd data/a/aaaaaaaa foo2\n");
    for n in [16, 32, 64, 127] {
        ops.push_str(&format!("add data/{} foo2\n", "a".repeat(n)));
    }
    let c1 = commit(s, &["--date", "0", "--message", "", "--text"], &ops);
    assert_eq!(c1.to_string(), "CoWJsL2ehZ39seTr8inBCJb5tVjW8KGNweJ5cvuVq51mAASrRmim");
    let shown = ok(s, &["show", &c1.to_string()], "");
    assert!(shown.contains(&format!("parent      {GENESIS}")), "{shown}");
}

#[test]
fn commit_hash_matches_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let h = commit(s, &["--date", "1700000000", "--message", "m1", "--author", "me"], "add a 3030303030\nadd b/c 00\n");
    let tree = Tree::empty().add(&["a"], b"00000").unwrap().add(&["b", "c"], &[0]).unwrap();
    assert_eq!(h, arbor_core::commit_hash(&tree.hash(), &[], 1_700_000_000, b"me", b"m1"));

    // The second commit's default parent is head `main`, i.e. the first.
    let h2 = commit(s, &["--date", "-5", "--message", "m2"], "remove b/c\nadd a 0x\n");
    let tree2 = tree.remove(&["b", "c"]).unwrap().add(&["a"], b"").unwrap();
    assert_eq!(h2, arbor_core::commit_hash(&tree2.hash(), &[h], -5, b"Tezos", b"m2"));

    let shown = ok(s, &["show", &h2.to_hex()], "");
    assert!(shown.contains(&format!("tree        {}", tree2.hash())), "{shown}");
    assert!(shown.contains(&format!("tree hex    {}", tree2.hash().to_hex())), "{shown}");
    assert!(shown.contains("1969-12-31T23:59:55Z (-5)"), "{shown}");

    // --no-parent starts over from the empty tree.
    let h3 = commit(s, &["--no-parent", "--date", "0", "--message", ""], "add z 01\n");
    let tree3 = Tree::empty().add(&["z"], &[1]).unwrap();
    assert_eq!(h3, arbor_core::commit_hash(&tree3.hash(), &[], 0, b"Tezos", b""));
}

#[test]
fn round_trip_through_every_read_command() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let c1 = commit(s, &["--date", "0", "--message", "first"], "add a/x 0102\nadd a/y 03\nadd b ff\n");
    // Longer than `inline_max` (128): a record of its own.
    let big = "ab".repeat(200);
    let c2 = commit(s, &["--date", "86400", "--message", "second\nbody"], &format!("add a/z {big}\nremove b\n"));

    assert_eq!(ok(s, &["get", "a/x"], ""), "0102\n");
    assert_eq!(ok(s, &["get", "a/z"], ""), format!("{big}\n"));
    assert_eq!(ok(s, &["get", "--commit", &c1.to_string(), "b"], ""), "ff\n");
    let gone = arbor(s, &["get", "b"], "");
    assert_eq!(gone.status.code(), Some(1));
    assert!(stderr(&gone).contains("no value at b"), "{}", stderr(&gone));
    let dir_get = arbor(s, &["get", "a"], "");
    assert_eq!(dir_get.status.code(), Some(1));
    assert!(stderr(&dir_get).contains("a is a directory"));

    assert_eq!(ok(s, &["ls"], ""), "a/\n");
    assert_eq!(ok(s, &["ls", "a"], ""), "x\t2\ny\t1\nz\t200\n");
    assert_eq!(ok(s, &["ls", "a", "--offset", "1", "--length", "1"], ""), "y\t1\n");
    assert_eq!(ok(s, &["ls", "--commit", &c1.to_hex()], ""), "a/\nb\t1\n");
    assert_eq!(arbor(s, &["ls", "nothing"], "").status.code(), Some(1));

    let log = ok(s, &["log"], "");
    let commits: Vec<&str> = log.lines().filter(|l| l.starts_with("commit ")).collect();
    assert_eq!(commits, vec![format!("commit {c2}"), format!("commit {c1}")]);
    assert!(log.contains("Date:   1970-01-02T00:00:00Z (86400)"), "{log}");
    assert!(log.contains("Author: Tezos") && log.contains("    second\n    body\n"), "{log}");

    let shown = ok(s, &["show", &c2.to_string()], "");
    assert!(shown.contains(&format!("commit      {c2}\ncommit hex  {}\n", c2.to_hex())), "{shown}");
    assert!(shown.contains(&format!("parent      {c1}")), "{shown}");
    assert!(shown.contains("author      Tezos") && shown.contains("message     second\n            body"), "{shown}");
    assert!(ok(s, &["show", &c1.to_string()], "").contains("parents     none"));

    let fsck = ok(s, &["fsck"], "");
    assert!(fsck.contains("commits  2") && fsck.contains("errors   0"), "{fsck}");
    let stats = ok(s, &["stats"], "");
    assert!(stats.contains("commits             2"), "{stats}");
    assert!(stats.contains("separate values     1"), "{stats}");
    assert!(stats.contains("largest directory   3 entries"), "{stats}");
    assert_eq!(ok(s, &["heads"], ""), format!("main  {c2}\n"));
}

#[test]
fn text_mode() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    commit(s, &["--text", "--date", "0", "--message", "t"], "add greeting hello  world\nadd empty \n");
    assert_eq!(ok(s, &["get", "--text", "greeting"], ""), "hello  world\n");
    assert_eq!(ok(s, &["get", "greeting"], ""), format!("{}\n", hex(b"hello  world")));
    assert_eq!(ok(s, &["get", "empty"], ""), "\n");
    assert_eq!(ok(s, &["ls"], ""), "empty\t0\ngreeting\t12\n");
}

#[test]
fn malformed_lines_exit_2_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let cases = [
        ("add a 00\nadd b zz\n", "line 2", "bad hex"),
        ("# c\n\nfrob a 00\n", "line 3", "unknown operation 'frob'"),
        ("add a\n", "line 1", "missing value"),
        ("add a 00\nremove x//y\n", "line 2", "empty step"),
        ("add a 123\n", "line 1", "odd number"),
    ];
    for (input, line, what) in cases {
        let o = arbor(s, &["commit", "--date", "0", "--message", "m"], input);
        assert_eq!(o.status.code(), Some(2), "{input:?}");
        let err = stderr(&o);
        assert!(err.starts_with("arbor: ") && err.contains(line) && err.contains(what), "{input:?}: {err}");
    }
    // Nothing was committed: not even a store was created.
    assert_eq!(support::tree_of(s), Vec::<String>::new());
    // Clap's own usage errors are 2 as well.
    assert_eq!(arbor(s, &["commit", "--message", "m"], "").status.code(), Some(2));
    assert_eq!(arbor(s, &["show", "main~x"], "").status.code(), Some(2));
}

#[test]
fn unknown_commits_fail_naming_the_hash() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    commit(s, &["--date", "0", "--message", "m"], "add a 00\n");
    let unknown = Hash([7; 32]);
    let o = arbor(s, &["show", &unknown.to_string()], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(&format!("unknown commit {unknown}")), "{}", stderr(&o));
    let o = arbor(s, &["get", "--commit", &unknown.to_hex(), "a"], "");
    assert_eq!(o.status.code(), Some(1));
    let o = arbor(s, &["commit", "--parent", &unknown.to_hex(), "--date", "0", "--message", "m"], "add b 00\n");
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains(&format!("--parent: unknown commit {unknown}")), "{}", stderr(&o));
}

#[test]
fn reads_beside_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let c1 = commit(s, &["--date", "0", "--message", "1"], "add a 01\n");
    let c2 = commit(s, &["--date", "1", "--message", "2"], "add b 02\n");
    assert_eq!(ok(s, &["get", "a"], ""), "01\n");
    assert_eq!(ok(s, &["get", "b"], ""), "02\n");

    // Hold the store open for writing in this process and commit through it: the CLI's
    // read-only commands still work and see the new commit, while a second writer is refused.
    let store = Store::open(s).unwrap();
    let tree = store.checkout(&c2).unwrap().add(&["c"], &[3]).unwrap();
    let c3 = store.commit(&tree, &[c2], 2, "Tezos", "3").unwrap();
    store.set_head("main", &c3).unwrap();
    assert_eq!(ok(s, &["get", "c"], ""), "03\n");
    assert_eq!(ok(s, &["get", "--commit", &c1.to_string(), "a"], ""), "01\n");
    assert!(ok(s, &["fsck"], "").contains("commits  3"));
    let o = arbor(s, &["commit", "--date", "0", "--message", "m"], "add d 04\n");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("locked"), "{}", stderr(&o));
    drop(store);
    commit(s, &["--date", "3", "--message", "4"], "add d 04\n");
    assert_eq!(ok(s, &["get", "d"], ""), "04\n");
}

#[test]
fn read_commands_do_not_create_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing");
    let o = arbor(&missing, &["heads"], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(!missing.exists());
}

#[test]
fn gc_keeps_the_last_commits_and_names_dropped_ones() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let big = hex(&[7u8; 200]);
    let commits: Vec<Hash> = (0..6)
        .map(|i| commit(s, &["--date", &i.to_string(), "--message", "m"], &format!("add v/{i} {big}\nadd n {i:02x}\n")))
        .collect();
    let out = ok(s, &["gc", "--keep", "3"], "");
    assert!(out.contains("commits dropped   3"), "{out}");
    // The dropped ones are named as such; the kept ones read back.
    let old = arbor(s, &["show", &commits[1].to_string()], "");
    assert!(!old.status.success());
    assert!(stderr(&old).contains("garbage collection"), "{}", stderr(&old));
    for (i, c) in commits.iter().enumerate().skip(3) {
        let v = ok(s, &["get", "--commit", &c.to_string(), "v/0"], "");
        assert_eq!(v.trim(), big, "commit {i}");
        assert_eq!(ok(s, &["get", "--commit", &c.to_string(), "n"], "").trim(), format!("{i:02x}"));
    }
    assert!(ok(s, &["fsck"], "").contains("errors   0"));
    // --keep 0 is a usage error.
    let bad = arbor(s, &["gc", "--keep", "0"], "");
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

/// Runs `arbor ARGS` (no store) and returns the output.
fn arbor_plain(args: &[&str]) -> std::process::Output {
    support::run(args, &[], b"")
}

#[test]
fn an_irmin_trace_imports_and_replays_with_its_commit_hashes_verified() {
    use arbor_core::{commit_hash, contents_hash, flat_node_hash, ChildKind};
    use arbor_trace::irmin::{IrminWriter, Row, Scope};
    let dir = tempfile::tempdir().unwrap();
    let (irmin, trace, store) = (dir.path().join("t.irmin"), dir.path().join("t.trace"), dir.path().join("store"));
    // Genesis: {k → "v"}; block 1 on it: {k → "v", l → "w"}. Hashes by the spec's functions.
    let (v, w) = (contents_hash(b"v"), contents_hash(b"w"));
    let t0 = flat_node_hash([(&b"k"[..], ChildKind::Contents, &v)].into_iter());
    let t1 = flat_node_hash([(&b"k"[..], ChildKind::Contents, &v), (&b"l"[..], ChildKind::Contents, &w)].into_iter());
    let h0 = commit_hash(&t0, &[], 0, b"Tezos", b"g");
    let h1 = commit_hash(&t1, &[h0], 30, b"Tezos", b"1");
    let co = |h: Hash| Scope::Keep(h.to_base58().into_bytes());
    let k = |s: &str| vec![s.as_bytes().to_vec()];
    let rows = [
        Row::Add { key: k("k"), value: b"v".to_vec(), input: Scope::Keep(0), out: Scope::Keep(1) },
        Row::Commit { hash: co(h0), date: 0, message: b"g".to_vec(), parents: vec![], input: Scope::Forget(1) },
        Row::Checkout { hash: co(h0), out: Scope::Keep(2) },
        Row::Find { key: k("k"), found: true, input: Scope::Keep(2) },
        Row::Add { key: k("l"), value: b"w".to_vec(), input: Scope::Keep(2), out: Scope::Keep(3) },
        Row::Commit { hash: co(h1), date: 30, message: b"1".to_vec(), parents: vec![co(h0)], input: Scope::Forget(3) },
    ];
    let mut wr = IrminWriter::new(std::fs::File::create(&irmin).unwrap()).unwrap();
    for r in &rows {
        wr.write_row(r).unwrap();
    }
    wr.finish().unwrap();

    let o =
        arbor_plain(&["trace", "import", "--from", "irmin", irmin.to_str().unwrap(), "--out", trace.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("blocks          2 (2 with a recorded commit hash)"), "{}", stdout(&o));

    let o = arbor_plain(&["replay", trace.to_str().unwrap(), "--store", store.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.trim_end().ends_with("2 commit hashes verified"), "{text}");
    assert!(text.contains("verified        1 operation results, 2 commit hashes"), "{text}");

    // An arbor replay of a non-arbor file still says what it is not.
    let o = arbor_plain(&["replay", irmin.to_str().unwrap(), "--store", dir.path().join("s2").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("magic") && stderr(&o).contains("trace import --from irmin"), "{}", stderr(&o));
}
