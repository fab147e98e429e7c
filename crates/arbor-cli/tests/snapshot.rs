//! End-to-end tests of `arbor snapshot export` and `arbor snapshot import`: a commit made with
//! `arbor commit` goes through a snapshot file into a fresh store, which then reads back the
//! same values and passes fsck; damaged files, unknown commits and bad arguments fail with
//! the documented exit codes and leave the target store without the commit.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `arbor ARGS` feeding `stdin`.
fn arbor(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn arbor");
    if let Err(e) = child.stdin.take().expect("stdin").write_all(stdin.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    child.wait_with_output().expect("wait for arbor")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs a command that must succeed and returns its stdout.
fn ok(args: &[&str], stdin: &str) -> String {
    let o = arbor(args, stdin);
    assert!(o.status.success(), "arbor {args:?} failed: {}", text(&o.stderr));
    text(&o.stdout)
}

/// Runs a command that must fail with `code`; returns its stderr.
fn fails(args: &[&str], code: i32) -> String {
    let o = arbor(args, "");
    assert_eq!(o.status.code(), Some(code), "arbor {args:?}: {}{}", text(&o.stdout), text(&o.stderr));
    text(&o.stderr)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temporary path")
}

/// A store with two commits: values of several sizes, nested directories, a 400-entry
/// directory (an inode tree). Returns the second commit.
fn source(store: &Path) -> String {
    let first = ok(&["commit", "--store", s(store), "--date", "0", "--message", "one"], "add a/b 01\n");
    let first = first.lines().last().expect("a hash").to_string();
    let mut ops = format!("add top {}\nadd a/c/d 0203\n", "ab".repeat(5000));
    for i in 0..400 {
        ops.push_str(&format!("add big/k{i} {:02x}\n", i % 256));
    }
    let out =
        ok(&["commit", "--store", s(store), "--parent", &first, "--date", "1700000000", "--message", "two"], &ops);
    out.lines().last().expect("a hash").to_string()
}

#[test]
fn export_then_import_into_a_fresh_store() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, file) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("snap"));
    let commit = source(&a);

    let out = ok(&["snapshot", "export", "--store", s(&a), "--commit", &commit, "--out", s(&file)], "");
    assert!(out.contains(&format!("commit      {commit}")), "{out}");
    assert!(out.contains("403 values") && out.contains("values/s") && out.contains("MB/s"), "{out}");
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(out.contains(&format!("({size} bytes)")), "{out}");

    let out = ok(&["snapshot", "import", "--store", s(&b), s(&file)], "");
    assert_eq!(out.lines().last(), Some(commit.as_str()), "{out}");
    assert!(out.contains("values/s") && out.contains("MB/s") && out.contains(&format!("{size} bytes")), "{out}");

    // The imported store answers like the source.
    for path in ["top", "a/c/d", "big/k399"] {
        let want = ok(&["get", "--store", s(&a), "--commit", &commit, path], "");
        assert_eq!(ok(&["get", "--store", s(&b), path], ""), want, "{path}");
    }
    let shown = ok(&["show", "--store", s(&b), &commit], "");
    assert_eq!(shown, ok(&["show", "--store", s(&a), &commit], ""));
    ok(&["fsck", "--store", s(&b)], "");

    // Again: nothing to write, but the file is still checked.
    let out = ok(&["snapshot", "import", "--store", s(&b), s(&file)], "");
    assert!(out.contains("already had this commit"), "{out}");
    assert_eq!(out.lines().last(), Some(commit.as_str()));
}

#[test]
fn damaged_files_and_bad_arguments_fail_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let (a, file) = (dir.path().join("a"), dir.path().join("snap"));
    let commit = source(&a);
    ok(&["snapshot", "export", "--store", s(&a), "--out", s(&file)], "");
    let good = std::fs::read(&file).unwrap();

    let bad = dir.path().join("bad");
    let mut bytes = good.clone();
    let n = bytes.len();
    bytes[n / 2] ^= 0x04;
    std::fs::write(&bad, &bytes).unwrap();
    let c = dir.path().join("c");
    let err = fails(&["snapshot", "import", "--store", s(&c), s(&bad)], 1);
    assert!(err.contains("snapshot: block checksum mismatch"), "{err}");
    assert!(!c.exists(), "a refused import into a new store leaves no store behind");

    std::fs::write(&bad, &good[..n - 1]).unwrap();
    let err = fails(&["snapshot", "import", "--store", s(&c), s(&bad)], 1);
    assert!(err.contains("cut short"), "{err}");
    let err = fails(&["snapshot", "import", "--store", s(&c), s(&dir.path().join("missing"))], 1);
    assert!(err.contains("opening snapshot"), "{err}");

    let unknown = "0".repeat(64);
    let err = fails(&["snapshot", "export", "--store", s(&a), "--commit", &unknown, "--out", s(&bad)], 1);
    assert!(err.contains("unknown commit"), "{err}");
    let err = fails(&["snapshot", "export", "--store", s(&a), "--commit", "nonsense", "--out", s(&bad)], 1);
    assert!(err.contains("unknown revision 'nonsense'"), "{err}");
    fails(&["snapshot", "export", "--store", s(&a), "--commit", "main~x", "--out", s(&bad)], 2);
    fails(&["snapshot", "import", "--store", s(&c)], 2);
    assert!(commit.starts_with("Co"));
}
