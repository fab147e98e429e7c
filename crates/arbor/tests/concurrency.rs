//! Readers running while a writer commits: clones of the writer's store checking out commits
//! already returned, a read-only store opened beside the writer (and refreshed), and a second
//! writer refused with `Error::Locked`.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arbor::{Config, Error, Hash, Store, Tree};
use common::{apply_tree, block_ops, Path, Rng};

const BLOCKS: u64 = 200;

/// What a reader checks of a commit: its hash, its tree's hash, a few paths with the value
/// the writer's in-memory tree had there, and the length of the large directory.
#[derive(Clone)]
struct Expected {
    commit: Hash,
    tree: Hash,
    samples: Vec<(Path, Option<Vec<u8>>)>,
    big_len: u64,
}

fn expected_of(commit: Hash, tree: &Tree, n: u64) -> Expected {
    let ops = block_ops(5, n, 120);
    let samples = ops.iter().step_by(17).map(|(p, _)| (p.clone(), tree.find(p).unwrap())).collect();
    Expected { commit, tree: tree.hash(), samples, big_len: tree.length(&["big"]).unwrap() }
}

/// Checks a commit through `store`; returns an error message instead of panicking so that the
/// reader threads report which commit failed.
fn verify(store: &Store, e: &Expected) -> Result<(), String> {
    let t = store.checkout(&e.commit).map_err(|err| format!("checkout {}: {err}", e.commit))?;
    if t.hash() != e.tree {
        return Err(format!("commit {}: tree hash differs", e.commit));
    }
    for (p, v) in &e.samples {
        let got = t.find(p).map_err(|err| format!("find {}: {err}", common::show(p)))?;
        if &got != v {
            return Err(format!("commit {}: {} is {got:?}, expected {v:?}", e.commit, common::show(p)));
        }
    }
    let n = t.length(&["big"]).map_err(|err| err.to_string())?;
    if n != e.big_len {
        return Err(format!("commit {}: big has {n} entries, expected {}", e.commit, e.big_len));
    }
    Ok(())
}

#[test]
fn readers_during_commits() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = Store::open(&dir).unwrap();
    let done_list: Arc<Mutex<Vec<Expected>>> = Arc::new(Mutex::new(Vec::new()));
    let finished = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));

    let writer = {
        let (store, list, finished) = (store.clone(), done_list.clone(), finished.clone());
        std::thread::spawn(move || {
            let mut tree = store.empty();
            let mut parent: Option<Hash> = None;
            for n in 0..BLOCKS {
                tree = apply_tree(tree, &block_ops(5, n, 120));
                let parents: Vec<Hash> = parent.into_iter().collect();
                let h = store.commit(&tree, &parents, n as i64, "Tezos", "").unwrap();
                // Published only after commit returned: from now on readers may use it.
                list.lock().unwrap().push(expected_of(h, &tree, n));
                parent = Some(h);
            }
            finished.store(true, Ordering::Release);
        })
    };

    let readers: Vec<_> = (0..3u64)
        .map(|r| {
            let (store, list, finished, reads) = (store.clone(), done_list.clone(), finished.clone(), reads.clone());
            std::thread::spawn(move || -> Result<(), String> {
                let mut rng = Rng::new(r);
                loop {
                    let last_round = finished.load(Ordering::Acquire);
                    let pick = {
                        let l = list.lock().unwrap();
                        if l.is_empty() {
                            None
                        } else if rng.below(4) == 0 {
                            l.last().cloned()
                        } else {
                            Some(l[rng.below(l.len() as u64) as usize].clone())
                        }
                    };
                    if let Some(e) = pick {
                        if !store.contains(&e.commit) {
                            return Err(format!("commit {} returned but not visible", e.commit));
                        }
                        verify(&store, &e)?;
                        reads.fetch_add(1, Ordering::Relaxed);
                    }
                    // The newest commit the store lists must always be readable.
                    if let Some(h) = store.last_commit() {
                        store.checkout(&h).map_err(|e| format!("checkout of the last commit {h}: {e}"))?;
                    }
                    if last_round {
                        return Ok(());
                    }
                }
            })
        })
        .collect();

    // Beside the writer: a second writable open is refused, read-only opens see every commit
    // that had returned before they opened, and pick up later ones with refresh.
    let mut ro_checks = 0;
    let mut refreshed = 0;
    while !finished.load(Ordering::Acquire) {
        match Store::open(&dir) {
            Err(Error::Locked { .. }) => {}
            other => panic!("a second writer must be refused with Locked, got {other:?}"),
        }
        let before: Vec<Expected> = done_list.lock().unwrap().clone();
        let ro = Store::open_with(&dir, Config::default().with_read_only(true)).unwrap();
        for e in &before {
            assert!(ro.contains(&e.commit), "read-only store misses commit {} made before it opened", e.commit);
        }
        let listed = ro.commits();
        let all: Vec<Hash> = done_list.lock().unwrap().iter().map(|e| e.commit).collect();
        // It may see a commit whose `commit` call has not returned yet, never one out of order.
        assert!(listed.len() <= all.len() + 1, "read-only store lists commits never made");
        assert_eq!(listed[..listed.len().min(all.len())], all[..listed.len().min(all.len())]);
        if let Some(e) = before.last() {
            verify(&ro, e).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        refreshed += ro.refresh().unwrap();
        let now: Vec<Expected> = done_list.lock().unwrap().clone();
        for e in now.iter().rev().take(3) {
            if ro.contains(&e.commit) {
                verify(&ro, e).unwrap();
            }
        }
        ro_checks += 1;
    }
    writer.join().unwrap();
    for r in readers {
        r.join().unwrap().unwrap();
    }
    // Once the writer is gone (its last clone dropped) the store can be opened for writing.
    drop(store);
    let store = Store::open(&dir).unwrap();
    assert_eq!(store.commits().len() as u64, BLOCKS);
    common::assert_fsck_clean(&store, "after the concurrent run");
    println!(
        "concurrency: {BLOCKS} commits, {} verified checkouts by 3 readers, {ro_checks} read-only opens, \
         {refreshed} commits picked up by refresh",
        reads.load(Ordering::Relaxed)
    );
    assert!(ro_checks > 0);
}
