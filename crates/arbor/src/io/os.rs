//! [`OsFs`]: the real file system, through `std` and `rustix`.

use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{File, FileSystem, LockGuard, Mapping, OpenOptions};

/// The least address space a file's [`Mapping`] takes. A mapping covers a power of two of
/// bytes, at least the file's length when made, so that the bytes appended to a growing
/// file are read through the same mapping until the file doubles; address space costs
/// nothing until a page of it is read.
const LEAST_MAPPED: u64 = 1 << 20;

/// The operating system's file system (Unix only: uses `pread`/`pwrite`,
/// `fdatasync` and `flock`).
#[derive(Clone, Copy, Debug, Default)]
pub struct OsFs;

/// Adds the path to an error, keeping its kind, since bare OS errors do not
/// say which file they are about.
fn with_path(e: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()))
}

impl FileSystem for OsFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        std::fs::create_dir_all(path).map_err(|e| with_path(e, "create_dir_all", path))
    }

    fn open(&self, path: &Path, opts: OpenOptions) -> io::Result<Arc<dyn File>> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(opts.write)
            .create(opts.create)
            .truncate(opts.truncate)
            .open(path)
            .map_err(|e| with_path(e, "open", path))?;
        // A read-only open of a directory succeeds on Unix; reject it so that
        // OsFs and MemFs agree.
        if file.metadata()?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("open {}: is a directory", path.display()),
            ));
        }
        Ok(Arc::new(OsFile {
            file,
            path: path.to_path_buf(),
            mapping: Default::default(),
            map_failed: Default::default(),
        }))
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| with_path(e, "list", dir))? {
            let name = entry?.file_name().into_string().map_err(|name| {
                io::Error::new(io::ErrorKind::InvalidData, format!("non-UTF-8 file name {name:?} in {}", dir.display()))
            })?;
            names.push(name);
        }
        names.sort();
        Ok(names)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
            .map_err(|e| io::Error::new(e.kind(), format!("rename {} to {}: {e}", from.display(), to.display())))
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path).map_err(|e| with_path(e, "remove", path))
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        // Directory entries become durable by fsyncing the directory itself.
        let d = std::fs::File::open(dir).map_err(|e| with_path(e, "open dir", dir))?;
        d.sync_all().map_err(|e| with_path(e, "sync dir", dir))
    }

    fn lock_exclusive(&self, path: &Path) -> io::Result<Box<dyn LockGuard>> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| with_path(e, "open lock file", path))?;
        // flock locks belong to the open file description, so a second open
        // in this process conflicts too (unlike fcntl locks).
        rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive)
            .map_err(|e| with_path(e.into(), "lock", path))?;
        Ok(Box::new(OsLockGuard { _file: file, path: path.to_path_buf() }))
    }
}

/// Keeps the locked file open; closing it releases the `flock`.
struct OsLockGuard {
    _file: std::fs::File,
    path: PathBuf,
}

impl std::fmt::Debug for OsLockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OsLockGuard").field("path", &self.path).finish_non_exhaustive()
    }
}

impl LockGuard for OsLockGuard {}

/// An open OS file.
#[derive(Debug)]
struct OsFile {
    file: std::fs::File,
    path: PathBuf,
    /// The file mapped for reading, once asked for ([`File::mapping`]), and whether a map
    /// failed (the file is then read with `pread` from then on).
    mapping: parking_lot::RwLock<Option<Arc<Mapping>>>,
    map_failed: std::sync::atomic::AtomicBool,
}

impl File for OsFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        loop {
            match FileExt::read_at(&self.file, buf, offset) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => return r,
            }
        }
    }

    fn write_all_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        FileExt::write_all_at(&self.file, data, offset).map_err(|e| with_path(e, "write", &self.path))
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len).map_err(|e| with_path(e, "set_len", &self.path))
    }

    fn sync_data(&self) -> io::Result<()> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let r = rustix::fs::fdatasync(&self.file).map_err(io::Error::from);
        // Elsewhere std picks the right call (F_FULLFSYNC on macOS).
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let r = self.file.sync_data();
        r.map_err(|e| with_path(e, "sync", &self.path))
    }

    fn drop_cache(&self) -> io::Result<()> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        rustix::fs::fadvise(&self.file, 0, None, rustix::fs::Advice::DontNeed)?;
        Ok(())
    }

    fn punch_hole(&self, offset: u64, len: u64) -> io::Result<()> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            use rustix::fs::FallocateFlags;
            let flags = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
            match rustix::fs::fallocate(&self.file, flags, offset, len) {
                Ok(()) => Ok(()),
                Err(rustix::io::Errno::OPNOTSUPP) => Err(io::Error::from(io::ErrorKind::Unsupported)),
                Err(e) => Err(with_path(e.into(), "punch_hole", &self.path)),
            }
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            let _ = (offset, len);
            Err(io::Error::from(io::ErrorKind::Unsupported))
        }
    }

    fn mapping(&self, covering: u64) -> Option<Arc<Mapping>> {
        use std::sync::atomic::Ordering::Relaxed;
        if let Some(m) = self.mapping.read().as_ref().filter(|m| m.len() >= covering) {
            return Some(m.clone());
        }
        if self.map_failed.load(Relaxed) {
            return None;
        }
        let mut current = self.mapping.write();
        if let Some(m) = current.as_ref().filter(|m| m.len() >= covering) {
            return Some(m.clone());
        }
        // Past a mapping made earlier: the file grew. Readers of the old one keep it.
        let len = self.file.metadata().ok()?.len().max(covering).max(LEAST_MAPPED).checked_next_power_of_two()?;
        match usize::try_from(len)
            .map_err(|_| io::ErrorKind::Unsupported.into())
            .and_then(|n| Mapping::new(&self.file, n))
        {
            Ok(m) => Some(current.insert(Arc::new(m)).clone()),
            Err(_) => {
                self.map_failed.store(true, Relaxed);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flock_excludes_second_open_in_same_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let fs = OsFs;
        let guard = fs.lock_exclusive(&path).unwrap();
        let err = fs.lock_exclusive(&path).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        drop(guard);
        let _again = fs.lock_exclusive(&path).unwrap();
    }

    #[test]
    fn open_directory_fails() {
        let dir = tempfile::tempdir().unwrap();
        let err = OsFs.open(dir.path(), OpenOptions::default()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
    }

    #[test]
    fn create_without_write_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let opts = OpenOptions { create: true, ..OpenOptions::default() };
        let err = OsFs.open(&dir.path().join("f"), opts).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
