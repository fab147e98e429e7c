//! Basic store behaviour: published Tezos vectors through the store, reopen, heads, errors.

use arbor::{Error, Hash, Store, Tree};

fn genesis(store: &Store) -> (Tree, Hash) {
    let proto =
        arbor_core::base58::base58check_decode("ProtoDemoNoopsDemoNoopsDemoNoopsDemoNoopsDemo6XBoYp", 2).unwrap().1;
    let t = store.empty().add(&["protocol"], &proto).unwrap().add(&["test_chain"], &[0u8]).unwrap();
    let h = store.commit(&t, &[], 0, "Tezos", "Genesis").unwrap();
    (t, h)
}

#[test]
fn tezos_vectors_through_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (g_tree, g) = genesis(&store);
    assert_eq!(g.to_base58(), "CoVea41f9dPhkymYEfPsXV5FmyzDb91iz1Grk6zasb31zv9nEZjN");
    let mut t =
        g_tree.add(&["data", "a", "aaaaaaa"], b"foo1").unwrap().add(&["data", "a", "aaaaaaaa"], b"foo2").unwrap();
    for n in [16, 32, 64, 127] {
        t = t.add(&["data".to_string(), "a".repeat(n)], b"foo2").unwrap();
    }
    let c1 = store.commit(&t, &[g], 0, "Tezos", "").unwrap();
    assert_eq!(c1.to_base58(), "CoWJsL2ehZ39seTr8inBCJb5tVjW8KGNweJ5cvuVq51mAASrRmim");
    let t2 = t.add(&["data".to_string(), "a".repeat(255)], b"foo2").unwrap();
    let c2 = store.commit(&t2, &[g], 0, "Tezos", "").unwrap();
    assert_eq!(c2.to_base58(), "CoVexcEHMXmSA2k42aNc5MCDtVJFRs3CC6vcQWYwFoj7EFsBPw1c");
    drop(store);

    let store = Store::open(dir.path()).unwrap();
    let back = store.checkout(&c2).unwrap();
    assert_eq!(back.hash(), t2.hash());
    assert_eq!(back.find(&["data", "a", "aaaaaaa"]).unwrap().as_deref(), Some(&b"foo1"[..]));
    assert_eq!(back.find(&["data", "nothing"]).unwrap(), None);
    assert!(back.mem_tree(&["data", "a"]).unwrap());
    assert!(!back.mem(&["data", "a"]).unwrap());
    let info = store.commit_info(&c1).unwrap();
    assert_eq!(info.parents, vec![g]);
    assert_eq!(info.tree, t.hash());
    assert_eq!(store.commits(), vec![g, c1, c2]);
    let report = store.fsck();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.commits, 3);
}

#[test]
fn large_directories_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut t = store.empty();
    let mut plain = Tree::empty();
    for i in 0..3000u32 {
        let k = format!("{:08x}", i.wrapping_mul(2654435761));
        t = t.add(&["big", &k], &i.to_le_bytes()).unwrap();
        plain = plain.add(&["big", &k], &i.to_le_bytes()).unwrap();
    }
    let h = store.commit(&t, &[], 1, "Tezos", "big").unwrap();
    let co = store.checkout(&h).unwrap();
    assert_eq!(co.hash(), plain.hash());
    assert_eq!(co.length(&["big"]).unwrap(), 3000);
    // Remove down past the flat threshold and check against a tree built directly.
    let mut t2 = co.clone();
    let mut direct = Tree::empty();
    for i in 0..3000u32 {
        let k = format!("{:08x}", i.wrapping_mul(2654435761));
        if i < 2800 {
            t2 = t2.remove(&["big", &k]).unwrap();
        } else {
            direct = direct.add(&["big", &k], &i.to_le_bytes()).unwrap();
        }
    }
    assert_eq!(t2.length(&["big"]).unwrap(), 200);
    assert_eq!(t2.hash(), direct.hash());
    let h2 = store.commit(&t2, &[h], 2, "Tezos", "shrink").unwrap();
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.checkout(&h2).unwrap().hash(), direct.hash());
    assert_eq!(
        store.checkout(&h).unwrap().find(&["big", &format!("{:08x}", 5u32.wrapping_mul(2654435761))]).unwrap(),
        Some(5u32.to_le_bytes().to_vec())
    );
    assert!(store.fsck().errors.is_empty());
}

#[test]
fn errors_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    assert!(matches!(store.checkout(&Hash([1; 32])), Err(Error::UnknownCommit(_))));
    assert!(matches!(store.empty().add(&["a", ""], b"x"), Err(Error::EmptyStep { index: 1 })));
    assert!(matches!(Store::open(dir.path()), Err(Error::Locked { .. })));
    let ro = Store::open_with(dir.path(), arbor::Config::default().with_read_only(true)).unwrap();
    assert!(matches!(ro.commit(&ro.empty(), &[], 0, "a", "b"), Err(Error::ReadOnly)));
}

#[test]
fn heads_persist() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let h = store.commit(&store.empty().add(&["x"], b"1").unwrap(), &[], 0, "Tezos", "").unwrap();
    store.set_head("main", &h).unwrap();
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.head("main"), Some(h));
    assert!(store.remove_head("main").unwrap());
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.head("main"), None);
}

#[test]
fn read_only_refresh_sees_new_commits() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let a = store.commit(&store.empty().add(&["x"], b"1").unwrap(), &[], 0, "Tezos", "").unwrap();
    let ro = Store::open_with(dir.path(), arbor::Config::default().with_read_only(true)).unwrap();
    assert!(ro.contains(&a));
    let b = store.commit(&store.checkout(&a).unwrap().add(&["y"], b"2").unwrap(), &[a], 1, "Tezos", "").unwrap();
    store.set_head("main", &b).unwrap();
    assert!(!ro.contains(&b));
    assert_eq!(ro.refresh().unwrap(), 1);
    assert_eq!(ro.head("main"), Some(b));
    assert_eq!(ro.checkout(&b).unwrap().find(&["y"]).unwrap(), Some(b"2".to_vec()));
    assert_eq!(ro.refresh().unwrap(), 0);
}

#[test]
fn read_only_refresh_follows_new_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_with(dir.path(), arbor::Config::default().with_chunk_bytes(4096)).unwrap();
    let ro = Store::open_with(dir.path(), arbor::Config::default().with_read_only(true)).unwrap();
    let mut tree = store.empty();
    let mut last = None;
    for i in 0..40u32 {
        tree.add_mut(&["blocks".to_string(), format!("{i:04}")], &[7u8; 100]).unwrap();
        let parents: Vec<Hash> = last.into_iter().collect();
        last = Some(store.commit(&tree, &parents, i64::from(i), "Tezos", "").unwrap());
    }
    assert!(std::fs::read_dir(dir.path().join("pack")).unwrap().count() > 2, "the log rolled over chunks");
    assert_eq!(ro.refresh().unwrap(), 40);
    let back = ro.checkout(&last.unwrap()).unwrap();
    assert_eq!(back.hash(), tree.hash());
    assert_eq!(back.length(&["blocks"]).unwrap(), 40);
}

/// `find_shared` returns the same bytes as `find` without a copy, and what it returned stays
/// valid after the tree changes; `commit_with` records what its options say.
#[test]
fn shared_reads_and_commit_options() {
    let dir = tempfile::tempdir().unwrap();
    let store = arbor::Store::open(dir.path()).unwrap();
    let big = vec![7u8; 100];
    let mut tree = store.empty().add(&["a", "small"], b"01").unwrap().add(&["a", "big"], &big).unwrap();
    let small = tree.find_shared(&["a", "small"]).unwrap().unwrap();
    assert_eq!(&small[..], b"01");
    assert!(tree.find_shared(&["a", "missing"]).unwrap().is_none());
    assert!(tree.find_shared(&["a"]).unwrap().is_none(), "a directory is not a value");
    tree.add_mut(&["a", "small"], b"02").unwrap();
    assert_eq!(&small[..], b"01", "a shared value does not change with the tree");

    let options = arbor::CommitOptions::new().date(1_530_374_912).message("genesis");
    let (first, _) = store.commit_with(&tree, &options).unwrap();
    assert_eq!(first, store.commit(&tree, &[], 1_530_374_912, "Tezos", "genesis").unwrap());
    let stored = store.checkout(&first).unwrap();
    assert_eq!(stored.find_shared(&["a", "big"]).unwrap().as_deref(), Some(&big[..]));
    let options = arbor::CommitOptions::new().parent(first).date(5).author("me").message(b"m");
    let (second, _) = store.commit_with(&stored, &options).unwrap();
    let info = store.commit_info(&second).unwrap();
    assert_eq!((info.parents, info.date, &info.author[..], &info.message[..]), (vec![first], 5, &b"me"[..], &b"m"[..]));
}

#[test]
fn find_with_sees_what_find_returns() {
    let dir = tempfile::tempdir().unwrap();
    let store = arbor::Store::open(dir.path()).unwrap();
    let big = vec![9u8; 300];
    let tree = store.empty().add(&["a", "small"], b"01").unwrap().add(&["a", "big"], &big).unwrap();
    let h = store.commit(&tree, &[], 0, "Tezos", "m").unwrap();
    drop(store);
    // Reopened: the values are read from the log, not from the tree that wrote them.
    let store = arbor::Store::open(dir.path()).unwrap();
    let stored = store.checkout(&h).unwrap();
    for t in [&tree, &stored] {
        for path in [&["a", "small"][..], &["a", "big"], &["a"], &["a", "missing"], &["b", "c"]] {
            let copied = t.find_with(path, |v| v.map(<[u8]>::to_vec)).unwrap();
            assert_eq!(copied, t.find(path).unwrap(), "{path:?}");
        }
        assert_eq!(t.find_with(&["a", "big"], |v| v.map(<[u8]>::len)).unwrap(), Some(300));
        assert!(t.find_with(&["a"], |v| v.is_none()).unwrap(), "a directory is not a value");
    }
    // A path refused as for `find`, with `f` never called.
    let mut called = false;
    assert!(stored.find_with(&["a", ""], |_| called = true).is_err());
    assert!(!called);
}
