//! Garbage collection against the model.
//!
//! * Kept commits read back exactly, dropped ones fail with `CommitDropped`, before and after
//!   reopening, over several generations; fsck stays clean.
//! * A collection running in the background while a writer commits and readers read.
//! * Archive mode keeps every commit readable and moves old chunks to the lower layer.
//! * A tree of a dropped commit cannot be committed pointing at dropped records.
//! * A panic at each named GC step, and a power loss at each of its sync points, leave a
//!   store that opens either before or after the collection.
//! * Disk use stays bounded over many collections.
//! * Read-only handles opening or refreshing while a collection moves or removes chunk files,
//!   at each step of their listing and control file read, see every commit they are entitled
//!   to and read each back; one behind a drop collection's floor sees the heads as they are.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use arbor::io::{MemFs, SyncPoint, TornWrites};
use arbor::{Config, Error, GcMode, Hash, InodeConfig, Store};
use common::{apply_model, apply_tree, assert_fsck_clean, block_ops, check_values_and_hash, Model};

const DIR: &str = "/store";

fn config(fs: &MemFs) -> Config {
    Config::default().with_fs(Arc::new(fs.clone())).with_chunk_bytes(16 << 10).with_control_every(4)
}

/// Commits `blocks` blocks on top of `history`'s last commit, recording each model.
fn run_blocks(store: &Store, history: &mut Vec<(Hash, Model)>, seed: u64, blocks: u64) {
    let (mut tree, mut model) = match history.last() {
        Some((h, m)) => (store.checkout(h).expect("checkout last"), m.clone()),
        None => (store.empty(), Model::new()),
    };
    for _ in 0..blocks {
        let n = history.len() as u64;
        let ops = block_ops(seed, n, 30);
        tree = apply_tree(tree, &ops);
        apply_model(&mut model, &ops);
        let parents: Vec<Hash> = history.last().map(|c| c.0).into_iter().collect();
        let h = store.commit(&tree, &parents, n as i64, "Tezos", "").expect("commit");
        history.push((h, model.clone()));
    }
}

/// Every commit from `kept` on reads back as the model; every earlier one is dropped.
fn check_history(store: &Store, history: &[(Hash, Model)], kept: usize, what: &str) {
    for (i, (h, m)) in history.iter().enumerate() {
        if i < kept {
            match store.checkout(h) {
                Err(Error::CommitDropped { .. }) => {}
                other => panic!("{what}: commit {i} should be dropped, got {:?}", other.map(|t| t.hash())),
            }
            assert!(!store.contains(h), "{what}: dropped commit {i} still listed");
        } else {
            let t = store.checkout(h).unwrap_or_else(|e| panic!("{what}: commit {i}: {e}"));
            check_values_and_hash(&t, m, InodeConfig::TEZOS);
        }
    }
    assert_eq!(store.commits().len(), history.len() - kept, "{what}: history length");
}

#[test]
fn kept_commits_read_back_over_generations_and_reopens() {
    let fs = MemFs::new();
    let mut history = Vec::new();
    let mut kept = 0;
    for round in 0..4u64 {
        let store = Store::open_with(DIR, config(&fs)).unwrap();
        run_blocks(&store, &mut history, 11, 25);
        kept = history.len() - 10;
        let report = store.gc_blocking(&history[kept].0, GcMode::Drop).unwrap();
        assert!(report.objects_kept > 0, "round {round}: nothing kept");
        assert!(report.bytes_freed > 0, "round {round}: nothing freed");
        check_history(&store, &history, kept, &format!("round {round}, same handle"));
        assert_fsck_clean(&store, "after gc");
        drop(store);
        let store = Store::open_with(DIR, config(&fs)).unwrap();
        check_history(&store, &history, kept, &format!("round {round}, reopened"));
        assert_fsck_clean(&store, "reopened after gc");
    }
    // A commit older than the floor cannot be the next floor.
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    assert!(matches!(store.gc_blocking(&history[0].0, GcMode::Drop), Err(Error::CommitDropped { .. })));
    check_history(&store, &history, kept, "after refused gc");
}

#[test]
fn gc_in_background_while_writer_commits_and_readers_read() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::default().with_chunk_bytes(64 << 10);
    let store = Store::open_with(dir.path(), config.clone()).unwrap();
    let history = Arc::new(Mutex::new(Vec::new()));
    run_blocks(&store, &mut history.lock().unwrap(), 5, 60);
    let stop = Arc::new(AtomicBool::new(false));
    let mut kept = 0;
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (store, history, stop) = (store.clone(), history.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut reads = 0u64;
                while !stop.load(Ordering::Acquire) {
                    let (h, m) = {
                        let h = history.lock().unwrap();
                        // The newest 5 commits are never collected in this test.
                        let i = h.len() - 1 - (reads as usize + r) % 5;
                        h[i].clone()
                    };
                    let t = store.checkout(&h).expect("reader checkout");
                    check_values_and_hash(&t, &m, InodeConfig::TEZOS);
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    for _ in 0..5 {
        let floor = {
            let h = history.lock().unwrap();
            kept = h.len() - 20;
            h[kept].0
        };
        let gc = store.gc(&floor, GcMode::Drop).unwrap();
        assert!(matches!(store.gc(&floor, GcMode::Drop), Err(Error::GcRunning)));
        // The writer keeps going until the collection is done (at least a few blocks).
        let mut blocks = 0;
        while !gc.is_finished() || blocks < 3 {
            let mut h = history.lock().unwrap().clone();
            run_blocks(&store, &mut h, 5, 1);
            history.lock().unwrap().push(h.pop().unwrap());
            blocks += 1;
        }
        let report = gc.wait().unwrap();
        assert!(report.objects_kept > 0);
    }
    stop.store(true, Ordering::Release);
    for r in readers {
        assert!(r.join().unwrap() > 0, "a reader never read");
    }
    let history = history.lock().unwrap().clone();
    check_history(&store, &history, kept, "after background gcs");
    assert_fsck_clean(&store, "after background gcs");
    drop(store);
    let store = Store::open_with(dir.path(), config).unwrap();
    check_history(&store, &history, kept, "reopened");
}

#[test]
fn archive_mode_keeps_everything_and_moves_old_chunks_down() {
    let fs = MemFs::new();
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    let mut history = Vec::new();
    run_blocks(&store, &mut history, 3, 60);
    let report = store.gc_blocking(&history[50].0, GcMode::Archive).unwrap();
    assert_eq!(report.commits_dropped, 0);
    check_history(&store, &history, 0, "archive");
    let lower = std::path::Path::new(DIR).join("pack/lower");
    assert!(!arbor::io::FileSystem::list(&fs, &lower).unwrap().is_empty(), "no chunk moved to the lower layer");
    drop(store);
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    run_blocks(&store, &mut history, 3, 5);
    check_history(&store, &history, 0, "archive reopened");
    assert_fsck_clean(&store, "archive");
}

#[test]
fn tree_of_dropped_commit_cannot_be_committed() {
    let fs = MemFs::new();
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    let mut history = Vec::new();
    run_blocks(&store, &mut history, 9, 40);
    let old = store.checkout(&history[2].0).unwrap();
    let old = old.add(&["fresh"], b"value").unwrap();
    store.gc_blocking(&history[30].0, GcMode::Drop).unwrap();
    match store.commit(&old, &[], 0, "Tezos", "") {
        Err(Error::ObjectDropped { .. }) => {}
        other => panic!("expected ObjectDropped, got {other:?}"),
    }
    // The failed commit poisoned the writer; a reopen recovers every kept commit.
    drop((old, store));
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    check_history(&store, &history, 30, "after refused commit");
}

/// Checks a store opened after a crash during a collection keeping `history[kept]`: it is
/// the store before the collection or after it, never in between.
fn check_before_or_after(store: &Store, history: &[(Hash, Model)], kept: usize, what: &str) {
    let dropped = matches!(store.checkout(&history[0].0), Err(Error::CommitDropped { .. }));
    check_history(store, history, if dropped { kept } else { 0 }, what);
    assert_fsck_clean(store, what);
}

#[test]
fn panic_at_each_gc_step_leaves_before_or_after() {
    for point in arbor::store::CrashPoint::GC {
        let fs = MemFs::new();
        let store = Store::open_with(DIR, config(&fs)).unwrap();
        let mut history = Vec::new();
        run_blocks(&store, &mut history, 1, 30);
        arbor::store::arm_crash_point(Some(point));
        let r = catch_unwind(AssertUnwindSafe(|| store.gc_blocking(&history[20].0, GcMode::Drop)));
        arbor::store::arm_crash_point(None);
        assert!(r.is_err(), "{point}: did not crash");
        drop(store);
        for torn in [TornWrites::None, TornWrites::Garbage(7)] {
            let crashed = fs.crash(torn);
            let store = Store::open_with(DIR, config(&crashed)).unwrap();
            check_before_or_after(&store, &history, 20, point.name());
            // And it goes on: more blocks, another collection.
            let mut h = history.clone();
            run_blocks(&store, &mut h, 1, 3);
            store.gc_blocking(&h[25].0, GcMode::Drop).unwrap();
            check_history(&store, &h, 25, "gc after the crash");
        }
    }
}

#[test]
fn power_loss_at_every_gc_sync_point_leaves_before_or_after() {
    let fs = MemFs::new();
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    let mut history = Vec::new();
    run_blocks(&store, &mut history, 2, 30);
    store.gc_blocking(&history[10].0, GcMode::Drop).unwrap();
    run_blocks(&store, &mut history, 2, 10);
    let snaps = Arc::new(Mutex::new(Vec::new()));
    let (fs2, snaps2) = (fs.clone(), snaps.clone());
    fs.set_sync_hook(Box::new(move |point: SyncPoint| {
        let seed = point.seq * 2 + u64::from(point.before);
        for torn in [TornWrites::None, TornWrites::Keep(seed), TornWrites::Garbage(seed)] {
            snaps2.lock().unwrap().push((fs2.crash(torn), point.clone()));
        }
    }));
    store.gc_blocking(&history[30].0, GcMode::Drop).unwrap();
    fs.clear_sync_hook();
    let snaps = std::mem::take(&mut *snaps.lock().unwrap());
    assert!(snaps.len() >= 9, "too few sync points: {}", snaps.len());
    for (crashed, point) in snaps {
        let what = format!("power loss at {point:?}");
        let store = Store::open_with(DIR, config(&crashed)).unwrap_or_else(|e| panic!("{what}: {e}"));
        let dropped_30 = matches!(store.checkout(&history[29].0), Err(Error::CommitDropped { .. }));
        check_history(&store, &history, if dropped_30 { 30 } else { 10 }, &what);
        assert_fsck_clean(&store, &what);
    }
}

/// Bytes the store directory occupies on disk (allocated blocks, so punched holes count out).
fn disk_usage(dir: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let meta = entry.metadata().unwrap();
        total += if meta.is_dir() { disk_usage(&entry.path()) } else { meta.blocks() * 512 };
    }
    total
}

#[test]
fn disk_use_stays_bounded_over_many_gcs() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::default().with_chunk_bytes(128 << 10);
    let store = Store::open_with(dir.path(), config).unwrap();
    let mut history = Vec::new();
    let mut sizes = Vec::new();
    for _ in 0..30 {
        run_blocks(&store, &mut history, 4, 20);
        store.gc_blocking(&history[history.len() - 10].0, GcMode::Drop).unwrap();
        // The log: the commit index beside it keeps 48 bytes per commit ever made.
        sizes.push(disk_usage(&dir.path().join("pack")));
    }
    let settled = sizes[5];
    let last = *sizes.last().unwrap();
    // Without collection the log would grow ~6x from round 5 to round 30; the live state
    // still grows a little (the workload's big directory fills up).
    assert!(last <= settled * 2, "disk grew from {settled} to {last} bytes over 25 collections: {sizes:?}");
    check_history(&store, &history, history.len() - 10, "after many gcs");
}

#[test]
fn old_nodes_committed_during_a_gc_are_kept() {
    // A commit made while the collection runs may reuse nodes only a dropped commit reached
    // (here: a tree built on commit 2 while commit 30 is kept). It is made from the sync hook
    // right after the prefix file is synced, before the switch: the writer must hand those
    // pointers to the collection, which copies what they reach.
    let fs = MemFs::new();
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    let mut history = Vec::new();
    run_blocks(&store, &mut history, 13, 40);
    let old = store.checkout(&history[2].0).unwrap();
    let mut model = history[2].1.clone();
    let ops = block_ops(99, 1, 5);
    let old = apply_tree(old, &ops);
    apply_model(&mut model, &ops);
    let made: Arc<Mutex<Option<arbor::Result<Hash>>>> = Arc::new(Mutex::new(None));
    let (store2, made2) = (store.clone(), made.clone());
    fs.set_sync_hook(Box::new(move |point: SyncPoint| {
        let in_gc = std::thread::current().name() == Some("arbor-gc");
        let prefix = point.path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("prefix-"));
        if in_gc && prefix && !point.before && made2.lock().unwrap().is_none() {
            let r = store2.commit(&old, &[], 1, "Tezos", "old base");
            *made2.lock().unwrap() = Some(r);
        }
    }));
    let report = store.gc(&history[30].0, GcMode::Drop).unwrap().wait().unwrap();
    fs.clear_sync_hook();
    let h = made.lock().unwrap().take().expect("the hook committed").expect("commit during gc");
    assert!(report.objects_kept > 0);
    let t = store.checkout(&h).unwrap();
    check_values_and_hash(&t, &model, InodeConfig::TEZOS);
    assert_fsck_clean(&store, "after gc with an old-based commit");
    drop((t, store));
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    history.push((h, model));
    check_history(&store, &history, 30, "reopened");
}

#[test]
fn read_only_handle_follows_a_gc_at_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::default().with_chunk_bytes(64 << 10);
    let store = Store::open_with(dir.path(), config.clone()).unwrap();
    let mut history = Vec::new();
    run_blocks(&store, &mut history, 21, 40);
    let reader = Store::open_with(dir.path(), config.with_read_only(true)).unwrap();
    assert_eq!(reader.commits().len(), 40);
    store.gc_blocking(&history[30].0, GcMode::Drop).unwrap();
    run_blocks(&store, &mut history, 21, 3);
    assert_eq!(reader.refresh().unwrap(), 3);
    check_history(&reader, &history, 30, "read-only after refresh");
    // And a second collection, whose prefix replaces the first.
    store.gc_blocking(&history[38].0, GcMode::Drop).unwrap();
    reader.refresh().unwrap();
    check_history(&reader, &history, 38, "read-only after a second gc");
}

#[test]
fn a_collection_keeps_what_the_kept_commit_reaches() {
    // Keeping only the newest commit, every record its tree reads is kept below the floor.
    let fs = MemFs::new();
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    let mut history = Vec::new();
    for round in 0..3 {
        run_blocks(&store, &mut history, 17, 30);
        let last = history.last().unwrap().0;
        let report = store.gc_blocking(&last, GcMode::Drop).unwrap();
        let stats = store.stats_of(Some(&[last])).unwrap();
        let records: u64 = stats.records.iter().sum();
        let bytes: u64 = stats.record_bytes.iter().sum();
        // Every record the state reads is kept. A delta's base is kept whole, with the
        // children its delta overrides (FORMAT.md 15.2): more than the state reads, but
        // at most one older version of each overridden child.
        assert!(report.objects_kept >= records, "round {round}: records kept {} < {records}", report.objects_kept);
        assert!(report.bytes_kept >= bytes, "round {round}: bytes kept {} < {bytes}", report.bytes_kept);
        assert!(
            report.objects_kept <= 2 * records,
            "round {round}: records kept {} > 2 x {records}",
            report.objects_kept
        );
        assert_fsck_clean(&store, "after keeping only the newest commit");
    }
}

/// Block `n` of a workload that keeps a 50-entry directory a delta of an old base for long:
/// each block changes the sub-directory of entry 0 and of one other entry.
fn delta_block(n: u64) -> Vec<common::BlockOp> {
    let entry = |i: u64| vec![b"hot".to_vec(), format!("k{i:02}").into_bytes(), b"v".to_vec()];
    if n == 0 {
        return (0..50).map(|i| (entry(i), Some(vec![0; 8]))).collect();
    }
    vec![(entry(0), Some(n.to_le_bytes().to_vec())), (entry(1 + n * 7 % 49), Some(n.to_be_bytes().to_vec()))]
}

#[test]
fn deltas_written_during_collections_keep_what_their_bases_need() {
    // Deltas against an old base, written while collections run (from the sync hook, after
    // the prefix is synced and before the switch) and between them: every collection must
    // find what each kept delta reads through its base, commits read back, fsck clean.
    let fs = MemFs::new();
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    let mut history: Vec<(Hash, Model)> = Vec::new();
    let block = |store: &Store, history: &mut Vec<(Hash, Model)>| {
        let n = history.len() as u64;
        let (tree, mut model) = match history.last() {
            Some((h, m)) => (store.checkout(h).unwrap(), m.clone()),
            None => (store.empty(), Model::new()),
        };
        let ops = delta_block(n);
        apply_model(&mut model, &ops);
        (apply_tree(tree, &ops), model)
    };
    for _ in 0..4 {
        let (tree, model) = block(&store, &mut history);
        let parents: Vec<Hash> = history.last().map(|c| c.0).into_iter().collect();
        history.push((store.commit(&tree, &parents, 0, "Tezos", "").unwrap(), model));
    }
    for round in 0..8 {
        let (tree, next_model) = block(&store, &mut history);
        let last = history.last().unwrap().0;
        let made: Arc<Mutex<Option<arbor::Result<Hash>>>> = Arc::new(Mutex::new(None));
        let (store2, made2) = (store.clone(), made.clone());
        fs.set_sync_hook(Box::new(move |point: SyncPoint| {
            let in_gc = std::thread::current().name() == Some("arbor-gc");
            let prefix = point.path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("prefix-"));
            if in_gc && prefix && !point.before && made2.lock().unwrap().is_none() {
                *made2.lock().unwrap() = Some(store2.commit(&tree, &[last], 1, "Tezos", "during gc"));
            }
        }));
        // Every other collection runs alone, the next one with a delta written against the
        // base while it runs.
        if round % 2 == 0 {
            fs.clear_sync_hook();
        }
        let kept = history.len() - 1;
        let waited = store.gc(&history[kept].0, GcMode::Drop).unwrap().wait();
        fs.clear_sync_hook();
        waited.unwrap_or_else(|e| panic!("round {round}: collection failed: {e}"));
        let h = match made.lock().unwrap().take() {
            Some(made) => made.expect("commit during gc"),
            None => store.commit(&block(&store, &mut history).0, &[last], 1, "Tezos", "after gc").unwrap(),
        };
        history.push((h, next_model));
        check_history(&store, &history, kept, &format!("round {round}"));
    }
    assert_fsck_clean(&store, "after collections with deltas written during them");
    let kept = history.len() - 2;
    drop(store);
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    check_history(&store, &history, kept, "reopened");
}

/// A collection never drops a named head's commit: asked to, it refuses naming the head and
/// changes nothing; `gc_window_start` gives a floor that keeps every head's window.
#[test]
fn collections_keep_named_heads() {
    let fs = MemFs::new();
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    let mut history = Vec::new();
    run_blocks(&store, &mut history, 41, 12);
    store.set_head("main", &history[11].0).unwrap();
    store.set_head("old", &history[3].0).unwrap();

    let e = store.gc_blocking(&history[8].0, GcMode::Drop).unwrap_err();
    match &e {
        Error::GcWouldDropHeads { kept_from, heads } => {
            assert_eq!(*kept_from, history[8].0);
            assert_eq!(heads, &vec!["old".to_string()]);
        }
        other => panic!("expected GcWouldDropHeads, got {other}"),
    }
    assert!(e.to_string().contains("old"), "{e}");
    check_history(&store, &history, 0, "after the refusal");
    assert_fsck_clean(&store, "after the refusal");

    // Each head keeps its own window: `old` keeps commits 2 and 3, so the floor is commit 2.
    let start = store.gc_window_start(2).unwrap().unwrap();
    assert_eq!(start, history[2].0);
    let r = store.gc_blocking(&start, GcMode::Drop).unwrap();
    assert_eq!(r.commits_dropped, 2);
    check_history(&store, &history, 2, "after keeping every head");

    // With the head removed, the same collection as before goes through.
    assert!(store.remove_head("old").unwrap());
    assert_eq!(store.gc_window_start(4).unwrap(), Some(history[8].0));
    store.gc_blocking(&history[8].0, GcMode::Drop).unwrap();
    check_history(&store, &history, 8, "after removing the head");
    drop(store);
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    check_history(&store, &history, 8, "reopened");
    assert_fsck_clean(&store, "reopened");
}

/// Archive collections drop nothing, so heads below the floor do not stop them.
#[test]
fn archive_collections_ignore_heads_below_the_floor() {
    let fs = MemFs::new();
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    let mut history = Vec::new();
    run_blocks(&store, &mut history, 43, 8);
    store.set_head("old", &history[1].0).unwrap();
    store.gc_blocking(&history[6].0, GcMode::Archive).unwrap();
    let t = store.checkout(&history[1].0).unwrap();
    check_values_and_hash(&t, &history[1].1, InodeConfig::TEZOS);
}

/// A read-only handle that meets a collection's switch without refreshing (the writer's
/// process removed and hollowed out the chunks below the floor under it) reads every kept
/// commit on the new routing instead of reporting corruption (issue 14, item 5); the
/// commits it dropped are reported as dropped, never as damage.
#[test]
fn read_only_handle_reads_through_a_switch_without_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::default().with_chunk_bytes(16 << 10).with_cache_bytes(1 << 16);
    let store = Store::open_with(dir.path(), config.clone()).unwrap();
    let mut history = Vec::new();
    run_blocks(&store, &mut history, 23, 40);
    let reader = Store::open_with(dir.path(), config.clone().with_read_only(true)).unwrap();
    store.gc_blocking(&history[30].0, GcMode::Drop).unwrap();
    for (i, (h, m)) in history.iter().enumerate() {
        // A dropped commit may still read back whole from files the handle holds open, or
        // be reported dropped; a kept one must read back; nothing may be reported damaged.
        match reader.checkout(h).and_then(|t| read_every_value(&t).map(|_| t)) {
            Ok(t) => check_values_and_hash(&t, m, InodeConfig::TEZOS),
            Err(Error::CommitDropped { .. } | Error::ObjectDropped { .. }) => {
                assert!(i < 30, "kept commit {i} dropped")
            }
            Err(e) => panic!("commit {i}: {e}"),
        }
    }
    // A second collection, whose prefix replaces the one the reader has taken up.
    run_blocks(&store, &mut history, 23, 3);
    store.gc_blocking(&history[38].0, GcMode::Drop).unwrap();
    for (h, m) in &history[38..40] {
        check_values_and_hash(&reader.checkout(h).unwrap(), m, InodeConfig::TEZOS);
    }
}

/// Reads every value of `tree`, returning the first error.
fn read_every_value(tree: &arbor::Tree) -> arbor::Result<()> {
    tree.fold::<&str, _>(&[], None, arbor::Order::Sorted, |_, sub| {
        sub.to_value()?;
        Ok(true)
    })
}

/// A call of the reader's at which a [`StepHook`] runs the writer's step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    /// Before the listing of a directory is taken.
    BeforeList(&'static str),
    /// After the listing of a directory is taken, before it is returned: the reader then works
    /// on a listing the writer made stale.
    AfterList(&'static str),
    /// After a file is opened, before it is read: the reader then reads the file as it was
    /// (an open file survives its replacement by a rename).
    AfterOpen(&'static str),
}

/// The writer's side of a race, run from a [`StepHook`].
type Hook = Box<dyn FnOnce() + Send>;

/// A file system that runs a hook once, at one call of the reader's, once armed. A read-only
/// handle lists `pack/` and `pack/lower/` and reads the control file when it opens and when it
/// refreshes; the hook runs a writer's collection (or the part of it that moves files) right
/// there, which makes an interleaving of a reader process and a writer process deterministic.
struct StepHook {
    inner: MemFs,
    at: Call,
    hook: Mutex<Option<Hook>>,
}

impl std::fmt::Debug for StepHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepHook").field("at", &self.at).finish()
    }
}

impl StepHook {
    fn new(inner: &MemFs, at: Call) -> Arc<StepHook> {
        Arc::new(StepHook { inner: inner.clone(), at, hook: Mutex::new(None) })
    }

    fn arm(&self, hook: Hook) {
        *self.hook.lock().unwrap() = Some(hook);
    }

    /// Whether the armed hook has run.
    fn fired(&self) -> bool {
        self.hook.lock().unwrap().is_none()
    }

    /// Runs the hook if `call` is the one it waits for.
    fn maybe_run(&self, call: Call) {
        let hook = if call == self.at { self.hook.lock().unwrap().take() } else { None };
        if let Some(hook) = hook {
            hook();
        }
    }
}

/// The `&'static str` a hooked call names, if `path` is one of those the tests hook.
fn hooked_path(path: &std::path::Path) -> Option<&'static str> {
    ["/store/pack", "/store/pack/lower", "/store/control"].into_iter().find(|p| path == std::path::Path::new(p))
}

impl arbor::io::FileSystem for StepHook {
    fn create_dir_all(&self, path: &std::path::Path) -> std::io::Result<()> {
        self.inner.create_dir_all(path)
    }

    fn open(&self, path: &std::path::Path, opts: arbor::io::OpenOptions) -> std::io::Result<Arc<dyn arbor::io::File>> {
        let file = self.inner.open(path, opts);
        if let Some(p) = hooked_path(path) {
            self.maybe_run(Call::AfterOpen(p));
        }
        file
    }

    fn exists(&self, path: &std::path::Path) -> bool {
        self.inner.exists(path)
    }

    fn list(&self, dir: &std::path::Path) -> std::io::Result<Vec<String>> {
        let Some(p) = hooked_path(dir) else { return self.inner.list(dir) };
        self.maybe_run(Call::BeforeList(p));
        let names = self.inner.list(dir);
        self.maybe_run(Call::AfterList(p));
        names
    }

    fn rename(&self, from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
        self.inner.rename(from, to)
    }

    fn remove_file(&self, path: &std::path::Path) -> std::io::Result<()> {
        self.inner.remove_file(path)
    }

    fn sync_dir(&self, dir: &std::path::Path) -> std::io::Result<()> {
        self.inner.sync_dir(dir)
    }

    fn lock_exclusive(&self, path: &std::path::Path) -> std::io::Result<Box<dyn arbor::io::LockGuard>> {
        self.inner.lock_exclusive(path)
    }
}

/// What of a collection the writer does at the reader's call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriterStep {
    /// The whole collection.
    Collection,
    /// Only the release of the chunks below the floor (the writable open that finishes a
    /// collection interrupted after its switch): the reader may have read the new control
    /// file already, so that no change of it tells the reader to look again.
    Release,
}

/// What the reader is doing when the writer's step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReaderStep {
    /// A read-only open.
    Open,
    /// A refresh of a handle opened when the log held 12 commits.
    Refresh,
}

/// One interleaving: a writer with 40 commits collects keeping commit 30 (after a first
/// collection keeping commit 10, with `earlier`) while a reader opens or refreshes; the
/// writer's step runs at the reader's call `at`. The reader must then see every commit it is
/// entitled to (all of them in archive mode, the kept ones in drop mode: a refresh every
/// commit written before it began, an open once refreshed) and read each back whole, never
/// reporting an error that is not on disk.
fn reader_meets_a_collection(mode: GcMode, earlier: bool, writer: WriterStep, reader: ReaderStep, at: Call) {
    let what = format!("{mode:?}, earlier {earlier}: {writer:?} at the {reader:?}'s {at:?}");
    let fs = MemFs::new();
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    let mut history = Vec::new();
    run_blocks(&store, &mut history, 31, 12);
    let hooked = StepHook::new(&fs, at);
    let reader_config = config(&fs).with_fs(hooked.clone()).with_read_only(true);
    let early_reader = Store::open_with(DIR, reader_config.clone()).unwrap();
    run_blocks(&store, &mut history, 31, 28);
    if earlier {
        store.gc_blocking(&history[10].0, mode).unwrap();
    }
    let keep = history[30].0;
    match writer {
        WriterStep::Collection => {
            let store = store.clone();
            hooked.arm(Box::new(move || {
                store.gc_blocking(&keep, mode).unwrap();
            }));
        }
        WriterStep::Release => {
            arbor::store::arm_crash_point(Some(arbor::store::CrashPoint::GcAfterControl));
            let r = catch_unwind(AssertUnwindSafe(|| store.gc_blocking(&keep, mode)));
            arbor::store::arm_crash_point(None);
            assert!(r.is_err(), "{what}: the collection did not stop after its switch");
            let fs = fs.clone();
            hooked.arm(Box::new(move || {
                // A writable open finishes the release the collection did not do.
                drop(Store::open_with(DIR, config(&fs)).unwrap());
            }));
        }
    }
    if writer == WriterStep::Release {
        // The writer's process died at its switch; the hook opens the store again.
        drop(store);
    }
    let kept = if mode == GcMode::Archive { 0 } else { 30 };
    let handle = match reader {
        ReaderStep::Open => {
            let handle = Store::open_with(DIR, reader_config).unwrap_or_else(|e| panic!("{what}: read-only open: {e}"));
            assert!(hooked.fired(), "{what}: the writer's step did not run");
            handle.refresh().unwrap_or_else(|e| panic!("{what}: refresh: {e}"));
            handle
        }
        ReaderStep::Refresh => {
            early_reader.refresh().unwrap_or_else(|e| panic!("{what}: refresh: {e}"));
            assert!(hooked.fired(), "{what}: the writer's step did not run");
            early_reader
        }
    };
    assert_eq!(handle.commits().len(), history.len() - kept, "{what}: commits seen");
    for (i, (h, m)) in history.iter().enumerate().skip(kept) {
        let t = handle.checkout(h).unwrap_or_else(|e| panic!("{what}: commit {i}: {e}"));
        read_every_value(&t).unwrap_or_else(|e| panic!("{what}: commit {i}: {e}"));
        check_values_and_hash(&t, m, InodeConfig::TEZOS);
    }
}

/// A read-only open or refresh that lists the chunk files or reads the control file while the
/// writer's collection moves chunks into the lower layer (archive mode) or removes them (drop
/// mode), at each of those calls, sees every commit it is entitled to and reads each back.
/// Before the fix, an archive collection renaming a chunk between the reader's listing of the
/// lower layer and its listing of `pack/` hid the chunk, and reads of the commits in it failed
/// with "pointer to offset N outside the data" (the torture harness's seed 12, writer process
/// 35); a chunk renamed or removed between the listing and its opening failed the open or
/// refresh with "No such file or directory"; a refresh whose end was below a drop collection's
/// new floor stopped at the gap or at the punched range and saw no commit again.
#[test]
fn readers_meeting_a_collection_at_each_step_see_every_commit() {
    // Every interleaving runs, and the failures are reported together.
    let (mut cases, mut failed) = (0, Vec::new());
    for mode in [GcMode::Archive, GcMode::Drop] {
        for earlier in [false, true] {
            // Only an earlier archive collection leaves a lower layer to list.
            let lower = mode == GcMode::Archive && earlier;
            let mut calls = vec![
                Call::BeforeList("/store/pack"),
                Call::AfterList("/store/pack"),
                Call::AfterOpen("/store/control"),
            ];
            if lower {
                calls.extend([Call::BeforeList("/store/pack/lower"), Call::AfterList("/store/pack/lower")]);
            }
            for writer in [WriterStep::Collection, WriterStep::Release] {
                for reader in [ReaderStep::Open, ReaderStep::Refresh] {
                    for &at in &calls {
                        let case = || reader_meets_a_collection(mode, earlier, writer, reader, at);
                        if let Err(e) = catch_unwind(case) {
                            failed.push(e.downcast_ref::<String>().cloned().unwrap_or_default());
                        }
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 4 * 3 * 4 + 4 * 2);
    assert!(failed.is_empty(), "{} of {cases} interleavings failed:\n{}", failed.len(), failed.join("\n"));
}

/// A refresh whose handle's end lies below a drop collection's new floor skips the dropped
/// range, head records included: a head removed there is gone from the handle too, and the
/// heads set or moved since are as the writer has them.
#[test]
fn a_refresh_behind_a_drop_floor_sees_the_heads_as_they_are() {
    let fs = MemFs::new();
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    let mut history = Vec::new();
    run_blocks(&store, &mut history, 41, 12);
    store.set_head("old", &history[5].0).unwrap();
    store.set_head("moved", &history[6].0).unwrap();
    let reader = Store::open_with(DIR, config(&fs).with_read_only(true)).unwrap();
    assert_eq!(reader.heads(), vec![("moved".to_string(), history[6].0), ("old".to_string(), history[5].0)]);
    run_blocks(&store, &mut history, 41, 3);
    // Below the floor to come, past the reader's end.
    assert!(store.remove_head("old").unwrap());
    run_blocks(&store, &mut history, 41, 25);
    store.set_head("moved", &history[36].0).unwrap();
    store.set_head("new", &history[35].0).unwrap();
    store.gc_blocking(&history[30].0, GcMode::Drop).unwrap();
    assert_eq!(reader.refresh().unwrap(), 10, "the kept commits the reader had not seen");
    assert_eq!(reader.heads(), store.heads());
    assert_eq!(reader.heads(), vec![("moved".to_string(), history[36].0), ("new".to_string(), history[35].0)]);
    // The dropped commits it never saw are unknown to it rather than dropped.
    let kept: Vec<Hash> = history[30..].iter().map(|c| c.0).collect();
    assert_eq!(reader.commits(), kept);
    for (h, m) in &history[30..] {
        check_values_and_hash(&reader.checkout(h).unwrap(), m, InodeConfig::TEZOS);
    }
}

/// A power loss at each sync point of an archive collection leaves a store that opens before
/// or after it, with each chunk under one name: a move into the lower layer whose removal from
/// `pack/` was not yet durable leaves the old name too, which the writable open removes.
#[test]
fn power_loss_at_every_archive_sync_point_leaves_each_chunk_once() {
    let fs = MemFs::new();
    let store = Store::open_with(DIR, config(&fs)).unwrap();
    let mut history = Vec::new();
    run_blocks(&store, &mut history, 4, 40);
    // The lower layer must exist (durably) for a move into it to outlive a power loss.
    store.gc_blocking(&history[10].0, GcMode::Archive).unwrap();
    let snaps = Arc::new(Mutex::new(Vec::new()));
    let (fs2, snaps2) = (fs.clone(), snaps.clone());
    fs.set_sync_hook(Box::new(move |point: SyncPoint| {
        snaps2.lock().unwrap().push((fs2.crash(TornWrites::None), point.clone()));
    }));
    store.gc_blocking(&history[30].0, GcMode::Archive).unwrap();
    fs.clear_sync_hook();
    let snaps = std::mem::take(&mut *snaps.lock().unwrap());
    let pack = std::path::Path::new(DIR).join("pack");
    let chunks = |fs: &MemFs, dir: &std::path::Path| -> Vec<String> {
        let names = arbor::io::FileSystem::list(fs, dir).unwrap_or_default();
        names.into_iter().filter(|n| n.ends_with(".chunk")).collect()
    };
    let mut doubled = 0;
    for (crashed, point) in snaps {
        let what = format!("power loss at {point:?}");
        let both =
            |fs: &MemFs| chunks(fs, &pack).iter().filter(|n| chunks(fs, &pack.join("lower")).contains(n)).count();
        doubled += both(&crashed);
        let store = Store::open_with(DIR, config(&crashed)).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(both(&crashed), 0, "{what}: a chunk under two names after the open");
        check_history(&store, &history, 0, &what);
        assert_fsck_clean(&store, &what);
    }
    assert!(doubled > 0, "no power loss left a chunk under two names: the case is not tested");
}
