//! Helpers shared by the correctness tests: a plain model of a context tree, the reference
//! hash of a model, comparison of a `Tree` against a model, a deterministic block workload and
//! a small seedable RNG.
//!
//! Each integration test binary uses only part of this module.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arbor::io::MemFs;
use arbor::{Config, Depth, Hash, InodeConfig, Kind, Order, Store, Tree};
use arbor_core::reference::RefTree;

/// A path as owned steps.
pub type Path = Vec<Vec<u8>>;

/// A context as the plain map it denotes: full path of every value → value. Directories
/// are implied by the prefixes of the keys, so an empty directory cannot exist, exactly as in
/// Tezos. Invariant: no key is a strict prefix of another key (a value has no children).
pub type Model = BTreeMap<Path, Vec<u8>>;

/// A path from string steps.
pub fn path(steps: &[&str]) -> Path {
    steps.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// Renders a path for assertion messages.
pub fn show(p: &[Vec<u8>]) -> String {
    arbor::path::display_path(p)
}

/// Keys at or below `prefix`. They form one contiguous range of the map, because every key
/// extending `prefix` sorts after it and before any key that differs from it earlier.
fn keys_below(m: &Model, prefix: &[Vec<u8>]) -> Vec<Path> {
    m.range(prefix.to_vec()..).take_while(|(k, _)| k.starts_with(prefix)).map(|(k, _)| k.clone()).collect()
}

/// Tezos `remove`: drops whatever is at `p` (a value, or a directory and all below it).
/// Directories left empty disappear by themselves in this representation.
pub fn model_remove(m: &mut Model, p: &[Vec<u8>]) {
    for k in keys_below(m, p) {
        m.remove(&k);
    }
}

/// Drops values lying on the way to `p` (strict prefixes): Tezos replaces a value in the way
/// of a directory by that directory.
fn clear_way(m: &mut Model, p: &[Vec<u8>]) {
    for i in 0..p.len() {
        m.remove(&p[..i].to_vec());
    }
}

/// Tezos `add`: the value replaces whatever was at `p`, and values in the way.
pub fn model_add(m: &mut Model, p: &[Vec<u8>], v: &[u8]) {
    assert!(!p.is_empty(), "the model never puts a value at the root");
    clear_way(m, p);
    model_remove(m, p);
    m.insert(p.to_vec(), v.to_vec());
}

/// A subtree of a model: a value, or a directory as a model relative to its root (empty when
/// nothing is there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sub {
    /// A value.
    Value(Vec<u8>),
    /// A directory (possibly empty: nothing at that path).
    Dir(Model),
}

/// The subtree of `m` at `p`.
pub fn model_sub(m: &Model, p: &[Vec<u8>]) -> Sub {
    if let Some(v) = m.get(p) {
        if !p.is_empty() {
            return Sub::Value(v.clone());
        }
    }
    let mut out = Model::new();
    for k in keys_below(m, p) {
        out.insert(k[p.len()..].to_vec(), m[&k].clone());
    }
    Sub::Dir(out)
}

/// Tezos `add_tree`: grafts `sub` at `p`; an empty directory removes `p`.
pub fn model_add_tree(m: &mut Model, p: &[Vec<u8>], sub: &Sub) {
    match sub {
        Sub::Value(v) => model_add(m, p, v),
        Sub::Dir(d) if d.is_empty() => model_remove(m, p),
        Sub::Dir(d) => {
            clear_way(m, p);
            model_remove(m, p);
            for (k, v) in d {
                let mut full = p.to_vec();
                full.extend(k.iter().cloned());
                m.insert(full, v.clone());
            }
        }
    }
}

/// What a model holds right below a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Child {
    /// A value.
    Value(Vec<u8>),
    /// A (non-empty) directory.
    Dir,
}

/// The children of the directory at `p` (empty if `p` is absent or a value).
pub fn model_children(m: &Model, p: &[Vec<u8>]) -> BTreeMap<Vec<u8>, Child> {
    let mut out = BTreeMap::new();
    for k in keys_below(m, p) {
        if k.len() == p.len() {
            continue;
        }
        let step = k[p.len()].clone();
        let c = if k.len() == p.len() + 1 { Child::Value(m[&k].clone()) } else { Child::Dir };
        out.insert(step, c);
    }
    out
}

/// Whether a directory is at `p` (the root always is one).
pub fn model_is_dir(m: &Model, p: &[Vec<u8>]) -> bool {
    p.is_empty() || keys_below(m, p).iter().any(|k| k.len() > p.len())
}

/// Every directory path of the model, the root included.
pub fn model_dirs(m: &Model) -> BTreeSet<Path> {
    let mut out = BTreeSet::new();
    out.insert(Vec::new());
    for k in m.keys() {
        for i in 1..k.len() {
            out.insert(k[..i].to_vec());
        }
    }
    out
}

/// The reference tree of a model, for `RefTree::hash`.
pub fn ref_tree(m: &Model) -> RefTree {
    fn build(m: &Model, p: &[Vec<u8>]) -> RefTree {
        let mut node = BTreeMap::new();
        for (step, c) in model_children(m, p) {
            let child = match c {
                Child::Value(v) => RefTree::Contents(v),
                Child::Dir => {
                    let mut q = p.to_vec();
                    q.push(step.clone());
                    build(m, &q)
                }
            };
            node.insert(step, child);
        }
        RefTree::Node(node)
    }
    build(m, &[])
}

/// The Tezos context hash of the model's root directory under `cfg`, by the reference oracle.
pub fn model_hash(m: &Model, cfg: InodeConfig) -> Hash {
    ref_tree(m).hash(cfg)
}

/// One node seen by a fold: relative path, and the value for values (None for directories).
pub type FoldItem = (Path, Option<Vec<u8>>);

/// The fold a model predicts below `p` in sorted pre-order, filtered by `depth`.
pub fn model_fold(m: &Model, p: &[Vec<u8>], depth: Option<Depth>) -> Vec<FoldItem> {
    fn admits(depth: Option<Depth>, d: usize) -> bool {
        match depth {
            None => true,
            Some(Depth::Eq(n)) => d == n,
            Some(Depth::Le(n)) => d <= n,
            Some(Depth::Lt(n)) => d < n,
            Some(Depth::Ge(n)) => d >= n,
            Some(Depth::Gt(n)) => d > n,
        }
    }
    fn walk(m: &Model, abs: &mut Path, rel: &mut Path, depth: Option<Depth>, out: &mut Vec<FoldItem>) {
        for (step, c) in model_children(m, abs) {
            abs.push(step.clone());
            rel.push(step);
            match c {
                Child::Value(v) => {
                    if admits(depth, rel.len()) {
                        out.push((rel.clone(), Some(v)));
                    }
                }
                Child::Dir => {
                    if admits(depth, rel.len()) {
                        out.push((rel.clone(), None));
                    }
                    walk(m, abs, rel, depth, out);
                }
            }
            abs.pop();
            rel.pop();
        }
    }
    let mut out = Vec::new();
    match model_sub(m, p) {
        Sub::Value(v) => {
            if admits(depth, 0) {
                out.push((Vec::new(), Some(v)));
            }
        }
        Sub::Dir(_) if !model_is_dir(m, p) => {}
        Sub::Dir(_) => {
            if admits(depth, 0) {
                out.push((Vec::new(), None));
            }
            walk(m, &mut p.to_vec(), &mut Vec::new(), depth, &mut out);
        }
    }
    out
}

/// Runs `tree.fold` and collects what it visits.
pub fn tree_fold(tree: &Tree, p: &[Vec<u8>], depth: Option<Depth>, order: Order) -> Vec<FoldItem> {
    let mut out = Vec::new();
    tree.fold(p, depth, order, |k, t| {
        let v = match t.kind() {
            Kind::Value => Some(t.to_value()?.expect("a value tree has a value")),
            Kind::Dir => None,
        };
        out.push((k.iter().map(|s| s.to_vec()).collect(), v));
        Ok(true)
    })
    .unwrap_or_else(|e| panic!("fold at {} failed: {e}", show(p)));
    out
}

/// Checks every value of the model through `find` and `mem`, and the root hash against the
/// reference oracle. The cheap check used where a full comparison would be too slow.
pub fn check_values_and_hash(tree: &Tree, m: &Model, cfg: InodeConfig) {
    for (k, v) in m {
        assert_eq!(tree.find(k).unwrap().as_ref(), Some(v), "find {}", show(k));
    }
    assert_eq!(tree.hash(), model_hash(m, cfg), "tree hash differs from the reference hash of the model");
}

/// Compares a tree with a model in full: find / mem / mem_tree / length / list (with slicing)
/// at every path of the model and at absent ones, fold with several depth bounds, and the
/// hash against the reference oracle. `salt` varies the sampled slices and depth bounds.
pub fn check_tree(tree: &Tree, m: &Model, cfg: InodeConfig, salt: u64) {
    let mut rng = Rng::new(salt);
    assert_eq!(tree.kind(), Kind::Dir, "the root is a directory");
    assert_eq!(tree.is_empty().unwrap(), m.is_empty());
    let dirs = model_dirs(m);
    // Values: every key, plus absent paths next to and below them.
    for (k, v) in m {
        assert_eq!(tree.find(k).unwrap().as_ref(), Some(v), "find {}", show(k));
        assert!(tree.mem(k).unwrap(), "mem {}", show(k));
        assert!(tree.mem_tree(k).unwrap(), "mem_tree {}", show(k));
        assert_eq!(tree.length(k).unwrap(), 0, "length of the value {}", show(k));
        assert!(tree.list(k, None, None).unwrap().is_empty(), "list of the value {}", show(k));
        let mut below = k.clone();
        below.push(b"under".to_vec());
        assert_eq!(tree.find(&below).unwrap(), None, "find below the value {}", show(k));
        assert!(!tree.mem_tree(&below).unwrap());
        let mut beside = k.clone();
        beside.last_mut().expect("non-empty key").push(b'~');
        if !m.contains_key(&beside) && !dirs.contains(&beside) {
            assert_eq!(tree.find(&beside).unwrap(), None, "find absent {}", show(&beside));
            assert!(!tree.mem_tree(&beside).unwrap(), "mem_tree absent {}", show(&beside));
            assert_eq!(tree.length(&beside).unwrap(), 0);
        }
    }
    // Directories: kind, length, list against the model's children.
    for d in &dirs {
        let children = model_children(m, d);
        if !d.is_empty() {
            assert_eq!(tree.find(d).unwrap(), None, "find of the directory {}", show(d));
            assert!(!tree.mem(d).unwrap(), "mem of the directory {}", show(d));
            assert!(tree.mem_tree(d).unwrap(), "mem_tree of the directory {}", show(d));
            let sub = tree.find_tree(d).unwrap().expect("directory subtree");
            assert_eq!(sub.kind(), Kind::Dir);
        }
        assert_eq!(tree.length(d).unwrap(), children.len() as u64, "length of {}", show(d));
        let full = tree.list(d, None, None).unwrap();
        let mut seen = BTreeMap::new();
        for (s, t) in &full {
            let c = match t.kind() {
                Kind::Value => Child::Value(t.to_value().unwrap().expect("value")),
                Kind::Dir => Child::Dir,
            };
            assert!(seen.insert(s.to_vec(), c).is_none(), "list of {} repeats {:?}", show(d), s);
        }
        assert_eq!(seen, children, "list of {}", show(d));
        if children.len() <= cfg.entries as usize {
            // Directories of at most `entries` bindings list in step order, in every form
            // (larger ones committed list in irmin-pack's inode order: docs/ORDER.md).
            let steps: Vec<Vec<u8>> = full.iter().map(|(s, _)| s.to_vec()).collect();
            assert!(steps.windows(2).all(|w| w[0] < w[1]), "flat directory {} not listed in order", show(d));
        }
        let n = full.len();
        let steps: Vec<Vec<u8>> = full.iter().map(|(s, _)| s.to_vec()).collect();
        let mut slices = vec![(Some(0), Some(0)), (Some(n), None), (Some(n + 3), Some(2)), (None, Some(n + 1))];
        for _ in 0..3 {
            slices.push((Some(rng.below(n as u64 + 2) as usize), Some(rng.below(n as u64 + 2) as usize)));
        }
        slices.push((Some(rng.below(n as u64 + 1) as usize), None));
        for (off, len) in slices {
            let got: Vec<Vec<u8>> = tree.list(d, off, len).unwrap().iter().map(|(s, _)| s.to_vec()).collect();
            let from = off.unwrap_or(0).min(n);
            let to = len.map_or(n, |l| from.saturating_add(l).min(n));
            assert_eq!(got, steps[from..to], "list {} offset {off:?} length {len:?}", show(d));
        }
    }
    // Folds, from the root and from one other path, under random depth bounds.
    let mut starts: Vec<Path> = vec![Vec::new()];
    let all: Vec<&Path> = dirs.iter().chain(m.keys()).collect();
    starts.push(all[rng.below(all.len() as u64) as usize].clone());
    for start in &starts {
        let depth = match rng.below(6) {
            0 => None,
            1 => Some(Depth::Eq(rng.below(4) as usize)),
            2 => Some(Depth::Le(rng.below(4) as usize)),
            3 => Some(Depth::Lt(rng.below(4) as usize)),
            4 => Some(Depth::Ge(rng.below(4) as usize)),
            _ => Some(Depth::Gt(rng.below(4) as usize)),
        };
        let want = model_fold(m, start, depth);
        let sorted = tree_fold(tree, start, depth, Order::Sorted);
        assert_eq!(sorted, want, "sorted fold at {} with {depth:?}", show(start));
        let mut undefined = tree_fold(tree, start, depth, Order::Undefined);
        undefined.sort();
        let mut want_set = want;
        want_set.sort();
        assert_eq!(undefined, want_set, "unordered fold at {} with {depth:?}", show(start));
    }
    assert_eq!(tree.hash(), model_hash(m, cfg), "tree hash differs from the reference hash of the model");
}

/// SplitMix64: small and seedable, so that a child process and its parent derive the same
/// workload from a seed without sharing anything else.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5851_f42d_4c95_7f2d)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        arbor_core::toolbox::SplitMix64::step(&mut self.0)
    }

    /// Uniform in `0..n` (`n > 0`; the modulo bias is irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// One change of a block: a value added at a path, or the path removed.
pub type BlockOp = (Path, Option<Vec<u8>>);

/// The changes of block `n` of the workload seeded with `seed`: a few hundred adds and
/// removes across nested directories, one large directory that grows past 256 entries after
/// a few blocks (and shrinks with removes), and some values too large to be inlined.
pub fn block_ops(seed: u64, n: u64, count: usize) -> Vec<BlockOp> {
    let mut rng = Rng::new(seed.wrapping_mul(0x1000_0000_01b3) ^ n);
    let mut ops = Vec::with_capacity(count);
    for i in 0..count {
        let p = match rng.below(4) {
            // One large directory of up to 1,500 keys.
            0 => vec![b"big".to_vec(), format!("{:05}", rng.below(1500)).into_bytes()],
            // Nested directories, three levels.
            1 | 2 => vec![
                b"data".to_vec(),
                format!("d{}", rng.below(8)).into_bytes(),
                format!("e{}", rng.below(8)).into_bytes(),
                format!("f{}", rng.below(4)).into_bytes(),
            ],
            // A shallow directory whose entries are sometimes whole subtrees.
            _ => {
                let mut p = vec![b"meta".to_vec(), format!("m{}", rng.below(16)).into_bytes()];
                if rng.below(2) == 0 {
                    p.push(format!("x{}", rng.below(3)).into_bytes());
                }
                p
            }
        };
        let op = if rng.below(4) == 0 {
            None
        } else {
            let len = if rng.below(8) == 0 { 33 + rng.below(200) as usize } else { rng.below(12) as usize };
            let mut v = format!("{n}:{i}:").into_bytes();
            v.resize(len.max(v.len()), b'v');
            Some(v)
        };
        ops.push((p, op));
    }
    ops
}

/// Applies a block's changes to a tree.
pub fn apply_tree(mut t: Tree, ops: &[BlockOp]) -> Tree {
    for (p, v) in ops {
        t = match v {
            Some(v) => t.add(p, v).expect("add"),
            None => t.remove(p).expect("remove"),
        };
    }
    t
}

/// Applies a block's changes to a model.
pub fn apply_model(m: &mut Model, ops: &[BlockOp]) {
    for (p, v) in ops {
        match v {
            Some(v) => model_add(m, p, v),
            None => model_remove(m, p),
        }
    }
}

/// A configuration storing on `fs` with everything else default.
pub fn mem_config(fs: &MemFs) -> Config {
    Config::default().with_fs(Arc::new(fs.clone()))
}

/// Asserts that fsck reports no problem.
pub fn assert_fsck_clean(store: &Store, what: &str) {
    let r = store.fsck();
    assert!(r.errors.is_empty(), "{what}: fsck found {:?}", r.errors);
    assert_eq!(r.commits, store.commits().len() as u64, "{what}: fsck checked every commit");
}

/// The environment variable naming the scenario a child process of [`isolated`] runs.
const SCENARIO: &str = "ARBOR_TEST_SCENARIO";

/// Runs `scenario` in a child process if this is the parent (the test `name` of this binary,
/// run again with [`SCENARIO`] set), or right here if this is that child: a scenario that may
/// overflow the stack, which aborts the whole process, then fails one test naming the signal
/// instead of killing the test run. The child's panics fail the test with their message.
pub fn isolated(name: &str, scenario: impl FnOnce()) {
    use std::os::unix::process::ExitStatusExt;
    if std::env::var(SCENARIO).as_deref() == Ok(name) {
        scenario();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out =
        std::process::Command::new(exe).args([name, "--exact", "--nocapture"]).env(SCENARIO, name).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), None, "{name}: the process was killed by a signal\n{stderr}");
    assert!(out.status.success(), "{name}: the scenario failed ({})\n{stderr}", out.status);
    // The child ran the scenario (one test passed), not nothing.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("1 passed"), "{name}: the child did not run the test\n{stdout}");
}
