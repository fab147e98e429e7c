//! The commit index file: commit hash → log offset, one fixed-size entry per commit.
//!
//! ```text
//! entry := hash:32 | offset:u64 LE | crc32c(hash | offset):u32 LE | 0:u32
//! ```
//! Only the first `index_count` entries (recorded in the control file after the index was
//! synced) are trusted; later ones are rebuilt from the log on open.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbor_core::Hash;

use crate::error::{io_err, Corruption, Error, Result};
use crate::io::{File, FileSystem, OpenOptions};

/// Bytes per index entry.
pub(crate) const ENTRY_LEN: u64 = 48;
/// Name of the index file in the store directory.
pub(crate) const INDEX_FILE: &str = "commits.idx";

/// The bytes of one entry.
pub(super) fn encode(hash: &Hash, offset: u64) -> [u8; ENTRY_LEN as usize] {
    let mut e = [0u8; ENTRY_LEN as usize];
    e[..32].copy_from_slice(hash.as_bytes());
    e[32..40].copy_from_slice(&offset.to_le_bytes());
    let crc = crc32c::crc32c(&e[..40]);
    e[40..44].copy_from_slice(&crc.to_le_bytes());
    e
}

/// One entry's commit and offset, or `None` if its checksum does not match.
pub(super) fn decode(e: &[u8]) -> Option<(Hash, u64)> {
    let e: &[u8; ENTRY_LEN as usize] = e.try_into().ok()?;
    let stored = u32::from_le_bytes(e[40..44].try_into().expect("4"));
    if stored != crc32c::crc32c(&e[..40]) {
        return None;
    }
    Some((Hash(e[..32].try_into().expect("32")), u64::from_le_bytes(e[32..40].try_into().expect("8"))))
}

/// The open index file.
#[derive(Debug)]
pub(crate) struct IndexFile {
    file: Arc<dyn File>,
    path: PathBuf,
    count: u64,
}

impl IndexFile {
    /// Opens the index and reads its first `trusted` entries into `into`, in log order, and
    /// the well-formed entries after them into `untrusted` (evidence for recovery: an entry
    /// is only written after its commit was synced).
    pub fn open(
        fs: &dyn FileSystem,
        dir: &Path,
        trusted: u64,
        writable: bool,
        into: &mut Vec<(Hash, u64)>,
        untrusted: &mut Vec<(Hash, u64)>,
    ) -> Result<IndexFile> {
        let path = dir.join(INDEX_FILE);
        let opts = OpenOptions { create: writable, write: writable, truncate: false };
        if !writable && !fs.exists(&path) {
            if trusted > 0 {
                return Err(Error::Corrupt { file: path, offset: 0, kind: Corruption::Truncated });
            }
            return Ok(IndexFile { file: Arc::new(NoFile), path, count: 0 });
        }
        let file = fs.open(&path, opts).map_err(io_err("opening", &path))?;
        let len = file.len().map_err(io_err("reading the length of", &path))?;
        if len < trusted * ENTRY_LEN {
            return Err(Error::Corrupt { file: path, offset: len, kind: Corruption::Truncated });
        }
        let mut bytes = vec![0u8; (trusted * ENTRY_LEN) as usize];
        file.read_exact_at(&mut bytes, 0).map_err(io_err("reading", &path))?;
        into.reserve(trusted as usize);
        for (i, e) in bytes.chunks_exact(ENTRY_LEN as usize).enumerate() {
            let stored = u32::from_le_bytes(e[40..44].try_into().expect("4"));
            let computed = crc32c::crc32c(&e[..40]);
            if stored != computed {
                let offset = i as u64 * ENTRY_LEN;
                return Err(Error::Corrupt { file: path, offset, kind: Corruption::Checksum { stored, computed } });
            }
            let hash = Hash(e[..32].try_into().expect("32"));
            into.push((hash, u64::from_le_bytes(e[32..40].try_into().expect("8"))));
        }
        let mut at = trusted * ENTRY_LEN;
        let mut e = [0u8; ENTRY_LEN as usize];
        while at + ENTRY_LEN <= len {
            file.read_exact_at(&mut e, at).map_err(io_err("reading", &path))?;
            let Some(entry) = decode(&e) else { break };
            untrusted.push(entry);
            at += ENTRY_LEN;
        }
        if writable && len != trusted * ENTRY_LEN {
            file.set_len(trusted * ENTRY_LEN).map_err(io_err("truncating", &path))?;
        }
        Ok(IndexFile { file, path, count: trusted })
    }

    /// Appends an entry (not synced).
    pub fn append(&mut self, hash: &Hash, offset: u64) -> Result<()> {
        let at = self.count * ENTRY_LEN;
        self.file.write_all_at(&encode(hash, offset), at).map_err(io_err("appending to", &self.path))?;
        self.count += 1;
        Ok(())
    }

    /// Entries appended so far, and the file, so that another thread can sync them.
    pub fn snapshot(&self) -> (u64, Arc<dyn File>) {
        (self.count, self.file.clone())
    }

    /// Makes every appended entry durable; returns how many there are.
    pub fn sync(&mut self) -> Result<u64> {
        self.file.sync_data().map_err(io_err("syncing", &self.path))?;
        Ok(self.count)
    }
}

/// Commit hash → offset, in memory.
pub(crate) type CommitMap = HashMap<Hash, u64>;

/// Stands in for a missing index file of an empty store opened read-only.
#[derive(Debug)]
struct NoFile;

impl File for NoFile {
    fn read_at(&self, _buf: &mut [u8], _offset: u64) -> std::io::Result<usize> {
        Ok(0)
    }
    fn write_all_at(&self, _data: &[u8], _offset: u64) -> std::io::Result<()> {
        Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, "read-only"))
    }
    fn len(&self) -> std::io::Result<u64> {
        Ok(0)
    }
    fn set_len(&self, _len: u64) -> std::io::Result<()> {
        Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, "read-only"))
    }
    fn sync_data(&self) -> std::io::Result<()> {
        Ok(())
    }
}
