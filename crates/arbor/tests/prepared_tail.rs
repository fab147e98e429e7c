//! The zeros the writer prepares past its last record (FORMAT.md 3.2): after a commit handed
//! over (`Store::commit_owned`) is synced, the sync thread writes zeros past its records, so
//! that the next commit overwrites bytes the file holds instead of extending it. They are not
//! records: reopening ends the log at them, with every commit, and `repair` finds nothing to
//! repair; records of an unfinished commit written over them are still a torn tail, and
//! anything but zeros after them is still damage.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor::io::{File, FileSystem, MemFs, OpenOptions};
use arbor::{Config, Hash, Store};
use common::mem_config;

/// The last chunk file of the store at `/s`.
fn last_chunk(fs: &MemFs) -> Arc<dyn File> {
    let dir = Path::new("/s/pack");
    let mut names: Vec<String> = fs.list(dir).unwrap().into_iter().filter(|n| n.ends_with(".chunk")).collect();
    names.sort();
    let name = names.last().expect("a chunk");
    fs.open(&dir.join(name), OpenOptions { write: true, ..OpenOptions::default() }).unwrap()
}

/// Commits `blocks` blocks of 200 values each, every tree handed over; returns the commits.
fn commit_blocks(store: &Store, parent: Option<Hash>, blocks: u32) -> Vec<Hash> {
    let mut parent = parent;
    let mut commits = Vec::new();
    for b in 0..blocks {
        let mut tree = match parent {
            Some(p) => store.checkout(&p).unwrap(),
            None => store.empty(),
        };
        for i in 0..200u32 {
            let key = format!("k{}", (b * 7919 + i * 104_729) % 5000);
            tree.add_mut(&["data", key.as_str()], format!("value {b} {i}").as_bytes()).unwrap();
        }
        let (h, _) = store.commit_owned(tree, parent.as_slice(), i64::from(b), b"t", b"block").unwrap();
        parent = Some(h);
        commits.push(h);
    }
    commits
}

/// Waits until the sync thread has written zeros past `end` in `chunk` (it does so after the
/// commit has returned); panics if they never come.
fn wait_for_zeros_past(chunk: &Arc<dyn File>, end: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let len = chunk.len().unwrap();
        if len > end {
            return len;
        }
        assert!(Instant::now() < deadline, "no zeros were prepared past offset {end}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The store at `/s` on `fs`, its commits, and the global offset its log ends at (the chunk is
/// the only one, so global offsets are the file's).
fn store_with_prepared_zeros(fs: &MemFs, config: &Config) -> (Vec<Hash>, u64) {
    let store = Store::open_with("/s", config.clone()).unwrap();
    let commits = commit_blocks(&store, None, 6);
    let end = store.log_bytes();
    drop(store);
    let chunk = last_chunk(fs);
    let len = wait_for_zeros_past(&chunk, end);
    let mut tail = vec![1u8; (len - end) as usize];
    chunk.read_exact_at(&mut tail, end).unwrap();
    assert!(tail.iter().all(|&b| b == 0), "only zeros past the log's end");
    (commits, end)
}

#[test]
fn prepared_zeros_end_the_log_and_every_commit_reopens() {
    let fs = MemFs::new();
    let config = mem_config(&fs);
    let (commits, end) = store_with_prepared_zeros(&fs, &config);

    let report = Store::repair("/s", &config, false).unwrap();
    assert!(report.is_intact(), "zeros past the last commit are nothing to repair: {report:?}");
    assert_eq!(report.log_end, end, "the log ends where the zeros begin");

    let store = Store::open_with("/s", config.clone()).unwrap();
    assert_eq!(store.log_bytes(), end);
    assert_eq!(last_chunk(&fs).len().unwrap(), end, "a writable open cuts the zeros");
    for h in &commits {
        store.checkout(h).unwrap();
    }
    // The writer goes on from there, and prepares again.
    let more = commit_blocks(&store, commits.last().copied(), 3);
    let end = store.log_bytes();
    drop(store);
    wait_for_zeros_past(&last_chunk(&fs), end);
    let store = Store::open_with("/s", config).unwrap();
    for h in commits.iter().chain(&more) {
        store.checkout(h).unwrap();
    }
    assert_eq!(store.last_commit(), more.last().copied());
}

#[test]
fn a_read_only_handle_ends_the_log_at_the_zeros() {
    let fs = MemFs::new();
    let config = mem_config(&fs);
    let (commits, end) = store_with_prepared_zeros(&fs, &config);
    let reader = Store::open_with("/s", config.clone().with_read_only(true)).unwrap();
    assert_eq!(reader.log_bytes(), end);
    for h in &commits {
        reader.checkout(h).unwrap();
    }
    assert!(last_chunk(&fs).len().unwrap() > end, "a read-only open changes nothing");
}

#[test]
fn records_written_over_the_zeros_without_their_commit_are_a_torn_tail() {
    let fs = MemFs::new();
    let config = mem_config(&fs);
    let (commits, end) = store_with_prepared_zeros(&fs, &config);
    // A CONTENTS record (kind 1, a 3-byte body) where the next commit's records would go, then
    // the zeros: the records of a commit that never completed.
    let mut frame = vec![1u8, 3, b'a', b'b', b'c'];
    frame.extend_from_slice(&crc32c::crc32c(&frame).to_le_bytes());
    last_chunk(&fs).write_all_at(&frame, end).unwrap();

    let report = Store::repair("/s", &config, false).unwrap();
    let (_, at, what) = report.damage.clone().expect("the unfinished commit is reported");
    assert_eq!(at, end, "{what}");
    assert_eq!(report.log_end, end + frame.len() as u64, "the records end where the zeros begin");

    let store = Store::open_with("/s", config).unwrap();
    assert_eq!(store.log_bytes(), end, "the unfinished commit's record is cut");
    assert_eq!(store.last_commit(), commits.last().copied());
}

#[test]
fn anything_but_zeros_after_them_is_damage() {
    let fs = MemFs::new();
    let config = mem_config(&fs);
    let (_, end) = store_with_prepared_zeros(&fs, &config);
    let chunk = last_chunk(&fs);
    let len = chunk.len().unwrap();
    chunk.write_all_at(&[0x5a], len - 1).unwrap();

    let report = Store::repair("/s", &config, false).unwrap();
    let (_, at, _) = report.damage.expect("a byte past the zeros is damage, not their end");
    assert_eq!(at, end);
    assert_eq!(report.log_end, len, "the log's bytes run to the file's end");
}

/// A store dropped right after a commit, with its zeros still to be prepared, and opened again
/// at once: the dropped writer waits for its zeros (they would otherwise land on the next
/// writer's records), and every commit of every round reads back.
#[test]
fn a_store_reopened_at_once_keeps_every_commit() {
    let fs = MemFs::new();
    let config = mem_config(&fs);
    let mut commits: Vec<Hash> = Vec::new();
    for _ in 0..20 {
        let store = Store::open_with("/s", config.clone()).unwrap();
        commits.extend(commit_blocks(&store, commits.last().copied(), 1));
    }
    let store = Store::open_with("/s", config).unwrap();
    for h in &commits {
        store.checkout(h).unwrap();
    }
    assert_eq!(store.last_commit(), commits.last().copied());
}

/// With `Config::zeros_after_commit` off the zeros are there when the commit returns (the
/// torture harness needs every file operation in one order), and the store reopens as before.
#[test]
fn zeros_written_before_the_commit_returns_are_there_at_once() {
    let fs = MemFs::new();
    let config = mem_config(&fs).with_zeros_after_commit(false);
    let store = Store::open_with("/s", config.clone()).unwrap();
    let commits = commit_blocks(&store, None, 3);
    let end = store.log_bytes();
    assert!(last_chunk(&fs).len().unwrap() > end, "zeros past the records when the commit returned");
    drop(store);
    let store = Store::open_with("/s", config).unwrap();
    assert_eq!(store.log_bytes(), end);
    for h in &commits {
        store.checkout(h).unwrap();
    }
}
