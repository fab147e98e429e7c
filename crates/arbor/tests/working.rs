//! The writer's working tree: checking out the last commit returns the tree it committed, and
//! nodes no recent commit wrote go back to the cache (`Config::working_commits`). Whatever the
//! window, every block must read exactly what the model holds, every commit must read back
//! after reopening, and a tree the caller still holds must never change under it.

mod common;

use arbor::io::MemFs;
use arbor::{Config, InodeConfig, Store};
use common::{apply_model, assert_fsck_clean, block_ops, check_values_and_hash, mem_config, Model};

fn run(window: u32, blocks: u64, hold_every: u64) {
    let fs = MemFs::new();
    let config = mem_config(&fs).with_working_commits(window);
    let store = Store::open_with("/s", config.clone()).unwrap();
    let mut model = Model::new();
    let mut parent = None;
    let mut history = Vec::new();
    let mut held = Vec::new();
    for n in 0..blocks {
        let mut tree = match parent {
            Some(p) => store.checkout(&p).unwrap(),
            None => store.empty(),
        };
        // The tree checked out is the previous block's state, whatever was evicted.
        if let Some((_, m)) = history.last() {
            check_values_and_hash(&tree, m, InodeConfig::TEZOS);
        }
        // Sometimes the caller keeps a block's tree: it must stay as it was.
        if hold_every > 0 && n % hold_every == 0 {
            held.push((tree.clone(), model.clone()));
        }
        for (p, v) in block_ops(window as u64, n, 300) {
            match v {
                Some(v) => tree.add_mut(&p, &v).unwrap(),
                None => tree.remove_mut(&p).unwrap(),
            }
        }
        apply_model(&mut model, &block_ops(window as u64, n, 300));
        let h = store.commit(&tree, parent.as_slice(), n as i64, "t", "block").unwrap();
        parent = Some(h);
        history.push((h, model.clone()));
    }
    for (t, m) in &held {
        check_values_and_hash(t, m, InodeConfig::TEZOS);
    }
    assert_fsck_clean(&store, "after the blocks");
    drop(store);
    let store = Store::open_with("/s", config).unwrap();
    for (h, m) in &history {
        check_values_and_hash(&store.checkout(h).unwrap(), m, InodeConfig::TEZOS);
    }
}

#[test]
fn no_working_tree() {
    run(0, 12, 0);
}

#[test]
fn evicting_after_every_commit() {
    run(1, 30, 0);
}

#[test]
fn evicting_every_few_commits_with_trees_held() {
    run(3, 30, 4);
}

#[test]
fn default_window() {
    run(Config::default().working_commits, 40, 7);
}
