//! The random workload: the changes of a commit, drawn from a seeded generator over a fixed
//! shape of paths (a large directory that grows past the inode threshold, nested
//! directories, a shallow one whose entries are sometimes subtrees, and copy targets), with
//! values both inlined and stored as records of their own.

use arbor::io::SplitMix64;

use crate::model::{Key, Model, Op};

fn step(prefix: &str, n: u64) -> Vec<u8> {
    format!("{prefix}{n}").into_bytes()
}

/// A path to write or remove.
fn target(rng: &mut SplitMix64) -> Key {
    match rng.below(8) {
        // One directory of up to 400 keys: past 256 entries it becomes inodes.
        0 | 1 => vec![b"big".to_vec(), format!("{:04}", rng.below(400)).into_bytes()],
        // Nested directories, three levels.
        2..=4 => vec![step("d", rng.below(6)), step("e", rng.below(6)), step("f", rng.below(4))],
        // A shallow directory, sometimes one level deeper.
        5 | 6 => {
            let mut k = vec![step("m", rng.below(12))];
            if rng.chance(1, 2) {
                k.push(step("x", rng.below(3)));
            }
            k
        }
        // A whole nested directory (removes take a subtree at once).
        _ => vec![step("d", rng.below(6)), step("e", rng.below(6))],
    }
}

/// A subtree to copy from; the copy targets (`c*`) are never sources, so sizes stay bounded.
fn source(rng: &mut SplitMix64) -> Key {
    match rng.below(4) {
        0 => vec![step("d", rng.below(6))],
        1 => vec![step("d", rng.below(6)), step("e", rng.below(6))],
        2 => vec![step("m", rng.below(12))],
        _ => vec![b"big".to_vec()],
    }
}

/// A value: mostly a few bytes (inlined in its directory's record), sometimes past the
/// inline limit. Printable and without spaces, for the plan file.
fn value(rng: &mut SplitMix64, date: i64, i: usize) -> Vec<u8> {
    let len = if rng.chance(1, 6) { 33 + rng.below(300) as usize } else { 1 + rng.below(16) as usize };
    let mut v = format!("{date}.{i}.").into_bytes();
    v.resize(len.max(v.len()), b'a' + (rng.below(26) as u8));
    v
}

/// The changes of the commit dated `date` on top of `base`: `count` adds, removes and copies.
/// Copies are only planned from subtrees that exist at that point (the model tracks them).
pub fn commit_ops(rng: &mut SplitMix64, base: &Model, date: i64, count: usize) -> (Vec<Op>, Model) {
    let mut model = base.clone();
    let mut ops = Vec::with_capacity(count);
    for i in 0..count {
        let op = match rng.below(20) {
            0..=13 => Op::Add(target(rng), value(rng, date, i)),
            14..=17 => Op::Remove(target(rng)),
            _ => {
                let from = source(rng);
                if model.subtree(&from).is_empty() {
                    Op::Add(target(rng), value(rng, date, i))
                } else {
                    Op::Copy(from, vec![step("c", rng.below(4))])
                }
            }
        };
        model.apply(&op);
        ops.push(op);
    }
    (ops, model)
}
