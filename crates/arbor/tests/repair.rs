//! `Store::repair` on damage that opening alone does not recover from: a last chunk cut
//! short below the control file's durable end, a lost or damaged index, a lost control file.
//! Each time: a dry run changes no byte, and the repaired store opens with a prefix of the
//! history, each commit reading back exactly, fsck clean, a head on a kept commit, and takes
//! new commits.

mod common;

use std::path::Path;
use std::sync::Arc;

use arbor::io::{FileSystem, MemFs};
use arbor::{Config, Error, Hash, InodeConfig, Store};
use common::{apply_model, apply_tree, assert_fsck_clean, block_ops, check_values_and_hash, Model, Rng};

const DIR: &str = "/store";

fn config(fs: &MemFs) -> Config {
    // Small chunks: the history spans several chunk files, so a cut can fall in any.
    Config::default().with_fs(Arc::new(fs.clone())).with_chunk_bytes(8 << 10)
}

/// Commits `n` blocks, moving `main` to each; returns the history with the model of each tree.
fn history(fs: &MemFs, n: u64) -> Vec<(Hash, Model)> {
    let store = Store::open_with(DIR, config(fs)).unwrap();
    let mut out: Vec<(Hash, Model)> = Vec::new();
    let mut tree = store.empty();
    let mut model = Model::new();
    for k in 0..n {
        let ops = block_ops(3, k, 40);
        tree = apply_tree(tree, &ops);
        apply_model(&mut model, &ops);
        let parents: Vec<Hash> = out.last().map(|c| c.0).into_iter().collect();
        let h = store.commit(&tree, &parents, k as i64, "Tezos", "").unwrap();
        store.set_head("main", &h).unwrap();
        out.push((h, model.clone()));
    }
    store.close().unwrap();
    out
}

/// Every file of the store and its bytes.
fn files(fs: &MemFs) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for dir in [DIR.to_string(), format!("{DIR}/pack")] {
        for name in fs.list(Path::new(&dir)).unwrap() {
            let p = format!("{dir}/{name}");
            if let Some(b) = fs.file_bytes(Path::new(&p)) {
                out.push((p, b));
            }
        }
    }
    out.sort();
    out
}

/// Runs a dry run (which must change nothing and report the damage), then the repair, and
/// checks the result against the history; returns how many commits were kept.
fn repair_and_check(fs: &MemFs, history: &[(Hash, Model)], what: &str) -> usize {
    let before = files(fs);
    let plan = Store::repair(DIR, &config(fs), false).unwrap_or_else(|e| panic!("{what}: dry run: {e}"));
    assert!(!plan.is_intact(), "{what}: the damage went unseen: {plan:?}");
    assert!(!plan.applied);
    assert_eq!(files(fs), before, "{what}: the dry run changed the store");
    let done = Store::repair(DIR, &config(fs), true).unwrap_or_else(|e| panic!("{what}: repair: {e}"));
    assert!(done.applied, "{what}");
    assert_eq!(done.commits_kept, plan.commits_kept, "{what}: the repair did other than planned");
    assert_eq!(done.commits_dropped, plan.commits_dropped, "{what}");

    let store = Store::open_with(DIR, config(fs)).unwrap_or_else(|e| panic!("{what}: open after repair: {e}"));
    let commits = store.commits();
    let n = commits.len();
    let want: Vec<Hash> = history[..n].iter().map(|c| c.0).collect();
    assert_eq!(commits, want, "{what}: the kept commits are not a prefix of the history");
    assert_eq!(done.commits_kept, want, "{what}");
    let dropped: Vec<Hash> = history[n..].iter().map(|c| c.0).collect();
    assert_eq!(done.commits_dropped, dropped, "{what}: dropped commits misreported");
    for (h, m) in &history[..n] {
        check_values_and_hash(&store.checkout(h).unwrap(), m, InodeConfig::TEZOS);
    }
    if n > 0 {
        assert_eq!(store.head("main"), Some(history[n - 1].0), "{what}: main is not on the newest kept commit");
    }
    assert_fsck_clean(&store, what);
    // Repaired means intact, and writable.
    let t = store.empty().add(&["after"], b"repair").unwrap();
    let h = store.commit(&t, &[], 99, "Tezos", "").unwrap();
    store.close().unwrap();
    let again = Store::repair(DIR, &config(fs), false).unwrap();
    assert!(again.is_intact(), "{what}: still damaged after repair and a commit: {again:?}");
    assert!(Store::open_with(DIR, config(fs)).unwrap().contains(&h), "{what}");
    n
}

#[test]
fn an_intact_store_is_left_alone() {
    let fs = MemFs::new();
    let h = history(&fs, 5);
    let before = files(&fs);
    for apply in [false, true] {
        let r = Store::repair(DIR, &config(&fs), apply).unwrap();
        assert!(r.is_intact(), "{r:?}");
        assert!(!r.applied);
        assert_eq!(r.commits_kept.len(), h.len());
        assert_eq!(files(&fs), before);
    }
}

#[test]
fn a_last_chunk_cut_anywhere_keeps_every_commit_before_the_cut() {
    let base = MemFs::new();
    let history = history(&base, 12);
    let chunks: Vec<String> = base.list(Path::new(&format!("{DIR}/pack"))).unwrap();
    assert!(chunks.len() >= 3, "the history should span several chunks: {chunks:?}");
    let last = format!("{DIR}/pack/{}", chunks.iter().max().unwrap());
    let len = base.file_bytes(Path::new(&last)).unwrap().len();
    let mut rng = Rng::new(11);
    let mut kept_counts = std::collections::BTreeSet::new();
    for cut in (0..12).map(|_| 32 + rng.below(len as u64 - 32) as usize) {
        let fs = base.crash(arbor::io::TornWrites::None);
        let bytes = fs.file_bytes(Path::new(&last)).unwrap();
        fs.set_file_bytes(Path::new(&last), &bytes[..cut]).unwrap();
        let what = format!("last chunk cut to {cut} of {len} bytes");
        // Damage below the durable end: reads of the lost commits fail until repaired.
        kept_counts.insert(repair_and_check(&fs, &history, &what));
    }
    assert!(kept_counts.iter().all(|&n| n < history.len()));
    assert!(kept_counts.len() > 1, "every cut kept the same commits: {kept_counts:?}");
}

#[test]
fn a_lost_or_damaged_index_is_rebuilt_from_the_log() {
    let base = MemFs::new();
    let history = history(&base, 8);
    let index = format!("{DIR}/commits.idx");
    let fs = base.crash(arbor::io::TornWrites::None);
    fs.remove_file(Path::new(&index)).unwrap();
    assert!(Store::open_with(DIR, config(&fs)).is_err(), "a store without its index opened");
    assert_eq!(repair_and_check(&fs, &history, "index deleted"), history.len());

    let fs = base.crash(arbor::io::TornWrites::None);
    fs.flip_bit(Path::new(&index), 48 * 3 + 5, 2).unwrap();
    assert_eq!(repair_and_check(&fs, &history, "index entry 3 damaged"), history.len());
}

#[test]
fn a_lost_control_file_is_rewritten() {
    let base = MemFs::new();
    let history = history(&base, 6);
    let fs = base.crash(arbor::io::TornWrites::None);
    fs.remove_file(Path::new(&format!("{DIR}/control"))).unwrap();
    fs.remove_file(Path::new(&format!("{DIR}/commits.idx"))).unwrap();
    assert_eq!(repair_and_check(&fs, &history, "control and index deleted"), history.len());
}

#[test]
fn repair_refuses_beside_a_writer_and_without_a_store() {
    let fs = MemFs::new();
    history(&fs, 2);
    let writer = Store::open_with(DIR, config(&fs)).unwrap();
    assert!(matches!(Store::repair(DIR, &config(&fs), true), Err(Error::Locked { .. })));
    drop(writer);
    assert!(matches!(Store::repair("/elsewhere", &config(&fs), true), Err(Error::NoStore { .. })));
}
