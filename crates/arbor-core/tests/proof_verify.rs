//! Read proofs built by the reference prover verify from their bytes alone, hash to the Tezos
//! context hash (flat directories and inode trees alike) and prove what the tree holds,
//! absences included.

mod proof_common;

use arbor_core::proof::{verify, verify_paths, Path, Proof, ProofError, ProofInode, ProofTree, Proved};
use arbor_core::reference::RefTree;
use arbor_core::{Hash, InodeConfig};
use proof_common::{dir, lookup, path, prove_ref, random_reads, random_tree, val, Rng, Shape};

/// Proves `reads` on `t`, verifies the bytes, and checks every answer against the tree.
fn check_reads(t: &RefTree, cfg: InodeConfig, reads: &[Path]) -> (Proof, Vec<u8>) {
    let proof = prove_ref(t, cfg, reads, &[]);
    let bytes = proof.encode();
    assert_eq!(Proof::decode(&bytes).unwrap(), proof, "decode(encode(p)) = p");
    let root = t.hash(cfg);
    let v = verify_paths(&bytes, &root, cfg, reads).unwrap();
    assert_eq!(v.before(), root);
    assert_eq!(v.after(), root);
    assert!(v.writes().is_empty());
    for p in reads {
        assert_eq!(v.get(p), Some(&lookup(t, p, cfg)), "at {p:?}");
    }
    (proof, bytes)
}

#[test]
fn random_trees_small_config() {
    let cfg = InodeConfig::SMALL_TEST;
    for seed in 0..300 {
        let mut rng = Rng(seed);
        let t = random_tree(&mut rng, Shape::SMALL);
        let n = [1, 2, 5, 20][rng.below(4)];
        let reads = random_reads(&mut rng, &t, n);
        check_reads(&t, cfg, &reads);
    }
}

#[test]
fn random_trees_tezos_config_with_large_directories() {
    let cfg = InodeConfig::TEZOS;
    let mut large = 0;
    for seed in 0..40 {
        let mut rng = Rng(1000 + seed);
        let t = random_tree(&mut rng, Shape::TEZOS);
        let n = [1, 3, 10, 50][rng.below(4)];
        let reads = random_reads(&mut rng, &t, n);
        let (proof, _) = check_reads(&t, cfg, &reads);
        large += usize::from(has_inode(&proof.tree));
    }
    assert!(large > 10, "only {large} proofs went through an inode tree");
}

fn has_inode(t: &ProofTree) -> bool {
    match t {
        ProofTree::Inode(_) => true,
        ProofTree::Node(e) => e.iter().any(|(_, c)| has_inode(c)),
        _ => false,
    }
}

/// The published small-configuration inode vector: a proof of one entry hashes to it.
#[test]
fn small_config_vector_root() {
    let zeros = val(b"0000000000");
    let t = dir((0..6).map(|i| (format!("0{i}"), zeros.clone())));
    let root = Hash::from_hex("e670a325ac78b2b6949b8f9fa448b17aa708ef39eb29c9e364be473f988329ea").unwrap();
    let cfg = InodeConfig::SMALL_TEST;
    let reads = [path(&["03"]), path(&["07"])];
    let proof = prove_ref(&t, cfg, &reads, &[]);
    assert!(matches!(proof.tree, ProofTree::Inode(ProofInode::Tree { count: 6, .. })));
    let v = verify_paths(&proof.encode(), &root, cfg, &reads).unwrap();
    assert_eq!(v.get(&["03"]), Some(&Proved::Value(b"0000000000".to_vec())));
    assert_eq!(v.get(&["07"]), Some(&Proved::Absent));
}

/// The published flat-directory vector.
#[test]
fn flat_vector_root() {
    let zeros = val(b"0000000000");
    let t = dir([("00", zeros.clone()), ("01", zeros)]);
    let root = Hash::from_hex("83722c2791a1c47dada4718656a20a2f3a063ae9945b475e67bbb6ef29d88ca4").unwrap();
    let cfg = InodeConfig::TEZOS;
    let reads = [path(&["01"])];
    let proof = prove_ref(&t, cfg, &reads, &[]);
    let ProofTree::Node(entries) = &proof.tree else { panic!("flat root expected") };
    assert!(entries[0].1.is_blinded() && !entries[1].1.is_blinded(), "only the proved entry is shown");
    verify_paths(&proof.encode(), &root, cfg, &reads).unwrap();
}

#[test]
fn absences_of_every_kind() {
    let cfg = InodeConfig::TEZOS;
    let big = dir((0..300).map(|i| (format!("k{i}"), val(&[i as u8]))));
    let t = dir([("a", val(b"x")), ("big", big), ("d", dir([("e", val(b"y"))]))]);
    let root = t.hash(cfg);
    let reads = [
        path(&["zz"]),                // missing step in a flat directory
        path(&["a", "b"]),            // through a value
        path(&["big", "k1000"]),      // missing step in an inode tree
        path(&["big", "k7", "deep"]), // through a value inside an inode tree
        path(&["d", "nope", "x"]),    // missing step, then more steps
    ];
    let (_, bytes) = check_reads(&t, cfg, &reads);
    let v = verify_paths(&bytes, &root, cfg, &reads).unwrap();
    assert!(v.reads().iter().all(|(_, r)| *r == Proved::Absent));
}

#[test]
fn directories_are_proved_by_hash() {
    let cfg = InodeConfig::TEZOS;
    let sub = dir([("e", val(b"y"))]);
    let t = dir([("d", sub.clone()), ("v", val(b"1"))]);
    let (proof, _) = check_reads(&t, cfg, &[path(&[])]);
    // Nothing goes below the root: the whole proof is the blinded root.
    assert_eq!(proof.tree, ProofTree::BlindedNode(t.hash(cfg)));
    let (proof, _) = check_reads(&t, cfg, &[path(&["d"])]);
    // The root is shown (to find `d`), `d` itself only by its hash.
    let ProofTree::Node(entries) = &proof.tree else { panic!("flat root expected") };
    assert!(entries.iter().all(|(_, c)| c.is_blinded()));
    let proof = prove_ref(&t, cfg, &[path(&["d"]), path(&["d", "e"])], &[]);
    let v = verify(&proof.encode(), &t.hash(cfg), cfg).unwrap();
    assert_eq!(v.get(&["d"]), Some(&Proved::Dir(sub.hash(cfg))));
}

#[test]
fn a_value_at_the_root() {
    let cfg = InodeConfig::TEZOS;
    let t = val(b"root");
    let reads = [path(&[]), path(&["a"])];
    let (_, bytes) = check_reads(&t, cfg, &reads);
    let v = verify(&bytes, &t.hash(cfg), cfg).unwrap();
    assert_eq!(v.get::<&str>(&[]), Some(&Proved::Value(b"root".to_vec())));
}

#[test]
fn no_reads_proves_only_the_root() {
    let cfg = InodeConfig::SMALL_TEST;
    let t = random_tree(&mut Rng(7), Shape::SMALL);
    let (proof, bytes) = check_reads(&t, cfg, &[]);
    assert!(proof.tree.is_blinded());
    assert_eq!(bytes.len(), 4 + 1 + 2 + 64 + 33 + 2);
}

#[test]
fn wrong_root_or_config_is_rejected() {
    let cfg = InodeConfig::SMALL_TEST;
    let t = random_tree(&mut Rng(3), Shape::SMALL);
    let reads = random_reads(&mut Rng(4), &t, 5);
    let bytes = prove_ref(&t, cfg, &reads, &[]).encode();
    let other = Hash([7; 32]);
    assert!(matches!(verify(&bytes, &other, cfg), Err(ProofError::RootMismatch { .. })));
    let e = verify(&bytes, &t.hash(cfg), InodeConfig::TEZOS).unwrap_err();
    assert!(matches!(e, ProofError::ConfigMismatch { .. }), "{e}");
    let v = verify(&bytes, &t.hash(cfg), cfg).unwrap();
    assert_eq!(v.expect_reads(&[path(&["not", "asked"])]), Err(ProofError::ReadsMismatch));
}

#[test]
fn deep_paths_are_bounded() {
    let cfg = InodeConfig::TEZOS;
    let mut t = val(b"leaf");
    for _ in 0..600 {
        t = dir([("s", t)]);
    }
    let long: Path = vec![b"s".to_vec(); 600];
    let e = arbor_core::proof::prove(&arbor_core::proof::RefSource::new(cfg), &&t, cfg, &[long], &[]).unwrap_err();
    assert_eq!(e, arbor_core::proof::ProveError::Proof(ProofError::TooDeep));
    let ok: Path = vec![b"s".to_vec(); 300];
    check_reads(&t, cfg, &[ok]);
}
