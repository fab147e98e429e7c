//! Model-based test of trees and the store: random sequences of add / remove / add_tree /
//! commit / checkout / reopen are run against a store and against a plain map of paths to
//! values, and after every step the tree (and every commit read back) must agree with the
//! map through every read API, with the hash given by the reference oracle.

mod common;

use std::sync::Arc;

use arbor::io::{MemFs, TornWrites};
use arbor::{Config, Hash, InodeConfig, Store, Tree};
use common::{
    assert_fsck_clean, check_tree, model_add, model_add_tree, model_children, model_hash, model_remove, model_sub,
    show, Model, Path, Rng, Sub,
};
use proptest::prelude::*;

/// Where `add_tree` takes its subtree from.
#[derive(Clone, Debug)]
enum Src {
    /// The subtree at this path of the current tree (maybe absent: then it is empty).
    Current(Path),
    /// The subtree at this path of an earlier commit (index modulo the number of commits).
    Commit(usize, Path),
    /// The empty tree, which removes the destination.
    Empty,
}

#[derive(Clone, Debug)]
enum Op {
    Add(Path, u8),
    Remove(Path),
    AddTree {
        dst: Path,
        src: Src,
    },
    /// Adds `n` children `k000`.. to one directory, to cross the flat/inode threshold.
    Bulk {
        dir: Path,
        n: usize,
        val: u8,
    },
    /// Removes children of a directory, in a random order, until `keep` are left.
    Prune {
        dir: Path,
        keep: usize,
        seed: u64,
    },
    Commit,
    /// Checks out an earlier commit (index modulo the number of commits).
    Checkout(usize),
    /// Drops the store and opens it again, after a simulated power loss if `crash`.
    Reopen {
        crash: bool,
    },
}

/// Values: empty, tiny, inline but not small (16-128 bytes), and longer than the 128 bytes
/// that are stored inline.
fn value(i: u8) -> Vec<u8> {
    match i % 6 {
        0 => Vec::new(),
        1 => b"x".to_vec(),
        2 => b"y".to_vec(),
        3 => vec![b'L'; 40],
        4 => (0..=255u8).collect(),
        _ => vec![b'z'; 129],
    }
}

/// Few step names, so that paths collide, values get in the way of directories and whole
/// directories get deleted.
fn step() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(vec!["a", "b", "c", "d", "e", "f"]).prop_map(|s| s.as_bytes().to_vec())
}

fn path_of(len: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Path> {
    prop::collection::vec(step(), len)
}

fn op() -> impl Strategy<Value = Op> {
    let src = prop_oneof![
        4 => path_of(0..=3).prop_map(Src::Current),
        3 => (any::<usize>(), path_of(0..=3)).prop_map(|(i, p)| Src::Commit(i, p)),
        1 => Just(Src::Empty),
    ];
    prop_oneof![
        30 => (path_of(1..=3), any::<u8>()).prop_map(|(p, v)| Op::Add(p, v)),
        10 => path_of(0..=3).prop_map(Op::Remove),
        8 => (path_of(0..=3), src).prop_map(|(dst, src)| Op::AddTree { dst, src }),
        1 => (path_of(1..=2), 200usize..=400, any::<u8>()).prop_map(|(dir, n, val)| Op::Bulk { dir, n, val }),
        2 => (path_of(0..=2), prop::sample::select(vec![0usize, 1, 2, 3, 4, 100, 255, 256, 257]), any::<u64>())
            .prop_map(|(dir, keep, seed)| Op::Prune { dir, keep, seed }),
        8 => Just(Op::Commit),
        3 => any::<usize>().prop_map(Op::Checkout),
        2 => any::<bool>().prop_map(|crash| Op::Reopen { crash }),
    ]
}

/// Store settings that change the on-disk layout but never what is read back.
#[derive(Clone, Debug)]
struct Params {
    /// Tiny chunks make the log roll over to new chunk files all the time.
    chunk_bytes: u64,
    /// Frequent control file rewrites exercise the index and control paths of recovery.
    control_every: u32,
    /// A tiny cache makes reads go back to the log.
    cache_bytes: u64,
}

fn params() -> impl Strategy<Value = Params> {
    (
        prop::sample::select(vec![2048u64, 1 << 30]),
        prop::sample::select(vec![1u32, 3, 256]),
        prop::sample::select(vec![0u64, 512 << 20]),
    )
        .prop_map(|(chunk_bytes, control_every, cache_bytes)| Params { chunk_bytes, control_every, cache_bytes })
}

const DIR: &str = "/store";

fn open(fs: &MemFs, cfg: InodeConfig, p: &Params) -> Store {
    let config = Config::default()
        .with_fs(Arc::new(fs.clone()))
        .with_inode(cfg)
        .with_chunk_bytes(p.chunk_bytes)
        .with_control_every(p.control_every)
        .with_cache_bytes(p.cache_bytes);
    Store::open_with(DIR, config).expect("open")
}

fn with_step(p: &[Vec<u8>], s: &[u8]) -> Path {
    let mut q = p.to_vec();
    q.push(s.to_vec());
    q
}

/// Runs `ops` against a store and the model, checking everything after each step.
fn run(cfg: InodeConfig, params: &Params, ops: &[Op]) {
    let mut fs = MemFs::new();
    let mut store = open(&fs, cfg, params);
    let mut tree = store.empty();
    let mut model = Model::new();
    // Every commit made, with the model of its tree.
    let mut commits: Vec<(Hash, Model)> = Vec::new();
    // The commit the working tree was last committed as or checked out from.
    let mut head: Option<usize> = None;
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Add(p, v) => {
                tree = tree.add(p, &value(*v)).unwrap();
                model_add(&mut model, p, &value(*v));
            }
            Op::Remove(p) => {
                tree = tree.remove(p).unwrap();
                model_remove(&mut model, p);
            }
            Op::AddTree { dst, src } => {
                let (sub_tree, sub_model) = match src {
                    Src::Current(p) => (tree.find_tree(p).unwrap(), model_sub(&model, p)),
                    Src::Commit(k, p) if !commits.is_empty() => {
                        let (h, m) = &commits[k % commits.len()];
                        (store.checkout(h).unwrap().find_tree(p).unwrap(), model_sub(m, p))
                    }
                    _ => (None, Sub::Dir(Model::new())),
                };
                if dst.is_empty() && matches!(sub_model, Sub::Value(_)) {
                    // A value at the root is not a context; skip.
                    continue;
                }
                let sub_tree = sub_tree.unwrap_or_else(|| store.empty());
                tree = tree.add_tree(dst, &sub_tree).unwrap();
                model_add_tree(&mut model, dst, &sub_model);
            }
            Op::Bulk { dir, n, val } => {
                for k in 0..*n {
                    let p = with_step(dir, format!("k{k:03}").as_bytes());
                    let v = value(val.wrapping_add(k as u8));
                    tree = tree.add(&p, &v).unwrap();
                    model_add(&mut model, &p, &v);
                }
            }
            Op::Prune { dir, keep, seed } => {
                let mut steps: Vec<Vec<u8>> = model_children(&model, dir).into_keys().collect();
                let mut rng = Rng::new(*seed);
                while steps.len() > *keep {
                    let s = steps.swap_remove(rng.below(steps.len() as u64) as usize);
                    let p = with_step(dir, &s);
                    tree = tree.remove(&p).unwrap();
                    model_remove(&mut model, &p);
                }
            }
            Op::Commit => {
                let parents: Vec<Hash> = head.map(|h| commits[h].0).into_iter().collect();
                let date = commits.len() as i64;
                let msg = format!("commit {date}");
                let h = store.commit(&tree, &parents, date, "Tezos", &msg).unwrap();
                // The commit hash follows from the oracle's tree hash and the metadata.
                let want = arbor_core::commit_hash(&model_hash(&model, cfg), &parents, date, b"Tezos", msg.as_bytes());
                assert_eq!(h, want, "commit hash");
                let info = store.commit_info(&h).unwrap();
                assert_eq!((info.tree, info.parents, info.date), (tree.hash(), parents, date));
                let back = store.checkout(&h).unwrap();
                check_tree(&back, &model, cfg, i as u64 ^ 0xc0);
                commits.push((h, model.clone()));
                head = Some(commits.len() - 1);
                if commits.len().is_multiple_of(2) {
                    // Go on from the lazily loaded tree half of the time.
                    tree = back;
                }
            }
            Op::Checkout(k) => {
                if commits.is_empty() {
                    continue;
                }
                let k = k % commits.len();
                tree = store.checkout(&commits[k].0).unwrap();
                model = commits[k].1.clone();
                head = Some(k);
            }
            Op::Reopen { crash } => {
                drop(tree);
                drop(store);
                if *crash {
                    // Every commit is durable under the default policy, so none may be lost.
                    fs = fs.crash(TornWrites::None);
                }
                store = open(&fs, cfg, params);
                let want: Vec<Hash> = commits.iter().map(|c| c.0).collect();
                assert_eq!(store.commits(), want, "commits after reopening (crash: {crash})");
                match head {
                    Some(k) => {
                        tree = store.checkout(&commits[k].0).unwrap();
                        model = commits[k].1.clone();
                    }
                    None => {
                        tree = store.empty();
                        model = Model::new();
                    }
                }
            }
        }
        check_tree(&tree, &model, cfg, i as u64);
    }
    // Finally every commit reads back after a reopen, and fsck finds nothing.
    drop(tree);
    drop(store);
    let store = open(&fs, cfg, params);
    for (k, (h, m)) in commits.iter().enumerate() {
        let t = store.checkout(h).unwrap_or_else(|e| panic!("checkout of commit {k}: {e}"));
        check_tree(&t, m, cfg, k as u64);
    }
    assert_fsck_clean(&store, "end of the run");
    for (h, m) in &commits {
        // Spot check that the tree is not only internally consistent but the model's.
        if let Some((k, v)) = m.iter().next() {
            assert_eq!(store.checkout(h).unwrap().find(k).unwrap().as_ref(), Some(v), "{}", show(k));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Tezos's inode shape: directories go to inodes past 256 entries.
    #[test]
    fn random_histories_tezos_shape(params in params(), ops in prop::collection::vec(op(), 1..60)) {
        run(InodeConfig::TEZOS, &params, &ops);
    }

    /// irmin's small shape (2 slots, flat up to 3 entries): inode trees are deep.
    #[test]
    fn random_histories_small_inodes(params in params(), ops in prop::collection::vec(op(), 1..60)) {
        run(InodeConfig::SMALL_TEST, &params, &ops);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Always one directory of 200-400 children, then pruned around the 256 threshold while
    /// other changes, commits and reopens happen.
    #[test]
    fn one_directory_crossing_the_threshold(
        params in params(),
        n in 200usize..=400,
        keeps in prop::collection::vec(prop::sample::select(vec![300usize, 257, 256, 255, 200, 2, 0]), 1..4),
        ops in prop::collection::vec(op(), 0..20),
    ) {
        let dir = vec![b"big".to_vec()];
        let mut all = vec![Op::Bulk { dir: dir.clone(), n, val: 1 }, Op::Commit];
        all.extend(ops);
        for (i, keep) in keeps.into_iter().enumerate() {
            all.push(Op::Prune { dir: dir.clone(), keep, seed: i as u64 });
            all.push(Op::Commit);
            all.push(Op::Bulk { dir: dir.clone(), n: 260, val: 7 });
        }
        all.push(Op::Reopen { crash: true });
        run(InodeConfig::TEZOS, &params, &all);
    }
}

/// A plain sanity check of the model helpers against the engine on a fixed history, so that
/// a bug in the model shows up here rather than as a puzzling proptest failure.
#[test]
fn model_agrees_on_a_fixed_history() {
    let t = Tree::empty()
        .add(&["a", "b"], b"1")
        .unwrap()
        .add(&["a", "b", "c"], b"2")
        .unwrap()
        .add(&["a", "d"], b"3")
        .unwrap()
        .remove(&["a", "b", "c"])
        .unwrap();
    let mut m = Model::new();
    model_add(&mut m, &common::path(&["a", "b"]), b"1");
    model_add(&mut m, &common::path(&["a", "b", "c"]), b"2");
    model_add(&mut m, &common::path(&["a", "d"]), b"3");
    model_remove(&mut m, &common::path(&["a", "b", "c"]));
    // Removing the only child of a/b leaves a/b empty, which disappears.
    assert_eq!(m.len(), 1);
    check_tree(&t, &m, InodeConfig::TEZOS, 0);
}
