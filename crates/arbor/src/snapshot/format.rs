//! The snapshot file's framing (docs/SNAPSHOT.md): header, zstd blocks with their CRC-32C,
//! trailer, and the reader of all three (the writer is `write.rs`). The tree stream the blocks
//! carry is a plain byte stream cut at arbitrary points; `export.rs` and `import.rs` give it
//! its meaning.

use std::io::Read;
use std::path::{Path, PathBuf};

use arbor_core::toolbox::Cursor;
use arbor_core::{Hash, InodeConfig};

use super::{Counts, SnapshotError};
use crate::error::{Error, Result};
use crate::store::CommitInfo;

/// Magic bytes that start every snapshot file.
pub const MAGIC: &[u8; 8] = b"ARBORSNP";
/// Format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Largest uncompressed block: bounds the memory of both ends whatever the state size.
pub(crate) const BLOCK_RAW: usize = 1 << 20;
/// Largest header body, far above any real commit message; refused before allocating.
const MAX_HEADER: u32 = 64 << 20;
/// Frame tags after the header.
pub(crate) const TAG_BLOCK: u8 = b'B';
pub(crate) const TAG_END: u8 = b'E';
/// Bytes of a block frame before its compressed data: tag, raw_len, packed_len, crc.
pub(crate) const BLOCK_HEAD: usize = 13;
/// Bytes of the trailer after its tag, before its crc: five u64 counts.
pub(crate) const TRAILER_COUNTS: usize = 40;

/// A snapshot's header: the commit it holds and the inode shape its hashes assume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Inode shape of the store it was exported from.
    pub inode: InodeConfig,
    /// The commit: its hash, tree hash, parents, date, author and message.
    pub commit: CommitInfo,
}

/// The little-endian `u32` at `at` of a fixed-size frame head.
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// The little-endian `u64` at `at` of the fixed-size trailer.
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

impl Header {
    /// The header's bytes: magic, version, body length, body, crc of all before it.
    pub(crate) fn encode(&self) -> Result<Vec<u8>> {
        let c = &self.commit;
        let mut b = Vec::with_capacity(128 + 32 * c.parents.len() + c.author.len() + c.message.len());
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        b.extend_from_slice(&[0; 4]); // body length, set below
        b.extend_from_slice(&self.inode.entries.to_le_bytes());
        b.extend_from_slice(&self.inode.stable_hash.to_le_bytes());
        b.extend_from_slice(c.hash.as_bytes());
        b.extend_from_slice(c.tree.as_bytes());
        b.extend_from_slice(&c.date.to_le_bytes());
        let too_big = || Error::InvalidArgument("commit metadata too large for a snapshot header".into());
        b.extend_from_slice(&u32::try_from(c.parents.len()).map_err(|_| too_big())?.to_le_bytes());
        for p in &c.parents {
            b.extend_from_slice(p.as_bytes());
        }
        for field in [&c.author, &c.message] {
            b.extend_from_slice(&u32::try_from(field.len()).map_err(|_| too_big())?.to_le_bytes());
            b.extend_from_slice(field);
        }
        let body_len = u32::try_from(b.len() - 16).ok().filter(|&n| n <= MAX_HEADER).ok_or_else(too_big)?;
        b[12..16].copy_from_slice(&body_len.to_le_bytes());
        let crc = crc32c::crc32c(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        Ok(b)
    }

    /// Decodes a header body (bytes 16.. up to the crc), whose crc has been checked.
    fn decode_body(body: &[u8]) -> Option<Header> {
        let mut c = Cursor::new(body);
        let inode = InodeConfig { entries: c.u32_le().ok()?, stable_hash: c.u32_le().ok()? };
        let (hash, tree) = (Hash(c.array().ok()?), Hash(c.array().ok()?));
        let date = c.u64_le().ok()? as i64;
        let n_parents = c.u32_le().ok()? as usize;
        // Checked against the bytes left before anything is allocated for the parents.
        let parents = c
            .take(n_parents.checked_mul(32)?)
            .ok()?
            .chunks_exact(32)
            .map(|p| Hash(p.try_into().expect("32 bytes")))
            .collect();
        let mut field = || {
            let len = c.u32_le().ok()? as usize;
            Some(c.take(len).ok()?.to_vec())
        };
        let (author, message) = (field()?, field()?);
        if !c.is_empty() {
            return None;
        }
        Some(Header { inode, commit: CommitInfo { hash, tree, parents, date, author, message } })
    }
}

/// Reads and checks only the header of the snapshot file at `path` (magic, version, crc).
pub fn read_header(path: impl AsRef<Path>) -> Result<Header> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(crate::error::io_err("opening snapshot", path))?;
    SnapReader::new(std::io::BufReader::new(file), path.to_path_buf()).header()
}

/// Reads a snapshot back: checks every frame and hands out the tree stream's bytes.
pub(crate) struct SnapReader<R: Read> {
    inp: R,
    name: PathBuf,
    crc: u32,
    pos: u64,
    raw: Vec<u8>,
    at: usize,
    /// File offset of the block `raw` came from, for errors.
    block_at: u64,
    packed: Vec<u8>,
    zstd: Option<zstd::bulk::Decompressor<'static>>,
    /// Stream bytes and blocks read so far.
    pub counts: Counts,
}

fn malformed(offset: u64, what: &'static str) -> Error {
    SnapshotError::Malformed { offset, what }.into()
}

impl<R: Read> SnapReader<R> {
    /// A reader of `inp`; `name` is the file named in I/O errors.
    pub fn new(inp: R, name: PathBuf) -> Self {
        SnapReader {
            inp,
            name,
            crc: 0,
            pos: 0,
            raw: Vec::new(),
            at: 0,
            block_at: 0,
            packed: Vec::new(),
            zstd: None,
            counts: Counts::default(),
        }
    }

    /// Reads exactly `buf.len()` file bytes; the end of the file is `Truncated`.
    fn fill(&mut self, buf: &mut [u8]) -> Result<()> {
        let mut got = 0;
        while got < buf.len() {
            match self.inp.read(&mut buf[got..]) {
                Ok(0) => return Err(SnapshotError::Truncated { offset: self.pos + got as u64 }.into()),
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(crate::error::io_err("reading snapshot", &self.name)(e)),
            }
        }
        self.crc = crc32c::crc32c_append(self.crc, buf);
        self.pos += buf.len() as u64;
        Ok(())
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut b = [0u8; N];
        self.fill(&mut b)?;
        Ok(b)
    }

    /// Reads and checks the header; must come first.
    pub fn header(&mut self) -> Result<Header> {
        if &self.array::<8>()? != MAGIC {
            return Err(SnapshotError::BadMagic.into());
        }
        let found = u32::from_le_bytes(self.array()?);
        if found != FORMAT_VERSION {
            return Err(SnapshotError::UnsupportedVersion { found, supported: FORMAT_VERSION }.into());
        }
        let body_len = u32::from_le_bytes(self.array()?);
        if body_len > MAX_HEADER {
            return Err(malformed(12, "header length"));
        }
        let mut body = vec![0u8; body_len as usize];
        self.fill(&mut body)?;
        let computed = self.crc;
        let stored = u32::from_le_bytes(self.array()?);
        if stored != computed {
            return Err(SnapshotError::Checksum { what: "header", offset: 0, stored, computed }.into());
        }
        Header::decode_body(&body).ok_or_else(|| malformed(16, "header fields"))
    }

    /// Reads and checks the next block into `raw`.
    fn next_block(&mut self) -> Result<()> {
        let start = self.pos;
        let head: [u8; BLOCK_HEAD] = self.array()?;
        match head[0] {
            TAG_BLOCK => {}
            TAG_END => return Err(malformed(start, "the file ends inside the tree")),
            _ => return Err(malformed(start, "unknown frame tag")),
        }
        let (raw_len, packed_len) = (u32_at(&head, 1) as usize, u32_at(&head, 5) as usize);
        if raw_len == 0
            || raw_len > BLOCK_RAW
            || packed_len == 0
            || packed_len > zstd::zstd_safe::compress_bound(BLOCK_RAW)
        {
            return Err(malformed(start, "block length"));
        }
        let mut packed = std::mem::take(&mut self.packed);
        packed.resize(packed_len, 0);
        let r = self.fill(&mut packed);
        self.packed = packed;
        r?;
        let computed = crc32c::crc32c_append(crc32c::crc32c(&head[..9]), &self.packed);
        let stored = u32_at(&head, 9);
        if stored != computed {
            return Err(SnapshotError::Checksum { what: "block", offset: start, stored, computed }.into());
        }
        if self.zstd.is_none() {
            let d = zstd::bulk::Decompressor::new().map_err(crate::error::io_err("starting zstd", &self.name))?;
            self.zstd = Some(d);
        }
        let zstd = self.zstd.as_mut().expect("set above");
        self.raw.clear();
        self.raw.reserve(raw_len);
        match zstd.decompress_to_buffer(&self.packed, &mut self.raw) {
            Ok(n) if n == raw_len => {}
            _ => return Err(malformed(start, "block does not decompress to its length")),
        }
        self.at = 0;
        self.block_at = start;
        self.counts.blocks += 1;
        self.counts.stream_bytes += raw_len as u64;
        Ok(())
    }

    /// File offset of the current block, for errors about what it holds.
    pub fn block_at(&self) -> u64 {
        self.block_at
    }

    /// The next stream byte.
    pub fn byte(&mut self) -> Result<u8> {
        if self.at == self.raw.len() {
            self.next_block()?;
        }
        self.at += 1;
        Ok(self.raw[self.at - 1])
    }

    /// The next unsigned LEB128 number of the stream.
    pub fn leb(&mut self) -> Result<u64> {
        arbor_core::leb128::read_u64_from(|| self.byte())?
            .ok_or_else(|| malformed(self.block_at, "number overflows 64 bits"))
    }

    /// Replaces `out` with the next `len` stream bytes.
    pub fn bytes(&mut self, len: usize, out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        while out.len() < len {
            if self.at == self.raw.len() {
                self.next_block()?;
            }
            let n = (len - out.len()).min(self.raw.len() - self.at);
            out.extend_from_slice(&self.raw[self.at..self.at + n]);
            self.at += n;
        }
        Ok(())
    }

    /// Reads the trailer once the tree is complete and checks it against `tree` (the dirs,
    /// values and value bytes the caller counted), the file's crc, and that nothing follows.
    pub fn finish(&mut self, tree: Counts) -> Result<Counts> {
        if self.at != self.raw.len() {
            return Err(malformed(self.block_at, "bytes after the end of the tree"));
        }
        let start = self.pos;
        let tag: [u8; 1] = self.array()?;
        match tag[0] {
            TAG_END => {}
            TAG_BLOCK => return Err(malformed(start, "a block after the end of the tree")),
            _ => return Err(malformed(start, "unknown frame tag")),
        }
        let t: [u8; TRAILER_COUNTS] = self.array()?;
        let computed = self.crc;
        let stored = u32::from_le_bytes(self.array()?);
        if stored != computed {
            return Err(SnapshotError::Checksum { what: "file", offset: 0, stored, computed }.into());
        }
        let mine = Counts { stream_bytes: self.counts.stream_bytes, blocks: self.counts.blocks, ..tree };
        let fields = [
            ("directories", mine.dirs),
            ("values", mine.values),
            ("value bytes", mine.value_bytes),
            ("stream bytes", mine.stream_bytes),
            ("blocks", mine.blocks),
        ];
        for (i, (what, counted)) in fields.into_iter().enumerate() {
            let stored = u64_at(&t, 8 * i);
            if stored != counted {
                return Err(SnapshotError::CountMismatch { what, stored, counted }.into());
            }
        }
        let mut extra = [0u8; 1];
        loop {
            match self.inp.read(&mut extra) {
                Ok(0) => return Ok(mine),
                Ok(_) => return Err(SnapshotError::TrailingBytes { offset: self.pos }.into()),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(crate::error::io_err("reading snapshot", &self.name)(e)),
            }
        }
    }

    /// Bytes of the file read so far.
    pub fn pos(&self) -> u64 {
        self.pos
    }
}
