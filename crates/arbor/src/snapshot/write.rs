//! Writing a snapshot file: the header, the tree stream cut into 1 MiB blocks, the trailer.
//!
//! Compression runs on a helper thread one block behind the tree walk, so walking (loading
//! records) and zstd overlap; only whole blocks cross between the threads, and at most one is
//! being compressed, so memory stays a few blocks. Bytes are written by the caller's thread,
//! in order, so the output needs no `Send`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use super::format::{Header, BLOCK_HEAD, BLOCK_RAW, TAG_BLOCK, TAG_END, TRAILER_COUNTS};
use super::Counts;
use crate::error::{io_err, Error, Result};

/// zstd level of export: zstd's default, which on a Tezos-like state (mostly hex ids and
/// hashes, about 1.4x) keeps pace with the walk on the helper thread.
const ZSTD_LEVEL: i32 = 3;

/// A block for the helper thread, and what it gives back: the emptied buffer for reuse and
/// the compressed bytes (or the error).
type Job = Vec<u8>;
type Done = (Vec<u8>, std::io::Result<Vec<u8>>);

/// The helper thread's loop: compresses each block it is sent until the writer hangs up.
fn packer(jobs: Receiver<Job>, done: SyncSender<Done>) {
    let mut zstd = match zstd::bulk::Compressor::new(ZSTD_LEVEL) {
        Ok(z) => z,
        Err(e) => {
            let _ = done.send((Vec::new(), Err(e)));
            return;
        }
    };
    while let Ok(raw) = jobs.recv() {
        let packed = zstd.compress(&raw);
        if done.send((raw, packed)).is_err() {
            return;
        }
    }
}

/// Writes a snapshot: header, then stream bytes cut into compressed blocks, then trailer.
pub(crate) struct SnapWriter<W: Write> {
    out: W,
    name: PathBuf,
    crc: u32,
    pos: u64,
    raw: Vec<u8>,
    jobs: SyncSender<Job>,
    done: Receiver<Done>,
    /// A block is with the helper thread.
    busy: bool,
    /// Counts of the stream; the caller adds the tree's (dirs, values, value bytes).
    pub counts: Counts,
}

impl<W: Write> SnapWriter<W> {
    /// A writer to `out`; `name` is the file named in I/O errors.
    pub fn new(out: W, name: PathBuf) -> Result<Self> {
        let (jobs, rx) = sync_channel::<Job>(1);
        let (tx, done) = sync_channel::<Done>(1);
        std::thread::Builder::new()
            .name("snapshot-zstd".into())
            .spawn(move || packer(rx, tx))
            .map_err(io_err("starting the compression thread", &name))?;
        let raw = Vec::with_capacity(BLOCK_RAW);
        Ok(SnapWriter { out, name, crc: 0, pos: 0, raw, jobs, done, busy: false, counts: Counts::default() })
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.write_all(bytes).map_err(io_err("writing snapshot", &self.name))?;
        self.crc = crc32c::crc32c_append(self.crc, bytes);
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Writes the header; must come first.
    pub fn header(&mut self, h: &Header) -> Result<()> {
        self.emit(&h.encode()?)
    }

    /// Appends bytes to the tree stream, sealing a block whenever one is full.
    pub fn put(&mut self, mut bytes: &[u8]) -> Result<()> {
        self.counts.stream_bytes += bytes.len() as u64;
        while !bytes.is_empty() {
            let n = bytes.len().min(BLOCK_RAW - self.raw.len());
            self.raw.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.raw.len() == BLOCK_RAW {
                self.seal()?;
            }
        }
        Ok(())
    }

    /// Appends an unsigned LEB128 number to the tree stream.
    pub fn leb(&mut self, n: u64) -> Result<()> {
        let mut buf = [0u8; arbor_core::leb128::MAX_LEN];
        let len = arbor_core::leb128::encode_u64(n, &mut buf);
        self.put(&buf[..len])
    }

    fn stopped(&self) -> Error {
        let e = std::io::Error::other("the compression thread stopped");
        io_err("compressing snapshot", &self.name)(e)
    }

    /// Writes the block the helper thread is compressing, once it is done; returns its
    /// emptied buffer.
    fn collect(&mut self) -> Result<Option<Vec<u8>>> {
        if !self.busy {
            return Ok(None);
        }
        self.busy = false;
        let (mut raw, packed) = self.done.recv().map_err(|_| self.stopped())?;
        let packed = packed.map_err(io_err("compressing snapshot", &self.name))?;
        let mut head = [0u8; BLOCK_HEAD];
        head[0] = TAG_BLOCK;
        head[1..5].copy_from_slice(&(raw.len() as u32).to_le_bytes());
        head[5..9].copy_from_slice(&(packed.len() as u32).to_le_bytes());
        let crc = crc32c::crc32c_append(crc32c::crc32c(&head[..9]), &packed);
        head[9..13].copy_from_slice(&crc.to_le_bytes());
        self.emit(&head)?;
        self.emit(&packed)?;
        self.counts.blocks += 1;
        raw.clear();
        Ok(Some(raw))
    }

    /// Hands the pending stream bytes to the helper thread as one block, after writing the
    /// block before it.
    fn seal(&mut self) -> Result<()> {
        if self.raw.is_empty() {
            return Ok(());
        }
        let spare = self.collect()?.unwrap_or_else(|| Vec::with_capacity(BLOCK_RAW));
        let raw = std::mem::replace(&mut self.raw, spare);
        self.jobs.send(raw).map_err(|_| self.stopped())?;
        self.busy = true;
        Ok(())
    }

    /// Seals and writes the last block, writes the trailer and flushes; returns the output,
    /// the counts and the file's length.
    pub fn finish(mut self) -> Result<(W, Counts, u64)> {
        self.seal()?;
        self.collect()?;
        let c = self.counts;
        let mut t = Vec::with_capacity(1 + TRAILER_COUNTS);
        t.push(TAG_END);
        for n in [c.dirs, c.values, c.value_bytes, c.stream_bytes, c.blocks] {
            t.extend_from_slice(&n.to_le_bytes());
        }
        self.emit(&t)?;
        let crc = self.crc;
        self.emit(&crc.to_le_bytes())?;
        self.out.flush().map_err(io_err("writing snapshot", &self.name))?;
        Ok((self.out, c, self.pos))
    }
}
