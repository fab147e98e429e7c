//! Byte encodings of tree proofs: arbor's own compact encoding (layout in docs/PROOFS.md),
//! Octez's proof encodings ([`octez`]) and the byte cursor the decoders share.

mod decode;
mod encode;
pub(crate) mod format;
pub(crate) mod input;
pub mod octez;

use alloc::vec::Vec;

pub use format::{MAGIC, VERSION};

use crate::proof::types::{Proof, ProofError};

impl Proof {
    /// The compact binary encoding (see docs/PROOFS.md).
    pub fn encode(&self) -> Vec<u8> {
        encode::encode(self)
    }

    /// Decodes a proof, checking that the bytes are exactly one canonical encoding; the
    /// proof is not verified (see [`Proof::verify`]).
    pub fn decode(bytes: &[u8]) -> Result<Proof, ProofError> {
        decode::decode(bytes)
    }
}
