//! The binary trace format: a header, then one checksummed frame per block,
//! then an end-of-trace frame. `docs/TRACE.md` describes it byte by byte.

mod block_codec;
mod header;
mod path_codec;
mod reader;
mod writer;

use std::io::{self, Read};

pub use block_codec::BlockEncoder;
pub use reader::TraceReader;
pub use writer::{Compression, TraceWriter};

/// A decoding error: a static description of what was malformed (the shared
/// [`arbor_core::toolbox::Cursor`]'s errors convert into it).
pub(crate) type DecodeResult<T> = Result<T, &'static str>;

/// The first eight bytes of every trace.
pub const MAGIC: &[u8; 8] = b"ARBTRACE";

/// Frame kind of a block frame (`'B'`).
pub(crate) const FRAME_BLOCK: u8 = b'B';
/// Frame kind of the end-of-trace frame (`'E'`).
pub(crate) const FRAME_END: u8 = b'E';
/// Payload stored as is.
pub(crate) const CODEC_NONE: u8 = 0;
/// Payload stored as one zstd frame.
pub(crate) const CODEC_ZSTD: u8 = 1;
/// Size of a frame header: kind, codec, stored length, raw length, CRC.
pub(crate) const FRAME_HEADER_LEN: usize = 14;
/// Largest accepted frame payload (stored or decompressed), 1 GiB.
pub(crate) const MAX_FRAME_LEN: usize = 1 << 30;
/// Largest accepted header body, 16 MiB.
pub(crate) const MAX_HEADER_LEN: usize = 1 << 24;

/// CRC-32C of a frame payload, seeded with the frame's index so that a frame
/// moved, dropped or duplicated is detected as well as a flipped bit.
pub(crate) fn payload_crc(index: u64, payload: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&index.to_le_bytes()), payload)
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
