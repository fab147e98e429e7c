//! Workload profiles and the initial state they define.

use std::fmt;
use std::str::FromStr;

use crate::error::{Result, TraceError};
use crate::tezos::InitialStateIter;
use crate::types::InitialState;

/// A family of synthetic workloads.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
#[non_exhaustive]
pub enum Profile {
    /// Tezos mainnet as measured in the seed documents (Lima, 2023):
    /// see `docs/WORKLOAD.md`.
    #[default]
    TezosMainnet,
}

impl Profile {
    /// The profile's name as written in trace headers (`tezos-mainnet`).
    pub fn name(self) -> &'static str {
        match self {
            Profile::TezosMainnet => "tezos-mainnet",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = TraceError;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "tezos-mainnet" => Ok(Profile::TezosMainnet),
            _ => Err(TraceError::InvalidParams(format!("unknown profile {s:?}"))),
        }
    }
}

/// The initial state of `profile` with `values` pairs drawn from `seed`:
/// `(path, value)` pairs in a fixed order, each derived from `(seed, index)`
/// alone, so that any number of values streams in O(1) memory.
///
/// A replay loads it (in chunks, in the order given) before block 1 of a
/// trace whose header names `InitialState::Generated { profile, seed,
/// values }`.
pub fn initial_state(profile: Profile, seed: u64, values: u64) -> InitialStateIter {
    match profile {
        Profile::TezosMainnet => InitialStateIter::new(seed, values),
    }
}

impl InitialState {
    /// The stream this header entry names: `Ok(None)` for
    /// [`InitialState::None`], an error for an unknown profile.
    pub fn stream(&self) -> Result<Option<InitialStateIter>> {
        match self {
            InitialState::None => Ok(None),
            InitialState::Generated { profile, seed, values } => {
                Ok(Some(initial_state(profile.parse()?, *seed, *values)))
            }
        }
    }
}
