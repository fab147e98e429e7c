//! Helpers for the proof tests: random `RefTree`s, the Tezos meaning of lookups and writes on
//! them (the independent answers proofs are checked against), and proving through `RefSource`.
#![allow(dead_code)]

use std::collections::BTreeMap;

use arbor_core::proof::{prove, Path, Proof, Proved, RefSource, Write};
use arbor_core::reference::RefTree;
use arbor_core::toolbox::SplitMix64;
use arbor_core::InodeConfig;

/// The shared SplitMix64 on a bare state, with the modulo draws these tests have always
/// used (so a seed keeps picking the same cases).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        SplitMix64::step(&mut self.0)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    /// A short step over a small alphabet, so that looked-up steps often share prefixes with
    /// real ones.
    pub fn step(&mut self) -> Vec<u8> {
        let len = 1 + self.below(5);
        (0..len).map(|_| b"abcdefgh0123"[self.below(12)]).collect()
    }

    pub fn value(&mut self) -> Vec<u8> {
        let len = self.below(12);
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// How random trees are shaped.
#[derive(Clone, Copy)]
pub struct Shape {
    /// Largest fan-out of an ordinary directory.
    pub fanout: usize,
    /// Percent chance that a directory is large (`big` entries).
    pub big_percent: u64,
    /// Entry count range of a large directory.
    pub big: (usize, usize),
    /// Directory levels below the root.
    pub depth: usize,
}

impl Shape {
    /// Small trees for the small inode configuration (inodes from 4 entries on).
    pub const SMALL: Shape = Shape { fanout: 6, big_percent: 20, big: (4, 40), depth: 3 };
    /// Trees for the Tezos configuration, some directories above 256 entries.
    pub const TEZOS: Shape = Shape { fanout: 5, big_percent: 15, big: (250, 700), depth: 3 };
}

/// A random directory (never empty, no empty directories below: as the engine keeps them).
pub fn random_tree(rng: &mut Rng, shape: Shape) -> RefTree {
    random_dir(rng, shape, shape.depth)
}

fn random_dir(rng: &mut Rng, shape: Shape, depth: usize) -> RefTree {
    let big = rng.chance(shape.big_percent);
    let n = if big { shape.big.0 + rng.below(shape.big.1 - shape.big.0 + 1) } else { 1 + rng.below(shape.fanout) };
    // Few sub-directories in a large directory, to keep trees a manageable size.
    let sub_percent = if big { 2 } else { 35 };
    let mut m = BTreeMap::new();
    while m.len() < n {
        let child = if depth > 0 && rng.chance(sub_percent) {
            random_dir(rng, shape, depth - 1)
        } else {
            RefTree::Contents(rng.value())
        };
        m.insert(rng.step(), child);
    }
    RefTree::Node(m)
}

/// Every path in the tree (values and directories, not the root), sorted.
pub fn all_paths(t: &RefTree) -> Vec<(Path, bool)> {
    let mut out = Vec::new();
    walk(t, &mut Vec::new(), &mut out);
    out
}

fn walk(t: &RefTree, at: &mut Path, out: &mut Vec<(Path, bool)>) {
    if let RefTree::Node(m) = t {
        for (s, c) in m {
            at.push(s.clone());
            out.push((at.clone(), matches!(c, RefTree::Contents(_))));
            walk(c, at, out);
            at.pop();
        }
    }
}

/// A mix of read paths: values, directories, and absent paths of every kind.
pub fn random_reads(rng: &mut Rng, t: &RefTree, n: usize) -> Vec<Path> {
    let all = all_paths(t);
    let mut out = Vec::new();
    for _ in 0..n {
        let (p, is_value) = all[rng.below(all.len())].clone();
        out.push(match rng.below(6) {
            0..=2 => p,
            3 => {
                // A sibling that probably does not exist.
                let mut q = p;
                *q.last_mut().unwrap() = rng.step();
                q
            }
            4 if is_value => {
                // Through a value: nothing there.
                let mut q = p;
                q.push(rng.step());
                q
            }
            _ => {
                let mut q = p;
                q.push(rng.step());
                q.push(rng.step());
                q
            }
        });
    }
    out
}

/// Random writes: overwrites, new values (new directories on the way, values in the way),
/// removes of values, directories and nothing.
pub fn random_writes(rng: &mut Rng, t: &RefTree, n: usize) -> Vec<Write> {
    let all = all_paths(t);
    let mut out = Vec::new();
    for _ in 0..n {
        let (p, _) = all[rng.below(all.len())].clone();
        out.push(match rng.below(8) {
            0 | 1 => Write::Add(p, rng.value()),
            2 => {
                let mut q = p;
                *q.last_mut().unwrap() = rng.step();
                Write::Add(q, rng.value())
            }
            3 => {
                let mut q = p;
                q.push(rng.step());
                Write::Add(q, rng.value())
            }
            _ => Write::Remove(p),
        });
    }
    out
}

/// What is at `path` in `t`, as Tezos reads it.
pub fn lookup(t: &RefTree, path: &[Vec<u8>], cfg: InodeConfig) -> Proved {
    let mut cur = t;
    for s in path {
        match cur {
            RefTree::Node(m) => match m.get(s) {
                Some(c) => cur = c,
                None => return Proved::Absent,
            },
            RefTree::Contents(_) => return Proved::Absent,
        }
    }
    match cur {
        RefTree::Contents(v) => Proved::Value(v.clone()),
        RefTree::Node(_) => Proved::Dir(cur.hash(cfg)),
    }
}

/// Outcome of a change, as the engine reports it.
#[derive(PartialEq, Eq)]
enum Outcome {
    Unchanged,
    Changed,
    Emptied,
}

/// Applies a write with Tezos semantics.
pub fn apply(t: &mut RefTree, w: &Write) {
    let (p, new) = match w {
        Write::Add(p, v) => (p, Some(v.as_slice())),
        Write::Remove(p) => (p, None),
    };
    if set(t, p, new) == Outcome::Emptied {
        *t = RefTree::Node(BTreeMap::new());
    }
}

fn set(t: &mut RefTree, path: &[Vec<u8>], new: Option<&[u8]>) -> Outcome {
    let Some((first, rest)) = path.split_first() else {
        return match new {
            None => Outcome::Emptied,
            Some(v) => {
                *t = RefTree::Contents(v.to_vec());
                Outcome::Changed
            }
        };
    };
    if let RefTree::Contents(_) = t {
        if new.is_none() {
            return Outcome::Unchanged;
        }
        *t = RefTree::Node(BTreeMap::new());
    }
    let RefTree::Node(m) = t else { unreachable!() };
    let o = match m.get_mut(first) {
        Some(c) => match set(c, rest, new) {
            Outcome::Emptied => {
                m.remove(first);
                Outcome::Changed
            }
            o => o,
        },
        None if new.is_none() => Outcome::Unchanged,
        None => {
            let mut c = RefTree::Node(BTreeMap::new());
            set(&mut c, rest, new);
            m.insert(first.clone(), c);
            Outcome::Changed
        }
    };
    match o {
        Outcome::Unchanged => Outcome::Unchanged,
        _ if m.is_empty() => Outcome::Emptied,
        _ => Outcome::Changed,
    }
}

/// The proof of `reads` and `writes` on `t`, built by the reference prover.
pub fn prove_ref(t: &RefTree, cfg: InodeConfig, reads: &[Path], writes: &[Write]) -> Proof {
    prove(&RefSource::new(cfg), &t, cfg, reads, writes).unwrap()
}

/// A path from string steps.
pub fn path(steps: &[&str]) -> Path {
    steps.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// A directory from `(step, child)` pairs.
pub fn dir<K: AsRef<[u8]>>(children: impl IntoIterator<Item = (K, RefTree)>) -> RefTree {
    RefTree::Node(children.into_iter().map(|(k, v)| (k.as_ref().to_vec(), v)).collect())
}

/// A contents value.
pub fn val(v: &[u8]) -> RefTree {
    RefTree::Contents(v.to_vec())
}
