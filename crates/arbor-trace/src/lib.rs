//! arbor-trace: context operation traces for the arbor storage engine.
//!
//! - [`format`]: a compact, versioned, checksummed binary trace format written
//!   and read block by block ([`TraceWriter`], [`TraceReader`]); the byte
//!   layout is documented in `docs/TRACE.md`.
//! - [`initial_state`]: a deterministic stream of `(path, value)` pairs that a
//!   replay loads before block 1 (a trace records only its parameters).
//! - [`generate`]: a synthetic `tezos-mainnet` workload reproducing the
//!   figures of the seed documents (see `docs/WORKLOAD.md`).
//! - [`stats()`]: a summary of any trace, printed next to those figures.

pub mod error;
pub mod format;
mod fxhash;
mod op_ref;
mod profile;
mod rng;
pub mod stats;
mod tezos;
pub mod types;

pub use error::{Result, TraceError};
pub use format::{BlockEncoder, Compression, TraceReader, TraceWriter, MAGIC};
pub use op_ref::{BlockMeta, OpRef};
pub use profile::{initial_state, Profile};
pub use stats::{stats, stats_with, StatsOptions, TraceStats};
pub use tezos::values::{size_bucket, SIZE_BUCKETS};
pub use tezos::{generate, header_for, GenerateSummary, GeneratorParams, InitialStateIter, MIN_VALUES};
pub use types::{
    Block, CommitRecord, Digest, InitialState, Op, OpClass, OpKind, Parent, Path, Source, TraceHeader, TreeSummary,
};

/// The trace format version written by this crate (the only one it reads).
pub const FORMAT_VERSION: u16 = 1;
