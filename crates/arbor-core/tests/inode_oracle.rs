//! Large directories (no public vector covers them): the inode trees built
//! with the incremental functions must hash like the plain `RefTree` oracle,
//! in the small test configuration and in the Tezos one.

mod common;

use std::collections::BTreeMap;

use arbor_core::reference::RefTree;
use arbor_core::toolbox::SplitMix64;
use arbor_core::InodeConfig;
use common::{dir, incremental_hash, val};
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;

fn step() -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 1..=40)
}

/// A child: mostly values, sometimes a small sub-directory (which exceeds
/// `stable_hash` in the small configuration, so it gets inodes too).
fn child() -> impl Strategy<Value = RefTree> {
    let contents = vec(any::<u8>(), 0..16).prop_map(RefTree::Contents);
    let sub = btree_map(step(), vec(any::<u8>(), 0..8), 0..8)
        .prop_map(|m| RefTree::Node(m.into_iter().map(|(k, v)| (k, RefTree::Contents(v))).collect()));
    prop_oneof![3 => contents, 1 => sub]
}

fn directory(max: usize) -> impl Strategy<Value = RefTree> {
    btree_map(step(), child(), 0..max).prop_map(RefTree::Node)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn small_config_matches_oracle(tree in directory(300)) {
        let cfg = InodeConfig::SMALL_TEST;
        prop_assert_eq!(incremental_hash(&tree, cfg), tree.hash(cfg));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn tezos_config_matches_oracle(tree in directory(4000)) {
        let cfg = InodeConfig::TEZOS;
        prop_assert_eq!(incremental_hash(&tree, cfg), tree.hash(cfg));
    }
}

/// The shared SplitMix64 on a bare state (`below` keeps this test's modulo draws), so the big test is
/// reproducible without proptest's overhead on 100,000 entries.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        SplitMix64::step(&mut self.0)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }

    fn step(&mut self) -> Vec<u8> {
        let len = 1 + self.below(40) as usize;
        self.bytes(len)
    }
}

fn random_directory(rng: &mut Rng, n: usize) -> RefTree {
    let mut map = BTreeMap::new();
    while map.len() < n {
        let child = if rng.below(4) == 0 {
            let k = rng.below(4) as usize;
            let mut sub = BTreeMap::new();
            for _ in 0..k {
                let len = rng.below(16) as usize;
                sub.insert(rng.step(), RefTree::Contents(rng.bytes(len)));
            }
            RefTree::Node(sub)
        } else {
            let len = rng.below(32) as usize;
            RefTree::Contents(rng.bytes(len))
        };
        map.insert(rng.step(), child);
    }
    RefTree::Node(map)
}

#[test]
fn hundred_thousand_entries_match_oracle() {
    let mut rng = Rng(0x00ab_c0de);
    let tree = random_directory(&mut rng, 100_000);
    let cfg = InodeConfig::TEZOS;
    assert_eq!(incremental_hash(&tree, cfg), tree.hash(cfg));
}

#[test]
fn sizes_around_the_thresholds_match_oracle() {
    // Flat/inode switch at 256, and Values/Tree switches in both configs.
    let mut rng = Rng(42);
    for n in [0, 1, 2, 3, 4, 31, 32, 33, 255, 256, 257, 1024, 1025] {
        let tree = random_directory(&mut rng, n);
        for cfg in [InodeConfig::SMALL_TEST, InodeConfig::TEZOS] {
            assert_eq!(incremental_hash(&tree, cfg), tree.hash(cfg), "{n} entries, {cfg:?}");
        }
    }
}

#[test]
fn large_directory_below_the_root_uses_inodes() {
    // "Only the root decides" means the root of each directory: a big
    // sub-directory is inode-hashed even though its parent is small.
    let big = dir((0..300u32).map(|i| (format!("k{i}"), val(i.to_le_bytes()))));
    let tree = dir([("big", big.clone()), ("x", val("y"))]);
    let cfg = InodeConfig::TEZOS;
    assert_eq!(incremental_hash(&tree, cfg), tree.hash(cfg));
    // Raising stable_hash makes it flat, which must change its hash.
    let flat_cfg = InodeConfig { stable_hash: 1000, ..cfg };
    assert_eq!(incremental_hash(&big, flat_cfg), big.hash(flat_cfg));
    assert_ne!(big.hash(cfg), big.hash(flat_cfg));
}
