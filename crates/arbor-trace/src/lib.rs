//! arbor-trace: context operation traces for the arbor storage engine.
//!
//! - [`format`](mod@format): a compact, versioned, checksummed binary trace format written
//!   and read block by block ([`TraceWriter`], [`TraceReader`]); the byte
//!   layout is documented in `docs/TRACE.md`.
//! - [`initial_state`]: a deterministic stream of `(path, value)` pairs that a
//!   replay loads before block 1 (a trace records only its parameters).
//! - [`generate`]: a synthetic `tezos-mainnet` workload reproducing the
//!   published workload figures (see `docs/WORKLOAD.md`).
//! - [`stats()`]: a summary of any trace, printed next to those figures.
//! - [`irmin`]: irmin-bench's replayable traces, read, written, and imported
//!   as arbor traces.
//! - [`context_trace`]: Octez context traces (`tezos-context-trace`'s replayable
//!   actions traces), read, written, and imported as arbor traces.
//!
//! A replay loads the initial state the header names, then applies each
//! block's operations to its store and checks every recorded result:
//!
//! ```
//! use arbor_trace::{generate, GeneratorParams, OpRef, TraceError, TraceReader};
//!
//! let params = GeneratorParams { blocks: 3, values: 10_000, ..GeneratorParams::default() };
//! let mut trace = Vec::new();
//! generate(params, &mut trace)?;
//!
//! let mut reader = TraceReader::new(trace.as_slice())?;
//! let initial = reader.header().initial_state.stream()?.expect("generated state");
//! assert_eq!(initial.count(), 10_000); // load these (in chunks) into the store
//! let mut finds = 0;
//! while let Some(block) = reader.next_block_with(|op| {
//!     if let OpRef::Find { path, result } = op {
//!         // Look `path` up in the store; `result` must match what it holds.
//!         let _ = (path, result);
//!         finds += 1;
//!     }
//!     Ok::<(), TraceError>(())
//! })? {
//!     // Commit here; `block.commit` has the date, message and author.
//!     assert!(block.level >= 1);
//! }
//! assert!(finds > 3 * 2_000);
//! # Ok::<(), TraceError>(())
//! ```
#![forbid(unsafe_code)]

pub mod context_trace;
pub mod error;
pub mod format;
pub mod irmin;
mod op_ref;
mod profile;
mod repr;
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
