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

    /// The file mapped into memory for reading without a system call ([`Mapping`]), over at
    /// least its first `covering` bytes, or `None` where the file system does not map files or
    /// the map failed (the file is then read with [`File::read_at`]).
    fn mapping(&self, covering: u64) -> Option<Arc<Mapping>> {
        let _ = covering;
        None
    }
}

/// A file mapped into memory, shared and read-only, possibly over more address space than
/// the file holds, so that bytes appended to the file later are read through the same mapping.
///
/// Reading a mapped page past the end of the file raises `SIGBUS`, which kills the process:
/// so the mapping's bytes are only copied out, by an `unsafe` call whose caller promises the
/// file holds them ([`Mapping::copy_to`]).
#[derive(Debug)]
pub struct Mapping {
    map: memmap2::Mmap,
}

impl Mapping {
    /// Maps `len` bytes of `file` from its start, read-only and shared, for reads at random
    /// places (no read-around when a page is not in memory yet, as `pread` would not).
    #[expect(unsafe_code, reason = "mapping a file is unsafe: the map's bytes change with the file")]
    fn new(file: &std::fs::File, len: usize) -> io::Result<Mapping> {
        // SAFETY: memmap2 asks that the file not change under a slice of the map. No slice of
        // this map is ever made: its bytes are only copied out (`Mapping::copy_to`), within
        // bytes its caller promises the file holds.
        let map = unsafe { memmap2::MmapOptions::new().len(len).map(file)? };
        map.advise(memmap2::Advice::Random)?;
        Ok(Mapping { map })
    }

    /// How many bytes from the file's start the mapping covers (the file may hold fewer).
    pub fn len(&self) -> u64 {
        self.map.len() as u64
    }

    /// Whether the mapping covers no bytes.
    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    /// Copies bytes `offset..offset + buf.len()` of the file into `buf`; fails with
    /// [`io::ErrorKind::UnexpectedEof`] when the mapping does not reach that far.
    ///
    /// The bytes are copied out rather than read where they lie: a file may change under a
    /// mapping (a hole punched in it reads as zeros from then on), and a copy checked after
    /// it is taken (a record's checksum) is then what is decoded.
    ///
    /// # Safety
    ///
    /// The file must hold those bytes (be at least `offset + buf.len()` long) and no one may
    /// shorten it below that while the copy is taken: a read of a mapped page past the
    /// file's end kills the process.
    #[expect(unsafe_code, reason = "reads a mapping, within bytes the caller vouches the file holds")]
    pub unsafe fn copy_to(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let eof = || io::Error::new(io::ErrorKind::UnexpectedEof, format!("end of the mapping at offset {offset}"));
        let start = usize::try_from(offset).map_err(|_| eof())?;
        let end = start.checked_add(buf.len()).filter(|&end| end <= self.map.len()).ok_or_else(eof)?;
        // SAFETY: `start..end` lies inside the mapping (checked above) and the caller promises
        // the file holds those bytes, so reading them cannot fault. No reference to the mapped
        // bytes is made: they are copied as they are at this moment, which a checksum of the
        // copy then judges. `buf` is this call's own and cannot overlap the mapping.
        unsafe { std::ptr::copy_nonoverlapping(self.map.as_ptr().add(start), buf.as_mut_ptr(), end - start) };
        Ok(())
    }
}
