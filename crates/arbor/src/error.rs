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
    /// A chunk or prefix file's header names another store: a file of another store was put
    /// in this one's directory.
    ForeignStore {
        /// The uid of the store being opened (its control file's, or its first chunk's).
        store_uid: u64,
        /// The uid the file's header carries.
        file_uid: u64,
    },
    /// A chunk header's start offset is not the one its file name gives: the file was renamed
    /// or its header damaged, so the global offsets of its records cannot be trusted.
    ChunkStart {
        /// The start offset the header carries.
        header: u64,
    },
    /// A prefix file's header or footer disagrees with what names it (its file name, the
    /// control file).
    PrefixMismatch {
        /// The field that differs: `"generation"` or `"floor"`.
        field: &'static str,
        /// The value its file name or the control file gives.
        expected: u64,
        /// The value the prefix file carries.
        found: u64,
    },
    /// A prefix file's offset map does not fit between its header and footer, or one of its
    /// entries is out of order or outside the records it maps.
    PrefixMap {
        /// Where the footer says the map starts.
        map_at: u64,
        /// How many entries the footer says the map has.
        count: u64,
        /// The first bad entry, or None when the map's bounds themselves are wrong.
        entry: Option<u64>,
    },
    /// A record's length prefix is malformed or too large to address.
    RecordLength,
    /// A field of a record body (or of the control file) runs past its end, or a varint in it
    /// is malformed.
    ShortBody,
    /// Bytes follow the last field of a record body (or of the control file).
    TrailingBytes {
        /// How many.
        extra: usize,
    },
    /// A field holds a value the format does not allow: an unknown entry tag or flag, an
    /// empty step, a slot outside the inode, an inode of a size its kind cannot have, a head
    /// name that is not UTF-8, an impossible inode configuration.
    InvalidField {
        /// Which field, in words.
        field: &'static str,
        /// The value found (for a head name that is not UTF-8: the first bad byte).
        value: u64,
    },
    /// The bindings of a directory or inode, the changes of a delta, or the entries of a
    /// prefix map are not in strictly increasing order (a repeat included).
    OutOfOrder {
        /// What is out of order: `"bindings"`, `"changes"`, `"prefix map entries"`.
        what: &'static str,
        /// Index of the first one not greater than its predecessor.
        index: usize,
    },
    /// A directory or inode records a binding count that differs from the bindings it holds
    /// (a delta's result, or the sum of an inode's children).
    CountMismatch {
        /// The count the record carries.
        recorded: u64,
        /// The count its contents give.
        actual: u64,
    },
    /// An inode record carries a depth other than where its parent places it.
    InodeDepth {
        /// The depth its parent places it at.
        expected: u32,
        /// The depth the record carries.
        found: u64,
    },
    /// A delta record's base is neither a full record of the delta's kind (a FLAT_DIR for a
    /// directory delta, an INODE_VALUES or INODE_TREE at the same depth for an inode delta)
    /// nor a delta of such a record: the chain of deltas is broken or longer than two.
    DeltaBase {
        /// Global log offset of the base the delta names.
        base: u64,
    },
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
            Corruption::ForeignStore { store_uid, file_uid } => write!(
                f,
                "file belongs to another store (its header names store {file_uid:#018x}, this store is {store_uid:#018x})"
            ),
            Corruption::ChunkStart { header } => {
                write!(f, "chunk header starts at offset {header}, not where its file name says")
            }
            Corruption::PrefixMismatch { field, expected, found } => {
                write!(f, "prefix {field} is {found}, expected {expected}")
            }
            Corruption::PrefixMap { map_at, count, entry: None } => {
                write!(f, "prefix map of {count} entries at {map_at} does not fit between the header and the footer")
            }
            Corruption::PrefixMap { count, entry: Some(i), .. } => {
                write!(f, "prefix map entry {i} of {count} is out of order or outside the records")
            }
            Corruption::RecordLength => write!(f, "record length prefix is malformed or too large"),
            Corruption::ShortBody => write!(f, "a field runs past the end of the body or is malformed"),
            Corruption::TrailingBytes { extra } => write!(f, "{extra} trailing bytes after the last field"),
            Corruption::InvalidField { field, value } => write!(f, "invalid {field}: {value}"),
            Corruption::OutOfOrder { what, index } => write!(f, "{what} out of order at index {index}"),
            Corruption::CountMismatch { recorded, actual } => {
                write!(f, "count of {recorded} bindings recorded, {actual} held")
            }
            Corruption::InodeDepth { expected, found } => {
                write!(f, "inode at an unexpected depth ({found}, expected {expected})")
            }
            Corruption::DeltaBase { base } => {
                write!(f, "delta whose base at offset {base} is neither a full record of its kind nor a delta of one")
            }
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
    /// A path has more steps than [`crate::path::MAX_PATH_STEPS`]; or an operation would
    /// build (a graft, a snapshot import) or follow (a walk over a store another program
    /// wrote) a tree with such a path.
    PathTooDeep {
        /// Steps of the path (for a refused graft or walk: of the first too long found).
        steps: usize,
        /// The most steps a path may have.
        max: usize,
    },
    /// The steps of one directory's bindings (or one inode's) would take more bytes than
    /// one node holds (4 GiB less a byte).
    StepsTooLarge {
        /// The bytes they would take.
        bytes: u64,
        /// The most they may take.
        max: u64,
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
            Error::StepsTooLarge { bytes, max } => {
                write!(f, "the steps of one node would take {bytes} bytes, more than the {max} a node holds")
            }
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
