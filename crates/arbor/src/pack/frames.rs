//! Reading the records of one chunk in log order, a large block of the file at a time.
//!
//! Two callers read chunks front to back: a scan of a stretch of the log
//! ([`Log::for_each_record`](super::log::Log::for_each_record), which garbage collection
//! copies live records with) and recovery (`store::recover`, which looks for the commits
//! written after the control file's durable end). They differ in what a damaged frame
//! means (an error for the scan; for recovery, a torn tail to cut or bit rot to report), not
//! in how frames are found: that loop lives here, once.

use super::log::Chunk;
use super::record::{parse_frame, FrameError};
use crate::error::{io_err, Corruption, Result};

/// Bytes read at a time: far more than a record, so that a scan makes few system calls.
const BLOCK: usize = 1 << 20;

/// How many times a read that met the end of a file the writer has since written past again
/// is made again before the scan gives up with the error.
const MAX_REREADS: u32 = 8;

/// The frames of one chunk from a given record start up to an end, in order.
pub(crate) struct ChunkFrames<'c> {
    chunk: &'c Chunk,
    /// Global offset of the frame last returned, or of the damaged one.
    pos: u64,
    /// Global offset of the next frame.
    next: u64,
    /// Global offset the stretch read ends at (at most the chunk's end).
    end: u64,
    /// Bytes read ahead, starting at global offset `buf_at`.
    buf: Vec<u8>,
    buf_at: u64,
}

/// What [`ChunkFrames::next_frame`] found at its position.
pub(crate) enum Next<'b> {
    /// A complete frame whose checksum holds.
    Frame(ScannedFrame<'b>),
    /// The stretch ended exactly after the previous frame.
    End,
    /// The frame at [`ChunkFrames::pos`] is cut short by the end of the stretch, or damaged
    /// (asking again finds it again).
    Damaged(Corruption),
}

/// A complete frame: where it starts and ends (global offsets), its kind and its body.
pub(crate) struct ScannedFrame<'b> {
    pub offset: u64,
    pub next: u64,
    pub kind: u8,
    pub body: &'b [u8],
}

impl<'c> ChunkFrames<'c> {
    /// The frames of `chunk` in `[from, end)`; `from` is a record start inside the chunk
    /// (after its header), `end` at most the chunk's end.
    pub fn new(chunk: &'c Chunk, from: u64, end: u64) -> ChunkFrames<'c> {
        ChunkFrames { chunk, pos: from, next: from, end, buf: Vec::new(), buf_at: from }
    }

    /// Global offset of the frame last returned, or after [`Next::Damaged`] of the damaged
    /// one (a caller that finds a frame's body bad reports it there too).
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// The next frame. Fails only when the file cannot be read; damage is [`Next::Damaged`],
    /// after which the position stays on the damaged frame.
    pub fn next_frame(&mut self) -> Result<Next<'_>> {
        self.pos = self.next;
        let mut rereads = 0;
        loop {
            if self.pos >= self.end {
                return Ok(Next::End);
            }
            let rel = (self.pos - self.buf_at) as usize;
            match parse_frame(&self.buf[rel..]) {
                Ok(frame) => {
                    self.next = self.pos + frame.total as u64;
                    let body = &self.buf[rel + frame.body_start..rel + frame.body_start + frame.body_len];
                    return Ok(Next::Frame(ScannedFrame { offset: self.pos, next: self.next, kind: frame.kind, body }));
                }
                Err(FrameError::NeedMore(n)) => {
                    let have = self.buf.len() - rel;
                    let avail = (self.end - self.pos) as usize;
                    if have >= avail || n > avail {
                        return Ok(Next::Damaged(Corruption::Truncated));
                    }
                    // Keep the start of the frame, read the rest of the block after it.
                    self.buf.drain(..rel);
                    self.buf_at = self.pos;
                    let want = n.max(BLOCK).min(avail) - have;
                    self.buf.resize(have + want, 0);
                    let at = self.pos - self.chunk.start + have as u64;
                    let path = &self.chunk.path;
                    match self.chunk.file.read_exact_at(&mut self.buf[have..], at) {
                        Ok(()) => {}
                        // The file is shorter than when the stretch's end was taken from its
                        // length: beside a read-only scan, a writer opening the store cut a
                        // torn tail (or its prepared zeros) meanwhile. The stretch ends where
                        // the file ends now, and a frame past it is cut short like any other.
                        // A file as long as the stretch again was cut and written on since
                        // the read: the read is made again.
                        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                            let len = self.chunk.file.len().map_err(io_err("reading the length of", path))?;
                            let now_end = self.chunk.start + len;
                            self.buf.truncate(have);
                            if now_end >= self.end {
                                rereads += 1;
                                if rereads > MAX_REREADS {
                                    return Err(io_err("reading", path)(e));
                                }
                                continue;
                            }
                            self.end = now_end;
                        }
                        Err(e) => return Err(io_err("reading", path)(e)),
                    }
                }
                Err(e) => return Ok(Next::Damaged(e.into())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::{ChunkFrames, Next, BLOCK};
    use crate::error::Corruption;
    use crate::io::{FileSystem, MemFs, OpenOptions};
    use crate::pack::log::Chunk;
    use crate::pack::record::frame;

    /// A chunk starting at global offset `start` whose bytes are `bytes`.
    fn chunk(start: u64, bytes: &[u8]) -> Chunk {
        let fs = MemFs::new();
        let path = PathBuf::from("/c.chunk");
        let file = fs.open(&path, OpenOptions { create: true, write: true, truncate: false }).unwrap();
        file.write_all_at(bytes, 0).unwrap();
        Chunk::new(start, Arc::clone(&file), path)
    }

    /// A frame found: where it starts and ends, its kind and its body.
    type Found = (u64, u64, u8, Vec<u8>);

    /// Every frame of `frames`, then what stopped them (where, and what was wrong).
    fn all(frames: &mut ChunkFrames<'_>) -> (Vec<Found>, Option<(u64, Corruption)>) {
        let mut found = Vec::new();
        loop {
            match frames.next_frame().unwrap() {
                Next::Frame(f) => found.push((f.offset, f.next, f.kind, f.body.to_vec())),
                Next::End => return (found, None),
                Next::Damaged(kind) => return (found, Some((frames.pos(), kind))),
            }
        }
    }

    /// The frames of `bodies` (kind, body) end to end from global offset `start`: their bytes,
    /// and each frame as the scan should find it.
    fn framed(start: u64, bodies: impl IntoIterator<Item = (u8, Vec<u8>)>) -> (Vec<u8>, Vec<Found>) {
        let mut bytes = Vec::new();
        let mut expected = Vec::new();
        for (kind, body) in bodies {
            let offset = start + bytes.len() as u64;
            frame(&mut bytes, kind, &body);
            expected.push((offset, start + bytes.len() as u64, kind, body));
        }
        (bytes, expected)
    }

    #[test]
    fn frames_come_in_order_across_the_blocks_read_and_damage_stops_them_where_it_is() {
        // Records of every size up to past a block, so that some straddle each block read.
        let start = 1000;
        let mut bytes = Vec::new();
        let mut expected = Vec::new();
        let mut n = 0u64;
        while bytes.len() < 3 * BLOCK {
            let body: Vec<u8> = (0..(n * 7919) % 70_000).map(|i| (i % 251) as u8).collect();
            let offset = start + bytes.len() as u64;
            frame(&mut bytes, (n % 9 + 1) as u8, &body);
            expected.push((offset, start + bytes.len() as u64, (n % 9 + 1) as u8, body));
            n += 1;
        }
        let end = start + bytes.len() as u64;
        let c = chunk(start, &bytes);
        assert_eq!(all(&mut ChunkFrames::new(&c, start, end)), (expected.clone(), None));
        // From a later record start.
        let k = expected.len() / 2;
        assert_eq!(all(&mut ChunkFrames::new(&c, expected[k].0, end)).0, expected[k..].to_vec());

        // Cut short inside the last record: everything before it, then a torn frame there.
        let last = expected.last().unwrap().0;
        let (found, stop) = all(&mut ChunkFrames::new(&c, start, end - 3));
        assert_eq!(found, expected[..expected.len() - 1].to_vec());
        assert_eq!(stop, Some((last, Corruption::Truncated)));

        // A flipped byte in a record in the middle: found up to it, stopped at it, and asked
        // again, stopped at it again.
        let (at, _, _, body) = &expected[k];
        assert!(!body.is_empty());
        let mut damaged = bytes.clone();
        damaged[(at - start) as usize + 4] ^= 0x40;
        let c = chunk(start, &damaged);
        let mut frames = ChunkFrames::new(&c, start, end);
        let (found, stop) = all(&mut frames);
        assert_eq!(found, expected[..k].to_vec());
        assert!(matches!(stop, Some((p, Corruption::Checksum { .. })) if p == *at), "{stop:?}");
        assert!(matches!(frames.next_frame().unwrap(), Next::Damaged(Corruption::Checksum { .. })));
        assert_eq!(frames.pos(), *at);
    }

    #[test]
    fn a_file_cut_shorter_after_its_length_was_read_ends_the_stretch_where_it_ends_now() {
        // A read-only scan takes a chunk's end from its length, then a writer's recovery cuts
        // the torn tail: the frames still in the file come out, the one cut is torn, and no
        // read past the end is an error.
        let start = 500;
        let (bytes, expected) = framed(start, (0..40u64).map(|n| (3, (0..n * 31).map(|i| i as u8).collect())));
        let stale_end = start + bytes.len() as u64 + 4096;
        let last = expected.last().unwrap().0;
        let c = chunk(start, &bytes);
        c.file.set_len(last - start + 5).unwrap();
        let (found, stop) = all(&mut ChunkFrames::new(&c, start, stale_end));
        assert_eq!(found, expected[..expected.len() - 1].to_vec());
        assert_eq!(stop, Some((last, Corruption::Truncated)));
        // Cut at a frame boundary: every frame left, then the end.
        c.file.set_len(last - start).unwrap();
        assert_eq!(all(&mut ChunkFrames::new(&c, start, stale_end)), (expected[..expected.len() - 1].to_vec(), None));
    }

    /// A file that answers its first read at or past `eof_from` with the end of the file, as
    /// a file cut by a writer's open and written past again before the length is read.
    #[derive(Debug)]
    struct CutAndRegrown {
        inner: Arc<dyn crate::io::File>,
        eof_from: u64,
        eofs_left: std::sync::atomic::AtomicU32,
    }

    impl crate::io::File for CutAndRegrown {
        fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
            use std::sync::atomic::Ordering;
            let ends = offset + buf.len() as u64 > self.eof_from;
            if ends && self.eofs_left.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).is_ok() {
                return Ok(0);
            }
            self.inner.read_at(buf, offset)
        }
        fn write_all_at(&self, data: &[u8], offset: u64) -> std::io::Result<()> {
            self.inner.write_all_at(data, offset)
        }
        fn len(&self) -> std::io::Result<u64> {
            self.inner.len()
        }
        fn set_len(&self, len: u64) -> std::io::Result<()> {
            self.inner.set_len(len)
        }
        fn sync_data(&self) -> std::io::Result<()> {
            self.inner.sync_data()
        }
    }

    #[test]
    fn a_read_that_met_the_end_of_a_file_written_past_again_is_made_again() {
        let start = 200;
        let (bytes, expected) = framed(start, (0..30u64).map(|n| (2, (0..n * 17).map(|i| (i * 3) as u8).collect())));
        let end = start + bytes.len() as u64;
        let plain = chunk(start, &bytes);
        let flaky = |eofs: u32| {
            let file = CutAndRegrown {
                inner: Arc::clone(&plain.file),
                eof_from: bytes.len() as u64 / 2,
                eofs_left: std::sync::atomic::AtomicU32::new(eofs),
            };
            Chunk::new(start, Arc::new(file), plain.path.clone())
        };
        // Met once (and up to the limit): every frame all the same.
        for eofs in [1, super::MAX_REREADS] {
            assert_eq!(all(&mut ChunkFrames::new(&flaky(eofs), start, end)), (expected.clone(), None), "{eofs}");
        }
        // A file that keeps saying it is that long and keeps ending early: an error, not a loop.
        let c = flaky(super::MAX_REREADS + 1);
        let mut frames = ChunkFrames::new(&c, start, end);
        let err = loop {
            match frames.next_frame() {
                Ok(Next::Frame(_)) => {}
                Ok(other) => panic!("the scan ended without the error: {}", matches!(other, Next::End)),
                Err(e) => break e,
            }
        };
        assert!(err.to_string().contains("end of file"), "{err}");
    }
}
