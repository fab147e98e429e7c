//! Snapshots: one commit of a store as a single portable, self-checking file, and its import
//! into another store (Octez's `snapshot export` / `snapshot import`, for the context).
//!
//! The byte layout is in `docs/SNAPSHOT.md`. In short: a header with the commit's hash and
//! metadata and the inode shape, then the tree in depth-first storage order (directories as
//! entry counts, values as bytes) cut into zstd blocks that each carry a CRC-32C, then a
//! trailer with counts and a CRC-32C over the whole file.
//!
//! Both directions bound memory by the depth of the tree, not its size: export walks the
//! stored tree lazily, one directory's inode path at a time; import writes each finished
//! sub-directory to the log with [`crate::Store::persist`] and keeps only the path being built.
//! Import trusts nothing in the file: it rebuilds the tree, checks its hash against the
//! header and the commit hash against the store's commit before reporting success.
//!
//! ```
//! use arbor::{snapshot, Store};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let store = Store::open(dir.path().join("a"))?;
//! let tree = store.empty().add(&["data", "counter"], b"42")?;
//! let commit = store.commit(&tree, &[], 0, "Tezos", "genesis")?;
//! let mut file = Vec::new();
//! snapshot::export(&store, &commit, &mut file)?;
//!
//! let fresh = Store::open(dir.path().join("b"))?;
//! let imported = snapshot::import(&fresh, &file[..])?;
//! assert_eq!(imported.commit, commit);
//! assert_eq!(fresh.checkout(&commit)?.find(&["data", "counter"])?, Some(b"42".to_vec()));
//! # Ok::<(), arbor::Error>(())
//! ```

mod export;
mod format;
mod import;
mod write;

use std::fmt;

use arbor_core::{Hash, InodeConfig};

pub use export::{export, export_file};
pub use format::{read_header, Header, FORMAT_VERSION, MAGIC};
pub use import::{import, import_file};

use crate::error::Error;

/// What an export wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportStats {
    /// The commit exported.
    pub commit: Hash,
    /// Counts of the exported tree.
    pub counts: Counts,
    /// Bytes of the snapshot file.
    pub file_bytes: u64,
}

/// What an import read and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportStats {
    /// The commit imported (equal to the one the file names; checked).
    pub commit: Hash,
    /// Counts of the imported tree.
    pub counts: Counts,
    /// Bytes of the snapshot file.
    pub file_bytes: u64,
    /// False if the store already had the commit: the file was then only checked (every
    /// checksum and count), and nothing was written.
    pub written: bool,
}

/// Sizes of a snapshot's tree, as recorded in its trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Directories, the root included.
    pub dirs: u64,
    /// Values.
    pub values: u64,
    /// Sum of the values' lengths.
    pub value_bytes: u64,
    /// Bytes of the uncompressed tree stream.
    pub stream_bytes: u64,
    /// Compressed blocks.
    pub blocks: u64,
}

/// Why a snapshot file was refused, or could not be written. Offsets are byte positions in
/// the file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The file does not start with [`MAGIC`].
    BadMagic,
    /// The file has a format version this build does not read.
    UnsupportedVersion {
        /// Version in the file.
        found: u32,
        /// Version this build reads.
        supported: u32,
    },
    /// The file was written from a store of another inode shape: its hashes cannot match.
    InodeShape {
        /// Shape recorded in the file.
        file: InodeConfig,
        /// Shape of the store importing it.
        store: InodeConfig,
    },
    /// The file ends before its trailer is complete.
    Truncated {
        /// Length of the file (where more bytes were needed).
        offset: u64,
    },
    /// A checksum does not match the bytes it covers.
    Checksum {
        /// What the checksum covers: "header", "block" or "file".
        what: &'static str,
        /// Where the checksummed part starts.
        offset: u64,
        /// Checksum stored in the file.
        stored: u32,
        /// Checksum of the bytes read.
        computed: u32,
    },
    /// Bytes that pass their checksum but do not decode as a snapshot.
    Malformed {
        /// Start of the header, block or trailer concerned.
        offset: u64,
        /// What is wrong.
        what: &'static str,
    },
    /// A count of the trailer differs from what the file holds.
    CountMismatch {
        /// Which count.
        what: &'static str,
        /// Count in the trailer.
        stored: u64,
        /// Count of what was read.
        counted: u64,
    },
    /// Bytes follow the trailer.
    TrailingBytes {
        /// End of the trailer.
        offset: u64,
    },
    /// The header's commit hash is not the hash of the header's tree and metadata, or the
    /// commit made by the import has another hash.
    CommitHashMismatch {
        /// Hash named by the file.
        expected: Hash,
        /// Hash computed.
        actual: Hash,
    },
    /// The rebuilt tree's hash differs from the tree hash in the header.
    TreeHashMismatch {
        /// Tree hash named by the file.
        expected: Hash,
        /// Hash of the tree rebuilt from the file.
        actual: Hash,
    },
    /// Export met an empty directory below the root, which a commit of this engine never holds
    /// and an import could not rebuild (Tezos drops empty directories).
    EmptyDirectory,
}

/// The snapshot's own error type, reachable from [`crate::Error`] through `source()`.
impl std::error::Error for SnapshotError {}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::BadMagic => write!(f, "not an arbor snapshot (bad magic bytes)"),
            SnapshotError::UnsupportedVersion { found, supported } => {
                write!(f, "format version {found}; this build reads version {supported}")
            }
            SnapshotError::InodeShape { file, store } => write!(
                f,
                "inode shape {}/{} of the file differs from the store's {}/{} (entries/stable_hash)",
                file.entries, file.stable_hash, store.entries, store.stable_hash
            ),
            SnapshotError::Truncated { offset } => write!(f, "file cut short at byte {offset}"),
            SnapshotError::Checksum { what, offset, stored, computed } => {
                write!(f, "{what} checksum mismatch at byte {offset} (stored {stored:08x}, computed {computed:08x})")
            }
            SnapshotError::Malformed { offset, what } => write!(f, "malformed at byte {offset}: {what}"),
            SnapshotError::CountMismatch { what, stored, counted } => {
                write!(f, "trailer records {stored} {what}, the file holds {counted}")
            }
            SnapshotError::TrailingBytes { offset } => write!(f, "unexpected bytes after the trailer at byte {offset}"),
            SnapshotError::CommitHashMismatch { expected, actual } => {
                write!(f, "commit hash mismatch: the file names {expected}, its contents give {actual}")
            }
            SnapshotError::TreeHashMismatch { expected, actual } => {
                write!(f, "tree hash mismatch: the file names {expected}, the rebuilt tree is {actual}")
            }
            SnapshotError::EmptyDirectory => write!(f, "the tree holds an empty directory below its root"),
        }
    }
}

impl From<SnapshotError> for Error {
    fn from(e: SnapshotError) -> Error {
        Error::Snapshot(e)
    }
}
