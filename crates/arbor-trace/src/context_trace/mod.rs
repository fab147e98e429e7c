//! Octez context traces: the *replayable actions traces* of Tarides' `tezos-context-trace`
//! (magic `TezosRep`, version 0), made from what its recorder saw a node ask of
//! `tezos_context`, block by block, and replayed by Tarides to benchmark Irmin.
//!
//! [`ContextTraceReader`] and [`ContextTraceWriter`] read and write the file format
//! (`docs/TRACE.md`, "Importing Octez context traces"), written from its OCaml type
//! definitions and the `Repr` library's binary form; [`import_context_trace`] converts a
//! trace into an arbor trace that `arbor replay` checks read by read and commit hash by
//! commit hash, counting what an arbor trace cannot express.

mod events;
mod file;
mod import;
mod tree;

pub use events::{
    BlockRow, Depth, Event, HashIn, HashOut, Header, Kind, Order, Raw, ScopeEnd, StartIn, StartOut, TestChainStatus,
    Tracked, TreeEvent,
};
pub use file::{ContextTraceReader, ContextTraceWriter, CONTEXT_TRACE_MAGIC, CONTEXT_TRACE_VERSION};
pub use import::{import_context_trace, test_chain_status_bytes, ContextImportSummary};
