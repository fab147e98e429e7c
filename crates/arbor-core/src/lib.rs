//! arbor-core: hashing and encodings of the Tezos context, with no I/O.
//!
//! The hashes produced here are exactly those of Octez's irmin-pack context
//! (see [`tezos`] for the rules); [`reference::RefTree`] is an independent,
//! plain implementation of the same rules used to test them.
#![forbid(unsafe_code)]
#![no_std]
extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod base58;
pub mod caml;
pub mod error;
pub mod hash;
pub mod order;
pub mod proof;
pub mod reference;
pub mod tezos;
pub mod toolbox;

pub use toolbox::leb128;

pub use hash::{blake2b_256, Hash, HashParseError};
pub use tezos::*;
