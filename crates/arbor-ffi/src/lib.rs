//! arbor's C ABI: stores, trees, commits, heads, garbage collection, snapshots and Merkle
//! proofs behind opaque handles, for embedding arbor from C, OCaml, Go or any language with a
//! C foreign-function interface. `include/arbor.h` is generated from this crate by cbindgen
//! (the `header` test fails when it drifts).
//!
//! Conventions, for every function:
//! - it returns an [`ArborStatus`]; on failure [`arbor_last_error`] names the problem and
//!   output arguments are left untouched;
//! - no panic crosses the boundary: one is caught and reported as `ARBOR_STATUS_PANIC`;
//! - NULL pointers where a value is required, and text that is not UTF-8 where text is
//!   required, are refused with their own status;
//! - handles (`ArborStore`, `ArborTree`, lists) are made by arbor and freed by the caller
//!   with the matching `*_free` / `arbor_store_close`; bytes returned in an `ArborBytes` are
//!   freed with `arbor_bytes_free`; borrowed results (list entries, fold arguments, head
//!   names, the last error) must not be freed;
//! - any function may run on several threads at once on the same store and trees (trees are
//!   immutable; commits are serialised inside), except that freeing or closing a handle must
//!   not race with another use of that handle.

mod hash_text;
mod heads;
mod maintenance;
mod proof;
mod status;
mod store;
mod tree;
mod types;
mod walk;

pub use hash_text::*;
pub use heads::*;
pub use maintenance::*;
pub use proof::*;
pub use status::{arbor_last_error, arbor_status_name, ArborStatus};
pub use store::*;
pub use tree::*;
pub use types::{arbor_bytes_free, ArborBytes, ArborHash, ArborPath, ArborSlice, ArborTree};
pub use walk::*;
