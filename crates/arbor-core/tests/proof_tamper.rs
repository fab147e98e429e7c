//! Any change to a proof is rejected: every single-bit flip of its bytes, of a proved value, of
//! the trusted root; every truncation; any byte after it; a node shown that no claim needs,
//! and a claim that needs a node the proof blinds.

mod proof_common;

use arbor_core::proof::{verify, Path, Proof, ProofError, ProofInode, ProofTree, Write};
use arbor_core::reference::RefTree;
use arbor_core::{Hash, InodeConfig};
use proof_common::{dir, path, prove_ref, random_reads, random_tree, random_writes, val, Rng, Shape};

/// Verifies and checks the claims are the expected ones, as a client does.
fn accept(bytes: &[u8], root: &Hash, cfg: InodeConfig, reads: &[Path], writes: &[Write]) -> Result<(), ProofError> {
    let v = verify(bytes, root, cfg)?;
    v.expect_reads(reads)?;
    v.expect_writes(writes)
}

/// Flips every bit of the proof's bytes and checks each result is rejected; returns the
/// number of flips tried.
fn every_flip_rejected(t: &RefTree, cfg: InodeConfig, reads: &[Path], writes: &[Write]) -> usize {
    let bytes = prove_ref(t, cfg, reads, writes).encode();
    let root = t.hash(cfg);
    accept(&bytes, &root, cfg, reads, writes).expect("the untouched proof verifies");
    let mut flipped = bytes.clone();
    for i in 0..bytes.len() * 8 {
        flipped[i / 8] ^= 1 << (i % 8);
        let r = accept(&flipped, &root, cfg, reads, writes);
        assert!(r.is_err(), "flipping bit {i} of {} was accepted", bytes.len() * 8);
        flipped[i / 8] ^= 1 << (i % 8);
    }
    bytes.len() * 8
}

#[test]
fn every_bit_flip_of_small_read_proofs_is_rejected() {
    let cfg = InodeConfig::SMALL_TEST;
    let mut flips = 0;
    for seed in 0..40 {
        let mut rng = Rng(seed);
        let t = random_tree(&mut rng, Shape::SMALL);
        let n = 1 + rng.below(4);
        let reads = random_reads(&mut rng, &t, n);
        flips += every_flip_rejected(&t, cfg, &reads, &[]);
    }
    assert!(flips > 100_000, "{flips}");
}

#[test]
fn every_bit_flip_of_a_tezos_inode_proof_is_rejected() {
    let cfg = InodeConfig::TEZOS;
    let big = dir((0..300).map(|i| (format!("k{i}"), val(&[i as u8; 3]))));
    let t = dir([("a", val(b"x")), ("big", big), ("d", dir([("e", val(b"y"))]))]);
    let reads = [path(&["big", "k17"]), path(&["big", "nope"]), path(&["a"]), path(&["d"])];
    every_flip_rejected(&t, cfg, &reads, &[]);
}

#[test]
fn every_bit_flip_of_small_write_proofs_is_rejected() {
    let cfg = InodeConfig::SMALL_TEST;
    for seed in 0..25 {
        let mut rng = Rng(500 + seed);
        let t = random_tree(&mut rng, Shape::SMALL);
        let n = rng.below(3);
        let reads = random_reads(&mut rng, &t, n);
        let n = 1 + rng.below(4);
        let writes = random_writes(&mut rng, &t, n);
        every_flip_rejected(&t, cfg, &reads, &writes);
    }
}

#[test]
fn every_truncation_and_any_trailing_byte_is_rejected() {
    for (seed, cfg, shape) in [(1, InodeConfig::SMALL_TEST, Shape::SMALL), (2, InodeConfig::TEZOS, Shape::TEZOS)] {
        let mut rng = Rng(seed);
        let t = random_tree(&mut rng, shape);
        let reads = random_reads(&mut rng, &t, 6);
        let writes = random_writes(&mut rng, &t, 2);
        let bytes = prove_ref(&t, cfg, &reads, &writes).encode();
        let root = t.hash(cfg);
        for len in 0..bytes.len() {
            let e = verify(&bytes[..len], &root, cfg).unwrap_err();
            assert!(
                matches!(e, ProofError::Truncated { .. } | ProofError::BadMagic | ProofError::Malformed { .. }),
                "cut at {len}: {e}"
            );
        }
        for extra in [0u8, 1, 0x80, 0xff] {
            let mut longer = bytes.clone();
            longer.push(extra);
            assert_eq!(verify(&longer, &root, cfg).unwrap_err(), ProofError::TrailingBytes { at: bytes.len() });
        }
    }
}

#[test]
fn every_bit_flip_of_the_root_is_rejected() {
    let cfg = InodeConfig::SMALL_TEST;
    let t = random_tree(&mut Rng(11), Shape::SMALL);
    let reads = random_reads(&mut Rng(12), &t, 3);
    let bytes = prove_ref(&t, cfg, &reads, &[]).encode();
    let root = t.hash(cfg);
    for i in 0..256 {
        let mut bad = root;
        bad.0[i / 8] ^= 1 << (i % 8);
        assert!(matches!(verify(&bytes, &bad, cfg), Err(ProofError::RootMismatch { .. })), "bit {i}");
    }
}

/// Calls `f` on every shown value of the proof's tree.
fn each_value(t: &mut ProofTree, f: &mut dyn FnMut(&mut Vec<u8>)) {
    match t {
        ProofTree::Value(v) => f(v),
        ProofTree::Node(e) => e.iter_mut().for_each(|(_, c)| each_value(c, f)),
        ProofTree::Inode(i) => each_inode_value(i, f),
        ProofTree::BlindedValue(_) | ProofTree::BlindedNode(_) => {}
    }
}

fn each_inode_value(i: &mut ProofInode, f: &mut dyn FnMut(&mut Vec<u8>)) {
    match i {
        ProofInode::Values(e) => e.iter_mut().for_each(|(_, c)| each_value(c, f)),
        ProofInode::Tree { slots, .. } => slots.iter_mut().for_each(|(_, c)| each_inode_value(c, f)),
        ProofInode::Blinded(_) => {}
    }
}

#[test]
fn every_bit_flip_of_a_proved_value_is_rejected() {
    let cfg = InodeConfig::SMALL_TEST;
    let mut tried = 0;
    for seed in 0..20 {
        let mut rng = Rng(300 + seed);
        let t = random_tree(&mut rng, Shape::SMALL);
        let reads = random_reads(&mut rng, &t, 4);
        let proof = prove_ref(&t, cfg, &reads, &[]);
        let root = t.hash(cfg);
        let mut n_values = 0;
        each_value(&mut proof.clone().tree, &mut |_| n_values += 1);
        for k in 0..n_values {
            // Flip every bit of the k-th value, and also lengthen it.
            let mut len = 0;
            let mut probe = proof.clone();
            let mut i = 0;
            each_value(&mut probe.tree, &mut |v| {
                if i == k {
                    len = v.len();
                }
                i += 1;
            });
            for bit in 0..=len * 8 {
                let mut bad = proof.clone();
                let mut i = 0;
                each_value(&mut bad.tree, &mut |v| {
                    if i == k {
                        if bit == len * 8 {
                            v.push(0);
                        } else {
                            v[bit / 8] ^= 1 << (bit % 8);
                        }
                    }
                    i += 1;
                });
                let e = verify(&bad.encode(), &root, cfg).unwrap_err();
                assert!(matches!(e, ProofError::RootMismatch { .. }), "{e}");
                tried += 1;
            }
        }
    }
    assert!(tried > 200, "{tried}");
}

#[test]
fn excess_nodes_are_rejected() {
    let cfg = InodeConfig::TEZOS;
    let big = dir((0..300).map(|i| (format!("k{i}"), val(&[i as u8]))));
    let t = dir([("a", val(b"x")), ("big", big), ("d", dir([("e", val(b"y"))]))]);
    let root = t.hash(cfg);
    // Proved for two paths, claiming only one: what the other needed is excess.
    for (both, claimed) in [
        ([path(&["a"]), path(&["d", "e"])], path(&["a"])),
        ([path(&["a"]), path(&["big", "k5"])], path(&["a"])),
        ([path(&["d", "e"]), path(&["a"])], path(&["d", "e"])),
    ] {
        let mut proof = prove_ref(&t, cfg, &both, &[]);
        proof.reads = vec![claimed];
        let e = verify(&proof.encode(), &root, cfg).unwrap_err();
        assert!(matches!(e, ProofError::Excess { .. }), "{e}");
    }
}

#[test]
fn claims_beyond_the_proof_are_not_provable() {
    let cfg = InodeConfig::TEZOS;
    let big = dir((0..300).map(|i| (format!("k{i}"), val(&[i as u8]))));
    let t = dir([("a", val(b"x")), ("big", big), ("d", dir([("e", val(b"y"))]))]);
    let root = t.hash(cfg);
    let proof = prove_ref(&t, cfg, &[path(&["a"])], &[]);
    for extra in [path(&["d", "e"]), path(&["big", "k1"]), path(&["a"]).into_iter().chain([b"x".to_vec()]).collect()] {
        let mut p = proof.clone();
        p.reads.push(extra.clone());
        p.reads.sort();
        match verify(&p.encode(), &root, cfg) {
            Err(ProofError::NotProvable { .. }) => {}
            // A path through a value is absent without more of the tree: provable.
            Ok(v) => assert_eq!(extra.len(), 2, "{v:?}"),
            Err(e) => panic!("{e}"),
        }
    }
    // A value shown only by its hash cannot be read.
    let proof = prove_ref(&t, cfg, &[path(&["d", "e"])], &[]);
    let mut p = proof.clone();
    p.reads.push(path(&["a"]));
    p.reads.sort();
    assert!(matches!(verify(&p.encode(), &root, cfg), Err(ProofError::NotProvable { .. })));
}

#[test]
fn malformed_encodings_are_rejected() {
    let cfg = InodeConfig::SMALL_TEST;
    let t = random_tree(&mut Rng(5), Shape::SMALL);
    let reads = random_reads(&mut Rng(6), &t, 3);
    let proof = prove_ref(&t, cfg, &reads, &[]);
    let root = t.hash(cfg);
    let bytes = proof.encode();
    // Magic, version.
    let mut b = bytes.clone();
    b[0] = b'X';
    assert_eq!(verify(&b, &root, cfg).unwrap_err(), ProofError::BadMagic);
    let mut b = bytes.clone();
    b[4] = 2;
    assert_eq!(verify(&b, &root, cfg).unwrap_err(), ProofError::UnsupportedVersion(2));
    // Unsorted reads.
    let mut p = proof.clone();
    p.reads = vec![path(&["b"]), path(&["a"])];
    assert!(matches!(verify(&p.encode(), &root, cfg), Err(ProofError::Malformed { .. })));
    // A one-slot configuration.
    let mut p = proof.clone();
    p.config = InodeConfig { entries: 1, stable_hash: 3 };
    assert!(matches!(Proof::decode(&p.encode()), Err(ProofError::BadConfig(_))));
    // A non-minimal integer: the reads count 0 spelled 0x80 0x00 (an empty read list).
    let p = prove_ref(&t, cfg, &[], &[]);
    let mut b = p.encode();
    let n = b.len();
    assert_eq!(&b[n - 2..], &[0, 0]);
    b.splice(n - 2..n - 1, [0x80, 0x00]);
    assert!(matches!(verify(&b, &root, cfg), Err(ProofError::Malformed { .. })));
}
