//! The prefix: the records below the GC floor that a garbage collection kept, copied verbatim
//! (same bytes, same checksums) into one file, with a map from their global offsets.
//!
//! ```text
//! prefix := header | records | map | footer
//! header := magic "ARBORPX\x01" | version:u32 | uid:u64 | generation:u64 | crc32c:u32       (32 B)
//! map    := count × (global_offset:u64 | position_in_file:u64), sorted by global_offset
//! footer := map_at:u64 | count:u64 | floor:u64 | crc32c(map):u32 | crc32c(footer[..28]):u32 (32 B)
//! ```
//! Offsets are global and never change, so the records need no rewriting: a pointer below the
//! floor is looked up in the map instead of a chunk file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::log::{read_frame, ReadFrame};
use crate::error::{io_err, Corruption, Error, Result};
use crate::io::{File, FileSystem, OpenOptions};

const MAGIC: &[u8; 8] = b"ARBORPX\x01";
/// Layout version of prefix files.
const VERSION: u32 = 1;
const HEADER_LEN: u64 = 32;
const FOOTER_LEN: u64 = 32;
/// Buffered record bytes above which the writer writes them out.
const FLUSH_AT: usize = 4 << 20;

/// The file name of generation `generation`'s prefix.
pub(crate) fn prefix_name(generation: u64) -> String {
    format!("prefix-{generation:020}")
}

/// The generation a prefix file name carries, if it is one.
pub(crate) fn parse_prefix_name(name: &str) -> Option<u64> {
    name.strip_prefix("prefix-")?.parse().ok()
}

fn header_bytes(uid: u64, generation: u64) -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..20].copy_from_slice(&uid.to_le_bytes());
    h[20..28].copy_from_slice(&generation.to_le_bytes());
    let crc = crc32c::crc32c(&h[..28]);
    h[28..].copy_from_slice(&crc.to_le_bytes());
    h
}

/// An open, checked prefix file.
#[derive(Debug)]
pub(crate) struct Prefix {
    pub file: Arc<dyn File>,
    pub path: PathBuf,
    /// Records below this global offset live here (or nowhere).
    pub floor: u64,
    /// Sorted (global offset, position in the file).
    map: Vec<(u64, u64)>,
    /// Where the records end (the map starts).
    records_end: u64,
}

impl Prefix {
    /// Opens and checks the prefix of `generation` in `dir`.
    pub fn open(fs: &dyn FileSystem, dir: &Path, uid: u64, generation: u64) -> Result<Prefix> {
        let path = dir.join(prefix_name(generation));
        let file = fs.open(&path, OpenOptions::default()).map_err(io_err("opening", &path))?;
        let corrupt = |offset: u64, kind| Error::Corrupt { file: path.clone(), offset, kind };
        let len = file.len().map_err(io_err("reading the length of", &path))?;
        if len < HEADER_LEN + FOOTER_LEN {
            return Err(corrupt(0, Corruption::Truncated));
        }
        let mut h = [0u8; HEADER_LEN as usize];
        file.read_exact_at(&mut h, 0).map_err(io_err("reading", &path))?;
        if &h[..8] != MAGIC {
            return Err(corrupt(0, Corruption::BadMagic));
        }
        let version = u32::from_le_bytes(h[8..12].try_into().expect("4"));
        if version != VERSION {
            return Err(Error::UnsupportedVersion { file: path, found: version, supported: VERSION });
        }
        let header = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8"));
        let (file_uid, file_generation) = (header(12), header(20));
        let stored = u32::from_le_bytes(h[28..].try_into().expect("4"));
        let computed = crc32c::crc32c(&h[..28]);
        if stored != computed {
            return Err(corrupt(0, Corruption::Checksum { stored, computed }));
        }
        if file_uid != uid {
            return Err(corrupt(12, Corruption::ForeignStore { store_uid: uid, file_uid }));
        }
        if file_generation != generation {
            let kind = Corruption::PrefixMismatch { field: "generation", expected: generation, found: file_generation };
            return Err(corrupt(20, kind));
        }
        debug_assert_eq!(h, header_bytes(uid, generation), "every field of the header was checked");
        let mut f = [0u8; FOOTER_LEN as usize];
        file.read_exact_at(&mut f, len - FOOTER_LEN).map_err(io_err("reading", &path))?;
        let le = |i: usize| u64::from_le_bytes(f[i..i + 8].try_into().expect("8"));
        let (map_at, count, floor) = (le(0), le(8), le(16));
        let stored = u32::from_le_bytes(f[28..].try_into().expect("4"));
        let computed = crc32c::crc32c(&f[..28]);
        if stored != computed {
            return Err(corrupt(len - FOOTER_LEN, Corruption::Checksum { stored, computed }));
        }
        if map_at < HEADER_LEN || count.checked_mul(16).and_then(|m| m.checked_add(map_at)) != Some(len - FOOTER_LEN) {
            return Err(corrupt(len - FOOTER_LEN, Corruption::PrefixMap { map_at, count, entry: None }));
        }
        let mut bytes = vec![0u8; (count * 16) as usize];
        file.read_exact_at(&mut bytes, map_at).map_err(io_err("reading", &path))?;
        let stored = u32::from_le_bytes(f[24..28].try_into().expect("4"));
        let computed = crc32c::crc32c(&bytes);
        if stored != computed {
            return Err(corrupt(map_at, Corruption::Checksum { stored, computed }));
        }
        let map: Vec<(u64, u64)> = bytes
            .chunks_exact(16)
            .map(|e| {
                (u64::from_le_bytes(e[..8].try_into().expect("8")), u64::from_le_bytes(e[8..].try_into().expect("8")))
            })
            .collect();
        let sorted = |i: usize| i == 0 || map[i - 1].0 < map[i].0;
        let inside = |i: usize| map[i].0 < floor && (HEADER_LEN..map_at).contains(&map[i].1);
        if let Some(i) = (0..map.len()).find(|&i| !sorted(i) || !inside(i)) {
            let kind = Corruption::PrefixMap { map_at, count, entry: Some(i as u64) };
            return Err(corrupt(map_at + 16 * i as u64, kind));
        }
        Ok(Prefix { file, path, floor, map, records_end: map_at })
    }

    /// Whether the record at global `offset` was kept.
    pub fn contains(&self, offset: u64) -> bool {
        self.map.binary_search_by_key(&offset, |e| e.0).is_ok()
    }

    /// Number of records kept.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Bytes of records kept.
    pub fn record_bytes(&self) -> u64 {
        self.records_end - HEADER_LEN
    }

    /// Reads the kept record at global `offset`, frame and all.
    pub fn read(&self, offset: u64) -> Option<Result<ReadFrame>> {
        let i = self.map.binary_search_by_key(&offset, |e| e.0).ok()?;
        let pos = self.map[i].1;
        Some(read_frame(self.file.as_ref(), &self.path, pos, self.records_end - pos))
    }
}

/// Writes a new prefix file; nothing refers to it until the control file names it.
pub(crate) struct PrefixWriter {
    file: Arc<dyn File>,
    pub path: PathBuf,
    pos: u64,
    buf: Vec<u8>,
    map: Vec<(u64, u64)>,
    /// Where the map of the last `finish` starts (the records end there).
    map_at: u64,
}

impl PrefixWriter {
    /// Creates the prefix file of `generation` in `dir` (replacing a leftover of a crashed GC).
    pub fn create(fs: &dyn FileSystem, dir: &Path, uid: u64, generation: u64) -> Result<PrefixWriter> {
        let path = dir.join(prefix_name(generation));
        let opts = OpenOptions { create: true, write: true, truncate: true };
        let file = fs.open(&path, opts).map_err(io_err("creating", &path))?;
        let mut w = PrefixWriter { file, path, pos: 0, buf: Vec::with_capacity(FLUSH_AT), map: Vec::new(), map_at: 0 };
        w.buf.extend_from_slice(&header_bytes(uid, generation));
        w.pos = HEADER_LEN;
        Ok(w)
    }

    /// Appends the raw frame of the record at global `offset`.
    pub fn append(&mut self, offset: u64, frame: &[u8]) -> Result<()> {
        self.map.push((offset, self.pos));
        self.buf.extend_from_slice(frame);
        self.pos += frame.len() as u64;
        if self.buf.len() >= FLUSH_AT {
            self.flush()?;
        }
        Ok(())
    }

    /// Records appended so far.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    fn flush(&mut self) -> Result<()> {
        let at = self.pos - self.buf.len() as u64;
        self.file.write_all_at(&self.buf, at).map_err(io_err("writing", &self.path))?;
        self.buf.clear();
        Ok(())
    }

    /// Writes the map and footer and makes the file durable (its name too). Records may be
    /// appended afterwards and `finish` called again: the new map and footer follow them, and
    /// the old ones become dead bytes among the records.
    pub fn finish(&mut self, fs: &dyn FileSystem, dir: &Path, floor: u64) -> Result<u64> {
        self.map.sort_unstable_by_key(|e| e.0);
        let map_at = self.pos;
        self.map_at = map_at;
        let mut map = Vec::with_capacity(self.map.len() * 16);
        for (o, p) in &self.map {
            map.extend_from_slice(&o.to_le_bytes());
            map.extend_from_slice(&p.to_le_bytes());
        }
        let mut footer = [0u8; FOOTER_LEN as usize];
        footer[..8].copy_from_slice(&map_at.to_le_bytes());
        footer[8..16].copy_from_slice(&(self.map.len() as u64).to_le_bytes());
        footer[16..24].copy_from_slice(&floor.to_le_bytes());
        footer[24..28].copy_from_slice(&crc32c::crc32c(&map).to_le_bytes());
        let crc = crc32c::crc32c(&footer[..28]);
        footer[28..].copy_from_slice(&crc.to_le_bytes());
        self.buf.extend_from_slice(&map);
        self.buf.extend_from_slice(&footer);
        self.pos += (map.len() + footer.len()) as u64;
        self.flush()?;
        self.file.sync_data().map_err(io_err("syncing", &self.path))?;
        fs.sync_dir(dir).map_err(io_err("syncing", dir))?;
        Ok(self.pos)
    }

    /// The finished file as a reader, without reading it back.
    pub fn into_prefix(self, floor: u64) -> Prefix {
        debug_assert!(self.buf.is_empty() && self.map_at > 0, "finish first");
        Prefix { file: self.file, path: self.path, floor, map: self.map, records_end: self.map_at }
    }
}
