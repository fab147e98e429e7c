//! The one error type of this crate.

use std::fmt;
use std::io;

/// Everything that can go wrong while writing, reading, generating or
/// summarising a trace.
///
/// Errors found inside a block frame carry the zero-based index of that block
/// (the first block after the header is block 0), so a damaged trace can be
/// located precisely.
#[derive(Debug)]
#[non_exhaustive]
pub enum TraceError {
    /// The underlying reader or writer failed.
    Io(io::Error),
    /// The file does not start with the trace magic bytes.
    BadMagic,
    /// The file was written with a format version this crate cannot read.
    UnsupportedVersion(u16),
    /// The header frame is damaged (checksum mismatch or malformed fields).
    CorruptHeader(String),
    /// A block frame is damaged: its checksum does not match, its lengths are
    /// impossible, or its payload does not decode.
    CorruptBlock {
        /// Zero-based index of the damaged block.
        block: u64,
        /// What exactly was wrong.
        reason: String,
    },
    /// The input ended before the end-of-trace marker.
    Truncated {
        /// Number of complete blocks read before the input ended.
        blocks_read: u64,
        /// Where the input ended (inside a frame, or between frames).
        detail: String,
    },
    /// A value handed to the writer cannot be represented in the format
    /// (for example an empty path step).
    InvalidInput(String),
    /// Generator parameters are out of range or inconsistent.
    InvalidParams(String),
    /// An Irmin (irmin-bench) replayable trace is malformed, or records
    /// something an arbor trace cannot express.
    Irmin {
        /// Zero-based index of the row at fault (rows counted after the
        /// header; the header itself is row 0 too when it is at fault).
        row: u64,
        /// What exactly was wrong.
        reason: String,
    },
    /// An Octez context trace (`tezos-context-trace`'s replayable actions trace) is
    /// malformed, or a block's commit depends on something an arbor trace cannot express.
    ContextTrace {
        /// Zero-based index of the row (block) at fault, counted after the header; 0 when the
        /// preamble or the header is at fault.
        block: u64,
        /// Zero-based index of the event at fault within its row, when one is.
        event: Option<u64>,
        /// What exactly was wrong.
        reason: String,
    },
}

impl TraceError {
    /// Builds a [`TraceError::CorruptBlock`].
    pub(crate) fn corrupt_block(block: u64, reason: impl Into<String>) -> Self {
        TraceError::CorruptBlock { block, reason: reason.into() }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Io(e) => write!(f, "trace I/O error: {e}"),
            TraceError::BadMagic => write!(f, "not an arbor trace (bad magic bytes)"),
            TraceError::UnsupportedVersion(v) => {
                write!(f, "unsupported trace format version {v}")
            }
            TraceError::CorruptHeader(r) => write!(f, "corrupt trace header: {r}"),
            TraceError::CorruptBlock { block, reason } => {
                write!(f, "corrupt trace block {block}: {reason}")
            }
            TraceError::Truncated { blocks_read, detail } => {
                write!(f, "truncated trace after {blocks_read} complete blocks: {detail}")
            }
            TraceError::InvalidInput(r) => write!(f, "invalid trace input: {r}"),
            TraceError::InvalidParams(r) => write!(f, "invalid generator parameters: {r}"),
            TraceError::Irmin { row, reason } => write!(f, "irmin trace, row {row}: {reason}"),
            TraceError::ContextTrace { block, event: Some(e), reason } => {
                write!(f, "Octez context trace, block {block}, event {e}: {reason}")
            }
            TraceError::ContextTrace { block, event: None, reason } => {
                write!(f, "Octez context trace, block {block}: {reason}")
            }
        }
    }
}

impl std::error::Error for TraceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TraceError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for TraceError {
    fn from(e: io::Error) -> Self {
        TraceError::Io(e)
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = TraceError> = std::result::Result<T, E>;
