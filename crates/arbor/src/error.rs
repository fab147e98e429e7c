//! The one error type of the engine.

use std::path::PathBuf;

use arbor_core::Hash;

/// What is wrong with a corrupt file, at the offset reported beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Corruption {
    /// A record's stored checksum does not match its bytes.
    Checksum {
        /// Checksum stored in the record.
        stored: u32,
        /// Checksum computed over the bytes read.
        computed: u32,
    },
    /// The file ends inside a record or header.
    Truncated,
    /// A record starts with a kind byte this version does not know.
    UnknownRecordKind(u8),
    /// A record of one kind was found where another was expected.
    UnexpectedRecordKind {
        /// Kind byte expected.
        expected: &'static str,
        /// Kind byte found.
        found: u8,
    },
    /// A record's body does not decode.
    BadEncoding(&'static str),
    /// A file header or control file has the wrong magic bytes.
    BadMagic,
    /// An object's recomputed hash differs from the hash its parent records.
    HashMismatch {
        /// Hash recorded by the parent.
        expected: Hash,
        /// Hash recomputed from the object.
        actual: Hash,
    },
    /// A pointer refers to an offset outside the data written.
    DanglingOffset(u64),
}

impl std::fmt::Display for Corruption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Corruption::Checksum { stored, computed } => {
                write!(f, "checksum mismatch (stored {stored:08x}, computed {computed:08x})")
            }
            Corruption::Truncated => write!(f, "truncated"),
            Corruption::UnknownRecordKind(k) => write!(f, "unknown record kind {k:#04x}"),
            Corruption::UnexpectedRecordKind { expected, found } => {
                write!(f, "expected a {expected} record, found kind {found:#04x}")
            }
            Corruption::BadEncoding(what) => write!(f, "bad encoding: {what}"),
            Corruption::BadMagic => write!(f, "bad magic bytes"),
            Corruption::HashMismatch { expected, actual } => {
                write!(f, "hash mismatch (recorded {expected:?}, recomputed {actual:?})")
            }
            Corruption::DanglingOffset(o) => write!(f, "pointer to offset {o} outside the data"),
        }
    }
}

/// Every error arbor returns.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O error, with the operation and file it concerned.
    Io {
        /// What arbor was doing.
        op: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A file's content is not what arbor wrote: never returned as a wrong value.
    Corrupt {
        /// The file.
        file: PathBuf,
        /// Byte offset within the file (or global log offset, for log records).
        offset: u64,
        /// What is wrong there.
        kind: Corruption,
    },
    /// No commit with this hash is in the store.
    UnknownCommit(Hash),
    /// A path has an empty step at this index; steps are non-empty byte strings.
    EmptyStep {
        /// Index of the empty step in the path.
        index: usize,
    },
    /// A path has more steps than [`crate::path::MAX_PATH_STEPS`].
    PathTooDeep {
        /// Steps of the path.
        steps: usize,
        /// The most steps a path may have.
        max: usize,
    },
    /// A value is larger than the configured maximum.
    ValueTooLarge {
        /// The value's length.
        len: usize,
        /// The configured maximum.
        max: usize,
    },
    /// A file was written by a format version this build does not read.
    UnsupportedVersion {
        /// The file.
        file: PathBuf,
        /// Version found.
        found: u32,
        /// Version this build reads.
        supported: u32,
    },
    /// The directory holds no store (no log, or no chunk of one).
    NoStore {
        /// The directory.
        dir: PathBuf,
    },
    /// Another writer holds the store.
    Locked {
        /// The store directory.
        dir: PathBuf,
    },
    /// A write was attempted on a store opened read-only.
    ReadOnly,
    /// An earlier write failed part-way; the store refuses further writes until reopened.
    Poisoned,
    /// A commit was asked for a tree that is not a directory.
    NotADirectory,
    /// A tree from another store (or another store instance) was mixed into this one.
    ForeignTree,
    /// The commit was dropped by a garbage collection that kept only newer history.
    CommitDropped {
        /// The commit asked for.
        hash: Hash,
        /// Offset of the oldest commit the collection kept.
        kept_from: u64,
    },
    /// An object was dropped by garbage collection (a tree of a dropped commit, read or
    /// reused after the collection).
    ObjectDropped {
        /// Global log offset of the object.
        offset: u64,
    },
    /// A garbage collection is already running on this store.
    GcRunning,
    /// A garbage collection would drop the commits of named heads: it keeps every head's
    /// commit, so it was refused (nothing changed). Keep more history or remove the heads.
    GcWouldDropHeads {
        /// The oldest commit the collection was asked to keep.
        kept_from: Hash,
        /// The heads whose commits are older than it.
        heads: Vec<String>,
    },
    /// A caller-supplied argument is invalid.
    InvalidArgument(String),
    /// A snapshot file is damaged, cut short, of another version or inode shape, or does not
    /// rebuild the commit it names.
    Snapshot(crate::snapshot::SnapshotError),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io { op, path, source } => write!(f, "I/O error while {op} {}: {source}", path.display()),
            Error::Corrupt { file, offset, kind } => {
                write!(f, "corrupt store: {} at offset {offset}: {kind}", file.display())
            }
            Error::UnknownCommit(h) => write!(f, "unknown commit {h}"),
            Error::EmptyStep { index } => write!(f, "path step {index} is empty"),
            Error::PathTooDeep { steps, max } => write!(f, "path of {steps} steps exceeds the maximum of {max} steps"),
            Error::ValueTooLarge { len, max } => write!(f, "value of {len} bytes exceeds the maximum of {max} bytes"),
            Error::UnsupportedVersion { file, found, supported } => {
                write!(f, "{} has format version {found}; this build reads version {supported}", file.display())
            }
            Error::NoStore { dir } => write!(f, "no store at {}", dir.display()),
            Error::Locked { dir } => write!(f, "store {} is locked by another writer", dir.display()),
            Error::ReadOnly => write!(f, "store is open read-only"),
            Error::Poisoned => write!(f, "an earlier write failed; reopen the store"),
            Error::NotADirectory => write!(f, "a commit's tree must be a directory"),
            Error::ForeignTree => write!(f, "tree belongs to another store"),
            Error::CommitDropped { hash, kept_from } => write!(
                f,
                "commit {hash} was removed by garbage collection (history is kept from log offset {kept_from})"
            ),
            Error::ObjectDropped { offset } => {
                write!(f, "object at log offset {offset} was removed by garbage collection")
            }
            Error::GcRunning => write!(f, "a garbage collection is already running"),
            Error::GcWouldDropHeads { kept_from, heads } => write!(
                f,
                "garbage collection refused: keeping history from commit {kept_from} would drop the commit of head(s) {}; keep more history or remove those heads first",
                heads.join(", ")
            ),
            Error::InvalidArgument(s) => write!(f, "invalid argument: {s}"),
            Error::Snapshot(e) => write!(f, "snapshot: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Snapshot(e) => Some(e),
            _ => None,
        }
    }
}

/// Result with arbor's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Wraps an `std::io::Error` with what was being done and where.
pub(crate) fn io_err(op: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.into();
    move |source| Error::Io { op, path, source }
}
