//! Delta records (FORMAT.md 5.8): a directory or inode changed in a few bindings is appended
//! as the bindings that differ from its last full record. Every commit of a long run of small
//! changes must read back exactly, after reopening, with fsck clean, and the log must grow by
//! far less than rewriting each changed directory would take.

mod common;

use arbor::io::MemFs;
use arbor::{InodeConfig, Store};
use common::{assert_fsck_clean, check_values_and_hash, mem_config, model_add, model_remove, path, Model, Rng};

fn key(dir: &str, i: u64) -> Vec<Vec<u8>> {
    path(&[dir, &format!("{i:04x}")])
}

#[test]
fn small_changes_are_deltas_and_read_back() {
    let fs = MemFs::new();
    let store = Store::open_with("/s", mem_config(&fs)).unwrap();
    let mut model = Model::new();
    let mut tree = store.empty();
    // A flat directory (60 entries) and a large one (2,000 entries: an inode tree).
    for (dir, n) in [("flat", 60u64), ("large", 2000)] {
        for i in 0..n {
            let v = i.to_le_bytes().to_vec();
            tree.add_mut(&key(dir, i), &v).unwrap();
            model_add(&mut model, &key(dir, i), &v);
        }
    }
    let mut parent = store.commit(&tree, &[], 0, "t", "base").unwrap();
    let mut history = vec![(parent, model.clone())];
    let mut rng = Rng::new(7);
    let mut grown = Vec::new();
    for block in 0..60u64 {
        let before = store.log_bytes();
        let mut tree = store.checkout(&parent).unwrap();
        // A hot binding changed every block, a few random ones, a removal, an addition.
        let hot = key("flat", 3);
        let v = block.to_be_bytes().to_vec();
        tree.add_mut(&hot, &v).unwrap();
        model_add(&mut model, &hot, &v);
        for _ in 0..3 {
            let (dir, n) = if rng.below(2) == 0 { ("flat", 60) } else { ("large", 2000) };
            let k = key(dir, rng.below(n));
            let v = vec![block as u8; 1 + rng.below(40) as usize];
            tree.add_mut(&k, &v).unwrap();
            model_add(&mut model, &k, &v);
        }
        let gone = key("large", rng.below(2000));
        tree.remove_mut(&gone).unwrap();
        model_remove(&mut model, &gone);
        let new = key("large", 5000 + block);
        tree.add_mut(&new, b"n").unwrap();
        model_add(&mut model, &new, b"n");
        check_values_and_hash(&tree, &model, InodeConfig::TEZOS);
        parent = store.commit(&tree, &[parent], block as i64 + 1, "t", "block").unwrap();
        history.push((parent, model.clone()));
        grown.push(store.log_bytes() - before);
    }
    let stats = store.stats().unwrap();
    assert!(stats.delta_records > 0, "no delta record written: {stats:?}");
    // In full, a block rewrites the flat directory (60 bindings of 12 bytes and more), the
    // large one's root inode (32 slots of 33 bytes and more) and the depth-1 inodes of its ~5
    // changed bindings (as much again each): over 6 KiB. With deltas about 1.5 KiB (a full
    // record now and then, when a node's changes pass its limit).
    let mean = grown.iter().sum::<u64>() / grown.len() as u64;
    assert!(mean < 3000, "mean growth per commit {mean} bytes: deltas are not in use");
    assert_fsck_clean(&store, "after 60 blocks of small changes");
    drop(store);
    let store = Store::open_with("/s", mem_config(&fs)).unwrap();
    for (i, (hash, m)) in history.iter().enumerate() {
        let t = store.checkout(hash).unwrap();
        assert_eq!(t.hash(), common::model_hash(m, InodeConfig::TEZOS), "commit {i}");
        check_values_and_hash(&t, m, InodeConfig::TEZOS);
    }
    assert_fsck_clean(&store, "reopened");
}

#[test]
fn shrinking_and_growing_across_the_flat_limit_keeps_deltas_consistent() {
    // A directory that crosses 256 entries both ways changes its record kind: no delta may
    // be written against a base of the other kind.
    let fs = MemFs::new();
    let store = Store::open_with("/s", mem_config(&fs)).unwrap();
    let mut model = Model::new();
    let mut tree = store.empty();
    for i in 0..250 {
        tree.add_mut(&key("d", i), b"v").unwrap();
        model_add(&mut model, &key("d", i), b"v");
    }
    let mut parent = store.commit(&tree, &[], 0, "t", "base").unwrap();
    let mut history = Vec::new();
    for round in 0..12u64 {
        let mut tree = store.checkout(&parent).unwrap();
        let grow = round % 2 == 0;
        for i in 250..262 {
            if grow {
                tree.add_mut(&key("d", i), &[round as u8]).unwrap();
                model_add(&mut model, &key("d", i), &[round as u8]);
            } else {
                tree.remove_mut(&key("d", i)).unwrap();
                model_remove(&mut model, &key("d", i));
            }
        }
        tree.add_mut(&key("d", round), b"w").unwrap();
        model_add(&mut model, &key("d", round), b"w");
        parent = store.commit(&tree, &[parent], round as i64, "t", "m").unwrap();
        history.push((parent, model.clone()));
    }
    drop(store);
    let store = Store::open_with("/s", mem_config(&fs)).unwrap();
    for (hash, m) in &history {
        check_values_and_hash(&store.checkout(hash).unwrap(), m, InodeConfig::TEZOS);
    }
    assert_fsck_clean(&store, "after crossing the flat limit");
}
