//! Kills a writer process that runs background garbage collections while it commits, at
//! random instants, and checks after each kill that the store opens with a contiguous run of
//! the writer's history ending at or after the last reported commit, each commit of it reading
//! back exactly, dropped commits named as such, and fsck clean.
//!
//! The writer is this test binary, re-executed with `ARBOR_GC_KILL_CHILD` set.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use arbor::{Error, GcMode, Hash, Store, Tree};
use common::{apply_tree, assert_fsck_clean, block_ops, Rng};

const CHILD_ENV: &str = "ARBOR_GC_KILL_CHILD";
const OPS_PER_BLOCK: usize = 150;
const KILLS: usize = 40;
const MARK: &str = "ARBOR-COMMIT ";
/// A collection starts every this many blocks, keeping this many.
const GC_EVERY: u64 = 6;
const GC_KEEP: u64 = 4;

/// The writer: commits blocks and collects in the background. Idle unless started by the test.
#[test]
fn gc_kill_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else { return };
    let config = arbor::Config::default().with_chunk_bytes(96 << 10);
    let store = Store::open_with(&dir, config).expect("the writer opens the store");
    let (mut tree, mut parent, mut n) = match store.last_commit() {
        Some(h) => {
            let date = store.commit_info(&h).expect("commit info").date;
            (store.checkout(&h).expect("checkout"), Some(h), date as u64 + 1)
        }
        None => (store.empty(), None, 0),
    };
    let mut gc = None;
    let mut out = std::io::stdout().lock();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        tree = apply_tree(tree, &block_ops(1, n, OPS_PER_BLOCK));
        let parents: Vec<Hash> = parent.into_iter().collect();
        let h = store.commit(&tree, &parents, n as i64, "Tezos", "").expect("commit");
        writeln!(out, "{MARK}{n}").expect("stdout");
        out.flush().expect("stdout");
        parent = Some(h);
        if n % GC_EVERY == 0 && gc.as_ref().is_none_or(|g: &arbor::GcHandle| g.is_finished()) {
            if let Some(done) = gc.take() {
                done.wait().expect("gc");
            }
            let keep_from = store.nth_ancestor(&h, GC_KEEP).expect("ancestor");
            gc = Some(store.gc(&keep_from, GcMode::Drop).expect("start gc"));
        }
        n += 1;
    }
}

/// Tree and commit hash of block `n` of the writer's history.
fn history(upto: usize) -> Vec<(Tree, Hash)> {
    let mut out: Vec<(Tree, Hash)> = Vec::with_capacity(upto + 1);
    for k in 0..=upto as u64 {
        let (prev, parents) = match out.last() {
            Some((t, h)) => (t.clone(), vec![*h]),
            None => (Tree::empty(), Vec::new()),
        };
        let t = apply_tree(prev, &block_ops(1, k, OPS_PER_BLOCK));
        let h = arbor_core::commit_hash(&t.hash(), &parents, k as i64, b"Tezos", b"");
        out.push((t, h));
    }
    out
}

#[test]
fn writer_with_background_gc_killed_at_random_instants() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let mut rng = Rng::new(0x6c6c);
    let mut reported: Option<u64> = None;
    let mut blocks = Vec::new();
    let mut collected = 0;
    for kill in 0..KILLS {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["gc_kill_child", "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(at) = line.find(MARK) {
                    let _ = tx.send(line[at + MARK.len()..].trim().parse::<u64>().unwrap());
                }
            }
        });
        std::thread::sleep(Duration::from_millis(50 + rng.below(400)));
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        reported = rx.try_iter().last().or(reported);
        let store = Store::open(&dir).unwrap_or_else(|e| panic!("reopen after kill {kill}: {e}"));
        let commits = store.commits();
        let last = store.last_commit().map(|h| store.commit_info(&h).unwrap().date as usize);
        if let Some(r) = reported {
            assert!(last.is_some_and(|l| l as u64 >= r), "kill {kill}: reported block {r} missing (last {last:?})");
        }
        let Some(last) = last else { continue };
        if blocks.len() <= last {
            blocks = history(last + 20);
        }
        // The commits are a contiguous run of the history ending at `last`.
        let first = last + 1 - commits.len();
        for (i, h) in commits.iter().enumerate() {
            assert_eq!(*h, blocks[first + i].1, "kill {kill}: commit {i} is not block {}", first + i);
        }
        // Each kept commit reads back; the block before the run is dropped.
        for n in [first, (first + last) / 2, last] {
            let t = store.checkout(&blocks[n].1).unwrap_or_else(|e| panic!("kill {kill}: block {n}: {e}"));
            assert_eq!(t.hash(), blocks[n].0.hash(), "kill {kill}: block {n}");
        }
        if first > 0 {
            collected += 1;
            let r = store.checkout(&blocks[first - 1].1);
            assert!(
                matches!(r, Err(Error::CommitDropped { .. })),
                "kill {kill}: block {} should be dropped",
                first - 1
            );
        }
        assert_fsck_clean(&store, &format!("kill {kill}"));
    }
    assert!(reported.is_some_and(|r| r > 3 * GC_EVERY), "the writer hardly ran: {reported:?}");
    assert!(collected > KILLS / 2, "only {collected} of {KILLS} reopened stores had collected history");
}
