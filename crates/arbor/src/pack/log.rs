//! The append-only log: a sequence of chunk files holding records at global offsets.
//!
//! Chunk `k` is the file `pack/<start>.chunk`; it begins with a 32-byte header and holds the
//! global offsets `[start, start + file length)`. The next chunk starts where the previous one
//! ends, so offsets are global and never reused. Records never span two chunks.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

use parking_lot::RwLock;

use super::frames::{ChunkFrames, Next};
use super::prefix::Prefix;
use super::record::{parse_frame, DecodeError, FrameError};
use crate::error::{io_err, Corruption, Error, Result};
use crate::io::{File, FileSystem, Mapping, OpenOptions};

/// Bytes of a chunk file header.
pub(crate) const CHUNK_HEADER_LEN: u64 = 32;
/// Magic bytes that start every chunk file.
pub(crate) const CHUNK_MAGIC: &[u8; 8] = b"ARBORPK\x01";
/// Format version of the log records this build writes and reads (2: delta records; 3: deltas
/// of deltas; 4: a delta's change may name its base's binding by position).
pub(crate) const FORMAT_VERSION: u32 = 4;
/// How many bytes a record read asks for first; nearly all records are smaller. An inode
/// record of 32 bindings or slots is 1-1.5 KiB: with 512 bytes, reading one took two system
/// calls (300 blocks at 30M values: 1,780 reads a block with 512 bytes, 1,495 with 2 KiB, 1,482
/// with 4 KiB, and about 1.5 ms less CPU a block with 4 KiB).
const FIRST_READ: usize = 4096;
/// Subdirectory of `pack/` holding the lower layer of an archive store.
pub(crate) const LOWER_DIR: &str = "lower";

/// One chunk file.
#[derive(Debug)]
pub(crate) struct Chunk {
    pub start: u64,
    pub file: Arc<dyn File>,
    pub path: PathBuf,
    /// How long the file was when last asked (`File::len`): a record is copied out of
    /// the file's mapping only below this, because reading a mapped page past the file's end
    /// kills the process, and a pointer read from a damaged record may point anywhere.
    /// Nothing shortens a chunk below a length it had while its records may be read
    /// (FORMAT.md 10, I15).
    seen_len: AtomicU64,
}

impl Chunk {
    /// The chunk starting at global offset `start`, in `file` at `path`.
    pub fn new(start: u64, file: Arc<dyn File>, path: PathBuf) -> Chunk {
        Chunk { start, file, path, seen_len: AtomicU64::new(0) }
    }

    /// Whether the chunk's file holds its first `end` bytes: as last seen, or as it is now.
    fn holds(&self, end: u64) -> bool {
        if end <= self.seen_len.load(Ordering::Relaxed) {
            return true;
        }
        let now = self.file.len().unwrap_or(0);
        self.seen_len.fetch_max(now, Ordering::Relaxed);
        end <= now
    }

    /// Cuts the chunk's file to `len` bytes: only while no one reads the chunk (a writer's
    /// open, before the log is shared), and never below a published end (FORMAT.md 10, I15).
    pub fn cut(&self, len: u64) -> std::io::Result<()> {
        self.seen_len.fetch_min(len, Ordering::Relaxed);
        self.file.set_len(len)
    }

    /// The frame at position `at` of the chunk, of which `avail` bytes may be read, in a
    /// buffer: copied out of the file's mapping where `mapped` and the file system maps files,
    /// else read with a system call.
    fn read_frame(&self, at: u64, avail: u64, mapped: bool) -> Result<ReadFrame> {
        // The frame is parsed from the bytes a reader may see from `at` on, which the file
        // holds; a read of a file past what it was seen to hold asks the file's length again.
        let end = at.saturating_add(avail);
        if mapped && self.holds(end) {
            if let Some(mapping) = self.file.mapping(end) {
                return frame_from_mapping(&mapping, &self.path, at, avail);
            }
        }
        read_frame(self.file.as_ref(), &self.path, at, avail)
    }
}

/// The chunk files of a store and the end of the data readers may see.
#[derive(Debug)]
pub(crate) struct Log {
    pub fs: Arc<dyn FileSystem>,
    pub dir: PathBuf,
    pub uid: u64,
    chunks: RwLock<Vec<Arc<Chunk>>>,
    end: AtomicU64,
    gc: RwLock<Arc<GcView>>,
    /// Records are copied out of the chunks' mappings where the file system maps files
    /// (`Config::mapped_reads`); off until the store's open sets it.
    pub mapped_reads: bool,
    /// Records read since the log was opened ([`Log::read`]), with a system call or out of a
    /// mapping.
    records_read: AtomicU64,
    /// Of those, the ones found, by record kind (a kind past the table's end at 0).
    found_by_kind: [AtomicU64; KINDS_COUNTED],
}

/// Record kinds counted apart by [`Log::found_by_kind`]: every kind FORMAT.md defines is
/// below this.
pub(crate) const KINDS_COUNTED: usize = 16;

fn chunk_name(start: u64) -> String {
    format!("{start:020}.chunk")
}

/// Checks a chunk header; returns the chunk's start offset.
fn check_header(h: &[u8; CHUNK_HEADER_LEN as usize], name: &str, uid: u64, path: &Path) -> Result<u64> {
    let stored = u32::from_le_bytes(h[28..].try_into().expect("4"));
    let computed = crc32c::crc32c(&h[..28]);
    if stored != computed {
        let kind = Corruption::Checksum { stored, computed };
        return Err(Error::Corrupt { file: path.to_path_buf(), offset: 0, kind });
    }
    if &h[..8] != CHUNK_MAGIC {
        return Err(Error::Corrupt { file: path.to_path_buf(), offset: 0, kind: Corruption::BadMagic });
    }
    let version = u32::from_le_bytes(h[8..12].try_into().expect("4"));
    if version != FORMAT_VERSION {
        return Err(Error::UnsupportedVersion { file: path.to_path_buf(), found: version, supported: FORMAT_VERSION });
    }
    let start = u64::from_le_bytes(h[12..20].try_into().expect("8"));
    let chunk_uid = u64::from_le_bytes(h[20..28].try_into().expect("8"));
    if uid != 0 && chunk_uid != uid {
        let kind = Corruption::ForeignStore { store_uid: uid, file_uid: chunk_uid };
        return Err(Error::Corrupt { file: path.to_path_buf(), offset: 20, kind });
    }
    if chunk_name(start) != name {
        return Err(Error::Corrupt {
            file: path.to_path_buf(),
            offset: 12,
            kind: Corruption::ChunkStart { header: start },
        });
    }
    Ok(start)
}

fn header_bytes(start: u64, uid: u64) -> [u8; CHUNK_HEADER_LEN as usize] {
    let mut h = [0u8; CHUNK_HEADER_LEN as usize];
    h[..8].copy_from_slice(CHUNK_MAGIC);
    h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h[12..20].copy_from_slice(&start.to_le_bytes());
    h[20..28].copy_from_slice(&uid.to_le_bytes());
    let crc = crc32c::crc32c(&h[..28]);
    h[28..].copy_from_slice(&crc.to_le_bytes());
    h
}

/// The chunk file names of a log directory and of its lower layer, listed in that order.
///
/// An archive collection renames complete chunks from `pack/` into `pack/lower/` (and a drop
/// collection removes chunks) while read-only handles in other processes list them. Renames
/// go one way only, so listing `pack/` first and the lower layer second sees every chunk: one
/// renamed before the first listing is in the second, one renamed after it is in the first
/// (and, renamed before it is opened, is then opened in the lower layer). A chunk in both
/// listings is one file, taken from the lower layer. The other order loses a chunk renamed
/// between the two listings: a reader then took the commits in it for pointers outside the
/// data (docs/FORMAT.md, section 15.5).
#[derive(Debug)]
struct ChunkNames {
    /// The lower layer's directory.
    lower_dir: PathBuf,
    /// Chunk names listed in the log directory, sorted (that is, in offset order).
    upper: Vec<String>,
    /// Chunk names listed in the lower layer, after `upper`.
    lower: BTreeSet<String>,
}

impl ChunkNames {
    /// Lists the log directory `dir` (which may be missing unless `dir_required`), then its
    /// lower layer (which may be missing).
    fn list(fs: &dyn FileSystem, dir: &Path, dir_required: bool) -> Result<ChunkNames> {
        let chunk_names = |d: &Path, required: bool| -> Result<Vec<String>> {
            let names = if required || fs.exists(d) { fs.list(d).map_err(io_err("listing", d))? } else { Vec::new() };
            Ok(names.into_iter().filter(|n| n.ends_with(".chunk")).collect())
        };
        let mut upper = chunk_names(dir, dir_required)?;
        upper.sort();
        let lower_dir = dir.join(LOWER_DIR);
        let lower = chunk_names(&lower_dir, false)?.into_iter().collect();
        Ok(ChunkNames { lower_dir, upper, lower })
    }

    /// Opens and checks the lower layer's chunk `name`. With `gone_ok` (a read-only handle), a
    /// chunk that is not there is left out: a drop collection removed it, below its floor.
    fn open_lower(&self, fs: &dyn FileSystem, name: &str, uid: u64, gone_ok: bool) -> Result<Option<Arc<Chunk>>> {
        let path = self.lower_dir.join(name);
        let file = match fs.open(&path, OpenOptions::default()) {
            Ok(file) => file,
            Err(e) if gone_ok && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err("opening", &path)(e)),
        };
        let mut h = [0u8; CHUNK_HEADER_LEN as usize];
        file.read_exact_at(&mut h, 0).map_err(io_err("reading", &path))?;
        let start = check_header(&h, name, uid, &path)?;
        Ok(Some(Arc::new(Chunk::new(start, file, path))))
    }
}

impl Log {
    /// Opens the chunk files under `dir` and its lower layer (`dir` created, with a first
    /// chunk, when `writable` and missing). A last chunk whose header is torn was being created
    /// when the writer died: a writable open removes it, a read-only one ignores it; a torn
    /// header elsewhere is corruption.
    ///
    /// A read-only open runs beside a writer whose collections move chunks into the lower layer
    /// or remove them: it lists `dir` before the lower layer and takes a chunk that left `dir`
    /// since from the lower layer (see [`ChunkNames`]); one gone from both was removed by a drop
    /// collection, below its floor, and is left out.
    pub fn open(fs: Arc<dyn FileSystem>, dir: &Path, uid: u64, writable: bool) -> Result<Log> {
        let mut chunks = Vec::new();
        if writable {
            fs.create_dir_all(dir).map_err(io_err("creating", dir))?;
        }
        let listed = ChunkNames::list(fs.as_ref(), dir, false)?;
        for name in &listed.lower {
            chunks.extend(listed.open_lower(fs.as_ref(), name, uid, !writable)?);
        }
        if writable {
            // A power loss after the lower layer's sync of a move and before that of `dir` can
            // leave the chunk's old name too: the lower layer's is the one a collection moved.
            let stale: Vec<&String> = listed.upper.iter().filter(|n| listed.lower.contains(*n)).collect();
            for name in &stale {
                let path = dir.join(name);
                fs.remove_file(&path).map_err(io_err("removing a moved chunk's old name", &path))?;
            }
            if !stale.is_empty() {
                fs.sync_dir(dir).map_err(io_err("syncing", dir))?;
            }
        }
        let opts = OpenOptions { create: false, write: writable, truncate: false };
        for name in listed.upper.iter().filter(|n| !listed.lower.contains(*n)) {
            let path = dir.join(name);
            let file = match fs.open(&path, opts) {
                Ok(file) => file,
                // Moved into the lower layer, or removed, since the listing. A writable open
                // holds the lock: nothing changes the directory under it.
                Err(e) if !writable && e.kind() == std::io::ErrorKind::NotFound => {
                    chunks.extend(listed.open_lower(fs.as_ref(), name, uid, true)?);
                    continue;
                }
                Err(e) => return Err(io_err("opening", &path)(e)),
            };
            let mut h = [0u8; CHUNK_HEADER_LEN as usize];
            let len = file.len().map_err(io_err("reading the length of", &path))?;
            let valid = len >= CHUNK_HEADER_LEN && {
                file.read_exact_at(&mut h, 0).map_err(io_err("reading", &path))?;
                u32::from_le_bytes(h[28..].try_into().expect("4")) == crc32c::crc32c(&h[..28])
            };
            if !valid && len > CHUNK_HEADER_LEN {
                // Records follow the header, so it was synced once: this is damage, not a
                // creation cut short, and the chunk's data must not be dropped.
                let stored = u32::from_le_bytes(h[28..].try_into().expect("4"));
                let kind = Corruption::Checksum { stored, computed: crc32c::crc32c(&h[..28]) };
                return Err(Error::Corrupt { file: path, offset: 0, kind });
            }
            if !valid {
                // A torn header: the chunk was being created when the writer died.
                let later = listed.upper.iter().any(|n| n.as_str() > name.as_str());
                if writable && !later {
                    fs.remove_file(&path).map_err(io_err("removing a torn chunk", &path))?;
                    continue;
                }
                if !writable && !later {
                    continue;
                }
                return Err(Error::Corrupt { file: path, offset: 0, kind: Corruption::BadMagic });
            }
            let start = check_header(&h, name, uid, &path)?;
            chunks.push(Arc::new(Chunk::new(start, file, path)));
        }
        chunks.sort_by_key(|c| c.start);
        let log = Log {
            fs,
            dir: dir.to_path_buf(),
            uid,
            chunks: RwLock::new(chunks),
            end: AtomicU64::new(0),
            gc: RwLock::new(Arc::new(GcView::default())),
            mapped_reads: false,
            records_read: AtomicU64::new(0),
            found_by_kind: [const { AtomicU64::new(0) }; KINDS_COUNTED],
        };
        if writable && log.chunks.read().is_empty() {
            log.new_chunk(0)?;
        }
        let first = log.chunks.read().first().map(|c| c.start + CHUNK_HEADER_LEN).unwrap_or(CHUNK_HEADER_LEN);
        log.end.store(first, Ordering::Release);
        Ok(log)
    }

    /// Creates, syncs and registers a new chunk starting at global offset `start`.
    pub fn new_chunk(&self, start: u64) -> Result<Arc<Chunk>> {
        let path = self.dir.join(chunk_name(start));
        let opts = OpenOptions { create: true, write: true, truncate: true };
        let file = self.fs.open(&path, opts).map_err(io_err("creating", &path))?;
        file.write_all_at(&header_bytes(start, self.uid), 0).map_err(io_err("writing", &path))?;
        file.sync_data().map_err(io_err("syncing", &path))?;
        self.fs.sync_dir(&self.dir).map_err(io_err("syncing", &self.dir))?;
        let chunk = Arc::new(Chunk::new(start, file, path));
        self.chunks.write().push(chunk.clone());
        Ok(chunk)
    }

    /// Registers chunk files another process (the writer) created since this log was opened,
    /// checking their headers (magic, version, start, store uid). A chunk created since may
    /// already have been moved into the lower layer by a collection, or removed (below a drop
    /// collection's floor): the listing is that of [`Log::open`].
    pub fn reload_chunks(&self) -> Result<()> {
        // A missing log directory is an error: the handle was opened on a directory the writer
        // had not made a store of yet (its store uid is not the writer's), and must start again.
        let listed = ChunkNames::list(self.fs.as_ref(), &self.dir, true)?;
        let mut chunks = self.chunks.write();
        let known = chunks.last().map(|c| c.start);
        let new = |name: &String| {
            let start = name.strip_suffix(".chunk").and_then(|s| s.parse::<u64>().ok());
            start.is_some_and(|s| known.is_none_or(|k| s > k))
        };
        for name in listed.lower.iter().filter(|n| new(n)) {
            chunks.extend(listed.open_lower(self.fs.as_ref(), name, self.uid, true)?);
        }
        for name in listed.upper.iter().filter(|n| new(n) && !listed.lower.contains(*n)) {
            let path = self.dir.join(name);
            let file = match self.fs.open(&path, OpenOptions::default()) {
                Ok(file) => file,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    chunks.extend(listed.open_lower(self.fs.as_ref(), name, self.uid, true)?);
                    continue;
                }
                Err(e) => return Err(io_err("opening", &path)(e)),
            };
            let mut h = [0u8; CHUNK_HEADER_LEN as usize];
            let len = file.len().map_err(io_err("reading the length of", &path))?;
            if len < CHUNK_HEADER_LEN || {
                file.read_exact_at(&mut h, 0).map_err(io_err("reading", &path))?;
                u32::from_le_bytes(h[28..].try_into().expect("4")) != crc32c::crc32c(&h[..28])
            } {
                // The writer is still creating this chunk: a later refresh will pick it up.
                break;
            }
            // The same checks as at open, so each mismatch is reported as what it is.
            let start = check_header(&h, name, self.uid, &path)?;
            chunks.push(Arc::new(Chunk::new(start, file, path)));
        }
        // Chunks taken from the lower layer come before those of `dir`, in name order; the
        // list is kept in offset order.
        chunks.sort_by_key(|c| c.start);
        Ok(())
    }

    /// Every chunk, in offset order.
    pub fn chunks(&self) -> Vec<Arc<Chunk>> {
        self.chunks.read().clone()
    }

    /// Removes chunks starting at or after `start` (a recovery of a torn tail).
    pub fn drop_chunks_from(&self, start: u64) -> Result<()> {
        let mut chunks = self.chunks.write();
        while chunks.last().is_some_and(|c| c.start >= start && chunks.len() > 1) {
            let c = chunks.pop().expect("non-empty");
            self.fs.remove_file(&c.path).map_err(io_err("removing", &c.path))?;
        }
        self.fs.sync_dir(&self.dir).map_err(io_err("syncing", &self.dir))
    }

    /// The end of the data readers may see: every record below it is complete and durable
    /// under the store's policy.
    pub fn end(&self) -> u64 {
        self.end.load(Ordering::Acquire)
    }

    /// Publishes a new end (after a commit is written).
    pub fn set_end(&self, end: u64) {
        self.end.store(end, Ordering::Release);
    }

    /// The chunk holding `offset`, and where that chunk's readable bytes end.
    fn locate(&self, offset: u64) -> Option<(Arc<Chunk>, u64)> {
        let chunks = self.chunks.read();
        let i = chunks.partition_point(|c| c.start <= offset).checked_sub(1)?;
        let limit = chunks.get(i + 1).map_or(self.end(), |n| n.start.min(self.end()));
        Some((chunks[i].clone(), limit))
    }

    /// Reads the record at global `offset`, frame and all. Below the GC floor the record
    /// comes from the prefix, or from the lower layer in archive mode.
    pub fn read(&self, offset: u64) -> Result<ReadFrame> {
        self.records_read.fetch_add(1, Ordering::Relaxed);
        let frame = self.read_uncounted(offset)?;
        let kind = usize::from(frame.kind);
        self.found_by_kind[if kind < KINDS_COUNTED { kind } else { 0 }].fetch_add(1, Ordering::Relaxed);
        Ok(frame)
    }

    /// [`Log::read`], not counted.
    fn read_uncounted(&self, offset: u64) -> Result<ReadFrame> {
        {
            let gc = self.gc.read();
            if offset < gc.floor {
                if let Some(r) = gc.prefix.as_ref().and_then(|p| p.read(offset)) {
                    return r;
                }
                if !gc.archive {
                    return Err(Error::ObjectDropped { offset });
                }
            }
        }
        let Some((chunk, limit)) = self.locate(offset) else {
            return Err(self.dangling(offset));
        };
        if offset < chunk.start + CHUNK_HEADER_LEN || offset >= limit {
            return Err(self.dangling(offset));
        }
        chunk.read_frame(offset - chunk.start, limit - offset, self.mapped_reads)
    }

    /// How many records were read since the log was opened (each [`Log::read`], found or not).
    pub fn records_read(&self) -> u64 {
        self.records_read.load(Ordering::Relaxed)
    }

    /// Of the records read since the log was opened, how many were found, by kind: entry `k`
    /// counts records of kind `k` (entry 0, kinds of [`KINDS_COUNTED`] or more).
    pub fn found_by_kind(&self) -> [u64; KINDS_COUNTED] {
        std::array::from_fn(|k| self.found_by_kind[k].load(Ordering::Relaxed))
    }

    /// The GC state readers route by.
    pub fn gc_view(&self) -> Arc<GcView> {
        self.gc.read().clone()
    }

    /// Installs a new GC state (after its control file is durable).
    pub fn set_gc_view(&self, view: GcView) {
        *self.gc.write() = Arc::new(view);
    }

    /// Calls `f(offset, kind, body)` for every complete record in `[from, to)`, in order;
    /// `from` must be a record start at or above the GC floor.
    pub fn for_each_record(&self, from: u64, to: u64, f: &mut RecordVisitor<'_>) -> Result<()> {
        let chunks = self.chunks();
        for (i, chunk) in chunks.iter().enumerate() {
            let chunk_end = chunks.get(i + 1).map_or(to, |n| n.start.min(to));
            if chunk_end <= from {
                continue;
            }
            let mut frames = ChunkFrames::new(chunk, from.max(chunk.start + CHUNK_HEADER_LEN), chunk_end);
            loop {
                match frames.next_frame()? {
                    Next::Frame(frame) => f(frame.offset, frame.kind, frame.body)?,
                    Next::End => break,
                    Next::Damaged(kind) => {
                        let offset = frames.pos() - chunk.start;
                        return Err(Error::Corrupt { file: chunk.path.clone(), offset, kind });
                    }
                }
            }
        }
        Ok(())
    }

    /// Gives back the space of chunks below `floor` after a GC made them unneeded: removes
    /// chunk files wholly below it (or, in archive mode, moves them to the lower layer) and
    /// punches out the dead start of the chunk holding it. Idempotent, so an open can finish
    /// the work of a GC that crashed after its control file was written. Returns bytes freed.
    pub fn release_below(&self, floor: u64, archive: bool) -> Result<u64> {
        // File operations run without the chunk-list lock: every read takes it, and removing
        // a gigabyte file can take long enough to stall blocks.
        let all = self.chunks();
        let below: Vec<Arc<Chunk>> = all.windows(2).filter(|w| w[1].start <= floor).map(|w| w[0].clone()).collect();
        let mut freed = 0;
        if archive {
            let lower = self.dir.join(LOWER_DIR);
            for c in below.iter().filter(|c| c.path.parent() != Some(lower.as_path())) {
                self.fs.create_dir_all(&lower).map_err(io_err("creating", &lower))?;
                let to = lower.join(chunk_name(c.start));
                self.fs.rename(&c.path, &to).map_err(io_err("moving to the lower layer", &c.path))?;
                self.fs.sync_dir(&lower).map_err(io_err("syncing", &lower))?;
                let moved = Arc::new(Chunk::new(c.start, c.file.clone(), to));
                if let Some(slot) = self.chunks.write().iter_mut().find(|x| x.start == c.start) {
                    *slot = moved;
                }
            }
        } else {
            self.chunks.write().retain(|c| !below.iter().any(|b| b.start == c.start));
            for c in &below {
                freed += c.file.len().map_err(io_err("reading the length of", &c.path))?;
                self.fs.remove_file(&c.path).map_err(io_err("removing", &c.path))?;
            }
        }
        self.fs.sync_dir(&self.dir).map_err(io_err("syncing", &self.dir))?;
        if !archive {
            // The chunk holding the floor: its start is dead.
            let boundary = all.iter().rev().find(|c| c.start <= floor);
            if let Some(c) = boundary.filter(|c| floor > c.start + CHUNK_HEADER_LEN) {
                let len = floor - c.start - CHUNK_HEADER_LEN;
                match c.file.punch_hole(CHUNK_HEADER_LEN, len) {
                    Ok(()) => freed += len,
                    // Not every file system can; the space then comes back when the chunk goes.
                    Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {}
                    Err(e) => return Err(io_err("punching a hole in", &c.path)(e)),
                }
            }
        }
        Ok(freed)
    }

    /// The error for a record at global `offset` whose body does not decode.
    pub fn corrupt_at(&self, offset: u64, e: DecodeError) -> Error {
        Error::Corrupt { file: self.dir.clone(), offset, kind: e.into() }
    }

    /// The error for a pointer outside the data.
    pub fn dangling(&self, offset: u64) -> Error {
        Error::Corrupt { file: self.dir.clone(), offset, kind: Corruption::DanglingOffset(offset) }
    }
}

/// Reads the frame at position `at` of `file`, of which `avail` bytes may be read, into a
/// buffer of this thread's (`READ_BUFFERS`).
pub(crate) fn read_frame(file: &dyn File, path: &Path, at: u64, avail: u64) -> Result<ReadFrame> {
    frame_into_buffer(path, at, avail, FIRST_READ, false, |buf, pos| file.read_exact_at(buf, pos))
}

/// The most bytes a frame's kind and length take: a frame is copied out of a mapping in two
/// steps, these bytes and then the rest, so that no more than the frame is copied.
const FRAME_HEAD: usize = 1 + arbor_core::leb128::MAX_LEN;

/// Copies the frame at position `at` of a mapped file, of which `avail` bytes may be read and
/// the file holds ([`Chunk::holds`]), into a buffer of this thread's, with no system call.
#[expect(unsafe_code, reason = "copies out of a mapped chunk the bytes only this module can vouch for")]
fn frame_from_mapping(mapping: &Mapping, path: &Path, at: u64, avail: u64) -> Result<ReadFrame> {
    // SAFETY: the caller checked that the file holds the `avail` bytes from `at`, and the
    // copies stay within them (`frame_into_buffer` asks for no more). A log never shortens a
    // chunk below a length a reader saw: it appends, and the only cut, when a writer opens
    // the store, drops a torn tail past the last complete commit, which no reader's end ever
    // passes (FORMAT.md 10, I15). A hole a collection punches reads as zeros, which the
    // frame's checksum, computed over the copy, catches, as it would in a `pread`.
    frame_into_buffer(path, at, avail, FRAME_HEAD, true, |buf, pos| unsafe { mapping.copy_to(buf, pos) })
}

/// Reads the frame at position `at`, of which `avail` bytes may be read, into a buffer of
/// this thread's (`READ_BUFFERS`) with `read_exact_at`: `first` bytes, then the rest of the
/// frame if it is longer. The checksum is checked on the copy, which is what is decoded.
fn frame_into_buffer(
    path: &Path,
    at: u64,
    avail: u64,
    first: usize,
    mapped: bool,
    read_exact_at: impl Fn(&mut [u8], u64) -> std::io::Result<()>,
) -> Result<ReadFrame> {
    let avail = usize::try_from(avail).unwrap_or(usize::MAX);
    let corrupt = |kind| Error::Corrupt { file: path.to_path_buf(), offset: at, kind };
    // The buffer goes back to the thread when dropped, on an error too.
    let mut buf = ReadBuffer::take();
    let first = first.min(avail);
    if buf.0.len() < first {
        buf.0.resize(first, 0);
    }
    read_exact_at(&mut buf.0[..first], at).map_err(io_err("reading", path))?;
    // Only the bytes read in this call are parsed: the rest of the buffer is an earlier read's.
    let parsed = match parse_frame(&buf.0[..first]) {
        Ok(f) => f,
        Err(FrameError::NeedMore(n)) if n <= avail => {
            if buf.0.len() < n {
                buf.0.resize(n, 0);
            }
            read_exact_at(&mut buf.0[first..n], at + first as u64).map_err(io_err("reading", path))?;
            parse_frame(&buf.0[..n]).map_err(|e| corrupt(e.into()))?
        }
        Err(e) => return Err(corrupt(e.into())),
    };
    Ok(ReadFrame {
        kind: parsed.kind,
        buf,
        len: parsed.total,
        body: parsed.body_start..parsed.body_start + parsed.body_len,
        mapped,
    })
}

/// Buffers kept by a thread for its next reads, at most this many (a delta record is read
/// with its base, and a chain of bases, while the first frame is still held).
const READ_BUFFERS_KEPT: usize = 4;
/// A buffer larger than this (a read of a large record) is freed rather than kept.
const READ_BUFFER_KEPT_BYTES: usize = 64 << 10;

thread_local! {
    /// The buffers records were last read into on this thread ([`ReadFrame`]).
    static READ_BUFFERS: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// A buffer records are read into, which goes back to its thread when dropped, for the
/// thread's next read: a read then neither allocates nor zeroes a buffer of its own (a zeroed
/// 4 KiB each time, at 1,500 reads a block with 30M values, most of them decoded and dropped
/// at once).
#[derive(Debug)]
struct ReadBuffer(Vec<u8>);

impl ReadBuffer {
    /// A buffer this thread read into before, or an empty one.
    fn take() -> ReadBuffer {
        ReadBuffer(READ_BUFFERS.try_with(|kept| kept.borrow_mut().pop()).ok().flatten().unwrap_or_default())
    }
}

impl Drop for ReadBuffer {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.0);
        if buf.capacity() == 0 || buf.capacity() > READ_BUFFER_KEPT_BYTES {
            return;
        }
        // (During the thread's exit the buffers may be gone already: this one is freed.)
        let _ = READ_BUFFERS.try_with(|kept| {
            let mut kept = kept.borrow_mut();
            if kept.len() < READ_BUFFERS_KEPT {
                kept.push(buf);
            }
        });
    }
}

/// A record read whole: its kind, its frame bytes, and its body.
#[derive(Debug)]
pub(crate) struct ReadFrame {
    kind: u8,
    /// The frame's bytes, first (the buffer may hold more: an earlier, longer read's bytes).
    buf: ReadBuffer,
    /// The frame's length.
    len: usize,
    /// Where the body is among the frame's bytes.
    body: Range<usize>,
    /// Whether the bytes were copied out of the file's mapping, not read with a system call.
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the tests, which check which way a frame came"))]
    mapped: bool,
}

impl ReadFrame {
    /// The record's kind.
    pub fn kind(&self) -> u8 {
        self.kind
    }

    /// The frame's bytes, header and checksum included.
    pub fn raw(&self) -> &[u8] {
        &self.buf.0[..self.len]
    }

    /// The record's body.
    pub fn body(&self) -> &[u8] {
        &self.raw()[self.body.clone()]
    }

    /// The record's kind and body, as most readers take them.
    pub fn parts(&self) -> (u8, &[u8]) {
        (self.kind, self.body())
    }
}

/// Called with each record's offset, kind and body by [`Log::for_each_record`].
pub(crate) type RecordVisitor<'a> = dyn FnMut(u64, u8, &[u8]) -> Result<()> + 'a;

/// What garbage collection has done to the log, as readers route by it.
#[derive(Debug, Default)]
pub(crate) struct GcView {
    /// Records below this offset are in the prefix, in the lower layer (archive mode), or gone.
    pub floor: u64,
    /// The records a GC kept below the floor.
    pub prefix: Option<Arc<Prefix>>,
    /// Archive mode: chunks below the floor were moved to the lower layer, not removed.
    pub archive: bool,
}

/// Appends records at the end of the log, buffering them until `flush`.
#[derive(Debug)]
pub(crate) struct LogWriter {
    chunk: Arc<Chunk>,
    /// Global offset of the next record.
    pos: u64,
    /// Bytes not yet written to the file, starting at global offset `buf_start`.
    buf: Vec<u8>,
    buf_start: u64,
    /// Reused for encoding record bodies.
    pub scratch: Vec<u8>,
    /// A buffer back from a thread that wrote it ([`LogWriter::give_back`]), to fill next.
    spare: Vec<u8>,
    /// How far the chunk's file holds bytes (zeros past the records) once the preparation
    /// last asked for is done ([`Prepare`]); chunk-relative, 0 when none was asked for.
    prepared: u64,
    /// The outcome of the preparation under way on another thread, sent once its zeros are
    /// written and synced: nothing else may write the chunk before.
    preparing: Option<mpsc::Receiver<std::io::Result<()>>>,
}

/// Zeros written past the last record of the chunk being appended to, ahead of the records
/// that will overwrite them, and synced (FORMAT.md 3.2).
///
/// An append that extends a file makes its `fdatasync` commit the file's new size and
/// blocks to the file system's journal as well as write the data, and it copies into page
/// cache pages allocated for it; overwriting bytes the file already holds, synced, does
/// neither. A 330 KiB `pwrite` and `fdatasync` took 0.53 ms appending and 0.29 ms overwriting
/// on this project's machine; at 30M values, where a block's records landed in pages the
/// page cache allocated for them, the wait for the sync after a commit's eviction fell from
/// 1.1-1.3 ms to 0.14-0.26.
/// The thread that writes and syncs commits prepares after a commit's sync, while the next
/// block runs, so that neither the zeros nor their sync are in a commit's time.
#[derive(Debug)]
pub(crate) struct Prepare {
    chunk: Arc<Chunk>,
    /// Chunk-relative: the end of the records when asked for, and the end to reach.
    from: u64,
    upto: u64,
    /// Where the outcome goes, ending the writer's wait ([`LogWriter::wait_prepared`]).
    done: mpsc::SyncSender<std::io::Result<()>>,
}

/// The most zeros one write of a preparation takes.
const PREPARE_PIECE: usize = 1 << 20;

impl Prepare {
    /// Writes zeros from where the file ends (or the records end, if further) up to the end
    /// asked for, then syncs them: the file then holds those bytes, and later records only
    /// overwrite them. The outcome goes to the writer, whose next change reports a failure
    /// as any failed write of its own.
    pub fn run(self) {
        let outcome = self.write_zeros();
        // The writer gone, nobody is left to tell.
        let _ = self.done.send(outcome);
    }

    fn write_zeros(&self) -> std::io::Result<()> {
        let file = &self.chunk.file;
        let mut at = file.len()?.max(self.from);
        if at >= self.upto {
            return Ok(());
        }
        let zeros = vec![0u8; PREPARE_PIECE.min((self.upto - at) as usize)];
        while at < self.upto {
            let n = zeros.len().min((self.upto - at) as usize);
            file.write_all_at(&zeros[..n], at)?;
            at += n as u64;
        }
        file.sync_data()
    }
}

/// Records handed over by [`LogWriter::hand_over`], not written yet.
#[derive(Debug)]
pub(crate) struct Unwritten {
    chunk: Arc<Chunk>,
    at: u64,
    bytes: Vec<u8>,
}

impl Unwritten {
    /// How many bytes of records are to be written.
    pub fn byte_count(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Writes the records where they go; returns their buffer, for `LogWriter::give_back`.
    pub fn write(self) -> std::io::Result<Vec<u8>> {
        self.chunk.file.write_all_at(&self.bytes, self.at)?;
        Ok(self.bytes)
    }
}

/// Buffered bytes above which `append` writes them out, to bound memory on huge commits.
const FLUSH_AT: usize = 8 << 20;

impl LogWriter {
    /// A writer appending at `pos` in the last chunk.
    pub fn new(log: &Log, pos: u64) -> LogWriter {
        let chunk = log.chunks().last().cloned().expect("a writable log has a chunk");
        LogWriter {
            chunk,
            pos,
            buf: Vec::new(),
            buf_start: pos,
            scratch: Vec::new(),
            spare: Vec::new(),
            prepared: 0,
            preparing: None,
        }
    }

    /// Global offset the next record will get.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Appends a record; returns its global offset.
    pub fn append(&mut self, kind: u8, body: &[u8]) -> Result<u64> {
        let at = self.pos;
        let before = self.buf.len();
        super::record::frame(&mut self.buf, kind, body);
        self.pos += (self.buf.len() - before) as u64;
        if self.buf.len() >= FLUSH_AT {
            self.flush()?;
        }
        Ok(at)
    }

    /// Appends the record whose body is in `self.scratch`.
    pub fn append_scratch(&mut self, kind: u8) -> Result<u64> {
        let body = std::mem::take(&mut self.scratch);
        let r = self.append(kind, &body);
        self.scratch = body;
        self.scratch.clear();
        r
    }

    /// Writes buffered records to the chunk file.
    pub fn flush(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.wait_prepared()?;
        let at = self.buf_start - self.chunk.start;
        self.chunk.file.write_all_at(&self.buf, at).map_err(io_err("appending to", &self.chunk.path))?;
        self.buf_start += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// The chunk being appended to, so that another thread can sync it.
    pub fn chunk(&self) -> Arc<Chunk> {
        self.chunk.clone()
    }

    /// The buffered records, handed over for another thread to write ([`Unwritten::write`])
    /// as `flush` would: the writer goes on as if they were written. Nothing may read them,
    /// nor sync the chunk, before they are.
    pub fn hand_over(&mut self) -> Unwritten {
        let spare = std::mem::take(&mut self.spare);
        let bytes = std::mem::replace(&mut self.buf, spare);
        let at = self.buf_start - self.chunk.start;
        self.buf_start += bytes.len() as u64;
        Unwritten { chunk: self.chunk.clone(), at, bytes }
    }

    /// After [`LogWriter::hand_over`] of the commit that wrote `written` bytes: zeros to
    /// write past its records once they are synced ([`Prepare`]), if fewer than that many
    /// are there already: up to twice that many (64 KiB to 512 KiB), never past `chunk_bytes`
    /// from the chunk's start (where the writer moves to a new chunk, so that only the last
    /// chunk may end in zeros). None when nothing is to be prepared.
    pub fn prepare(&mut self, written: u64, chunk_bytes: u64) -> Option<Prepare> {
        let from = self.buf_start - self.chunk.start;
        let ahead = written.clamp(64 << 10, 512 << 10);
        if self.prepared >= from + ahead {
            return None;
        }
        let upto = (from + 2 * ahead).min(chunk_bytes);
        if upto <= from {
            return None;
        }
        let (done, preparing) = mpsc::sync_channel(1);
        self.preparing = Some(preparing);
        self.prepared = upto;
        Some(Prepare { chunk: self.chunk.clone(), from, upto, done })
    }

    /// Waits for the preparation under way, if any, to be done; its failure is this call's.
    /// (A preparation dropped unrun, after its commit's sync failed, has nothing to report:
    /// that sync's failure is reported.)
    pub fn wait_prepared(&mut self) -> Result<()> {
        match self.preparing.take().map(|p| p.recv()) {
            Some(Ok(Err(e))) => Err(io_err("writing zeros past the records of", &self.chunk.path)(e)),
            _ => Ok(()),
        }
    }

    /// Takes back the buffer of records handed over and written, to fill it again.
    pub fn give_back(&mut self, mut bytes: Vec<u8>) {
        bytes.clear();
        self.spare = bytes;
    }

    /// Makes everything flushed durable.
    pub fn sync(&mut self) -> Result<()> {
        self.chunk.file.sync_data().map_err(io_err("syncing", &self.chunk.path))
    }

    /// Starts a new chunk if the current one holds at least `chunk_bytes`. Call between commits.
    pub fn maybe_roll(&mut self, log: &Log, chunk_bytes: u64) -> Result<()> {
        debug_assert!(self.buf.is_empty());
        if self.pos - self.chunk.start < chunk_bytes {
            return Ok(());
        }
        // Under a relaxed policy the old chunk may hold unsynced commits; later syncs only
        // reach the new chunk, so this is the old one's last chance.
        self.wait_prepared()?;
        self.sync()?;
        self.chunk = log.new_chunk(self.pos)?;
        self.pos += CHUNK_HEADER_LEN;
        self.buf_start = self.pos;
        self.prepared = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use std::sync::Arc;

    use super::{read_frame, Chunk, FIRST_READ};
    use crate::error::Error;
    use crate::io::{FileSystem, MemFs, OpenOptions, OsFs};
    use crate::pack::record::frame;

    /// Reads into a buffer an earlier read left longer bytes in see only their own frame:
    /// bodies come back exact, a frame longer than the first read is read whole, and a frame
    /// cut short is corrupt even where the buffer still holds a longer frame's bytes.
    #[test]
    fn a_read_into_a_reused_buffer_sees_only_its_own_frame() {
        let fs = MemFs::new();
        let path = Path::new("/c.chunk");
        let file = fs.open(path, OpenOptions { create: true, write: true, truncate: false }).unwrap();
        let bodies: Vec<Vec<u8>> = [3 * FIRST_READ, 5, 0, FIRST_READ - 7, 40, FIRST_READ + 1, 1]
            .iter()
            .enumerate()
            .map(|(n, &len)| (0..len).map(|i| (i * 31 + n) as u8).collect())
            .collect();
        let mut bytes = Vec::new();
        let mut starts = Vec::new();
        for (n, body) in bodies.iter().enumerate() {
            starts.push(bytes.len() as u64);
            frame(&mut bytes, n as u8 + 1, body);
        }
        file.write_all_at(&bytes, 0).unwrap();
        let end = bytes.len() as u64;
        let read = |n: usize| read_frame(file.as_ref(), path, starts[n], end - starts[n]).unwrap();
        // Each frame read while the one before is still held, and after it is given back.
        for round in 0..2 {
            let mut held = Vec::new();
            for (n, body) in bodies.iter().enumerate() {
                let f = read(n);
                assert_eq!((f.kind(), f.body()), (n as u8 + 1, &body[..]), "frame {n}, round {round}");
                assert_eq!(f.raw(), &bytes[starts[n] as usize..][..f.raw().len()]);
                if round == 0 {
                    held.push(f);
                }
            }
        }
        // The longest frame read last leaves its bytes in the buffer the next read takes; the
        // short frame at the end, cut, must not borrow them.
        drop(read(0));
        let last = starts.len() - 1;
        let cut = read_frame(file.as_ref(), path, starts[last], end - starts[last] - 1);
        assert!(matches!(cut, Err(Error::Corrupt { .. })), "{cut:?}");
    }

    /// Records copied out of a mapped chunk are the records read with `pread`, as the
    /// file grows past its first mapping; a read past what the file holds (a damaged pointer,
    /// or a chunk cut after a pointer into it was taken) takes the `pread` path and fails
    /// with an error rather than reading a mapped page past the file's end, which would kill
    /// the process.
    #[test]
    fn mapped_reads_are_the_file_as_far_as_it_goes_and_errors_past_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.chunk");
        let file = OsFs.open(&path, OpenOptions { create: true, write: true, truncate: false }).unwrap();
        let chunk = Chunk::new(0, Arc::clone(&file), path.clone());
        let mut bytes = Vec::new();
        let mut starts = Vec::new();
        // Frames appended in two rounds, the second past the first mapping (1 MiB).
        for (round, lens) in [[5usize, 0, FIRST_READ + 3], [3 << 20, 17, 4 * 4096]].iter().enumerate() {
            for (n, &len) in lens.iter().enumerate() {
                starts.push(bytes.len() as u64);
                let body: Vec<u8> = (0..len).map(|i| (i * 7 + n + round) as u8).collect();
                frame(&mut bytes, (round * 3 + n + 1) as u8, &body);
            }
            file.write_all_at(&bytes, 0).unwrap();
            let end = bytes.len() as u64;
            for &at in &starts {
                let mapped = chunk.read_frame(at, end - at, true).unwrap();
                let copied = chunk.read_frame(at, end - at, false).unwrap();
                assert!(mapped.mapped, "copied out of the mapping at {at}");
                assert!(!copied.mapped, "read with pread at {at}");
                assert_eq!((mapped.kind(), mapped.body(), mapped.raw()), (copied.kind(), copied.body(), copied.raw()));
                assert_eq!(mapped.raw(), &bytes[at as usize..][..mapped.raw().len()]);
            }
        }
        let end = bytes.len() as u64;
        let last = *starts.last().unwrap();
        // A pointer into the last frame's tail, with more bytes to read than the file holds.
        let past = chunk.read_frame(end - 3, 4096, true).map(|f| f.kind());
        assert!(matches!(past, Err(Error::Io { .. }) | Err(Error::Corrupt { .. })), "{past:?}");
        // The file cut inside its last frame, at a page boundary, as a writer's open cuts a
        // torn tail: a frame read with the old end fails, though the file was seen longer
        // before (reading it in place would touch whole pages past the file's end).
        let cut_at = (last + 4096) & !4095;
        assert!(cut_at + 2 * 4096 < end);
        chunk.cut(cut_at).unwrap();
        let cut = chunk.read_frame(last, end - last, true).map(|f| f.kind());
        assert!(matches!(cut, Err(Error::Io { .. }) | Err(Error::Corrupt { .. })), "{cut:?}");
        let before = chunk.read_frame(starts[0], last - starts[0], true).unwrap();
        assert!(before.mapped);
        assert_eq!(before.raw(), &bytes[..before.raw().len()]);
        // A mapping never copies bytes past its own end.
        let mapping = file.mapping(1).unwrap();
        let mut one = [0u8; 1];
        // SAFETY: nothing is read: the byte asked for lies past the mapping.
        #[expect(unsafe_code, reason = "asks a mapping for bytes past its end, which it must refuse")]
        let copied = unsafe { mapping.copy_to(&mut one, mapping.len()) };
        assert_eq!(copied.map_err(|e| e.kind()), Err(std::io::ErrorKind::UnexpectedEof));
    }
}
