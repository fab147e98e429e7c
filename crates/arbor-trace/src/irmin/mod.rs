//! irmin-bench's replayable traces: Tarides' recordings of what Octez asks of
//! its context, which irmin-bench replays against irmin-pack.
//!
//! [`IrminReader`] and [`IrminWriter`] read and write the file format
//! (`docs/TRACE.md`, "Importing Irmin traces"), written from its definition;
//! [`import_irmin`] converts a trace into an arbor trace that `arbor replay`
//! checks operation by operation and commit hash by commit hash.

mod file;
mod import;
mod rows;

pub use file::{IrminReader, IrminWriter, IRMIN_MAGIC, IRMIN_VERSION};
pub use import::{import_irmin, ImportSummary, OCTEZ_AUTHOR};
pub use rows::{ContextId, Key, Row, Scope};
