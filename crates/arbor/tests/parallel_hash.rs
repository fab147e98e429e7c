//! Hashing a commit on two threads while it is written (`tree::Parts`: a helper and the
//! writer share the parts of the changed tree): the hash of every tree matches the reference
//! oracle, including trees where one unhashed subtree is grafted under many parts of a large
//! directory (both threads then meet the same nodes), and `Tree::hash` before a commit agrees
//! with the commit.

mod common;

use arbor::io::MemFs;
use arbor::{InodeConfig, Store};
use common::{mem_config, model_add, model_add_tree, model_hash, model_sub, path, Model, Rng};

fn id(n: u64) -> String {
    format!("{:040x}", n.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

#[test]
fn shared_subtrees_under_many_parts_hash_as_the_oracle_says() {
    let fs = MemFs::new();
    let store = Store::open_with("/s", mem_config(&fs)).unwrap();
    let mut model = Model::new();
    let mut tree = store.empty();
    // A large directory (more than 256 entries: an inode tree of 32 parts) and a flat one.
    for n in 0..1_500u64 {
        let p = path(&["index", &id(n), "balance"]);
        tree.add_mut(&p, &n.to_le_bytes()).unwrap();
        model_add(&mut model, &p, &n.to_le_bytes());
    }
    tree.add_mut(&["version"], b"1").unwrap();
    model_add(&mut model, &path(&["version"]), b"1");
    let mut parent = store.commit(&tree, &[], 0, "t", "base").unwrap();
    assert_eq!(parent_tree_hash(&store, &parent), model_hash(&model, InodeConfig::TEZOS));
    drop(tree);

    let mut rng = Rng::new(11);
    for block in 1..=6i64 {
        let mut tree = store.checkout(&parent).unwrap();
        // A subtree built in memory, never hashed, with several directories in it.
        let mut graft = store.empty();
        for d in 0..4u64 {
            for k in 0..3u64 {
                let name = format!("k{k}");
                graft.add_mut(&[format!("d{d}").as_str(), name.as_str()], &[block as u8, d as u8, k as u8]).unwrap();
            }
        }
        let sub = {
            let mut m = Model::new();
            for d in 0..4u64 {
                for k in 0..3u64 {
                    model_add(&mut m, &path(&[&format!("d{d}"), &format!("k{k}")]), &[block as u8, d as u8, k as u8]);
                }
            }
            model_sub(&m, &[])
        };
        // Grafted under accounts spread over every part of the large directory.
        for _ in 0..64 {
            let n = rng.below(1_500);
            let p = path(&["index", &id(n), "shared"]);
            tree.add_tree_mut(&p, &graft).unwrap();
            model_add_tree(&mut model, &p, &sub);
        }
        for _ in 0..100 {
            let n = rng.below(1_500);
            let p = path(&["index", &id(n), "balance"]);
            tree.add_mut(&p, &block.to_le_bytes()).unwrap();
            model_add(&mut model, &p, &block.to_le_bytes());
        }
        let expected = model_hash(&model, InodeConfig::TEZOS);
        // Odd blocks hash the tree first (Tree::hash: its parts on the pool, then the rest);
        // even blocks commit it unhashed (its parts hashed on the pool while it is written).
        if block % 2 == 1 {
            assert_eq!(tree.hash(), expected, "block {block}: Tree::hash");
        }
        parent = store.commit(&tree, &[parent], block, "t", "block").unwrap();
        assert_eq!(parent_tree_hash(&store, &parent), expected, "block {block}: commit");
    }
    common::assert_fsck_clean(&store, "after the blocks");
}

/// The tree hash a commit records, read back from the store.
fn parent_tree_hash(store: &Store, commit: &arbor::Hash) -> arbor::Hash {
    store.checkout(commit).unwrap().hash()
}
