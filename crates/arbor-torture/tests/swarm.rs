//! The harness end to end: a short run passes, kills its writers, and replays identically
//! from its seed.

use std::process::Command;

fn run(dir: &std::path::Path, seed: u64) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arbor-torture"))
        .args(["--seed", &seed.to_string(), "--children", "16", "-v", "--dir"])
        .arg(dir)
        .output()
        .expect("runs the harness");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The per-writer lines: what each writer was planned, acknowledged and how it ended.
fn writer_lines(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.contains(" child ")).collect()
}

#[test]
fn a_short_run_kills_writers_checks_and_replays_identically() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, first) = run(dir.path(), 5);
    assert!(ok, "{first}");
    let lines = writer_lines(&first);
    assert_eq!(lines.len(), 16, "{first}");
    assert!(lines.iter().any(|l| l.contains("killed at")), "some writer is killed: {first}");
    // A passing seed's stores are removed, so the same directory serves the replay.
    let (ok, second) = run(dir.path(), 5);
    assert!(ok, "{second}");
    assert_eq!(writer_lines(&second), lines, "the same seed replays the same writers");
    let (_, other) = run(dir.path(), 6);
    assert_ne!(writer_lines(&other), lines, "another seed is another run");
}
