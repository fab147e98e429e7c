//! Trees at [`MAX_PATH_STEPS`] (issue 14, item 1): no operation may crash the process on a
//! tree at the maximum depth.
//!
//! A stack overflow aborts the whole process, so each scenario runs in a child process
//! ([`common::isolated`]): a crash then fails one test, naming the signal, instead of killing
//! the test run.

mod common;

use arbor::io::MemFs;
use arbor::path::MAX_PATH_STEPS;
use arbor::{Depth, Order, Store};
use common::{assert_fsck_clean, isolated, mem_config};

/// `n` steps named `s`.
fn steps(n: usize) -> Vec<&'static str> {
    vec!["s"; n]
}

#[test]
fn a_tree_at_the_maximum_depth_works_everywhere() {
    isolated("a_tree_at_the_maximum_depth_works_everywhere", || {
        let fs = MemFs::new();
        let store = Store::open_with("/s", mem_config(&fs).with_working_commits(1)).unwrap();
        let max = steps(MAX_PATH_STEPS);
        let mut t = store.empty().add(&max, b"v").unwrap().add(&["top"], b"1").unwrap();
        let mut parents = Vec::new();
        // Several commits, so the working tree is evicted and reloaded at least once.
        for n in 0..4 {
            t.add_mut(&["n"], format!("{n}").as_bytes()).unwrap();
            let h = store.commit(&t, &parents, n, "Tezos", "").unwrap();
            parents = vec![h];
            t = store.checkout(&h).unwrap();
        }
        let h = parents[0];
        assert_eq!(t.find(&max).unwrap(), Some(b"v".to_vec()));
        let mut visited = 0;
        t.fold::<&str, _>(&[], None, Order::Sorted, |_, _| {
            visited += 1;
            Ok(true)
        })
        .unwrap();
        assert_eq!(visited, MAX_PATH_STEPS + 3, "root, the chain of directories and its value, top, n");
        t.fold::<&str, _>(&[], Some(Depth::Eq(MAX_PATH_STEPS)), Order::Undefined, |k, v| {
            assert_eq!(k.len(), MAX_PATH_STEPS);
            assert_eq!(v.to_value().unwrap(), Some(b"v".to_vec()));
            Ok(true)
        })
        .unwrap();
        assert_fsck_clean(&store, "a tree at the maximum depth");
        store.stats().unwrap();
        // Export and import into another store rebuild the same commit.
        let mut file = Vec::new();
        arbor::snapshot::export(&store, &h, &mut file).unwrap();
        let other = Store::open_with("/o", mem_config(&MemFs::new())).unwrap();
        assert_eq!(arbor::snapshot::import(&other, &file[..]).unwrap().commit, h);
        assert_eq!(other.checkout(&h).unwrap().find(&max).unwrap(), Some(b"v".to_vec()));
        // Proofs nest at most 512 levels: a deeper path is refused, not a crash.
        assert!(t.prove(&[&max]).is_err());
        assert!(t.prove(&[steps(100)]).is_ok());
        drop(t);
        drop(store);
    });
}
