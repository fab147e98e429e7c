//! Proofs with writes: the after-root the verifier recomputes from the partial tree equals the
//! hash of the tree with the writes applied (by an independent implementation of Tezos's
//! semantics), including when directories cross the flat / inode threshold either way.

mod proof_common;

use arbor_core::proof::{verify, Path, Proof, ProofError, ProofInode, ProofTree, Write};
use arbor_core::reference::RefTree;
use arbor_core::InodeConfig;
use proof_common::{apply, dir, lookup, path, prove_ref, random_reads, random_tree, random_writes, val, Rng, Shape};

/// Proves, verifies, and checks reads (in the before-tree) and the after-root.
fn check(t: &RefTree, cfg: InodeConfig, reads: &[Path], writes: &[Write]) -> Proof {
    let proof = prove_ref(t, cfg, reads, writes);
    let mut after = t.clone();
    for w in writes {
        apply(&mut after, w);
    }
    assert_eq!(proof.after, after.hash(cfg), "prover's after-root");
    let bytes = proof.encode();
    let v = verify(&bytes, &t.hash(cfg), cfg).unwrap();
    v.expect_reads(reads).unwrap();
    v.expect_writes(writes).unwrap();
    assert_eq!(v.after(), after.hash(cfg), "verifier's after-root");
    for p in reads {
        assert_eq!(v.get(p), Some(&lookup(t, p, cfg)));
    }
    proof
}

#[test]
fn random_writes_small_config() {
    let cfg = InodeConfig::SMALL_TEST;
    for seed in 0..400 {
        let mut rng = Rng(10_000 + seed);
        let t = random_tree(&mut rng, Shape::SMALL);
        let n = rng.below(4);
        let reads = random_reads(&mut rng, &t, n);
        let n = 1 + rng.below(12);
        let writes = random_writes(&mut rng, &t, n);
        check(&t, cfg, &reads, &writes);
    }
}

#[test]
fn random_writes_tezos_config() {
    let cfg = InodeConfig::TEZOS;
    for seed in 0..40 {
        let mut rng = Rng(20_000 + seed);
        let t = random_tree(&mut rng, Shape::TEZOS);
        let n = rng.below(5);
        let reads = random_reads(&mut rng, &t, n);
        let n = 1 + rng.below(30);
        let writes = random_writes(&mut rng, &t, n);
        check(&t, cfg, &reads, &writes);
    }
}

fn big(n: usize) -> RefTree {
    dir((0..n).map(|i| (format!("k{i}"), val(&[i as u8]))))
}

fn count_blinded_inodes(t: &ProofTree) -> usize {
    fn inode(i: &ProofInode) -> usize {
        match i {
            ProofInode::Blinded(_) => 1,
            ProofInode::Values(e) => e.iter().map(|(_, c)| count_blinded_inodes(c)).sum(),
            ProofInode::Tree { slots, .. } => slots.iter().map(|(_, c)| inode(c)).sum(),
        }
    }
    match t {
        ProofTree::Inode(i) => inode(i),
        ProofTree::Node(e) => e.iter().map(|(_, c)| count_blinded_inodes(c)).sum(),
        _ => 0,
    }
}

#[test]
fn a_large_directory_shrinking_to_flat_is_shown_whole() {
    let cfg = InodeConfig::TEZOS;
    let t = dir([("big", big(259)), ("x", val(b"x"))]);
    // Two removes leave 257 entries: still inodes, only the paths are shown.
    let writes: Vec<Write> = (0..2).map(|i| Write::Remove(path(&["big", &format!("k{i}")]))).collect();
    let p = check(&t, cfg, &[], &writes);
    assert!(count_blinded_inodes(&p.tree) > 0);
    // Three leave 256: hashed flat, from every binding, so no inode may stay blinded.
    let writes: Vec<Write> = (0..3).map(|i| Write::Remove(path(&["big", &format!("k{i}")]))).collect();
    let p = check(&t, cfg, &[], &writes);
    assert_eq!(count_blinded_inodes(&p.tree), 0);
    // Shrinking and growing back in between needs nothing more than the final count says.
    let mut writes: Vec<Write> = (0..10).map(|i| Write::Remove(path(&["big", &format!("k{i}")]))).collect();
    writes.extend((0..10).map(|i| Write::Add(path(&["big", &format!("n{i}")]), vec![1])));
    let p = check(&t, cfg, &[path(&["big", "k100"])], &writes);
    assert!(count_blinded_inodes(&p.tree) > 0);
}

#[test]
fn a_flat_directory_growing_into_inodes() {
    let cfg = InodeConfig::TEZOS;
    let t = dir([("d", big(255))]);
    let writes: Vec<Write> = (0..5).map(|i| Write::Add(path(&["d", &format!("new{i}")]), vec![i])).collect();
    check(&t, cfg, &[path(&["d", "k3"])], &writes);
}

#[test]
fn tree_inodes_collapsing_in_the_small_config() {
    let cfg = InodeConfig::SMALL_TEST;
    for n in 4..40 {
        let t = dir([("d", big(n)), ("e", val(b""))]);
        for keep in [0, 1, 2, 3, 4, n / 2] {
            let writes: Vec<Write> = (keep..n).map(|i| Write::Remove(path(&["d", &format!("k{i}")]))).collect();
            check(&t, cfg, &[], &writes);
        }
    }
}

#[test]
fn emptied_directories_disappear_and_values_make_way() {
    let cfg = InodeConfig::TEZOS;
    let t = dir([("a", dir([("b", dir([("c", val(b"1"))]))])), ("v", val(b"2"))]);
    let cases: Vec<Vec<Write>> = vec![
        vec![Write::Remove(path(&["a", "b", "c"]))],
        vec![Write::Remove(path(&["a", "b", "c"])), Write::Remove(path(&["v"]))],
        vec![Write::Add(path(&["v", "w"]), b"3".to_vec())],
        vec![Write::Add(path(&["a"]), b"4".to_vec()), Write::Add(path(&["a", "z"]), b"5".to_vec())],
        vec![Write::Remove(path(&[]))],
        vec![Write::Add(path(&[]), b"root".to_vec())],
        vec![Write::Remove(path(&["nothing", "here"])), Write::Remove(path(&["v", "below"]))],
    ];
    for writes in cases {
        check(&t, cfg, &[path(&["a", "b"])], &writes);
    }
}

#[test]
fn a_wrong_after_root_is_rejected() {
    let cfg = InodeConfig::SMALL_TEST;
    let t = random_tree(&mut Rng(77), Shape::SMALL);
    let writes = random_writes(&mut Rng(78), &t, 5);
    let mut proof = prove_ref(&t, cfg, &[], &writes);
    proof.after.0[0] ^= 1;
    let e = verify(&proof.encode(), &t.hash(cfg), cfg).unwrap_err();
    assert!(matches!(e, ProofError::AfterMismatch { .. }), "{e}");
    // Writes the proof does not cover cannot be applied.
    let mut proof = prove_ref(&t, cfg, &[], &writes[..1]);
    proof.writes = writes.clone();
    assert!(verify(&proof.encode(), &t.hash(cfg), cfg).is_err());
}
