//! arbor-core: hashing and encodings of the Tezos context, with no I/O.
#![no_std]
extern crate alloc;
