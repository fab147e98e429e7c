//! Helpers the end-to-end tests share: run the real `arbor` binary on a store and read what
//! it printed.

#![allow(dead_code, reason = "each test file uses its own subset of the helpers")]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use arbor::Hash;

/// Runs `arbor ARGS` with `stdin` as standard input and `env` added to the environment.
pub fn run(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .env_remove("ARBOR_STORE")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn arbor");
    // A command that fails before reading its input closes the pipe: that is its answer, not
    // a test failure, so a broken pipe here is ignored and the exit status tells.
    if let Err(e) = child.stdin.take().expect("stdin").write_all(stdin) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    child.wait_with_output().expect("wait for arbor")
}

/// Runs `arbor ARGS --store DIR` with `stdin` as standard input.
pub fn arbor(store: &Path, args: &[&str], stdin: &str) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.push("--store");
    all.push(store.to_str().expect("a UTF-8 temporary path"));
    run(&all, &[], stdin.as_bytes())
}

/// Standard output, which must be UTF-8.
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

/// Standard error, lossily decoded.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs a command that must succeed and returns its stdout.
pub fn ok(store: &Path, args: &[&str], stdin: &str) -> String {
    let o = arbor(store, args, stdin);
    assert!(o.status.success(), "arbor {args:?} failed: {}", stderr(&o));
    stdout(&o)
}

/// Runs a command that must fail with exit code `code` and returns its stderr.
pub fn fails(store: &Path, args: &[&str], stdin: &str, code: i32) -> String {
    let o = arbor(store, args, stdin);
    assert_eq!(o.status.code(), Some(code), "arbor {args:?}: {}{}", stdout(&o), stderr(&o));
    stderr(&o)
}

/// Runs `arbor commit` that must succeed and returns the hash on its last line.
pub fn commit(store: &Path, args: &[&str], ops: &str) -> Hash {
    let mut all = vec!["commit"];
    all.extend_from_slice(args);
    let out = ok(store, &all, ops);
    let last = out.lines().last().expect("a last line");
    assert!(last.starts_with("Co"), "last line {last:?}");
    Hash::parse(last).expect("a hash on the last line")
}

/// Every entry under `dir`, recursively, as paths relative to it (sorted); empty if `dir` is
/// missing. Tests use it to show that a refused command left nothing behind.
pub fn tree_of(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries {
            let p = e.expect("a directory entry").path();
            found.push(p.strip_prefix(dir).expect("under dir").display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    found.sort();
    found
}

/// Runs `arbor ARGS`, with `--store DIR` when a store is given, feeding `stdin`.
pub fn arbor_at(store: Option<&Path>, args: &[&str], stdin: &[u8]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    if let Some(s) = store {
        all.push("--store");
        all.push(s.to_str().expect("a UTF-8 temporary path"));
    }
    run(&all, &[], stdin)
}

/// A store with one commit of a few values and a 300-entry directory (an inode tree), for
/// the proof tests.
pub fn store_with_commit() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut ops = String::from("add a/b 0102\nadd a/c ff\nadd top 00\n");
    for i in 0..300 {
        ops.push_str(&format!("add big/k{i} {:02x}\n", i % 256));
    }
    let o = arbor_at(Some(dir.path()), &["commit", "--date", "0", "--message", "m"], ops.as_bytes());
    assert!(o.status.success(), "commit failed: {}", stderr(&o));
    dir
}
