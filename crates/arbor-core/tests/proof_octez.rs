//! Octez proofs: round trips through both encodings for both shapes, verification against
//! independent hashes and lookups, every single-byte change rejected, byte vectors written by
//! hand from the format description, and hostile input.

mod octez_common;
mod proof_common;

use arbor_core::proof::octez::{
    decode_stream_proof, decode_tree_proof, encode_stream_proof, encode_tree_proof, octez_stream, to_octez,
    verify_octez_stream, verify_octez_tree, Elt, Encoding, Extender, Inode, InodeTree, KindedHash, OctezProof, Shape,
    Tree, TreeProof,
};
use arbor_core::proof::{Path, ProofError, Proved};
use arbor_core::reference::RefTree;
use arbor_core::{contents_hash, flat_node_hash, inode_tree_hash, inode_values_hash, ChildKind, Hash, InodeConfig};
use octez_common::{bin_hash, bin_lookup, bin_prove, bit};
use proof_common::{dir, lookup, path, prove_ref, random_reads, random_tree, val, Rng, Shape as TreeShape};

const ENCODINGS: [Encoding; 2] = [Encoding::V1, Encoding::V2];

/// The Octez tree proof of `reads` on `t` in the Tezos shape.
fn tezos_proof(t: &RefTree, reads: &[Path]) -> TreeProof {
    to_octez(&prove_ref(t, InodeConfig::TEZOS, reads, &[])).unwrap()
}

/// Encodes, decodes and verifies `p` as a tree proof and as a stream proof in both encodings;
/// checks each read against `expect`.
fn round_trip(p: &TreeProof, root: &Hash, shape: Shape, reads: &[Path], expect: &dyn Fn(&Path) -> Proved) {
    let stream = octez_stream(p, reads).unwrap();
    for enc in ENCODINGS {
        let bytes = encode_tree_proof(p, enc).unwrap();
        assert_eq!(&decode_tree_proof(&bytes, enc).unwrap(), p);
        let v = verify_octez_tree(&bytes, enc, root, shape, reads).unwrap();
        for (path, proved) in &v.reads {
            assert_eq!(proved, &expect(path), "tree proof, {enc:?}, {path:?}");
        }
        let sbytes = encode_stream_proof(&stream, enc).unwrap();
        assert_eq!(decode_stream_proof(&sbytes, enc).unwrap(), stream);
        let v = verify_octez_stream(&sbytes, enc, root, shape, reads).unwrap();
        for (path, proved) in &v.reads {
            assert_eq!(proved, &expect(path), "stream proof, {enc:?}, {path:?}");
        }
    }
}

#[test]
fn tezos_proofs_round_trip_and_verify() {
    for seed in 0..25 {
        let mut rng = Rng(seed);
        let t = random_tree(&mut rng, TreeShape::TEZOS);
        let n = 1 + rng.below(6);
        let reads = random_reads(&mut rng, &t, n);
        let p = tezos_proof(&t, &reads);
        let root = t.hash(InodeConfig::TEZOS);
        round_trip(&p, &root, Shape::Tezos32, &reads, &|q| lookup(&t, q, InodeConfig::TEZOS));
    }
}

#[test]
fn binary_proofs_round_trip_and_verify() {
    let mut extenders = 0;
    for seed in 0..60 {
        let mut rng = Rng(1000 + seed);
        let t = random_tree(&mut rng, TreeShape::SMALL);
        let n = 1 + rng.below(5);
        let reads = random_reads(&mut rng, &t, n);
        let p = bin_prove(&t, &reads);
        extenders += format!("{p:?}").matches("Extender").count();
        round_trip(&p, &bin_hash(&t), Shape::Binary, &reads, &|q| bin_lookup(&t, q));
    }
    // The binary shape makes chains of single-slot inodes often: extenders are exercised.
    assert!(extenders >= 5, "{extenders}");
}

/// Every proof of `bytes`' kind, decoded from `bytes` with one byte changed, is rejected.
fn every_byte_change_rejected(
    bytes: &[u8],
    check: &dyn Fn(&[u8]) -> Result<(), ProofError>,
    all_values: bool,
) -> usize {
    check(bytes).expect("the untouched proof verifies");
    let mut tried = 0;
    let mut changed = bytes.to_vec();
    for i in 0..bytes.len() {
        let values: Vec<u8> = if all_values {
            (0..=255u8).filter(|&b| b != bytes[i]).collect()
        } else {
            [0x01u8, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff].iter().map(|m| bytes[i] ^ m).collect()
        };
        for b in values {
            changed[i] = b;
            assert!(check(&changed).is_err(), "byte {i} set to {b:#04x} (was {:#04x}) was accepted", bytes[i]);
            tried += 1;
        }
        changed[i] = bytes[i];
    }
    tried
}

fn check_all_forms(p: &TreeProof, root: &Hash, shape: Shape, reads: &[Path], all_values: bool) -> usize {
    let stream = octez_stream(p, reads).unwrap();
    let mut tried = 0;
    for enc in ENCODINGS {
        let bytes = encode_tree_proof(p, enc).unwrap();
        tried += every_byte_change_rejected(
            &bytes,
            &|b| verify_octez_tree(b, enc, root, shape, reads).map(|_| ()),
            all_values,
        );
        let bytes = encode_stream_proof(&stream, enc).unwrap();
        tried += every_byte_change_rejected(
            &bytes,
            &|b| verify_octez_stream(b, enc, root, shape, reads).map(|_| ()),
            all_values,
        );
    }
    tried
}

#[test]
fn every_single_byte_change_of_small_proofs_is_rejected() {
    let mut tried = 0;
    for seed in 0..6 {
        let mut rng = Rng(500 + seed);
        let t = random_tree(&mut rng, TreeShape::SMALL);
        let reads = random_reads(&mut rng, &t, 2);
        tried += check_all_forms(&bin_prove(&t, &reads), &bin_hash(&t), Shape::Binary, &reads, true);
        let t = dir([("a", val(b"x")), ("d", dir([("e", val(b"y")), ("f", val(b"z"))]))]);
        let reads = [path(&["d", "e"]), path(&["a"]), path(&["nope"])];
        tried += check_all_forms(&tezos_proof(&t, &reads), &t.hash(InodeConfig::TEZOS), Shape::Tezos32, &reads, true);
    }
    assert!(tried > 100_000, "{tried}");
}

#[test]
fn every_single_byte_change_of_a_tezos_inode_proof_is_rejected() {
    let big = dir((0..300).map(|i| (format!("k{i}"), val(&[i as u8; 3]))));
    let mid = dir((0..40).map(|i| (format!("m{i}"), val(&[i as u8]))));
    let t = dir([("a", val(b"x")), ("big", big), ("mid", mid)]);
    let reads = [path(&["big", "k17"]), path(&["big", "nope"]), path(&["mid", "m3"]), path(&["a"])];
    let tried = check_all_forms(&tezos_proof(&t, &reads), &t.hash(InodeConfig::TEZOS), Shape::Tezos32, &reads, false);
    assert!(tried > 10_000, "{tried}");
}

#[test]
fn a_wrong_root_shape_or_path_list_is_rejected() {
    let t = dir([("a", val(b"x")), ("b", val(b"y"))]);
    let reads = [path(&["a"])];
    let p = tezos_proof(&t, &reads);
    let root = t.hash(InodeConfig::TEZOS);
    for enc in ENCODINGS {
        let bytes = encode_tree_proof(&p, enc).unwrap();
        let other = Hash([7; 32]);
        assert!(matches!(
            verify_octez_tree(&bytes, enc, &other, Shape::Tezos32, &reads),
            Err(ProofError::RootMismatch { .. })
        ));
        assert!(matches!(
            verify_octez_tree(&bytes, enc, &root, Shape::Binary, &reads),
            Err(ProofError::OctezVersion(0))
        ));
        // A path the proof does not cover.
        assert!(matches!(
            verify_octez_tree(&bytes, enc, &root, Shape::Tezos32, &[path(&["b"])]),
            Err(ProofError::NotProvable { .. })
        ));
        // The stream must be replayed with the paths it was made for.
        let s = encode_stream_proof(&octez_stream(&p, &reads).unwrap(), enc).unwrap();
        assert!(matches!(
            verify_octez_stream(&s, enc, &root, Shape::Tezos32, &[]),
            Err(ProofError::UnusedElements { used: 0, total: 2 })
        ));
        assert!(matches!(
            verify_octez_stream(&s, enc, &root, Shape::Tezos32, &[path(&["a"]), path(&["b"])]),
            Err(ProofError::StreamTooShort)
        ));
        // A proof whose after-root differs cannot be checked without its operations.
        let mut w = p.clone();
        w.after = KindedHash::Node(Hash([1; 32]));
        let bytes = encode_tree_proof(&w, enc).unwrap();
        assert!(matches!(
            verify_octez_tree(&bytes, enc, &root, Shape::Tezos32, &reads),
            Err(ProofError::AfterMismatch { .. })
        ));
    }
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// `{a: "x"}` proved at `a`, written byte by byte from the format description.
#[test]
fn vector_flat_directory() {
    let hx = contents_hash(b"x");
    let root = flat_node_hash([(&b"a"[..], ChildKind::Contents, &hx)].into_iter());
    let p: TreeProof = OctezProof {
        version: 0,
        before: KindedHash::Node(root),
        after: KindedHash::Node(root),
        state: Tree::Node(vec![(b"a".to_vec(), Tree::Value(b"x".to_vec()))]),
    };
    let r = root.as_bytes();
    // V1: version, before (kind 01), after (kind 01), Node tag 02, 4-byte list length 8,
    // step (length 1, "a"), Value tag 00, 4-byte length 1, "x".
    let mut v1 = hex("0000 01");
    v1.extend_from_slice(r);
    v1.push(0x01);
    v1.extend_from_slice(r);
    v1.extend(hex("02 00000008 01 61 00 00000001 78"));
    assert_eq!(encode_tree_proof(&p, Encoding::V1).unwrap(), v1);
    assert_eq!(decode_tree_proof(&v1, Encoding::V1).unwrap(), p);
    // V2: tag 0b11 (both roots are nodes), version, the hashes, list tag 0b10_000001,
    // step, value tag 0b110000_00 with a one-byte length.
    let mut v2 = hex("03 0000");
    v2.extend_from_slice(r);
    v2.extend_from_slice(r);
    v2.extend(hex("81 01 61 c0 01 78"));
    assert_eq!(encode_tree_proof(&p, Encoding::V2).unwrap(), v2);
    assert_eq!(decode_tree_proof(&v2, Encoding::V2).unwrap(), p);
    let v = verify_octez_tree(&v2, Encoding::V2, &root, Shape::Tezos32, &[path(&["a"])]).unwrap();
    assert_eq!(v.reads[0].1, Proved::Value(b"x".to_vec()));
    // The stream of the same read: one Node element, one Value element.
    // V2 stream: header, 4-byte state length (36 + 3), node element (list tag, step, kinded
    // hash 00 + hash), value element.
    let s = octez_stream(&p, &[path(&["a"])]).unwrap();
    assert_eq!(s.version, 1);
    assert_eq!(s.state, vec![Elt::Node(vec![(b"a".to_vec(), KindedHash::Value(hx))]), Elt::Value(b"x".to_vec())]);
    let mut sv2 = hex("03 0001");
    sv2.extend_from_slice(r);
    sv2.extend_from_slice(r);
    sv2.extend(hex("00000027 81 01 61 00"));
    sv2.extend_from_slice(hx.as_bytes());
    sv2.extend(hex("c0 01 78"));
    assert_eq!(encode_stream_proof(&s, Encoding::V2).unwrap(), sv2);
    // V1 stream: 4-byte state length (40 + 6); node element tag 01, 4-byte list length 35,
    // step, kinded hash; value element tag 00, 4-byte length, "x".
    let mut sv1 = hex("0001 01");
    sv1.extend_from_slice(r);
    sv1.push(0x01);
    sv1.extend_from_slice(r);
    sv1.extend(hex("0000002e 01 00000023 01 61 00"));
    sv1.extend_from_slice(hx.as_bytes());
    sv1.extend(hex("00 00000001 78"));
    assert_eq!(encode_stream_proof(&s, Encoding::V1).unwrap(), sv1);
    verify_octez_stream(&sv1, Encoding::V1, &root, Shape::Tezos32, &[path(&["a"])]).unwrap();
}

/// Three steps of the binary shape whose hashes share their first two bits and part at the
/// third: the directory is an extender of two segments above an inode with both slots.
fn three_with_shared_prefix() -> (Vec<Vec<u8>>, u8, u8) {
    let mut found: Vec<Vec<u8>> = Vec::new();
    let mut i = 0u32;
    while found.len() < 3 || found.iter().all(|s| bit(2, s) == bit(2, &found[0])) {
        let s = format!("s{i}").into_bytes();
        i += 1;
        if bit(0, &s) == 1 && bit(1, &s) == 0 {
            if found.len() == 3 {
                found.pop();
            }
            found.push(s);
        }
    }
    found.sort();
    (found, 1, 0)
}

#[test]
fn vector_binary_extender() {
    let (steps, b0, b1) = three_with_shared_prefix();
    let vals: Vec<(Vec<u8>, Vec<u8>)> = steps.iter().map(|s| (s.clone(), s.to_ascii_uppercase())).collect();
    // By hand: bindings split at depth 2; each side has at most 2 bindings: leaf inodes.
    let side = |slot: u8| -> Vec<&(Vec<u8>, Vec<u8>)> { vals.iter().filter(|(s, _)| bit(2, s) == slot).collect() };
    let leaf_hash = |b: &[&(Vec<u8>, Vec<u8>)]| {
        let hs: Vec<Hash> = b.iter().map(|(_, v)| contents_hash(v)).collect();
        inode_values_hash(b.iter().zip(&hs).map(|((s, _), h)| (&s[..], ChildKind::Contents, h)))
    };
    let (l0, l1) = (side(0), side(1));
    let (h0, h1) = (leaf_hash(&l0), leaf_hash(&l1));
    let at2 = inode_tree_hash(2, 3, [(0u32, &h0), (1u32, &h1)].into_iter());
    let at1 = inode_tree_hash(1, 3, [(u32::from(b1), &at2)].into_iter());
    let root = inode_tree_hash(0, 3, [(u32::from(b0), &at1)].into_iter());
    let t = RefTree::Node(vals.iter().map(|(s, v)| (s.clone(), RefTree::Contents(v.clone()))).collect());
    assert_eq!(bin_hash(&t), root, "the test's oracle agrees with the hand computation");
    // Proof of the first step: the extender [1, 0], the inode at depth 2 with the side holding
    // it shown and the other blinded.
    let target = &vals[0];
    let mine = bit(2, &target.0);
    let shown: Vec<(Vec<u8>, Tree)> = (if mine == 0 { &l0 } else { &l1 })
        .iter()
        .map(|(s, v)| {
            let t = if s == &target.0 { Tree::Value(v.clone()) } else { Tree::BlindedValue(contents_hash(v)) };
            (s.clone(), t)
        })
        .collect();
    let other = InodeTree::Blinded(if mine == 0 { h1 } else { h0 });
    let mut proofs = vec![(mine, InodeTree::Values(shown)), (1 - mine, other)];
    proofs.sort_by_key(|(s, _)| *s);
    let state = Tree::Extender(Box::new(Extender {
        length: 3,
        segments: vec![b0, b1],
        proof: InodeTree::Tree(Inode { length: 3, proofs }),
    }));
    let p = OctezProof { version: 2, before: KindedHash::Node(root), after: KindedHash::Node(root), state };
    let reads = [vec![target.0.clone()]];
    assert_eq!(bin_prove(&t, &reads), p, "the test's builder agrees with the hand-built proof");
    let v2 = encode_tree_proof(&p, Encoding::V2).unwrap();
    // V2: tag 0b11, version 0x0002, roots; extender tag 0b110110_00, length 3, packed segments
    // 1 0 then the end bit (1010_0000: one byte), then the depth-2 inode: binary inode tag
    // 0b000000_00, length 3, its two slots.
    let head = 1 + 2 + 32 + 32;
    assert_eq!(&v2[..3], &hex("03 0002")[..]);
    assert_eq!(&v2[head..head + 6], &hex("d8 03 01 a0 00 03")[..]);
    let v = verify_octez_tree(&v2, Encoding::V2, &root, Shape::Binary, &reads).unwrap();
    assert_eq!(v.reads[0].1, Proved::Value(target.1.clone()));
    // V1: extender tag 05, 8-byte length, segments, then inode_tree tag 02, length, and the two
    // optional slots.
    let v1 = encode_tree_proof(&p, Encoding::V1).unwrap();
    let head = 2 + 33 + 33;
    assert_eq!(&v1[head..head + 12], &hex("05 0000000000000003 01 a0 02")[..]);
    // The stream of the same read: extender element, inode element, leaf element, value.
    let s = octez_stream(&p, &reads).unwrap();
    assert!(matches!(&s.state[0], Elt::Extender(x) if x.segments == vec![b0, b1] && x.proof == at2));
    assert!(matches!(&s.state[1], Elt::Inode(i) if i.proofs == vec![(0, h0), (1, h1)]));
    assert_eq!(s.state.len(), 4);
    for enc in ENCODINGS {
        let b = encode_stream_proof(&s, enc).unwrap();
        verify_octez_stream(&b, enc, &root, Shape::Binary, &reads).unwrap();
    }
    // V2 binary inode element: tag 0b0000_11_00 (both slots present), length 3, two hashes.
    let b = encode_stream_proof(&s, Encoding::V2).unwrap();
    let elt1 = 1 + 2 + 32 + 32 + 4 + (1 + 1 + 2 + 32);
    assert_eq!(&b[elt1..elt1 + 2], &hex("0c 03")[..]);
}

#[test]
fn hostile_input_is_refused_without_crashing() {
    // A tree nested a million levels deep (V2 lists need no length): refused, no overflow.
    let mut b = hex("03 0000");
    b.extend_from_slice(&[0; 64]);
    for _ in 0..1_000_000 {
        b.extend(hex("81 01 61"));
    }
    b.extend(hex("c0 00"));
    assert_eq!(decode_tree_proof(&b, Encoding::V2), Err(ProofError::TooDeep));
    // Deep inodes: an inode tag repeated.
    let mut b = hex("03 0000");
    b.extend_from_slice(&[0; 64]);
    for _ in 0..1_000_000 {
        b.extend(hex("04 ff 00"));
    }
    assert!(decode_tree_proof(&b, Encoding::V2).is_err());
    // Lengths beyond the input, unknown tags, version bits.
    let mut b = hex("0000 01");
    b.extend_from_slice(&[0; 32]);
    b.push(1);
    b.extend_from_slice(&[0; 32]);
    let mut long = b.clone();
    long.extend(hex("00 7fffffff"));
    assert!(matches!(
        decode_tree_proof(&long, Encoding::V1),
        Err(ProofError::Truncated { .. }) | Err(ProofError::Malformed { .. })
    ));
    let mut bad = b.clone();
    bad.push(0x09);
    assert!(matches!(decode_tree_proof(&bad, Encoding::V1), Err(ProofError::Malformed { .. })));
    let mut v = b.clone();
    v[1] = 0x04;
    v.extend(hex("01"));
    v.extend_from_slice(&[0; 32]);
    assert_eq!(decode_tree_proof(&v, Encoding::V1), Err(ProofError::OctezVersion(4)));
    // Random bytes never panic.
    let mut rng = Rng(9);
    for _ in 0..20_000 {
        let n = rng.below(200);
        let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        for enc in ENCODINGS {
            let _ = decode_tree_proof(&bytes, enc);
            let _ = decode_stream_proof(&bytes, enc);
        }
    }
}

#[test]
fn non_canonical_values_are_refused_by_the_encoder() {
    let h = Hash([3; 32]);
    let kh = KindedHash::Node(h);
    let mk = |state| OctezProof { version: 0, before: kh, after: kh, state };
    // Unsorted bindings.
    let p = mk(Tree::Node(vec![(b"b".to_vec(), Tree::BlindedValue(h)), (b"a".to_vec(), Tree::BlindedValue(h))]));
    assert!(encode_tree_proof(&p, Encoding::V2).is_err());
    // An inode with slots holding too few bindings, and a chain not written as an extender.
    let p = mk(Tree::Inode(Inode { length: 3, proofs: vec![(0, InodeTree::Blinded(h))] }));
    assert!(encode_tree_proof(&p, Encoding::V2).is_err());
    let chain = InodeTree::Tree(Inode { length: 40, proofs: vec![(1, InodeTree::Blinded(h))] });
    let p = mk(Tree::Inode(Inode { length: 40, proofs: vec![(0, chain)] }));
    assert!(encode_tree_proof(&p, Encoding::V1).is_err());
    // A step longer than 255 bytes.
    let p = mk(Tree::Node(vec![(vec![b'a'; 256], Tree::BlindedValue(h))]));
    assert!(encode_tree_proof(&p, Encoding::V1).is_err());
}

/// The deepest proofs the decoder accepts are hashed, verified, streamed and re-encoded on an
/// ordinary test thread's stack; one level deeper is refused.
#[test]
fn the_deepest_accepted_proofs_verify_without_overflow() {
    let depth = 500;
    let mut t = val(b"leaf");
    for _ in 0..depth {
        t = dir([("s", t)]);
    }
    let p: Path = vec![b"s".to_vec(); depth];
    let proof = tezos_proof(&t, std::slice::from_ref(&p));
    let root = t.hash(InodeConfig::TEZOS);
    for enc in ENCODINGS {
        let bytes = encode_tree_proof(&proof, enc).unwrap();
        let v = verify_octez_tree(&bytes, enc, &root, Shape::Tezos32, std::slice::from_ref(&p)).unwrap();
        assert_eq!(v.reads[0].1, Proved::Value(b"leaf".to_vec()));
        let s = encode_stream_proof(&octez_stream(&proof, std::slice::from_ref(&p)).unwrap(), enc).unwrap();
        verify_octez_stream(&s, enc, &root, Shape::Tezos32, std::slice::from_ref(&p)).unwrap();
    }
    // 600 nested directories: refused as too deep, by the decoder and by the encoder.
    let mut deep = Tree::Value(b"x".to_vec());
    for _ in 0..600 {
        deep = Tree::Node(vec![(b"s".to_vec(), deep)]);
    }
    let h = KindedHash::Node(Hash([0; 32]));
    let p = OctezProof { version: 0, before: h, after: h, state: deep };
    assert_eq!(encode_tree_proof(&p, Encoding::V2), Err(ProofError::TooDeep));
}
