//! Fuzzes the stream proof decoder and verifier with arbitrary bytes: they must never panic;
//! against the root the stream records as its before-root (which reaches the elements), a
//! stream that decodes must encode back to exactly its input, and verifying it must agree with
//! verifying the decoded proof.
#![no_main]

use arbor_core::hash::Hash;
use arbor_core::proof::{decode_stream, encode_stream, verify_stream, STREAM_MAGIC};
use arbor_core::InodeConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if !data.starts_with(&STREAM_MAGIC) {
        return;
    }
    // The recorded before-root follows magic, version, the configuration and the root kind:
    // at byte 9 for the Tezos configuration (256 takes two bytes), 8 for the small one.
    for (cfg, at) in [(InodeConfig::TEZOS, 9), (InodeConfig::SMALL_TEST, 8)] {
        let Some(root) = data.get(at..at + 32) else { continue };
        let root = Hash(root.try_into().unwrap());
        let first = verify_stream(data, &root, cfg);
        let Ok(proof) = decode_stream(data, &root, cfg) else {
            assert!(first.is_err());
            continue;
        };
        let bytes = encode_stream(&proof).expect("a decoded stream encodes");
        assert_eq!(bytes, data, "decoding is canonical");
        assert_eq!(first, proof.verify(&root, cfg));
    }
});
