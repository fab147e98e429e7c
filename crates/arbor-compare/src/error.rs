//! The harness's error type.

use std::fmt;

/// Why a comparison (or one backend's run) failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum CompareError {
    /// A file or process operation failed; the string says which.
    Io(String, std::io::Error),
    /// The trace could not be read or generated.
    Trace(arbor_trace::TraceError),
    /// The arbor replay failed (including a recorded result it did not reproduce).
    Replay(arbor_bench::ReplayError),
    /// The arbor store failed.
    Arbor(arbor::Error),
    /// A peer store failed.
    Peer {
        /// Backend name.
        backend: &'static str,
        /// What failed.
        what: String,
    },
    /// The flat operation stream is malformed.
    Flat(String),
    /// A trace the harness cannot translate for the peers (for example a step holding a NUL byte).
    Unsupported(String),
    /// The command line is inconsistent.
    Usage(String),
    /// A worker process failed or returned nothing usable.
    Worker(String),
    /// A JSON file could not be written or read.
    Json(String, serde_json::Error),
}

impl fmt::Display for CompareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompareError::Io(what, e) => write!(f, "{what}: {e}"),
            CompareError::Trace(e) => write!(f, "trace: {e}"),
            CompareError::Replay(e) => write!(f, "arbor replay: {e}"),
            CompareError::Arbor(e) => write!(f, "arbor: {e}"),
            CompareError::Peer { backend, what } => write!(f, "{backend}: {what}"),
            CompareError::Flat(s) => write!(f, "flat operation stream: {s}"),
            CompareError::Unsupported(s) => write!(f, "unsupported trace: {s}"),
            CompareError::Usage(s) => write!(f, "usage: {s}"),
            CompareError::Worker(s) => write!(f, "worker: {s}"),
            CompareError::Json(what, e) => write!(f, "{what}: {e}"),
        }
    }
}

impl std::error::Error for CompareError {}

impl From<arbor_trace::TraceError> for CompareError {
    fn from(e: arbor_trace::TraceError) -> Self {
        CompareError::Trace(e)
    }
}

impl From<arbor_bench::ReplayError> for CompareError {
    fn from(e: arbor_bench::ReplayError) -> Self {
        CompareError::Replay(e)
    }
}

impl From<arbor::Error> for CompareError {
    fn from(e: arbor::Error) -> Self {
        CompareError::Arbor(e)
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = CompareError> = std::result::Result<T, E>;

/// Adds a description to an I/O error.
pub trait IoContext<T> {
    /// Wraps the error with `what`.
    fn ctx(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn ctx(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| CompareError::Io(what(), e))
    }
}
