//! Stream proofs: they verify on random trees (small and Tezos configurations, large
//! directories included), prove the same as the tree proofs of the same claims, and any change
//! is rejected: every single-bit flip, truncation, an element too many, elements reordered.

mod proof_common;

use arbor_core::proof::{
    decode_stream, encode_stream, prove_stream, verify, verify_stream, verify_stream_paths, Path, ProofError, Proved,
    RefSource, Verified, Write,
};
use arbor_core::reference::RefTree;
use arbor_core::{Hash, InodeConfig};
use proof_common::{apply, dir, lookup, path, prove_ref, random_reads, random_tree, random_writes, val, Rng, Shape};

/// The tree proof and the stream proof of the claims; checks both verify alike and that the
/// stream decodes back to the tree proof.
fn both(t: &RefTree, cfg: InodeConfig, reads: &[Path], writes: &[Write]) -> (Verified, Vec<u8>) {
    let proof = prove_ref(t, cfg, reads, writes);
    let stream = encode_stream(&proof).expect("a built proof streams");
    let direct = prove_stream(&RefSource::new(cfg), &t, cfg, reads, writes).unwrap();
    assert_eq!(stream, direct);
    let root = t.hash(cfg);
    assert_eq!(decode_stream(&stream, &root, cfg).unwrap(), proof);
    let from_tree = verify(&proof.encode(), &root, cfg).expect("tree proof verifies");
    let from_stream = verify_stream(&stream, &root, cfg).expect("stream proof verifies");
    assert_eq!(from_tree, from_stream);
    (from_stream, stream)
}

/// Checks the verified reads against the tree and the after-root against the writes applied.
fn check_claims(t: &RefTree, cfg: InodeConfig, v: &Verified, writes: &[Write]) {
    for (p, proved) in v.reads() {
        assert_eq!(*proved, lookup(t, p, cfg), "read {p:?}");
    }
    let mut after = t.clone();
    writes.iter().for_each(|w| apply(&mut after, w));
    assert_eq!(v.after(), after.hash(cfg));
}

#[test]
fn random_trees_small_config() {
    let cfg = InodeConfig::SMALL_TEST;
    for seed in 0..300 {
        let mut rng = Rng(seed);
        let t = random_tree(&mut rng, Shape::SMALL);
        let n = 1 + rng.below(8);
        let reads = random_reads(&mut rng, &t, n);
        let n = rng.below(4);
        let writes = random_writes(&mut rng, &t, n);
        let (v, _) = both(&t, cfg, &reads, &writes);
        check_claims(&t, cfg, &v, &writes);
    }
}

#[test]
fn random_trees_tezos_config_with_large_directories() {
    let cfg = InodeConfig::TEZOS;
    let mut large = 0;
    for seed in 0..40 {
        let mut rng = Rng(1000 + seed);
        let t = random_tree(&mut rng, Shape::TEZOS);
        let n = 1 + rng.below(30);
        let reads = random_reads(&mut rng, &t, n);
        let n = rng.below(4);
        let writes = random_writes(&mut rng, &t, n);
        let proof = prove_ref(&t, cfg, &reads, &writes);
        large += usize::from(format!("{:?}", proof.tree).contains("Inode"));
        let (v, _) = both(&t, cfg, &reads, &writes);
        check_claims(&t, cfg, &v, &writes);
    }
    assert!(large > 5, "{large}");
}

#[test]
fn a_directory_of_300_entries() {
    let cfg = InodeConfig::TEZOS;
    let big = dir((0..300).map(|i| (format!("k{i}"), val(&[i as u8; 3]))));
    let t = dir([("a", val(b"x")), ("big", big), ("d", dir([("e", val(b"y"))]))]);
    let reads = [path(&["big", "k17"]), path(&["big", "nope"]), path(&["a"]), path(&["d"]), path(&["big", "k299"])];
    let (v, stream) = both(&t, cfg, &reads, &[]);
    check_claims(&t, cfg, &v, &[]);
    verify_stream_paths(&stream, &t.hash(cfg), cfg, &reads).unwrap();
    // Removing most of it makes the directory flat again: its whole inode tree is streamed.
    let writes: Vec<Write> = (0..45).map(|i| Write::Remove(path(&["big", &format!("k{i}")]))).collect();
    let (v, stream) = both(&t, cfg, &[], &writes);
    check_claims(&t, cfg, &v, &writes);
    let inodes = elements(&stream).iter().filter(|r| matches!(stream[r.start], 0x11 | 0x12)).count();
    assert!(inodes > 20, "{inodes}");
}

#[test]
fn absences_and_directories() {
    let cfg = InodeConfig::SMALL_TEST;
    let t = dir([("a", val(b"1")), ("d", dir([("x", val(b"2")), ("y", dir([("z", val(b"3"))]))]))]);
    let reads = [
        path(&["nope"]),
        path(&["a", "below", "a", "value"]),
        path(&["d", "q"]),
        path(&["d", "y"]),
        path(&["d", "y", "z", "w"]),
    ];
    let (v, _) = both(&t, cfg, &reads, &[]);
    let proved: Vec<&Proved> = v.reads().iter().map(|(_, p)| p).collect();
    assert_eq!(proved[0], &Proved::Absent);
    assert_eq!(proved[1], &Proved::Absent);
    assert!(matches!(proved[2], Proved::Dir(_)), "{proved:?}");
    check_claims(&t, cfg, &v, &[]);
}

#[test]
fn no_claims_is_the_header_alone() {
    let cfg = InodeConfig::SMALL_TEST;
    let t = random_tree(&mut Rng(3), Shape::SMALL);
    let (v, stream) = both(&t, cfg, &[], &[]);
    assert!(v.reads().is_empty());
    // Magic, version, config, root kind, two hashes, two empty lists.
    assert_eq!(stream.len(), 4 + 1 + 2 + 1 + 64 + 2);
}

/// Verifies as a client does: the claims must be the expected ones.
fn accept(bytes: &[u8], root: &Hash, cfg: InodeConfig, reads: &[Path], writes: &[Write]) -> Result<(), ProofError> {
    let v = verify_stream(bytes, root, cfg)?;
    v.expect_reads(reads)?;
    v.expect_writes(writes)
}

fn every_flip_rejected(t: &RefTree, cfg: InodeConfig, reads: &[Path], writes: &[Write]) -> usize {
    let (_, bytes) = both(t, cfg, reads, writes);
    let root = t.hash(cfg);
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
fn every_bit_flip_of_small_stream_proofs_is_rejected() {
    let cfg = InodeConfig::SMALL_TEST;
    let mut flips = 0;
    for seed in 0..40 {
        let mut rng = Rng(seed);
        let t = random_tree(&mut rng, Shape::SMALL);
        let n = 1 + rng.below(4);
        let reads = random_reads(&mut rng, &t, n);
        let n = rng.below(3);
        let writes = random_writes(&mut rng, &t, n);
        flips += every_flip_rejected(&t, cfg, &reads, &writes);
    }
    assert!(flips > 50_000, "{flips}");
}

#[test]
fn every_bit_flip_of_a_tezos_inode_stream_is_rejected() {
    let cfg = InodeConfig::TEZOS;
    let big = dir((0..300).map(|i| (format!("k{i}"), val(&[i as u8; 3]))));
    let t = dir([("a", val(b"x")), ("big", big)]);
    let reads = [path(&["big", "k17"]), path(&["big", "nope"]), path(&["a"])];
    every_flip_rejected(&t, cfg, &reads, &[]);
}

#[test]
fn every_bit_flip_of_the_root_is_rejected() {
    let cfg = InodeConfig::SMALL_TEST;
    let t = random_tree(&mut Rng(11), Shape::SMALL);
    let reads = random_reads(&mut Rng(12), &t, 3);
    let (_, bytes) = both(&t, cfg, &reads, &[]);
    let root = t.hash(cfg);
    for i in 0..256 {
        let mut bad = root;
        bad.0[i / 8] ^= 1 << (i % 8);
        assert!(matches!(verify_stream(&bytes, &bad, cfg), Err(ProofError::RootMismatch { .. })), "bit {i}");
    }
}

#[test]
fn truncation_and_excess_elements_are_rejected() {
    for (seed, cfg, shape) in [(1, InodeConfig::SMALL_TEST, Shape::SMALL), (2, InodeConfig::TEZOS, Shape::TEZOS)] {
        let mut rng = Rng(seed);
        let t = random_tree(&mut rng, shape);
        let reads = random_reads(&mut rng, &t, 6);
        let writes = random_writes(&mut rng, &t, 2);
        let (_, bytes) = both(&t, cfg, &reads, &writes);
        let root = t.hash(cfg);
        for len in 0..bytes.len() {
            let e = verify_stream(&bytes[..len], &root, cfg).unwrap_err();
            assert!(
                matches!(e, ProofError::Truncated { .. } | ProofError::BadMagic | ProofError::Malformed { .. }),
                "cut at {len}: {e}"
            );
        }
        // Any byte after the last element, and a whole element more (the first one again).
        for extra in [0u8, 1, 0x80, 0xff] {
            let mut longer = bytes.clone();
            longer.push(extra);
            assert_eq!(verify_stream(&longer, &root, cfg).unwrap_err(), ProofError::TrailingBytes { at: bytes.len() });
        }
        let first = elements(&bytes)[0].clone();
        let mut longer = bytes.clone();
        longer.extend_from_slice(&bytes[first]);
        assert_eq!(verify_stream(&longer, &root, cfg).unwrap_err(), ProofError::TrailingBytes { at: bytes.len() });
    }
}

/// A LEB128 integer at `*at`.
fn leb(b: &[u8], at: &mut usize) -> usize {
    let (mut n, mut shift) = (0usize, 0);
    loop {
        let byte = b[*at];
        *at += 1;
        n |= usize::from(byte & 0x7f) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            return n;
        }
    }
}

fn skip_bytes(b: &[u8], at: &mut usize) {
    let n = leb(b, at);
    *at += n;
}

fn skip_path(b: &[u8], at: &mut usize) {
    for _ in 0..leb(b, at) {
        skip_bytes(b, at);
    }
}

/// The byte ranges of the elements of a stream proof, parsed independently of the library.
fn elements(b: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut at = 5;
    leb(b, &mut at);
    leb(b, &mut at);
    at += 1 + 64;
    for _ in 0..leb(b, &mut at) {
        skip_path(b, &mut at);
    }
    for _ in 0..leb(b, &mut at) {
        let add = b[at] == 1;
        at += 1;
        skip_path(b, &mut at);
        if add {
            skip_bytes(b, &mut at);
        }
    }
    let mut out = Vec::new();
    while at < b.len() {
        let start = at;
        at += 1;
        match b[start] {
            0x00 => skip_bytes(b, &mut at),
            0x02 | 0x11 => {
                for _ in 0..leb(b, &mut at) {
                    skip_bytes(b, &mut at);
                    at += 1 + 32;
                }
            }
            0x12 => {
                leb(b, &mut at);
                for _ in 0..leb(b, &mut at) {
                    leb(b, &mut at);
                    at += 32;
                }
            }
            t => panic!("unknown element tag {t:#x}"),
        }
        out.push(start..at);
    }
    assert_eq!(at, b.len());
    out
}

/// `bytes` with its elements in the order `order` (indices into [`elements`]).
fn reorder(bytes: &[u8], els: &[std::ops::Range<usize>], order: &[usize]) -> Vec<u8> {
    let mut out = bytes[..els[0].start].to_vec();
    order.iter().for_each(|&k| out.extend_from_slice(&bytes[els[k].clone()]));
    out
}

#[test]
fn reordered_or_dropped_elements_are_rejected() {
    for seed in 0..30 {
        let cfg = if seed % 3 == 0 { InodeConfig::TEZOS } else { InodeConfig::SMALL_TEST };
        let shape = if seed % 3 == 0 { Shape::TEZOS } else { Shape::SMALL };
        let mut rng = Rng(7000 + seed);
        let t = random_tree(&mut rng, shape);
        let reads = random_reads(&mut rng, &t, 4);
        let n = rng.below(3);
        let writes = random_writes(&mut rng, &t, n);
        let (_, bytes) = both(&t, cfg, &reads, &writes);
        let root = t.hash(cfg);
        let els = elements(&bytes);
        let all: Vec<usize> = (0..els.len()).collect();
        assert_eq!(reorder(&bytes, &els, &all), bytes);
        for i in 0..els.len() {
            for j in i + 1..els.len() {
                let mut order = all.clone();
                order.swap(i, j);
                let swapped = reorder(&bytes, &els, &order);
                if swapped != bytes {
                    assert!(accept(&swapped, &root, cfg, &reads, &writes).is_err(), "seed {seed}: swap {i} {j}");
                }
            }
            let mut order = all.clone();
            order.remove(i);
            let dropped = reorder(&bytes, &els, &order);
            assert!(verify_stream(&dropped, &root, cfg).is_err(), "seed {seed}: drop {i}");
            // The element repeated right after itself.
            let mut order = all.clone();
            order.insert(i, i);
            let twice = reorder(&bytes, &els, &order);
            assert!(verify_stream(&twice, &root, cfg).is_err(), "seed {seed}: twice {i}");
        }
    }
}
