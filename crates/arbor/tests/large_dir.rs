//! Very large directories: 100,000 and 1,000,000 children in one directory. Adding or
//! removing one child and committing must append a few KiB to the log (only the inode path
//! to the change), never rewrite the directory; lookups and lengths work; the hash matches
//! the reference oracle.

mod common;

use std::collections::BTreeMap;

use arbor::{InodeConfig, Store, Tree};
use arbor_core::reference::RefTree;

/// The bound on what one small change to a huge directory may append.
const MAX_APPEND: u64 = 16 * 1024;

fn key(i: u32) -> String {
    // Spread like the hashes and addresses that name Tezos's large directories.
    format!("{:08x}{i}", i.wrapping_mul(2_654_435_761))
}

fn value(i: u32) -> Vec<u8> {
    i.to_le_bytes().to_vec()
}

/// Builds `n` children under `dir` in memory, with `add` in a loop.
fn build(store: &Store, n: u32) -> Tree {
    let mut t = store.empty().add(&["other", "x"], b"1").unwrap();
    for i in 0..n {
        t = t.add(&["dir", &key(i)], &value(i)).unwrap();
    }
    t
}

/// Commits `t` and returns the commit and how many log bytes it appended.
fn commit_measured(store: &Store, t: &Tree, parents: &[arbor::Hash], date: i64) -> (arbor::Hash, u64) {
    let before = store.log_bytes();
    let h = store.commit(t, parents, date, "Tezos", "").unwrap();
    (h, store.log_bytes() - before)
}

/// One large directory: commit it, then add one child, change one, remove one, each in its
/// own commit, checking the bytes appended and reads, before and after a reopen.
fn one_large_directory(n: u32, oracle: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(tmp.path()).unwrap();
    let t = build(&store, n);
    assert_eq!(t.length(&["dir"]).unwrap(), u64::from(n));
    let (h0, bytes0) = commit_measured(&store, &t, &[], 0);
    let base = store.checkout(&h0).unwrap();

    let added = base.add(&["dir", "a-new-child"], b"new").unwrap();
    let (h1, add_bytes) = commit_measured(&store, &added, &[h0], 1);
    let changed = store.checkout(&h1).unwrap().add(&["dir", &key(n / 2)], b"changed").unwrap();
    let (h2, change_bytes) = commit_measured(&store, &changed, &[h1], 2);
    let removed = store.checkout(&h2).unwrap().remove(&["dir", &key(7)]).unwrap();
    let (h3, remove_bytes) = commit_measured(&store, &removed, &[h2], 3);
    println!(
        "directory of {n} children: first commit {bytes0} B; then one add {add_bytes} B, \
         one change {change_bytes} B, one remove {remove_bytes} B"
    );
    for (what, b) in [("add", add_bytes), ("change", change_bytes), ("remove", remove_bytes)] {
        assert!(b < MAX_APPEND, "{what} of one child of {n} appended {b} bytes");
    }

    drop((base, added, changed, removed));
    drop(store);
    let store = Store::open(tmp.path()).unwrap();
    let t3 = store.checkout(&h3).unwrap();
    assert_eq!(t3.length(&["dir"]).unwrap(), u64::from(n));
    assert_eq!(t3.find(&["dir", "a-new-child"]).unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(t3.find(&["dir", &key(n / 2)]).unwrap().as_deref(), Some(&b"changed"[..]));
    assert_eq!(t3.find(&["dir", &key(7)]).unwrap(), None);
    assert!(!t3.mem_tree(&["dir", &key(7)]).unwrap());
    for i in (0..n).step_by(9973) {
        if i != 7 && i != n / 2 {
            assert_eq!(t3.find(&["dir", &key(i)]).unwrap(), Some(value(i)), "child {i}");
        }
    }
    let t0 = store.checkout(&h0).unwrap();
    assert_eq!(t0.length(&["dir"]).unwrap(), u64::from(n));
    assert_eq!(t0.find(&["dir", &key(7)]).unwrap(), Some(value(7)));
    assert_eq!(t0.find(&["dir", "a-new-child"]).unwrap(), None);
    // A page of the listing, as an RPC would ask for it.
    let page = t3.list(&["dir"], Some(1000), Some(50)).unwrap();
    assert_eq!(page.len(), 50);

    if oracle {
        // The hash of the final tree, by the reference implementation.
        let mut d = BTreeMap::new();
        for i in 0..n {
            if i != 7 {
                d.insert(key(i).into_bytes(), RefTree::Contents(value(i)));
            }
        }
        d.insert(key(n / 2).into_bytes(), RefTree::Contents(b"changed".to_vec()));
        d.insert(b"a-new-child".to_vec(), RefTree::Contents(b"new".to_vec()));
        let mut other = BTreeMap::new();
        other.insert(b"x".to_vec(), RefTree::Contents(b"1".to_vec()));
        let mut root = BTreeMap::new();
        root.insert(b"dir".to_vec(), RefTree::Node(d));
        root.insert(b"other".to_vec(), RefTree::Node(other));
        assert_eq!(t3.hash(), RefTree::Node(root).hash(InodeConfig::TEZOS), "hash of {n} children");
        common::assert_fsck_clean(&store, "large directory");
    }
}

#[test]
fn directory_of_100_000_children() {
    one_large_directory(100_000, true);
}

#[test]
fn directory_of_1_000_000_children() {
    one_large_directory(1_000_000, false);
}
