//! Property tests of Octez proofs: proofs of random trees round-trip in every form, and any
//! byte string the decoders accept — valid proofs changed at random places — is the one
//! encoding of what it decodes to (decode then encode gives the same bytes back).

mod octez_common;
mod proof_common;

use arbor_core::proof::octez::{
    decode_stream_proof, decode_tree_proof, encode_stream_proof, encode_tree_proof, octez_stream, to_octez, Encoding,
};
use arbor_core::InodeConfig;
use octez_common::bin_prove;
use proof_common::{prove_ref, random_reads, random_tree, Rng, Shape as TreeShape};
use proptest::prelude::*;

/// Encoded proofs (tree and stream, both encodings) of a random tree of either shape.
fn proofs(seed: u64, binary: bool) -> Vec<(Vec<u8>, Encoding, bool)> {
    let mut rng = Rng(seed);
    let shape = if binary { TreeShape::SMALL } else { TreeShape::TEZOS };
    let t = random_tree(&mut rng, shape);
    let n = 1 + rng.below(4);
    let reads = random_reads(&mut rng, &t, n);
    let p =
        if binary { bin_prove(&t, &reads) } else { to_octez(&prove_ref(&t, InodeConfig::TEZOS, &reads, &[])).unwrap() };
    let s = octez_stream(&p, &reads).unwrap();
    let mut out = Vec::new();
    for enc in [Encoding::V1, Encoding::V2] {
        let tb = encode_tree_proof(&p, enc).unwrap();
        assert_eq!(decode_tree_proof(&tb, enc).unwrap(), p);
        out.push((tb, enc, false));
        let sb = encode_stream_proof(&s, enc).unwrap();
        assert_eq!(decode_stream_proof(&sb, enc).unwrap(), s);
        out.push((sb, enc, true));
    }
    out
}

/// If `bytes` decode, they are exactly the encoding of the decoded value.
fn accepted_is_canonical(bytes: &[u8], enc: Encoding, stream: bool) {
    if stream {
        if let Ok(v) = decode_stream_proof(bytes, enc) {
            assert_eq!(encode_stream_proof(&v, enc).unwrap(), bytes);
        }
    } else if let Ok(v) = decode_tree_proof(bytes, enc) {
        assert_eq!(encode_tree_proof(&v, enc).unwrap(), bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_proofs_round_trip(seed in any::<u64>(), binary in any::<bool>()) {
        proofs(seed, binary);
    }

    #[test]
    fn changed_proofs_that_decode_are_canonical(
        seed in any::<u64>(),
        binary in any::<bool>(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..4),
    ) {
        for (bytes, enc, stream) in proofs(seed, binary) {
            let mut b = bytes.clone();
            for &(at, v, op) in &edits {
                let i = at % (b.len() + 1);
                match op {
                    0 if i < b.len() => b[i] = v,
                    1 => b.insert(i, v),
                    _ if i < b.len() => { b.remove(i); }
                    _ => {}
                }
            }
            accepted_is_canonical(&b, enc, stream);
        }
    }
}
