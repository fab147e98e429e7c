//! Fuzzes the proof decoder and verifier with arbitrary bytes: they must never panic, a
//! decoded proof must encode back to exactly its input (one encoding per proof), and
//! verification against the proof's own recorded root (which reaches the deep checks) must
//! either fail cleanly or agree with a second verification of the re-encoded proof.
#![no_main]

use arbor_core::proof::{verify, Proof};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(proof) = Proof::decode(data) else { return };
    assert_eq!(proof.encode(), data, "decoding is canonical");
    let first = verify(data, &proof.before, proof.config);
    let again = proof.verify(&proof.before, proof.config);
    assert_eq!(first, again);
    if let Ok(v) = first {
        assert_eq!(v.before(), proof.before);
        assert_eq!(v.after(), proof.after);
        assert_eq!(v.reads().len(), proof.reads.len());
    }
});
