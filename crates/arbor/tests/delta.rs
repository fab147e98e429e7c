//! Delta records (FORMAT.md 5.8): a directory or inode changed in a few bindings is appended
//! as the bindings that differ from its last full record, or from a delta of it. Every commit
//! of a long run of small changes must read back exactly, after reopening, with fsck clean, and
//! the log must grow by far less than rewriting each changed directory would take; a chain of
//! more than two deltas is corruption.

mod common;

use std::path::Path;

use arbor::io::MemFs;
use arbor::{Corruption, Error, InodeConfig, Store};
use arbor_core::leb128;
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
    // A flat directory (60 entries) and a large one (2,000 entries: an inode tree), their
    // steps hex (stored packed) but for a few (stored as they are), so that a delta's
    // changes are merged with base bindings stored either way.
    for (dir, n) in [("flat", 60u64), ("large", 2000)] {
        for i in 0..n {
            let v = i.to_le_bytes().to_vec();
            tree.add_mut(&key(dir, i), &v).unwrap();
            model_add(&mut model, &key(dir, i), &v);
        }
        for i in (0..n).step_by(7) {
            let plain = path(&[dir, &format!("{i:03x}g")]);
            tree.add_mut(&plain, b"plain").unwrap();
            model_add(&mut model, &plain, b"plain");
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
    assert!(stats.chained_delta_records > 0, "no delta of a delta written: {stats:?}");
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
    // Newest first on a cold cache: each delta's base is read from its record, not found
    // decoded in the cache as when the commits are read oldest first (above).
    drop(store);
    let store = Store::open_with("/s", mem_config(&fs)).unwrap();
    for (i, (hash, m)) in history.iter().enumerate().rev() {
        let t = store.checkout(hash).unwrap();
        assert_eq!(t.hash(), common::model_hash(m, InodeConfig::TEZOS), "commit {i}, newest first");
        check_values_and_hash(&t, m, InodeConfig::TEZOS);
    }
}

/// A delta names a binding its base holds by the binding's position there, and only a
/// binding it adds by its step: after the base commit, blocks that change and remove bindings
/// of flat directories and of a large one's Values inodes, each node few enough times to stay
/// a delta, append no step at all, and one that adds a binding appends its step. Every commit
/// reads back, also from a cold cache.
#[test]
fn a_delta_names_its_base_bindings_by_position() {
    let fs = MemFs::new();
    let store = Store::open_with("/s", mem_config(&fs)).unwrap();
    let mut model = Model::new();
    let mut tree = store.empty();
    // The root holds four directories (fewer than four bindings are written whole).
    for (dir, n) in [("flat", 60u64), ("large", 300), ("other", 5), ("quiet", 5)] {
        for i in 0..n {
            let v = i.to_le_bytes().to_vec();
            tree.add_mut(&key(dir, i), &v).unwrap();
            model_add(&mut model, &key(dir, i), &v);
        }
    }
    let base = store.commit(&tree, &[], 0, "t", "base").unwrap();
    let mut history = vec![(base, model.clone())];
    let mut parent = base;
    for block in 0..20u64 {
        let mut tree = store.checkout(&parent).unwrap();
        for dir in ["flat", "large"] {
            // Two hot bindings changed every block, and a removal now and then: level-1 and
            // level-2 deltas, each change counted from where the record holds the binding.
            for k in [key(dir, 3), key(dir, 40)] {
                let v = (block + 1000).to_be_bytes().to_vec();
                tree.add_mut(&k, &v).unwrap();
                model_add(&mut model, &k, &v);
            }
            if block % 5 == 4 {
                let gone = key(dir, 20 + block);
                tree.remove_mut(&gone).unwrap();
                model_remove(&mut model, &gone);
            }
        }
        parent = store.commit(&tree, &[parent], block as i64 + 1, "t", "block").unwrap();
        history.push((parent, model.clone()));
    }
    let appended = store.appended_after(&base).unwrap();
    let f = appended.fields;
    assert!(appended.kinds[0x07].records > 0 && appended.kinds[0x08].records > 0, "deltas: {appended:?}");
    assert_eq!((f.plain_steps, f.packed_steps, f.step_heads), (0, 0, 0), "no step repeated: {f:?}");
    assert!(f.base_positions > 0, "{f:?}");
    assert!(store.stats().unwrap().chained_delta_records > 0, "deltas of deltas written too");

    let mut tree = store.checkout(&parent).unwrap();
    let new = key("flat", 0xabcd);
    tree.add_mut(&new, b"new").unwrap();
    model_add(&mut model, &new, b"new");
    let last = store.commit(&tree, &[parent], 100, "t", "an addition").unwrap();
    history.push((last, model.clone()));
    let f = store.appended_after(&parent).unwrap().fields;
    assert_eq!((f.packed_steps, f.plain_steps), (2, 0), "the added step, packed: {f:?}");
    assert_fsck_clean(&store, "after the blocks");
    drop(store);
    for newest_first in [false, true] {
        let store = Store::open_with("/s", mem_config(&fs)).unwrap();
        let mut order: Vec<_> = history.iter().enumerate().collect();
        if newest_first {
            order.reverse();
        }
        for (i, (hash, m)) in order {
            let t = store.checkout(hash).unwrap();
            check_values_and_hash(&t, m, InodeConfig::TEZOS);
            assert_eq!(t.hash(), common::model_hash(m, InodeConfig::TEZOS), "commit {i}");
        }
    }

    // A position past the base's last binding is corruption, not a panic or a misread: the
    // first change of the last flat delta (the hot binding, named by position) made 127.
    const FLAT_DIR_DELTA: u8 = 0x07;
    let chunk_path = Path::new("/s/pack/00000000000000000000.chunk");
    let mut chunk = fs.file_bytes(chunk_path).unwrap();
    let &(at, _, body, len) = frames(&chunk).iter().rev().find(|r| r.1 == FLAT_DIR_DELTA).unwrap();
    let mut field = body;
    for _ in 0..3 {
        field += leb128::read_u64(&chunk[field..]).unwrap().1;
    }
    assert_eq!(chunk[field], 0, "the first change is named by position");
    assert!(chunk[field + 1] < 60, "a one-byte position");
    chunk[field + 1] = 127;
    let crc = crc32c::crc32c(&chunk[at..body + len]);
    chunk[body + len..body + len + 4].copy_from_slice(&crc.to_le_bytes());
    fs.set_file_bytes(chunk_path, &chunk).unwrap();
    let store = Store::open_with("/s", mem_config(&fs)).unwrap();
    let mut refused = 0;
    for (i, (hash, m)) in history.iter().enumerate() {
        let read = store.checkout(hash).and_then(|t| t.find(&key("flat", 3)));
        match read {
            Ok(v) => assert_eq!(v.as_deref(), m.get(&key("flat", 3)).map(Vec::as_slice), "commit {i}"),
            Err(Error::Corrupt { kind: Corruption::InvalidField { field, value: 127 }, offset, .. }) => {
                assert_eq!((field, offset), ("position of a base binding", at as u64), "commit {i}");
                refused += 1;
            }
            Err(e) => panic!("commit {i}: {e}"),
        }
    }
    assert!(refused >= 1, "no commit read the corrupted delta");
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

/// The frames of a chunk file: (position of the kind byte, kind, body position, body length).
fn frames(chunk: &[u8]) -> Vec<(usize, u8, usize, usize)> {
    let mut out = Vec::new();
    let mut at = 32;
    while at < chunk.len() && chunk[at] != 0 {
        let (len, n) = leb128::read_u64(&chunk[at + 1..]).unwrap();
        out.push((at, chunk[at], at + 1 + n, len as usize));
        at += 1 + n + len as usize + 4;
    }
    out
}

#[test]
fn a_chain_of_three_deltas_is_corruption() {
    // One flat directory changed in one more binding per commit: its versions are a delta of
    // the full record, then deltas of that delta. Pointing the second such delta at the first
    // (a chain of three) must make reading it fail as corruption, not loop or misread.
    const FLAT_DIR: u8 = 0x02;
    const FLAT_DIR_DELTA: u8 = 0x07;
    let fs = MemFs::new();
    let store = Store::open_with("/s", mem_config(&fs)).unwrap();
    let mut tree = store.empty();
    for i in 0..60 {
        tree.add_mut(&key("d", i), b"v").unwrap();
    }
    let mut commits = vec![store.commit(&tree, &[], 0, "t", "base").unwrap()];
    for i in 0..6u64 {
        let mut tree = store.checkout(commits.last().unwrap()).unwrap();
        tree.add_mut(&key("d", i), b"w").unwrap();
        commits.push(store.commit(&tree, &[*commits.last().unwrap()], i as i64 + 1, "t", "block").unwrap());
    }
    drop(store);
    let chunk_path = Path::new("/s/pack/00000000000000000000.chunk");
    let mut chunk = fs.file_bytes(chunk_path).unwrap();
    let records = frames(&chunk);
    let kind_at = |pos: usize| records.iter().find(|r| r.0 == pos).map(|r| r.1);
    // (position, base position) of every flat delta; level 2 when the base is a delta.
    let deltas: Vec<(usize, usize)> = records
        .iter()
        .filter(|r| r.1 == FLAT_DIR_DELTA)
        .map(|&(pos, _, body, _)| (pos, pos - leb128::read_u64(&chunk[body..]).unwrap().0 as usize))
        .collect();
    let level1 = deltas.iter().find(|d| kind_at(d.1) == Some(FLAT_DIR)).expect("a delta of the full record").0;
    let on_level1: Vec<usize> = deltas.iter().filter(|d| d.1 == level1).map(|d| d.0).collect();
    assert!(on_level1.len() >= 2, "two deltas of one delta: {deltas:?}");
    let (first, second) = (on_level1[0], on_level1[1]);
    // Re-point the second at the first, keeping the field's length; fix the frame's crc.
    let &(_, _, body, len) = records.iter().find(|r| r.0 == second).unwrap();
    let old_len = leb128::read_u64(&chunk[body..]).unwrap().1;
    let mut new_back = Vec::new();
    leb128::write_u64(&mut new_back, (second - first) as u64);
    assert_eq!(new_back.len(), old_len, "the new distance fits the field");
    chunk[body..body + old_len].copy_from_slice(&new_back);
    let crc = crc32c::crc32c(&chunk[second..body + len]);
    chunk[body + len..body + len + 4].copy_from_slice(&crc.to_le_bytes());
    fs.set_file_bytes(chunk_path, &chunk).unwrap();

    let store = Store::open_with("/s", mem_config(&fs)).unwrap();
    let mut refused = 0;
    for (n, c) in commits.iter().enumerate() {
        let read = store.checkout(c).and_then(|t| t.find(&key("d", 59)));
        match read {
            Ok(v) => assert_eq!(v.as_deref(), Some(&b"v"[..]), "commit {n}"),
            Err(Error::Corrupt { kind: Corruption::DeltaBase { base }, offset, .. }) => {
                assert_eq!((offset, base), (second as u64, first as u64), "commit {n}");
                refused += 1;
            }
            Err(e) => panic!("commit {n}: {e}"),
        }
    }
    assert!(refused >= 1, "the commit holding the chain of three read without error");
    assert!(!store.fsck().errors.is_empty(), "fsck reports the chain");
}

/// A fresh handle counts the records it reads by kind: flat directories, a value too long to
/// inline, and, for a binding changed after the first commit, the inode deltas on its path
/// together with the full records they are built on, and its Values inode. Every
/// record read is found, so the kinds add up to `records_read`.
#[test]
fn records_read_are_counted_by_kind() {
    let fs = MemFs::new();
    let store = Store::open_with("/s", mem_config(&fs)).unwrap();
    let mut tree = store.empty();
    for i in 0..2000u64 {
        tree.add_mut(&key("large", i), &i.to_le_bytes()).unwrap();
    }
    tree.add_mut(&path(&["flat", "long"]), &[7u8; 300]).unwrap();
    let first = store.commit(&tree, &[], 0, "t", "base").unwrap();
    let mut tree = store.checkout(&first).unwrap();
    tree.add_mut(&key("large", 5), b"changed").unwrap();
    let second = store.commit(&tree, &[first], 0, "t", "one change").unwrap();
    drop((tree, store));

    let store = Store::open_with("/s", mem_config(&fs)).unwrap();
    let before = store.records_read_by_kind();
    let tree = store.checkout(&second).unwrap();
    assert_eq!(tree.find(&path(&["flat", "long"])).unwrap(), Some(vec![7u8; 300]));
    let flat = store.records_read_by_kind().since(&before);
    assert_eq!(flat.contents, 1, "{flat:?}");
    assert!(flat.flat_dirs >= 2, "the root and `flat`: {flat:?}");
    assert_eq!(flat.values_inode_deltas + flat.tree_inodes + flat.tree_inode_deltas, 0, "{flat:?}");

    assert_eq!(tree.find(&key("large", 5)).unwrap(), Some(b"changed".to_vec()));
    let large = store.records_read_by_kind().since(&before).since(&flat);
    // The inodes on the changed path are deltas (this configuration's Values inodes are
    // small enough to be written whole), each read with the full record it is built on.
    assert!(large.tree_inode_deltas >= 1, "{large:?}");
    assert!(large.tree_inodes >= large.tree_inode_deltas, "the deltas' bases: {large:?}");
    assert_eq!(large.values_inodes + large.values_inode_deltas, 1, "{large:?}");
    assert_eq!(large.contents, 0, "{large:?}");
    let all = store.records_read_by_kind();
    assert_eq!(all.total(), store.records_read(), "{all:?}");
}
