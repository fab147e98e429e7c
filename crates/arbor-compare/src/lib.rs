//! arbor-compare: replays one context trace on arbor and on peer authenticated stores (NOMT,
//! Firewood, go-ethereum's path-based trie) and compares what each costs.
//!
//! - [`flatten`] translates the trace once into a [`flat`] stream of single-key operations
//!   for the peers, which have no directories (`docs/COMPARE.md` says how every operation is
//!   treated, and the run reports the counts).
//! - Each backend runs in its own process ([`worker`]; the Go program for geth), on a fresh
//!   directory under the same work directory, loads the initial state (timed apart), then
//!   replays the blocks, each made durable before the next.
//! - [`compare`] gathers the runs; [`table`] prints the figures with their ratio to arbor's;
//!   [`report`] writes the HTML page; the whole comparison is also written as JSON.

pub mod backend;
pub mod cli;
pub mod compare;
pub mod error;
pub mod flat;
pub mod flatten;
pub mod geth;
pub mod measure;
pub mod report;
pub mod result;
pub mod table;
pub mod worker;

pub use error::{CompareError, Result};
