//! Octez proofs checked against values Octez itself produced.
//!
//! No Octez-produced proof *bytes* were found in the public sources searched (Octez's proof
//! encoding tests round-trip random proofs, and its regression outputs hide proofs and
//! hashes); what was found is the proof Octez's own end-to-end tests give as valid for the
//! empty transaction-rollup context, in JSON, with its root hash:
//!
//! - repository tezos/tezos-mirror, file `tezt/lib_tezos/constant.ml`:
//!   `tx_rollup_empty_l2_context` and `tx_rollup_proof_initial_state`
//!   (`{ "version": 3, "before": { "node": "CoVu7Pqp…" }, "after": { "node": "CoVu7Pqp…" },
//!   "state": [] }`, "a valid rejection proof for the initial layer2 state").
//!
//! Test data, not code: the hash and the proof's fields are used as Octez printed them.
//!
//! That hash is not arbor's hash of the empty directory (`flat_node_hash` of no entries):
//! the protocol hard-codes it (`Tx_rollup_message_result_repr.empty_l2_context_hash`) and
//! what tree it is the hash of is not said there, so it is no check of arbor's hashing.

use arbor_core::proof::octez::{
    decode_stream_proof, encode_stream_proof, verify_octez_stream, Encoding, KindedHash, OctezProof, Shape,
};
use arbor_core::Hash;

/// `tx_rollup_empty_l2_context` of `tezt/lib_tezos/constant.ml`.
const EMPTY_L2_CONTEXT: &str = "CoVu7Pqp1Gh3z33mink5T5Q2kAQKtnn3GHxVhyehdKZpQMBxFBGF";

#[test]
fn octez_proof_of_the_empty_layer2_context_verifies() {
    // Version 3: a stream proof (bit 0) of the binary shape (bit 1), as Octez's transaction
    // rollups used; nothing to show, before and after the empty directory.
    let root = Hash::from_base58(EMPTY_L2_CONTEXT).unwrap();
    let proof = OctezProof { version: 3, before: KindedHash::Node(root), after: KindedHash::Node(root), state: vec![] };
    for enc in [Encoding::V1, Encoding::V2] {
        let bytes = encode_stream_proof(&proof, enc).unwrap();
        assert_eq!(decode_stream_proof(&bytes, enc).unwrap(), proof);
        let v = verify_octez_stream(&bytes, enc, &root, Shape::Binary, &[]).unwrap();
        assert!(v.reads.is_empty());
        // The same proof read as one of the Tezos shape is refused: its version says binary.
        assert!(verify_octez_stream(&bytes, enc, &root, Shape::Tezos32, &[]).is_err());
    }
}
