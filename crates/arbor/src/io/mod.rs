//! File I/O behind a trait.
//!
//! Every byte the engine reads or writes goes through [`FileSystem`] and
//! [`File`], so that tests can swap the real file system ([`OsFs`]) for
//! [`MemFs`], which models power loss precisely and injects faults, or wrap
//! either in [`FaultFs`], which kills the process at a chosen operation
//! (tearing the write under way) and injects `ENOSPC` and `EIO`.

mod fault;
mod mem;
mod os;
mod rng;

use std::io;
use std::path::Path;
use std::sync::Arc;

pub use fault::{CrashCounter, CrashHook, CrashStyle, FaultFs, FaultRecord, InjectedFault, KillPoint};
pub use mem::{FaultKind, MemFs, MemFsStats, SyncHook, SyncKind, SyncPoint, TornWrites};
pub use os::OsFs;
pub use rng::SplitMix64;
pub use std::io::Result as IoResult;

/// A file system: a namespace of directories and files.
///
/// Implementations follow POSIX semantics where they matter for crash
/// safety: a file's data is durable only after [`File::sync_data`], and a
/// creation, rename or removal is durable only after [`FileSystem::sync_dir`]
/// on the directory holding the name.
pub trait FileSystem: Send + Sync + std::fmt::Debug + 'static {
    /// Creates a directory and all its missing ancestors.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;

    /// Opens a file, always readable.
    ///
    /// `create` and `truncate` require `write` (as in `std`); otherwise this
    /// fails with [`io::ErrorKind::InvalidInput`]. Opening a directory fails.
    fn open(&self, path: &Path, opts: OpenOptions) -> io::Result<Arc<dyn File>>;

    /// Whether a file or directory exists at `path`.
    fn exists(&self, path: &Path) -> bool;

    /// Names of the entries of a directory (file names only, sorted).
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;

    /// Atomically renames `from` to `to`, replacing a file at `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;

    /// Removes the name of a file (open handles stay usable).
    fn remove_file(&self, path: &Path) -> io::Result<()>;

    /// Makes creations, renames and removals in `dir` durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;

    /// Takes an exclusive advisory lock on `path` (created if missing),
    /// without blocking.
    ///
    /// Fails with [`io::ErrorKind::WouldBlock`] if another holder (another
    /// process, or another call in this process) has it. The lock is
    /// released when the guard drops.
    fn lock_exclusive(&self, path: &Path) -> io::Result<Box<dyn LockGuard>>;
}

/// How [`FileSystem::open`] opens a file.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenOptions {
    /// Create the file if it is missing (requires `write`).
    pub create: bool,
    /// Open for writing.
    pub write: bool,
    /// Truncate the file to length 0 on open (requires `write`).
    pub truncate: bool,
}

/// Holds a lock taken by [`FileSystem::lock_exclusive`] until dropped.
pub trait LockGuard: Send + Sync + std::fmt::Debug {}

/// An open file, addressed by offset (no cursor), so one handle can be
/// shared by many threads.
pub trait File: Send + Sync + std::fmt::Debug {
    /// Reads up to `buf.len()` bytes at `offset`; returns the number of bytes
    /// read (0 at end of file). Callable from many threads at once.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;

    /// Reads exactly `buf.len()` bytes at `offset`, or fails with
    /// [`io::ErrorKind::UnexpectedEof`].
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, offset) {
                Ok(0) => {
                    return Err(io::Error::new(io::ErrorKind::UnexpectedEof, format!("end of file at offset {offset}")))
                }
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Writes all of `data` at `offset`, extending the file as needed.
    fn write_all_at(&self, data: &[u8], offset: u64) -> io::Result<()>;

    /// Current length of the file in bytes.
    fn len(&self) -> io::Result<u64>;

    /// Whether the file is empty (clippy expects it next to `len`).
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Truncates or extends (with zeros) the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;

    /// `fdatasync`: makes the file's written bytes and length durable.
    fn sync_data(&self) -> io::Result<()>;

    /// Hints that the file's cached pages will not be needed soon
    /// (`posix_fadvise(DONTNEED)` on the OS); a no-op elsewhere.
    fn drop_cache(&self) -> io::Result<()> {
        Ok(())
    }

    /// Gives the space of `len` bytes at `offset` back to the file system; they read as
    /// zeros afterwards and the length is unchanged. Fails with
    /// [`io::ErrorKind::Unsupported`] where the file system cannot.
    fn punch_hole(&self, offset: u64, len: u64) -> io::Result<()> {
        let _ = (offset, len);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}
