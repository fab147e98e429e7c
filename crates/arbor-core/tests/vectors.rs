//! Every published vector of the Tezos context hash spec
//! (`docs/HASH.md` section 9), through both the incremental
//! functions and the plain `RefTree` oracle.

mod common;

use arbor_core::base58::base58check_decode;
use arbor_core::reference::RefTree;
use arbor_core::{commit_hash, contents_hash, flat_node_hash, ChildKind, Hash, InodeConfig};
use common::{dir, incremental_hash, val};

const TEN_ZEROS: &[u8] = b"0000000000";

fn hex(s: &str) -> Hash {
    Hash::from_hex(s).unwrap()
}

fn co(s: &str) -> Hash {
    Hash::from_base58(s).unwrap()
}

/// Hashes `tree` both ways, checks they agree, and returns the hash.
fn both(tree: &RefTree, cfg: InodeConfig) -> Hash {
    let oracle = tree.hash(cfg);
    assert_eq!(incremental_hash(tree, cfg), oracle, "incremental vs oracle");
    oracle
}

#[test]
fn contents_vector() {
    let h = contents_hash(TEN_ZEROS);
    assert_eq!(h, hex("d81e60258ecc8bd7064c8703888aececfc54e29ff94f7a2d9a84667a500548e1"));
    assert_eq!(h.to_base58(), "CoWHVKM5r2eiHQxhicqakkr5FwJfabahGBwCCWzRPCNPs79CoZty");
    assert_eq!(both(&val(TEN_ZEROS), InodeConfig::TEZOS), h);
}

fn two_entry_dir() -> RefTree {
    dir([("00", val(TEN_ZEROS)), ("01", val(TEN_ZEROS))])
}

const TWO_ENTRY_HEX: &str = "83722c2791a1c47dada4718656a20a2f3a063ae9945b475e67bbb6ef29d88ca4";

#[test]
fn two_entry_directory_vector() {
    let c = contents_hash(TEN_ZEROS);
    let direct =
        flat_node_hash([(&b"00"[..], ChildKind::Contents, &c), (&b"01"[..], ChildKind::Contents, &c)].into_iter());
    assert_eq!(direct, hex(TWO_ENTRY_HEX));
    assert_eq!(direct.to_base58(), "CoVeCU4o3dqmfdwqt2vh8LDz9X6qGbTUyLhgVvFReyzAvTf92AKx");
    assert_eq!(both(&two_entry_dir(), InodeConfig::TEZOS), direct);
}

#[test]
fn commit_vector() {
    let tree = hex(TWO_ENTRY_HEX);
    let parent = hex("634d894802f9032ef48bbe1253563dbeb2aad7dc684da83bdea5692fde2185ae");
    let h = commit_hash(&tree, &[parent], 0, b"Tezos", b"");
    assert_eq!(h, hex("c20860adda3c3d40d8d03fab22b07e889979cdac880d979711aa852a0896ae30"));
    assert_eq!(h.to_base58(), "CoW7mALEs2vue5cfTMdJfSAjNmjmALYS1YyqSsYr9siLcNEcrvAm");
}

/// A merge commit of the two-entry directory whose parents are the published
/// commit above and its parent, message `merge`. The expected hash was
/// computed from `docs/HASH.md` section 6 with a separate Blake2b (Python's
/// hashlib), parents in increasing byte order (`634d…` before `c208…`); the
/// other order would give `7ab10593…`.
#[test]
fn merge_commit_vector_either_parent_order() {
    let tree = hex(TWO_ENTRY_HEX);
    let low = hex("634d894802f9032ef48bbe1253563dbeb2aad7dc684da83bdea5692fde2185ae");
    let high = hex("c20860adda3c3d40d8d03fab22b07e889979cdac880d979711aa852a0896ae30");
    let expected = hex("8aed03418b9dfa6f461a269173638cc53d8078e5a0ee63ab421efa604c093009");
    assert_eq!(commit_hash(&tree, &[low, high], 0, b"Tezos", b"merge"), expected);
    assert_eq!(commit_hash(&tree, &[high, low], 0, b"Tezos", b"merge"), expected);
}

#[test]
fn small_config_inode_vector() {
    let tree = dir((0..6).map(|i| (format!("0{i}"), val(TEN_ZEROS))));
    let h = both(&tree, InodeConfig::SMALL_TEST);
    assert_eq!(h, hex("e670a325ac78b2b6949b8f9fa448b17aa708ef39eb29c9e364be473f988329ea"));
    // In the Tezos configuration the same directory is flat, hence different.
    assert_ne!(both(&tree, InodeConfig::TEZOS), h);
}

/// The genesis tree of the demo protocol.
///
/// `test_chain` holds ONE zero byte (the data_encoding of the test chain
/// status `Not_running`), not the two ASCII characters "00": with one zero
/// byte the genesis commit is CoVea41f9d…, as published; with b"00" it is
/// CoWKwH4ZGWnNy9EcPLgugN94tvgrcbzFhB3UfknQABcJ2VcU6Rxy instead.
fn genesis_entries() -> Vec<(Vec<u8>, RefTree)> {
    let (prefix, proto) = base58check_decode("ProtoDemoNoopsDemoNoopsDemoNoopsDemoNoopsDemo6XBoYp", 2).unwrap();
    assert_eq!(prefix.len(), 2);
    assert_eq!(proto.len(), 32);
    vec![(b"protocol".to_vec(), RefTree::Contents(proto)), (b"test_chain".to_vec(), RefTree::Contents(vec![0u8]))]
}

const GENESIS: &str = "CoVea41f9dPhkymYEfPsXV5FmyzDb91iz1Grk6zasb31zv9nEZjN";

#[test]
fn genesis_vector() {
    let tree = dir(genesis_entries());
    let h = commit_hash(&both(&tree, InodeConfig::TEZOS), &[], 0, b"Tezos", b"Genesis");
    assert_eq!(h.to_string(), GENESIS);
}

/// Genesis plus the `data/` sub-tree of Octez's test_context.ml, with one
/// extra `data/` + n × 'a' → "foo2" entry per `lengths`.
fn data_tree(lengths: &[usize]) -> RefTree {
    let a = dir([("aaaaaaa", val("foo1")), ("aaaaaaaa", val("foo2"))]);
    let mut data = vec![(b"a".to_vec(), a)];
    for &n in lengths {
        data.push((vec![b'a'; n], val("foo2")));
    }
    let mut root = genesis_entries();
    root.push((b"data".to_vec(), dir(data)));
    dir(root)
}

fn commit_on_genesis(tree: &RefTree) -> Hash {
    let root = both(tree, InodeConfig::TEZOS);
    commit_hash(&root, &[co(GENESIS)], 0, b"Tezos", b"")
}

#[test]
fn data_vector() {
    let h = commit_on_genesis(&data_tree(&[16, 32, 64, 127]));
    assert_eq!(h.to_string(), "CoWJsL2ehZ39seTr8inBCJb5tVjW8KGNweJ5cvuVq51mAASrRmim");
}

#[test]
fn data_vector_with_255_byte_step() {
    // A 255-byte step needs a two-byte LEB128 length (0xff 0x01).
    let h = commit_on_genesis(&data_tree(&[16, 32, 64, 127, 255]));
    assert_eq!(h.to_string(), "CoVexcEHMXmSA2k42aNc5MCDtVJFRs3CC6vcQWYwFoj7EFsBPw1c");
}
