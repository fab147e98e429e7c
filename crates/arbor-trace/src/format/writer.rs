//! Streaming trace writer.

use std::io::Write;

use super::block_codec::BlockEncoder;
use super::header::write_header;
use super::{payload_crc, CODEC_NONE, CODEC_ZSTD, FRAME_BLOCK, FRAME_END, MAX_FRAME_LEN};
use crate::error::{Result, TraceError};
use crate::types::{Block, CommitRecord, Parent, TraceHeader};
use arbor_core::leb128;

/// How block payloads are compressed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Compression {
    /// Payloads are stored as they are.
    None,
    /// Each payload is compressed as one zstd frame at this level (1-22);
    /// a payload that does not shrink is stored uncompressed.
    Zstd {
        /// zstd compression level.
        level: i32,
    },
}

impl Default for Compression {
    /// zstd at level 1, the fastest: generated traces are dominated by
    /// random value bytes, which no level compresses.
    fn default() -> Self {
        Compression::Zstd { level: 1 }
    }
}

/// Writes a trace block by block; nothing is buffered across blocks, so a
/// trace of any length streams in constant memory.
///
/// The trace is only complete after [`TraceWriter::finish`], which writes the
/// end-of-trace frame: a reader reports a trace without it as truncated.
pub struct TraceWriter<W: Write> {
    inner: W,
    blocks: u64,
    bytes: u64,
    raw_bytes: u64,
    compression: Compression,
    compressor: Option<zstd::bulk::Compressor<'static>>,
    encoder: BlockEncoder,
    payload: Vec<u8>,
}

impl<W: Write> TraceWriter<W> {
    /// Writes `header` and returns a writer using the default compression.
    pub fn new(w: W, header: &TraceHeader) -> Result<Self> {
        Self::with_compression(w, header, Compression::default())
    }

    /// Writes `header` and returns a writer compressing blocks as asked.
    pub fn with_compression(mut w: W, header: &TraceHeader, compression: Compression) -> Result<Self> {
        let bytes = write_header(&mut w, header)?;
        let compressor = match compression {
            Compression::None => None,
            Compression::Zstd { level } => Some(zstd::bulk::Compressor::new(level)?),
        };
        Ok(TraceWriter {
            inner: w,
            blocks: 0,
            bytes,
            raw_bytes: bytes,
            compression,
            compressor,
            encoder: BlockEncoder::new(),
            payload: Vec::new(),
        })
    }

    /// The compression in use.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Number of blocks written so far.
    pub fn blocks_written(&self) -> u64 {
        self.blocks
    }

    /// Bytes written to the underlying writer so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes
    }

    /// Bytes the trace would take without compression (header, frames and
    /// uncompressed payloads).
    pub fn raw_bytes(&self) -> u64 {
        self.raw_bytes
    }

    /// Appends one block.
    pub fn write_block(&mut self, block: &Block) -> Result<()> {
        let mut enc = std::mem::take(&mut self.encoder);
        enc.clear();
        let res = block
            .ops
            .iter()
            .try_for_each(|op| enc.push(op))
            .and_then(|()| self.write_encoded(block.level, block.transactions, block.parent, &block.commit, &enc));
        self.encoder = enc;
        res
    }

    /// Appends one block whose operations were built with a
    /// [`BlockEncoder`]. The encoder is left as it is: call
    /// [`BlockEncoder::clear`] before reusing it.
    pub fn write_encoded(
        &mut self,
        level: u64,
        transactions: u32,
        parent: Parent,
        commit: &CommitRecord,
        ops: &BlockEncoder,
    ) -> Result<()> {
        let mut payload = std::mem::take(&mut self.payload);
        payload.clear();
        ops.payload(&mut payload, level, transactions, parent, commit);
        let res = self.write_frame(FRAME_BLOCK, &payload);
        self.payload = payload;
        res?;
        self.blocks += 1;
        Ok(())
    }

    fn write_frame(&mut self, kind: u8, raw: &[u8]) -> Result<()> {
        if raw.len() > MAX_FRAME_LEN {
            return Err(TraceError::InvalidInput(format!(
                "block {} encodes to {} bytes, over the 1 GiB frame limit",
                self.blocks,
                raw.len()
            )));
        }
        let compressed = match (&mut self.compressor, kind) {
            (Some(c), FRAME_BLOCK) => {
                let z = c.compress(raw)?;
                (z.len() < raw.len()).then_some(z)
            }
            _ => None,
        };
        let (codec, stored) = match &compressed {
            Some(z) => (CODEC_ZSTD, z.as_slice()),
            None => (CODEC_NONE, raw),
        };
        let mut head = [0u8; super::FRAME_HEADER_LEN];
        head[0] = kind;
        head[1] = codec;
        head[2..6].copy_from_slice(&(stored.len() as u32).to_le_bytes());
        head[6..10].copy_from_slice(&(raw.len() as u32).to_le_bytes());
        let hcrc = crc32c::crc32c(&head[..10]);
        head[10..14].copy_from_slice(&hcrc.to_le_bytes());
        let pcrc = payload_crc(self.blocks, stored);
        self.inner.write_all(&head)?;
        self.inner.write_all(stored)?;
        self.inner.write_all(&pcrc.to_le_bytes())?;
        self.bytes += (head.len() + stored.len() + 4) as u64;
        self.raw_bytes += (head.len() + raw.len() + 4) as u64;
        Ok(())
    }

    /// Writes the end-of-trace frame, flushes, and returns the inner writer.
    pub fn finish(mut self) -> Result<W> {
        let mut end = Vec::new();
        leb128::write_u64(&mut end, self.blocks);
        self.write_frame(FRAME_END, &end)?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}
