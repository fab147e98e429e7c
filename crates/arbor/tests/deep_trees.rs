//! Trees near and past [`MAX_PATH_STEPS`] (issue 14, item 1): no operation may build a tree
//! with a path longer than the maximum, and none may crash the process on a tree at it.
//!
//! A stack overflow aborts the whole process, so each scenario runs in a child process
//! ([`common::isolated`]): a crash then fails one test, naming the signal, instead of killing
//! the test run.

mod common;

use arbor::io::MemFs;
use arbor::path::MAX_PATH_STEPS;
use arbor::{Depth, Error, Order, Store, Tree};
use common::{assert_fsck_clean, isolated, mem_config};

/// `n` steps named `s`.
fn steps(n: usize) -> Vec<&'static str> {
    vec!["s"; n]
}

/// True for the error of a tree or path deeper than the maximum.
fn too_deep<T: std::fmt::Debug>(r: arbor::Result<T>) -> bool {
    match r {
        Err(Error::PathTooDeep { steps, max }) => {
            assert_eq!(max, MAX_PATH_STEPS);
            assert!(steps > MAX_PATH_STEPS, "{steps} steps reported as too deep");
            true
        }
        other => panic!("expected PathTooDeep, got {other:?}"),
    }
}

#[test]
fn grafting_a_tree_under_itself_stops_at_the_maximum() {
    isolated("grafting_a_tree_under_itself_stops_at_the_maximum", || {
        let p = steps(1000);
        let mut t = Tree::empty().add(&p, b"v").unwrap();
        let before = t.hash();
        // Each graft would add 1,000 steps to the deepest path: 100 of them made a path of
        // 101,000 steps, whose hash (or drop) overflowed the stack.
        let mut refused = 0;
        for _ in 0..100 {
            match t.add_tree(&p, &t) {
                Ok(bigger) => t = bigger,
                Err(e) => {
                    assert!(too_deep::<()>(Err(e)));
                    refused += 1;
                }
            }
        }
        assert_eq!(refused, 100, "a graft made a path of more than {MAX_PATH_STEPS} steps");
        assert_eq!(t.hash(), before, "a refused graft changed the tree");
        // In place: refused, and the tree is unchanged.
        let mut u = t.clone();
        assert!(too_deep(u.add_tree_mut(&p, &t)));
        assert_eq!(u.hash(), before);
        assert_eq!(u.find(&p).unwrap(), Some(b"v".to_vec()));
        // Up to the maximum it is allowed (1,000 + 24 steps), and not one step more.
        let at_max = t.add_tree(&steps(MAX_PATH_STEPS - 1000), &t).unwrap();
        assert_eq!(at_max.find(&steps(MAX_PATH_STEPS)).unwrap(), Some(b"v".to_vec()));
        assert_ne!(at_max.hash(), before);
        assert!(too_deep(t.add_tree(&steps(MAX_PATH_STEPS - 999), &t)));
        // A graft at the root replaces the tree: its depth is the grafted tree's.
        assert_eq!(at_max.add_tree::<&str>(&[], &t).unwrap().hash(), before);
        // Removing the deep part lets a graft through that its old depth refused.
        let shallow = at_max.remove(&["s"]).unwrap().add(&["x"], b"1").unwrap();
        assert!(shallow.add_tree(&steps(1000), &shallow).is_ok());
        // A measure visits a shared subtree once: 60 levels of a directory holding its child
        // twice have 2^60 paths, and one loose bound (from a removed deep path) makes a graft
        // measure them all.
        let mut doubled = Tree::empty().add(&["v"], b"1").unwrap();
        for _ in 0..60 {
            doubled = Tree::empty().add_tree(&["l"], &doubled).unwrap().add_tree(&["r"], &doubled).unwrap();
        }
        let loose = doubled.add(&steps(1000), b"x").unwrap().remove(&["s"]).unwrap();
        assert_eq!(loose.hash(), doubled.hash());
        let grafted = loose.add_tree(&steps(900), &loose).unwrap();
        let mut deepest = steps(900);
        deepest.extend(vec!["r"; 60]);
        deepest.push("v");
        assert_eq!(grafted.find(&deepest).unwrap(), Some(b"1".to_vec()));
        assert!(too_deep(loose.add_tree(&steps(MAX_PATH_STEPS - 60), &loose)));
    });
}

#[test]
fn grafts_of_stored_trees_are_bounded_by_where_they_come_from() {
    isolated("grafts_of_stored_trees_are_bounded_by_where_they_come_from", || {
        let fs = MemFs::new();
        let store = Store::open_with("/s", mem_config(&fs)).unwrap();
        let deep = steps(1000);
        let built = store.empty().add(&deep, b"v").unwrap().add(&["a", "b"], b"w").unwrap();
        let h = store.commit(&built, &[], 0, "Tezos", "").unwrap();
        // The first checkout takes the working tree; the second reads the commit from the log.
        drop(store.checkout(&h).unwrap());
        let t = store.checkout(&h).unwrap();
        let before = t.hash();
        // The subtree 500 steps down holds paths of 500 more steps.
        let sub = t.find_tree(&steps(500)).unwrap().unwrap();
        // Copied to the same depth (the Tezos pattern): allowed.
        let mut same = steps(499);
        same.insert(0, "c");
        let copied = t.add_tree(&same, &sub).unwrap();
        assert_eq!(copied.find(&[same.clone(), steps(500)].concat()).unwrap(), Some(b"v".to_vec()));
        // 600 steps down: paths of 1,100 steps, refused; the tree is unchanged.
        let mut t2 = t.clone();
        assert!(too_deep(t2.add_tree_mut(&steps(600), &sub)));
        assert_eq!(t2.hash(), before);
        // 520 steps down: paths of 1,020 steps, allowed, committed and checked.
        let mut lower = steps(519);
        lower.insert(0, "d");
        let grafted = t.add_tree(&lower, &sub).unwrap();
        let g = store.commit(&grafted, &[h], 1, "Tezos", "").unwrap();
        let back = store.checkout(&g).unwrap();
        assert_eq!(back.find(&[lower.clone(), steps(500)].concat()).unwrap(), Some(b"v".to_vec()));
        // The whole stored tree one step down: paths of 1,001 steps, allowed; 25 steps down
        // (1,025), refused.
        let whole = t.add_tree(&["e"], &t).unwrap();
        assert_eq!(whole.find(&[vec!["e"], deep.clone()].concat()).unwrap(), Some(b"v".to_vec()));
        let mut e25 = steps(24);
        e25.insert(0, "e");
        assert!(too_deep(t.add_tree(&e25, &t)));
        // A tree listed out of a stored one is bounded the same way.
        let (_, child) = t.list(&steps(499), None, None).unwrap().into_iter().next().unwrap();
        assert!(too_deep(t.add_tree(&steps(600), &child)));
        assert!(t.add_tree(&steps(520), &child).is_ok());
        assert_fsck_clean(&store, "after grafts");
    });
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

/// Appends a framed record (kind, LEB128 body length, body, CRC-32C) to `out`, as
/// docs/FORMAT.md section 4 describes it.
fn frame(out: &mut Vec<u8>, kind: u8, body: &[u8]) {
    let start = out.len();
    out.push(kind);
    arbor_core::leb128::write_u64(out, body.len() as u64);
    out.extend_from_slice(body);
    let crc = crc32c::crc32c(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// A store whose last commit holds a chain of `depth` directories named `s` (a value below
/// the last): what an older build, or another program, could have written. Its records are
/// appended after a closed store's log, as a commit whose index entry a crash lost, so the
/// open's recovery scan finds it. Returns the store and that commit.
fn store_with_a_chain(fs: &MemFs, depth: usize) -> (Store, arbor::Hash) {
    const FLAT_DIR: u8 = 0x02;
    const COMMIT: u8 = 0x05;
    let store = Store::open_with("/s", mem_config(fs)).unwrap();
    let first = store.commit(&store.empty().add(&["a"], b"1").unwrap(), &[], 0, "Tezos", "").unwrap();
    store.close().unwrap();
    let chunk = std::path::Path::new("/s/pack").join(format!("{:020}.chunk", 0));
    let mut log = fs.file_bytes(&chunk).unwrap();
    // The deepest directory: step `s` (length 1, raw: 1 << 1), an inline value `v`.
    let mut at = log.len() as u64;
    frame(&mut log, FLAT_DIR, &[1, 2, b's', 0, 1, b'v']);
    // Each parent: one binding `s` to the directory written just before it (tag 2, its back
    // distance, a hash nothing checks before fsck).
    for _ in 1..depth {
        let here = log.len() as u64;
        let mut body = vec![1, 2, b's', 2];
        arbor_core::leb128::write_u64(&mut body, here - at);
        body.extend_from_slice(&[7; 32]);
        frame(&mut log, FLAT_DIR, &body);
        at = here;
    }
    // The commit: tree hash, back distance to the root, no parents, date, author, message,
    // flags.
    let here = log.len() as u64;
    let mut body = [7u8; 32].to_vec();
    arbor_core::leb128::write_u64(&mut body, here - at);
    body.push(0);
    body.extend_from_slice(&1i64.to_le_bytes());
    body.extend_from_slice(&[0, 0, 0]);
    frame(&mut log, COMMIT, &body);
    fs.set_file_bytes(&chunk, &log).unwrap();
    let store = Store::open_with("/s", mem_config(fs)).unwrap();
    let commits = store.commits();
    assert_eq!(commits.len(), 2, "the recovery scan found the appended commit");
    assert_eq!(commits[0], first);
    let deep = commits[1];
    (store, deep)
}

/// A store holding a tree deeper than the maximum (written by an older build or another
/// program): the walks over it report the depth instead of overflowing the stack.
#[test]
fn walks_over_a_stored_tree_deeper_than_the_maximum_refuse_it() {
    isolated("walks_over_a_stored_tree_deeper_than_the_maximum_refuse_it", || {
        let fs = MemFs::new();
        let (store, deep) = store_with_a_chain(&fs, 100_000);
        let t = store.checkout(&deep).unwrap();
        let mut visited = 0;
        assert!(too_deep(t.fold::<&str, _>(&[], None, Order::Sorted, |_, _| {
            visited += 1;
            Ok(true)
        })));
        assert_eq!(visited, MAX_PATH_STEPS + 1, "the fold visited every node up to the maximum");
        let report = store.fsck();
        assert!(report.errors.iter().any(|e| e.contains("steps exceeds the maximum")), "{:?}", report.errors);
        assert!(too_deep(store.stats()));
        assert!(too_deep(arbor::snapshot::export(&store, &deep, Vec::new())));
        // Grafting it anywhere but at the root measures it, and refuses.
        assert!(too_deep(t.add_tree(&["x"], &t)));
        // A subtree copied to the depth it was found at is not measured (the bound proves
        // it): allowed, though on this store, which breaks the rule, a measure would refuse.
        let sub = t.find_tree(&steps(500)).unwrap().unwrap();
        let mut same = steps(499);
        same.insert(0, "c");
        let copied = t.add_tree(&same, &sub).unwrap();
        assert!(copied.mem_tree(&[same.clone(), steps(524)].concat()).unwrap());
        assert!(too_deep(t.add_tree(&steps(501), &sub)));
        assert!(t.prove(&[steps(600)]).is_err());
        // What is within the maximum still reads.
        assert_eq!(t.find(&steps(MAX_PATH_STEPS)).unwrap(), None);
        assert!(t.mem_tree(&steps(MAX_PATH_STEPS)).unwrap());
        drop(t);
        drop(store);
    });
}
