//! The store's files in the OS page cache: evicting them without root
//! (`posix_fadvise(POSIX_FADV_DONTNEED)` on each file, after an fsync so no page is dirty),
//! and measuring how much of them is resident (`mincore` over a read-only mapping, which
//! faults nothing in).

use std::ffi::c_void;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

extern "C" {
    /// `mincore(2)` from the C library std already links (rustix does not wrap it).
    fn mincore(addr: *mut c_void, length: usize, vec: *mut u8) -> i32;
}

/// Regular files under `dir`, recursively, sorted.
pub fn files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let e = e?;
            let t = e.file_type()?;
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                out.push(e.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Syncs every file under `dir` and asks the kernel to drop its cached pages. Returns the
/// bytes of the files. Works for any user who can read the files.
pub fn evict(dir: &Path) -> io::Result<u64> {
    let mut total = 0;
    for path in files(dir)? {
        let f = File::open(&path)?;
        // Dirty pages are not dropped by DONTNEED: write them back first.
        f.sync_all()?;
        rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed)?;
        total += f.metadata()?.len();
    }
    Ok(total)
}

/// Bytes of the files under `dir` that are in the page cache, and their total size.
pub fn resident(dir: &Path) -> io::Result<(u64, u64)> {
    let page = rustix::param::page_size() as u64;
    let (mut resident, mut total) = (0u64, 0u64);
    let mut vec = Vec::new();
    for path in files(dir)? {
        let f = File::open(&path)?;
        let len = f.metadata()?.len();
        total += len;
        if len == 0 {
            continue;
        }
        let len = usize::try_from(len).map_err(io::Error::other)?;
        // SAFETY: a fresh read-only shared mapping of a file we hold open; nothing reads
        // through it (mincore only inspects the page tables and page cache).
        let map = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                rustix::mm::ProtFlags::READ,
                rustix::mm::MapFlags::SHARED,
                &f,
                0,
            )?
        };
        vec.clear();
        vec.resize(len.div_ceil(page as usize), 0u8);
        // SAFETY: `map` is a mapping of exactly `len` bytes and `vec` has one byte per page of it.
        let rc = unsafe { mincore(map, len, vec.as_mut_ptr()) };
        let err = io::Error::last_os_error();
        // SAFETY: unmaps exactly the mapping made above, which nothing else refers to.
        unsafe { rustix::mm::munmap(map, len)? };
        if rc != 0 {
            return Err(err);
        }
        let pages = vec.iter().filter(|b| *b & 1 == 1).count() as u64;
        resident += (pages * page).min(len as u64);
    }
    Ok((resident, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_file_is_resident_then_evicted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), vec![7u8; 1 << 20]).unwrap();
        let (_, total) = resident(dir.path()).unwrap();
        assert_eq!(total, 1 << 20);
        assert_eq!(evict(dir.path()).unwrap(), 1 << 20);
        let (after, _) = resident(dir.path()).unwrap();
        // tmpfs ignores DONTNEED; a disk file system drops the pages.
        assert!(after <= total);
    }
}
