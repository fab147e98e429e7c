//! Streaming trace reader.

use std::io::Read;

use super::block_codec::{BlockDecoder, VisitError};
use super::header::read_header;
use super::{payload_crc, read_full, CODEC_NONE, CODEC_ZSTD, FRAME_BLOCK, FRAME_END, FRAME_HEADER_LEN, MAX_FRAME_LEN};
use crate::error::{Result, TraceError};
use crate::op_ref::{BlockMeta, OpRef};
use crate::types::{Block, TraceHeader};
use arbor_core::toolbox::Cursor;

/// Reads a trace block by block, checking every frame.
///
/// Damage is reported as [`TraceError::CorruptBlock`] naming the block, an
/// input that stops before the end-of-trace frame as
/// [`TraceError::Truncated`]. After an error the reader yields nothing more.
pub struct TraceReader<R: Read> {
    inner: R,
    header: TraceHeader,
    blocks: u64,
    done: bool,
    stored: Vec<u8>,
    raw: Vec<u8>,
    decompressor: Option<zstd::bulk::Decompressor<'static>>,
    decoder: BlockDecoder,
    /// Where the loaded payload is: `None` in `raw`, `Some(n)` in
    /// `stored[..n]`.
    stored_payload: Option<usize>,
}

impl<R: Read> TraceReader<R> {
    /// Reads and checks the header.
    pub fn new(mut r: R) -> Result<Self> {
        let header = read_header(&mut r)?;
        Ok(TraceReader {
            inner: r,
            header,
            blocks: 0,
            done: false,
            stored: Vec::new(),
            raw: Vec::new(),
            decompressor: None,
            decoder: BlockDecoder::default(),
            stored_payload: None,
        })
    }

    /// The trace header.
    pub fn header(&self) -> &TraceHeader {
        &self.header
    }

    /// Number of blocks returned so far.
    pub fn blocks_read(&self) -> u64 {
        self.blocks
    }

    /// The next block, or `None` after the end-of-trace frame.
    pub fn next_block(&mut self) -> Result<Option<Block>> {
        let mut ops = Vec::new();
        let meta = self.next_block_with(|op| {
            ops.push(op.to_op());
            Ok::<(), TraceError>(())
        })?;
        Ok(meta.map(|m| Block {
            level: m.level,
            transactions: m.transactions,
            parent: m.parent,
            ops,
            commit: m.commit,
        }))
    }

    /// Decodes the next block without building owned operations: each
    /// operation is handed to `visit` as an [`OpRef`] borrowing the reader's
    /// buffers, in order; returns the block's metadata, or `None` after the
    /// end-of-trace frame. The frame's checksum is verified before any
    /// operation is visited. An error from `visit` stops the block and is
    /// returned as is.
    pub fn next_block_with<E, F>(&mut self, visit: F) -> std::result::Result<Option<BlockMeta>, E>
    where
        E: From<TraceError>,
        F: FnMut(OpRef<'_>) -> std::result::Result<(), E>,
    {
        if self.done {
            return Ok(None);
        }
        match self.load_frame() {
            Ok(true) => {}
            Ok(false) => {
                self.done = true;
                return Ok(None);
            }
            Err(e) => {
                self.done = true;
                return Err(e.into());
            }
        }
        let payload: &[u8] = match self.stored_payload {
            Some(n) => &self.stored[..n],
            None => &self.raw,
        };
        match self.decoder.decode(payload, visit) {
            Ok(meta) => {
                self.blocks += 1;
                Ok(Some(meta))
            }
            Err(err) => {
                self.done = true;
                Err(match err {
                    VisitError::Decode(reason) => TraceError::corrupt_block(self.blocks, reason).into(),
                    VisitError::Visitor(e) => e,
                })
            }
        }
    }

    /// Returns the inner reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    fn corrupt(&self, reason: impl Into<String>) -> TraceError {
        TraceError::corrupt_block(self.blocks, reason)
    }

    fn truncated(&self, detail: String) -> TraceError {
        TraceError::Truncated { blocks_read: self.blocks, detail }
    }

    /// Reads and checks the next frame; true when a block payload is
    /// loaded, false at the end-of-trace frame.
    fn load_frame(&mut self) -> Result<bool> {
        let idx = self.blocks;
        let mut head = [0u8; FRAME_HEADER_LEN];
        let n = read_full(&mut self.inner, &mut head)?;
        if n == 0 {
            return Err(self.truncated(format!("input ends before block {idx} with no end-of-trace marker")));
        }
        if n < head.len() {
            return Err(self.truncated(format!("input ends inside the frame header of block {idx}")));
        }
        let hcrc = u32::from_le_bytes([head[10], head[11], head[12], head[13]]);
        if crc32c::crc32c(&head[..10]) != hcrc {
            return Err(self.corrupt("frame header checksum mismatch"));
        }
        let (kind, codec) = (head[0], head[1]);
        let stored_len = u32::from_le_bytes([head[2], head[3], head[4], head[5]]) as usize;
        let raw_len = u32::from_le_bytes([head[6], head[7], head[8], head[9]]) as usize;
        if kind != FRAME_BLOCK && kind != FRAME_END {
            return Err(self.corrupt(format!("unknown frame kind {kind:#04x}")));
        }
        if stored_len > MAX_FRAME_LEN || raw_len > MAX_FRAME_LEN {
            return Err(self.corrupt("frame length over the 1 GiB limit"));
        }
        match codec {
            CODEC_NONE if raw_len != stored_len => {
                return Err(self.corrupt("uncompressed frame with differing lengths"))
            }
            CODEC_NONE | CODEC_ZSTD => {}
            _ => return Err(self.corrupt(format!("unknown codec {codec}"))),
        }
        self.stored.clear();
        self.stored.resize(stored_len + 4, 0);
        if read_full(&mut self.inner, &mut self.stored)? < stored_len + 4 {
            return Err(self.truncated(format!("input ends inside block {idx}")));
        }
        let (payload, crc) = self.stored.split_at(stored_len);
        let crc = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
        if payload_crc(idx, payload) != crc {
            return Err(self.corrupt("payload checksum mismatch"));
        }
        if kind == FRAME_END {
            let mut c = Cursor::new(payload);
            let count = c.leb128().map_err(|e| self.corrupt(e.as_str()))?;
            if count != idx || !c.is_empty() {
                return Err(self.corrupt(format!("end-of-trace marker counts {count} blocks, read {idx}")));
            }
            return Ok(false);
        }
        if codec == CODEC_ZSTD {
            let d = match &mut self.decompressor {
                Some(d) => d,
                None => self.decompressor.insert(zstd::bulk::Decompressor::new()?),
            };
            self.raw.clear();
            self.raw.reserve(raw_len);
            let got = d
                .decompress_to_buffer(&self.stored[..stored_len], &mut self.raw)
                .map_err(|e| TraceError::corrupt_block(idx, format!("zstd: {e}")))?;
            if got != raw_len {
                return Err(self.corrupt("decompressed size differs from the frame header"));
            }
            self.stored_payload = None;
        } else {
            self.stored_payload = Some(stored_len);
        }
        Ok(true)
    }
}

impl<R: Read> Iterator for TraceReader<R> {
    type Item = Result<Block>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_block().transpose()
    }
}
