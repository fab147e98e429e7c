//! Power loss and write failures, on the in-memory file system that models them.
//!
//! * At every sync point of a workload (just before and just after each `sync_data` and
//!   `sync_dir`), the disk a power loss would leave is captured three ways (unsynced writes
//!   lost, kept in part, or partly garbage); each capture must open, hold every commit and
//!   head that was reported durable before that point and nothing that was never started,
//!   pass fsck, accept a new commit and reopen.
//! * Under `Durability::Interval`, everything before the last completed `flush` survives.
//! * A panic at each named crash point of the commit path leaves a store at the previous or
//!   the new commit.
//! * A failure injected at each write or sync of a commit, head update or flush is returned
//!   as an error (never a panic, never success), poisons the store, and leaves it consistent.

mod common;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arbor::io::{FaultKind, MemFs, SyncPoint, TornWrites};
use arbor::{Config, Durability, Error, Hash, InodeConfig, Store, Tree};
use common::{apply_model, apply_tree, assert_fsck_clean, block_ops, check_values_and_hash, Model};

const DIR: &str = "/store";

fn config(fs: &MemFs, durability: Durability) -> Config {
    // Small chunks and frequent control rewrites put chunk creation, index syncs and
    // control file replacement among the sync points.
    Config::default()
        .with_fs(Arc::new(fs.clone()))
        .with_durability(durability)
        .with_chunk_bytes(4096)
        .with_control_every(3)
}

/// The workload's history: commits in order with the model of their trees.
#[derive(Default, Clone)]
struct History {
    commits: Vec<(Hash, Model)>,
}

impl History {
    fn index_of(&self, h: &Hash) -> Option<usize> {
        self.commits.iter().position(|c| c.0 == *h)
    }
}

/// What the workload had done when a sync point was reached.
#[derive(Clone, Debug, Default)]
struct Progress {
    /// Commits whose `commit` call returned.
    returned: usize,
    /// A commit call under way (its hash is known in advance).
    commit_in_flight: bool,
    /// Heads as of the `set_head` calls that returned.
    heads: BTreeMap<String, Hash>,
    /// A `set_head` under way.
    head_in_flight: Option<(String, Hash)>,
    /// Commits before the last `flush` that returned.
    flushed: usize,
}

/// One captured disk.
struct Snapshot {
    fs: MemFs,
    progress: Progress,
    point: SyncPoint,
    torn: TornWrites,
}

/// Records a power-loss disk in three flavours at every sync point of `fs`.
fn install_hook(fs: &MemFs, progress: &Arc<Mutex<Progress>>) -> Arc<Mutex<Vec<Snapshot>>> {
    let snaps = Arc::new(Mutex::new(Vec::new()));
    let (fs2, progress, snaps2) = (fs.clone(), progress.clone(), snaps.clone());
    fs.set_sync_hook(Box::new(move |point: SyncPoint| {
        let p = progress.lock().unwrap().clone();
        let seed = point.seq * 2 + u64::from(point.before);
        for torn in [TornWrites::None, TornWrites::Keep(seed), TornWrites::Garbage(seed)] {
            let snap = Snapshot { fs: fs2.crash(torn), progress: p.clone(), point: point.clone(), torn };
            snaps2.lock().unwrap().push(snap);
        }
    }));
    snaps
}

/// Runs `blocks` commits (small blocks of changes), pointing heads at some of them and, under
/// a relaxed policy, flushing every few commits. Records progress for the sync hook.
fn workload(store: &Store, progress: &Mutex<Progress>, blocks: u64, flush_every: Option<u64>) -> History {
    let mut history = History::default();
    let mut tree = store.empty();
    let mut model = Model::new();
    for n in 0..blocks {
        let ops = block_ops(7, n, 40);
        tree = apply_tree(tree, &ops);
        apply_model(&mut model, &ops);
        let parents: Vec<Hash> = history.commits.last().map(|c| c.0).into_iter().collect();
        let expected = arbor_core::commit_hash(&tree.hash(), &parents, n as i64, b"Tezos", b"");
        history.commits.push((expected, model.clone()));
        progress.lock().unwrap().commit_in_flight = true;
        let h = store.commit(&tree, &parents, n as i64, "Tezos", "").expect("commit");
        assert_eq!(h, expected);
        {
            let mut p = progress.lock().unwrap();
            p.commit_in_flight = false;
            p.returned += 1;
        }
        if n % 3 == 1 {
            let name = if n % 2 == 0 { "main" } else { "test" };
            progress.lock().unwrap().head_in_flight = Some((name.to_string(), h));
            store.set_head(name, &h).expect("set_head");
            let mut p = progress.lock().unwrap();
            p.head_in_flight = None;
            p.heads.insert(name.to_string(), h);
        }
        if flush_every.is_some_and(|f| n % f == f - 1) {
            store.flush().expect("flush");
            progress.lock().unwrap().flushed = n as usize + 1;
        }
    }
    history
}

/// Checks that a store opened after a power loss holds exactly a prefix of the history of
/// at least `min` and at most `max` commits, that each reads back exactly, and that fsck is
/// clean. Returns the number of commits.
fn check_recovered(store: &Store, history: &History, min: usize, max: usize, what: &str) -> usize {
    let commits = store.commits();
    let n = commits.len();
    assert!(n >= min, "{what}: {n} commits, but {min} were reported durable");
    assert!(n <= max, "{what}: {n} commits, but only {max} were ever started");
    let want: Vec<Hash> = history.commits[..n].iter().map(|c| c.0).collect();
    assert_eq!(commits, want, "{what}: commits are not a prefix of the history");
    for (k, (h, m)) in history.commits[..n].iter().enumerate() {
        let t = store.checkout(h).unwrap_or_else(|e| panic!("{what}: checkout of commit {k}: {e}"));
        check_values_and_hash(&t, m, InodeConfig::TEZOS);
    }
    assert_fsck_clean(store, what);
    n
}

/// After the checks: the recovered store takes a new commit, which survives a reopen after
/// another power loss.
fn check_accepts_commit(store: Store, fs: &MemFs, durability: Durability, what: &str) {
    let base = match store.last_commit() {
        Some(h) => store.checkout(&h).unwrap(),
        None => store.empty(),
    };
    let parents: Vec<Hash> = store.last_commit().into_iter().collect();
    let t = base.add(&["after", "recovery"], b"yes").unwrap();
    let h = store.commit(&t, &parents, 1_000, "Tezos", "after").unwrap_or_else(|e| panic!("{what}: commit: {e}"));
    store.flush().unwrap_or_else(|e| panic!("{what}: flush: {e}"));
    drop(store);
    let fs = fs.crash(TornWrites::None);
    let store = Store::open_with(DIR, config(&fs, durability)).unwrap_or_else(|e| panic!("{what}: reopen: {e}"));
    assert!(store.contains(&h), "{what}: the commit made after recovery is lost");
    assert_eq!(store.checkout(&h).unwrap().find(&["after", "recovery"]).unwrap().as_deref(), Some(&b"yes"[..]));
    assert_fsck_clean(&store, what);
}

fn describe(s: &Snapshot) -> String {
    let p = &s.point;
    let when = if p.before { "before" } else { "after" };
    format!("power loss {when} sync #{} of {} ({:?}), {:?}", p.seq, p.path.display(), p.kind, s.torn)
}

#[test]
fn power_loss_at_every_sync_point() {
    let fs = MemFs::new();
    let progress = Arc::new(Mutex::new(Progress::default()));
    let snaps = install_hook(&fs, &progress);
    let store = Store::open_with(DIR, config(&fs, Durability::EveryCommit)).unwrap();
    let history = workload(&store, &progress, 14, None);
    drop(store);
    fs.clear_sync_hook();
    let snaps = std::mem::take(&mut *snaps.lock().unwrap());
    assert!(snaps.len() > 100, "only {} sync points", snaps.len());
    let mut by_count = BTreeMap::new();
    for s in &snaps {
        let what = describe(s);
        let p = &s.progress;
        let store = Store::open_with(DIR, config(&s.fs, Durability::EveryCommit))
            .unwrap_or_else(|e| panic!("{what}: the store does not open: {e}"));
        let max = p.returned + usize::from(p.commit_in_flight);
        let n = check_recovered(&store, &history, p.returned, max, &what);
        *by_count.entry(n).or_insert(0) += 1;
        check_heads(&store, p, &history, n, &what);
        check_accepts_commit(store, &s.fs, Durability::EveryCommit, &what);
    }
    println!("power loss: {} disks checked; commits recovered → number of disks: {by_count:?}", snaps.len());
}

/// Heads after a power loss: each as last set by a returned call, or by the call under way,
/// and naming one of the `n` commits recovered.
fn check_heads(store: &Store, p: &Progress, history: &History, n: usize, what: &str) {
    let mut names: Vec<&String> = p.heads.keys().collect();
    names.extend(p.head_in_flight.iter().map(|h| &h.0));
    for name in names {
        let got = store.head(name);
        let durable = p.heads.get(name).copied();
        let in_flight = p.head_in_flight.as_ref().filter(|h| &h.0 == name).map(|h| h.1);
        assert!(got == durable || got == in_flight, "{what}: head {name} is {got:?}");
        if let Some(h) = got {
            assert!(history.index_of(&h).is_some_and(|i| i < n), "{what}: head {name} names a missing commit");
        }
    }
    for (name, _) in store.heads() {
        assert!(
            p.heads.contains_key(&name) || p.head_in_flight.as_ref().is_some_and(|h| h.0 == name),
            "{what}: head {name} was never set"
        );
    }
}

/// Under `Pipelined` a commit's sync runs on a thread of its own (the sync points below are
/// reached there, while the workload goes on): a power loss may take the last commit that
/// returned, never one before it, and heads stay exactly as under `EveryCommit`.
#[test]
fn pipelined_durability_loses_at_most_the_last_returned_commit() {
    let fs = MemFs::new();
    let progress = Arc::new(Mutex::new(Progress::default()));
    let snaps = install_hook(&fs, &progress);
    let store = Store::open_with(DIR, config(&fs, Durability::Pipelined)).unwrap();
    let history = workload(&store, &progress, 14, None);
    drop(store);
    fs.clear_sync_hook();
    let snaps = std::mem::take(&mut *snaps.lock().unwrap());
    assert!(snaps.len() > 100, "only {} sync points", snaps.len());
    let mut lost_last = 0;
    for s in &snaps {
        let what = describe(s);
        let p = &s.progress;
        let store = Store::open_with(DIR, config(&s.fs, Durability::Pipelined))
            .unwrap_or_else(|e| panic!("{what}: the store does not open: {e}"));
        let max = p.returned + usize::from(p.commit_in_flight);
        let n = check_recovered(&store, &history, p.returned.saturating_sub(1), max, &what);
        lost_last += usize::from(n < p.returned);
        check_heads(&store, p, &history, n, &what);
        check_accepts_commit(store, &s.fs, Durability::Pipelined, &what);
    }
    // The mode's whole point: some disks were captured while a returned commit was still
    // being synced (if none were, this test would check nothing EveryCommit does not).
    assert!(lost_last > 0, "no power loss fell between a commit's return and its sync");
    println!("pipelined durability: {} disks checked, {lost_last} lost the last returned commit", snaps.len());
}

/// A background sync that fails is reported by the next change (the commit it belonged to
/// had already returned), and poisons the store; the disk reopens consistently.
#[test]
fn pipelined_sync_failure_fails_the_next_change() {
    let base = MemFs::new();
    let cfg = config(&base, Durability::Pipelined).with_control_every(1_000).with_chunk_bytes(1 << 30);
    let store = Store::open_with(DIR, cfg.clone()).unwrap();
    let (tree, mut history) = small_history(&store, 3);
    store.close().unwrap();
    let (t, parents) = next_commit(&tree, &mut history, 3);
    drop(t);
    let fs = base.crash(TornWrites::None);
    let store = Store::open_with(DIR, cfg.clone().with_fs(Arc::new(fs.clone()))).unwrap();
    // The commit's own sync is the next one, on the sync thread.
    fs.fail_after(1, FaultKind::Sync);
    let t = apply_tree(store.checkout(&parents[0]).unwrap(), &block_ops(11, 3, 30));
    let h = store.commit(&t, &parents, 3, "Tezos", "").expect("the commit returns before its sync");
    assert_eq!(h, history.commits[3].0);
    let next = t.add(&["after"], b"1").unwrap();
    match store.commit(&next, &[h], 4, "Tezos", "") {
        Err(Error::Io { .. }) => {}
        other => panic!("the next commit must report the failed sync, got {other:?}"),
    }
    fs.clear_fault();
    check_after_failure(store, &fs, &cfg, &history, 3, "pipelined sync failure");
}

#[test]
fn interval_durability_keeps_everything_before_the_last_flush() {
    let fs = MemFs::new();
    let progress = Arc::new(Mutex::new(Progress::default()));
    let snaps = install_hook(&fs, &progress);
    // An interval no test run reaches: only flush (and head updates) sync.
    let durability = Durability::Interval(Duration::from_secs(3600));
    let store = Store::open_with(DIR, config(&fs, durability)).unwrap();
    let history = workload(&store, &progress, 16, Some(4));
    drop(store);
    fs.clear_sync_hook();
    let snaps = std::mem::take(&mut *snaps.lock().unwrap());
    let mut checked = 0;
    for s in &snaps {
        let what = describe(s);
        let p = &s.progress;
        let store = Store::open_with(DIR, config(&s.fs, durability))
            .unwrap_or_else(|e| panic!("{what}: the store does not open: {e}"));
        let max = p.returned + usize::from(p.commit_in_flight);
        check_recovered(&store, &history, p.flushed, max, &format!("{what}, {} flushed", p.flushed));
        check_accepts_commit(store, &s.fs, durability, &what);
        checked += 1;
    }
    println!("interval durability: {checked} disks checked");
}

/// Heads name commits; everything else about them is checked with the sync points above.
fn small_history(store: &Store, n: u64) -> (Tree, History) {
    let mut history = History::default();
    let mut tree = store.empty();
    let mut model = Model::new();
    for k in 0..n {
        let ops = block_ops(11, k, 30);
        tree = apply_tree(tree, &ops);
        apply_model(&mut model, &ops);
        let parents: Vec<Hash> = history.commits.last().map(|c| c.0).into_iter().collect();
        let h = store.commit(&tree, &parents, k as i64, "Tezos", "").unwrap();
        history.commits.push((h, model.clone()));
    }
    (tree, history)
}

/// The next commit of a history, prepared but not made: tree, parents, and its hash.
fn next_commit(tree: &Tree, history: &mut History, k: u64) -> (Tree, Vec<Hash>) {
    let ops = block_ops(11, k, 30);
    let t = apply_tree(tree.clone(), &ops);
    let mut model = history.commits.last().map(|c| c.1.clone()).unwrap_or_default();
    apply_model(&mut model, &ops);
    let parents: Vec<Hash> = history.commits.last().map(|c| c.0).into_iter().collect();
    let h = arbor_core::commit_hash(&t.hash(), &parents, k as i64, b"Tezos", b"");
    history.commits.push((h, model));
    (t, parents)
}

#[test]
fn panics_at_each_crash_point() {
    assert_eq!(arbor::store::CrashPoint::COMMIT.len(), 5);
    // Lent, and handed over (`commit_owned`: its last records written and synced on another
    // thread while the commit evicts).
    for (point, handed_over) in arbor::store::CrashPoint::COMMIT.into_iter().flat_map(|p| [(p, false), (p, true)]) {
        for torn in [TornWrites::None, TornWrites::Keep(3), TornWrites::Garbage(3)] {
            let fs = MemFs::new();
            // Control rewritten at every commit, so that its crash points are on the path.
            let cfg = config(&fs, Durability::EveryCommit).with_control_every(1).with_chunk_bytes(2048);
            let store = Store::open_with(DIR, cfg.clone()).unwrap();
            let (tree, mut history) = small_history(&store, 3);
            let (t, parents) = next_commit(&tree, &mut history, 3);
            let s2 = store.clone();
            let r = std::thread::spawn(move || {
                arbor::store::arm_crash_point(Some(point));
                match handed_over {
                    true => s2.commit_owned(t, &parents, 3, b"Tezos", b"").map(|(h, _)| h),
                    false => s2.commit(&t, &parents, 3, "Tezos", ""),
                }
            })
            .join();
            let msg = match r {
                Ok(r) => panic!("crash point {point} was not reached (commit returned {r:?})"),
                Err(payload) => payload.downcast_ref::<String>().cloned().unwrap_or_default(),
            };
            assert!(msg.contains(point.name()), "unexpected panic at {point}: {msg}");
            drop(store);
            let what = format!("panic at {point} (handed over: {handed_over}), then power loss {torn:?}");
            let fs2 = fs.crash(torn);
            let store = Store::open_with(DIR, cfg.clone().with_fs(Arc::new(fs2.clone())))
                .unwrap_or_else(|e| panic!("{what}: open: {e}"));
            check_recovered(&store, &history, 3, 4, &what);
            check_accepts_commit(store, &fs2, Durability::EveryCommit, &what);
        }
    }
}

#[test]
fn a_commit_after_a_panicked_one_is_durable_or_refused() {
    // A panic that unwinds out of `commit` (caught by the caller) leaves the store in use; a
    // later commit that returns Ok must then be as durable as any other.
    for point in arbor::store::CrashPoint::COMMIT {
        let fs = MemFs::new();
        let cfg = config(&fs, Durability::EveryCommit).with_control_every(1).with_chunk_bytes(2048);
        let store = Store::open_with(DIR, cfg.clone()).unwrap();
        let (tree, mut history) = small_history(&store, 2);
        let (t, parents) = next_commit(&tree, &mut history, 2);
        let s2 = store.clone();
        let t2 = t.clone();
        let r = std::thread::spawn(move || {
            arbor::store::arm_crash_point(Some(point));
            s2.commit(&t2, &parents, 2, "Tezos", "")
        })
        .join();
        assert!(r.is_err(), "crash point {point} not reached");
        let after = t.add(&["after", "panic"], b"1").unwrap();
        let parents: Vec<Hash> = vec![history.commits[1].0];
        match store.commit(&after, &parents, 3, "Tezos", "") {
            Err(e) => println!("after a panic at {point}, commit refused: {e}"),
            Ok(h) => {
                drop(store);
                let fs2 = fs.crash(TornWrites::None);
                let store = Store::open_with(DIR, cfg.clone().with_fs(Arc::new(fs2)))
                    .unwrap_or_else(|e| panic!("panic at {point}: open: {e}"));
                assert!(store.contains(&h), "panic at {point}: a later commit returned Ok but is lost");
                assert_eq!(store.checkout(&h).unwrap().hash(), after.hash());
                assert_fsck_clean(&store, &format!("commit after a panic at {point}"));
            }
        }
    }
}

/// Runs `op` on a store over a fresh copy of `base` with the `k`-th write or sync failing.
/// Returns the result, the copy, and the store.
fn with_fault<T>(
    base: &MemFs,
    cfg: &Config,
    k: u64,
    op: impl FnOnce(&Store) -> arbor::Result<T>,
) -> (std::thread::Result<arbor::Result<T>>, MemFs, Store) {
    let fs = base.crash(TornWrites::None);
    let store = Store::open_with(DIR, cfg.clone().with_fs(Arc::new(fs.clone()))).unwrap();
    if k > 0 {
        fs.fail_after(k, FaultKind::Any);
    }
    let r = catch_unwind(AssertUnwindSafe(|| op(&store)));
    fs.clear_fault();
    (r, fs, store)
}

/// Counts the writes and syncs `op` makes on a fresh copy of `base`.
fn ops_of<T>(base: &MemFs, cfg: &Config, op: impl FnOnce(&Store) -> arbor::Result<T>) -> u64 {
    let fs = base.crash(TornWrites::None);
    let store = Store::open_with(DIR, cfg.clone().with_fs(Arc::new(fs.clone()))).unwrap();
    let before = fs.stats();
    op(&store).expect("the operation succeeds without faults");
    let after = fs.stats();
    (after.writes - before.writes) + (after.syncs - before.syncs)
}

/// Three commits made and closed on the store `cfg` names; returns their history with a
/// fourth commit's (block 3) prepared but not made, and that commit's parents.
fn three_commits_and_a_fourth(cfg: &Config) -> (History, Vec<Hash>) {
    let store = Store::open_with(DIR, cfg.clone()).unwrap();
    let (tree, mut history) = small_history(&store, 3);
    store.close().unwrap();
    let (_, parents) = next_commit(&tree, &mut history, 3);
    (history, parents)
}

/// After a failed operation: the store refuses every write, and the disk (as left, and
/// after a power loss of each flavour) opens at the previous or the new state, consistently.
fn check_after_failure(store: Store, fs: &MemFs, cfg: &Config, history: &History, min: usize, what: &str) {
    let t = store.empty().add(&["x"], b"1").unwrap();
    assert!(matches!(store.commit(&t, &[], 99, "Tezos", ""), Err(Error::Poisoned)), "{what}: commit not poisoned");
    let h0 = history.commits[0].0;
    assert!(matches!(store.set_head("main", &h0), Err(Error::Poisoned)), "{what}: set_head not poisoned");
    assert!(matches!(store.flush(), Err(Error::Poisoned)), "{what}: flush not poisoned");
    // Reads still work on the poisoned store.
    assert!(store.checkout(&h0).is_ok(), "{what}: reads fail on a poisoned store");
    drop(store);
    let disks = [
        ("as left", fs.clone()),
        ("power loss", fs.crash(TornWrites::None)),
        ("power loss, torn", fs.crash(TornWrites::Keep(5))),
        ("power loss, garbage", fs.crash(TornWrites::Garbage(5))),
    ];
    for (how, disk) in disks {
        let what = format!("{what}, {how}");
        let store = Store::open_with(DIR, cfg.clone().with_fs(Arc::new(disk.clone())))
            .unwrap_or_else(|e| panic!("{what}: open: {e}"));
        check_recovered(&store, history, min, history.commits.len(), &what);
        check_accepts_commit(store, &disk, Durability::EveryCommit, &what);
    }
}

#[test]
fn injected_faults_at_each_write_and_sync() {
    // Two layouts: every commit rolls to a new chunk and rewrites the control file (the most
    // writes and syncs per commit), and the default one.
    let layouts = [("roll+control", 1u64, 1u32), ("default", 1 << 30, 256)];
    let mut faults = 0;
    for (name, chunk_bytes, control_every) in layouts {
        let base = MemFs::new();
        let cfg =
            config(&base, Durability::EveryCommit).with_chunk_bytes(chunk_bytes).with_control_every(control_every);
        let (history, parents) = three_commits_and_a_fourth(&cfg);
        // Trees belong to one store instance: each copy's store builds its own.
        let commit = |s: &Store| {
            let t = apply_tree(s.checkout(&parents[0])?, &block_ops(11, 3, 30));
            s.commit(&t, &parents, 3, "Tezos", "")
        };
        let n = ops_of(&base, &cfg, commit);
        assert!(n >= 2, "{name}: a commit makes {n} writes and syncs");
        for k in 1..=n {
            let what = format!("{name}: commit with operation {k} of {n} failing");
            let (r, fs, store) = with_fault(&base, &cfg, k, commit);
            match r {
                Err(_) => panic!("{what}: commit panicked"),
                Ok(Ok(h)) => panic!("{what}: commit returned Ok({h}) although an I/O operation failed"),
                Ok(Err(e)) => assert!(matches!(e, Error::Io { .. }), "{what}: {e:?}"),
            }
            check_after_failure(store, &fs, &cfg, &history, 3, &what);
            faults += 1;
        }
        // Head updates: the history without the commit above.
        let mut before = History { commits: history.commits[..3].to_vec() };
        let h = history.commits[1].0;
        let n = ops_of(&base, &cfg, |s| s.set_head("main", &h));
        for k in 1..=n {
            let what = format!("{name}: set_head with operation {k} of {n} failing");
            let (r, fs, store) = with_fault(&base, &cfg, k, |s| s.set_head("main", &h));
            assert!(matches!(r, Ok(Err(Error::Io { .. }))), "{what}: {r:?}");
            check_after_failure(store, &fs, &cfg, &before, 3, &what);
            faults += 1;
        }
        // Flushes, after the commit above succeeded (so it must survive whatever fails).
        before.commits.clear();
        let prep = |s: &Store| commit(s).map(|_| ());
        let n = ops_of(&base, &cfg, |s| {
            prep(s)?;
            s.flush()
        });
        let n_prep = ops_of(&base, &cfg, prep);
        for k in n_prep + 1..=n {
            let what = format!("{name}: flush with operation {k} of {n} failing");
            let (r, fs, store) = with_fault(&base, &cfg, k, |s| {
                prep(s)?;
                s.flush()
            });
            assert!(matches!(r, Ok(Err(Error::Io { .. }))), "{what}: {r:?}");
            check_after_failure(store, &fs, &cfg, &history, 4, &what);
            faults += 1;
        }
    }
    println!("injected faults: {faults} failing operations checked");
}

/// A tree handed over at its commit (`Store::commit_owned`, as a node does between blocks) has
/// its last records written, and synced, on a thread of its own while the commit lets go of
/// the working tree's cold part. Each write and sync of such a commit failing in turn: under
/// `EveryCommit` the commit fails; under `Pipelined` it fails when the records' write failed,
/// and otherwise the next change reports the failed sync. Either way the store is poisoned
/// and the disk reopens at the previous commit or this one.
#[test]
fn injected_faults_in_a_commit_of_a_tree_handed_over() {
    let mut faults = 0;
    for durability in [Durability::EveryCommit, Durability::Pipelined] {
        let base = MemFs::new();
        let cfg = config(&base, durability).with_chunk_bytes(1 << 30).with_control_every(1_000);
        let (history, parents) = three_commits_and_a_fourth(&cfg);
        let commit = |s: &Store| {
            let t = apply_tree(s.checkout(&parents[0])?, &block_ops(11, 3, 30));
            s.commit_owned(t, &parents, 3, b"Tezos", b"").map(|(h, _)| h)
        };
        let n = ops_of(&base, &cfg, |s| {
            commit(s)?;
            s.flush()
        });
        assert!(n >= 2, "{durability:?}: a commit and a flush make {n} writes and syncs");
        for k in 1..=n {
            let what = format!("{durability:?}: handed-over commit with operation {k} of {n} failing");
            let (r, fs, store) = with_fault(&base, &cfg, k, |s| {
                let h = commit(s)?;
                assert_eq!(h, history.commits[3].0, "the commit's hash");
                s.flush()
            });
            match r {
                Err(_) => panic!("{what}: panicked"),
                Ok(Ok(())) => panic!("{what}: returned Ok although an I/O operation failed"),
                Ok(Err(e)) => assert!(matches!(e, Error::Io { .. }), "{what}: {e:?}"),
            }
            check_after_failure(store, &fs, &cfg, &history, 3, &what);
            faults += 1;
        }
    }
    println!("injected faults: {faults} failing operations checked");
}

// Regression: `open` once created the store directory with `create_dir_all` but synced only
// the store directory's immediate parent, so when ancestors were missing too, a power loss
// took the whole store. Every newly created ancestor's parent must be synced.
#[test]
fn new_store_in_new_directories_survives_power_loss() {
    // The store creates its directory and any missing ancestors; a commit that returned must
    // survive a power loss, so every directory entry on the way must be durable too.
    let fs = MemFs::new();
    let dir = "/fresh/parents/store";
    let store = Store::open_with(dir, config(&fs, Durability::EveryCommit)).unwrap();
    let t = store.empty().add(&["a"], b"1").unwrap();
    let h = store.commit(&t, &[], 0, "Tezos", "").unwrap();
    drop(store);
    let fs2 = fs.crash(TornWrites::None);
    let store = Store::open_with(dir, config(&fs2, Durability::EveryCommit)).unwrap();
    assert!(store.contains(&h), "a commit that returned was lost with its directory");
}
