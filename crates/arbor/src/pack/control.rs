//! The control file: where recovery starts, and the store's identity.
//!
//! ```text
//! control := magic "ARBORCTL" | version:u32 LE | body_len:u32 LE | body | crc32c(all before):u32 LE
//! ```
//! It is replaced atomically (write `control.tmp`, sync, rename, sync the directory), so a
//! reader sees either the old or the new one. It is only a starting point: everything after
//! `durable_end` is recovered by scanning the log.

use std::path::Path;

use arbor_core::{leb128, Hash, InodeConfig};

use super::record::{invalid, utf8, DecodeError, Reader};
use crate::error::{io_err, Corruption, Error, Result};
use crate::io::{FileSystem, OpenOptions};

const MAGIC: &[u8; 8] = b"ARBORCTL";
/// Version of the control file layout (2 added the GC state; version 1 files still open).
pub(crate) const CONTROL_VERSION: u32 = 2;
/// Name of the control file in the store directory.
pub(crate) const CONTROL_FILE: &str = "control";

/// The content of the control file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Control {
    /// Random identity of the store, also in every chunk header.
    pub uid: u64,
    /// Incremented at each rewrite.
    pub generation: u64,
    /// Inode shape the store hashes with (fixed at creation).
    pub inode: InodeConfig,
    /// Every record below this offset is valid and durable; recovery scans from here.
    pub durable_end: u64,
    /// Number of valid entries at the start of the commit index file.
    pub index_count: u64,
    /// The most recent commit (hash and offset) below `durable_end`.
    pub last_commit: Option<(Hash, u64)>,
    /// Named heads as of `durable_end`.
    pub heads: Vec<(String, Hash, u64)>,
    /// The last completed garbage collection, if any.
    pub gc: Option<GcState>,
}

/// What the last completed garbage collection left: see `pack::prefix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GcState {
    /// Generation of the prefix file holding the records kept below the floor.
    pub generation: u64,
    /// Offset of the oldest commit kept: records below it are in the prefix or dropped.
    pub floor: u64,
    /// Archive mode: records below the floor were moved to the lower layer, not dropped.
    pub archive: bool,
}

impl Control {
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&self.uid.to_le_bytes());
        body.extend_from_slice(&self.generation.to_le_bytes());
        body.extend_from_slice(&self.inode.entries.to_le_bytes());
        body.extend_from_slice(&self.inode.stable_hash.to_le_bytes());
        body.extend_from_slice(&self.durable_end.to_le_bytes());
        body.extend_from_slice(&self.index_count.to_le_bytes());
        match &self.last_commit {
            None => body.push(0),
            Some((h, o)) => {
                body.push(1);
                body.extend_from_slice(h.as_bytes());
                body.extend_from_slice(&o.to_le_bytes());
            }
        }
        leb128::write_u64(&mut body, self.heads.len() as u64);
        for (name, h, o) in &self.heads {
            leb128::write_u64(&mut body, name.len() as u64);
            body.extend_from_slice(name.as_bytes());
            body.extend_from_slice(h.as_bytes());
            body.extend_from_slice(&o.to_le_bytes());
        }
        match &self.gc {
            None => body.push(0),
            Some(g) => {
                body.push(if g.archive { 2 } else { 1 });
                body.extend_from_slice(&g.generation.to_le_bytes());
                body.extend_from_slice(&g.floor.to_le_bytes());
            }
        }
        let mut out = Vec::with_capacity(body.len() + 20);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&CONTROL_VERSION.to_le_bytes());
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    pub fn decode(bytes: &[u8], file: &Path) -> Result<Control> {
        let corrupt = |offset: usize, kind| Error::Corrupt { file: file.to_path_buf(), offset: offset as u64, kind };
        if bytes.len() < 20 {
            return Err(corrupt(0, Corruption::Truncated));
        }
        if &bytes[..8] != MAGIC {
            return Err(corrupt(0, Corruption::BadMagic));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4"));
        if version != CONTROL_VERSION && version != 1 {
            return Err(Error::UnsupportedVersion {
                file: file.to_path_buf(),
                found: version,
                supported: CONTROL_VERSION,
            });
        }
        let len = u32::from_le_bytes(bytes[12..16].try_into().expect("4")) as usize;
        if bytes.len() != 16 + len + 4 {
            return Err(corrupt(12, Corruption::Truncated));
        }
        let stored = u32::from_le_bytes(bytes[16 + len..].try_into().expect("4"));
        let computed = crc32c::crc32c(&bytes[..16 + len]);
        if stored != computed {
            return Err(corrupt(16 + len, Corruption::Checksum { stored, computed }));
        }
        let mut r = Reader::new(&bytes[16..16 + len]);
        let parse = |r: &mut Reader<'_>| -> std::result::Result<Control, DecodeError> {
            let uid = r.u64_le()?;
            let generation = r.u64_le()?;
            let entries = u32::from_le_bytes(r.bytes(4)?.try_into().expect("4"));
            let stable_hash = u32::from_le_bytes(r.bytes(4)?.try_into().expect("4"));
            let durable_end = r.u64_le()?;
            let index_count = r.u64_le()?;
            let last_commit = match r.u8()? {
                0 => None,
                1 => Some((r.hash()?, r.u64_le()?)),
                f => return Err(invalid("last-commit flag", f)),
            };
            let n = r.len()?;
            let mut heads = Vec::with_capacity(n);
            for _ in 0..n {
                let l = r.len()?;
                let name = utf8("head name", r.bytes(l)?)?.to_string();
                heads.push((name, r.hash()?, r.u64_le()?));
            }
            let gc = match if version == 1 { 0 } else { r.u8()? } {
                0 => None,
                m @ (1 | 2) => Some(GcState { archive: m == 2, generation: r.u64_le()?, floor: r.u64_le()? }),
                f => return Err(invalid("gc flag", f)),
            };
            r.finish()?;
            if entries == 0 || entries > 32 {
                return Err(invalid("inode entries", entries));
            }
            if stable_hash < entries {
                return Err(invalid("inode stable_hash (below the entries)", stable_hash));
            }
            let inode = InodeConfig { entries, stable_hash };
            Ok(Control { uid, generation, inode, durable_end, index_count, last_commit, heads, gc })
        };
        parse(&mut r).map_err(|e| corrupt(16, e.into()))
    }

    /// Reads the control file of `dir`, if there is one.
    pub fn read(fs: &dyn FileSystem, dir: &Path) -> Result<Option<Control>> {
        let path = dir.join(CONTROL_FILE);
        if !fs.exists(&path) {
            return Ok(None);
        }
        let file = fs.open(&path, OpenOptions::default()).map_err(io_err("opening", &path))?;
        let len = file.len().map_err(io_err("reading the length of", &path))?;
        let mut bytes = vec![0u8; len as usize];
        file.read_exact_at(&mut bytes, 0).map_err(io_err("reading", &path))?;
        Control::decode(&bytes, &path).map(Some)
    }

    /// Replaces the control file of `dir` atomically and durably.
    pub fn write(&self, fs: &dyn FileSystem, dir: &Path) -> Result<()> {
        let tmp = dir.join("control.tmp");
        let path = dir.join(CONTROL_FILE);
        let file = fs
            .open(&tmp, OpenOptions { create: true, write: true, truncate: true })
            .map_err(io_err("creating", &tmp))?;
        file.write_all_at(&self.encode(), 0).map_err(io_err("writing", &tmp))?;
        file.sync_data().map_err(io_err("syncing", &tmp))?;
        drop(file);
        fs.rename(&tmp, &path).map_err(io_err("renaming", &tmp))?;
        fs.sync_dir(dir).map_err(io_err("syncing", dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects_damage() {
        let c = Control {
            uid: 42,
            generation: 7,
            inode: InodeConfig::TEZOS,
            durable_end: 1234,
            index_count: 3,
            last_commit: Some((Hash([9; 32]), 100)),
            heads: vec![("main".into(), Hash([1; 32]), 77)],
            gc: Some(GcState { generation: 3, floor: 4096, archive: false }),
        };
        let bytes = c.encode();
        let p = Path::new("control");
        assert_eq!(Control::decode(&bytes, p).unwrap(), c);
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            assert!(Control::decode(&b, p).is_err(), "flip at {i} accepted");
        }
        assert!(Control::decode(&bytes[..bytes.len() - 1], p).is_err());
    }
}
