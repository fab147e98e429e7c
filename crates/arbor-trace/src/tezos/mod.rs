//! The `tezos-mainnet` profile: state layout, initial state and workload.

mod ctx;
mod cycle_end;
pub(crate) mod fields;
mod generator;
pub(crate) mod initial;
pub(crate) mod layout;
pub(crate) mod pathbuf;
mod script;
pub(crate) mod state;
pub(crate) mod values;

pub use generator::{generate, header_for, GenerateSummary, GeneratorParams, MIN_VALUES};
pub use initial::InitialStateIter;
