//! The framing of Tarides' trace files:
//!
//! ```text
//! file = magic:8 version:i32 header_len:varint header row*
//! row  = len:varint body                      body takes exactly len bytes
//! ```
//!
//! The version is big-endian; there is no end marker (the file ends after a row).

use std::io::{self, Read, Write};

use crate::error::{Result, TraceError};
use arbor_core::leb128;

/// Largest header or row accepted: far above any real one, low enough that a damaged length
/// cannot make the reader allocate gigabytes.
const MAX_ROW: u64 = 256 << 20;

/// What [`ReprReader::next_row`] does with a file that ends inside a row.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtCut {
    /// Fails, naming the row.
    Fail,
    /// Ends there, as at the end of a whole row.
    End,
}

/// Builds the error of one format from a row index (0 for the preamble and header) and a
/// reason.
pub(crate) type Fault = fn(u64, String) -> TraceError;

/// Reads the preamble, then the rows one at a time, as raw bytes.
pub(crate) struct ReprReader<R> {
    r: R,
    rows: u64,
    buf: Vec<u8>,
    fault: Fault,
    /// Whether the file ended inside a row (read with [`AtCut::End`]).
    cut: bool,
}

impl<R: Read> ReprReader<R> {
    /// Checks the magic and reads the version and the header's bytes.
    pub(crate) fn open(mut r: R, magic: &[u8; 8], name: &str, fault: Fault) -> Result<(Self, i32, Vec<u8>)> {
        let mut head = [0u8; 12];
        read_exact(&mut r, &mut head, || fault(0, "the file ends inside its 12-byte preamble".into()))?;
        if &head[..8] != magic {
            let magic = String::from_utf8_lossy(magic);
            return Err(fault(0, format!("not {name} (magic is not {magic})")));
        }
        let version = i32::from_be_bytes([head[8], head[9], head[10], head[11]]);
        let mut reader = ReprReader { r, rows: 0, buf: Vec::new(), fault, cut: false };
        let Prefix::Len(len) = reader.read_varint()? else {
            return Err(fault(0, "the file ends before its header".into()));
        };
        let header = reader.read_body(len, "the file ends inside its header")?.to_vec();
        Ok((reader, version, header))
    }

    /// Rows read so far.
    pub(crate) fn rows_read(&self) -> u64 {
        self.rows
    }

    /// The next row's bytes; `None` at the end of the file. A file cut between rows reads as
    /// a shorter trace; one cut inside a row is an error, or its end with [`AtCut::End`]:
    /// the recordings Tarides published are cut at a byte count, and their replayer reads
    /// only the rows it needs ([`ReprReader::ended_inside_a_row`] tells afterwards).
    pub(crate) fn next_row(&mut self, at_cut: AtCut) -> Result<Option<&[u8]>> {
        if self.cut {
            return Ok(None);
        }
        let (row, fault) = (self.rows, self.fault);
        let len = match self.read_varint()? {
            Prefix::Len(len) => len,
            Prefix::End => return Ok(None),
            Prefix::Cut if at_cut == AtCut::Fail => {
                return Err(fault(row, "the file ends inside a length prefix".into()));
            }
            Prefix::Cut => {
                self.cut = true;
                return Ok(None);
            }
        };
        if len > MAX_ROW {
            return Err(fault(row, format!("length {len} exceeds the {MAX_ROW}-byte limit")));
        }
        self.buf.resize(len as usize, 0);
        match self.r.read_exact(&mut self.buf) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && at_cut == AtCut::End => {
                self.cut = true;
                return Ok(None);
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return Err(fault(row, "the file ends inside a row".into()));
            }
            Err(e) => return Err(e.into()),
        }
        self.rows += 1;
        Ok(Some(&self.buf))
    }

    /// Whether [`ReprReader::next_row`] met the end of the file inside a row.
    pub(crate) fn ended_inside_a_row(&self) -> bool {
        self.cut
    }

    fn read_body(&mut self, len: u64, cut: &str) -> Result<&[u8]> {
        let (row, fault) = (self.rows, self.fault);
        if len > MAX_ROW {
            return Err(fault(row, format!("length {len} exceeds the {MAX_ROW}-byte limit")));
        }
        self.buf.resize(len as usize, 0);
        read_exact(&mut self.r, &mut self.buf, || fault(row, cut.into()))?;
        Ok(&self.buf)
    }

    /// A length prefix read byte by byte.
    fn read_varint(&mut self) -> Result<Prefix> {
        let (row, fault, r) = (self.rows, self.fault, &mut self.r);
        let mut read = 0;
        let v = leb128::read_u64_from(|| {
            let mut b = [0u8; 1];
            match r.read_exact(&mut b) {
                Ok(()) => {
                    read += 1;
                    Ok(b[0])
                }
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(None),
                Err(e) => Err(Some(e)),
            }
        });
        match v {
            Ok(Some(v)) => Ok(Prefix::Len(v)),
            Ok(None) => Err(fault(row, "length prefix larger than 64 bits".into())),
            Err(None) if read == 0 => Ok(Prefix::End),
            Err(None) => Ok(Prefix::Cut),
            Err(Some(e)) => Err(e.into()),
        }
    }
}

/// What a row's length prefix held.
enum Prefix {
    /// The row's length.
    Len(u64),
    /// The file ended before it: no more rows.
    End,
    /// The file ended inside it.
    Cut,
}

fn read_exact(r: &mut impl Read, buf: &mut [u8], cut: impl FnOnce() -> TraceError) -> Result<()> {
    r.read_exact(buf).map_err(|e| if e.kind() == io::ErrorKind::UnexpectedEof { cut() } else { e.into() })
}

/// Writes the preamble and header, then one length-prefixed row per call.
pub(crate) struct ReprWriter<W> {
    w: W,
    buf: Vec<u8>,
}

impl<W: Write> ReprWriter<W> {
    /// Writes the magic, the version and the header's bytes.
    pub(crate) fn new(mut w: W, magic: &[u8; 8], version: i32, header: &[u8]) -> Result<Self> {
        w.write_all(magic)?;
        w.write_all(&version.to_be_bytes())?;
        let mut writer = ReprWriter { w, buf: Vec::new() };
        writer.write_row(header)?;
        Ok(writer)
    }

    /// Appends one row's bytes with their length.
    pub(crate) fn write_row(&mut self, body: &[u8]) -> Result<()> {
        self.buf.clear();
        leb128::write_u64(&mut self.buf, body.len() as u64);
        self.buf.extend_from_slice(body);
        self.w.write_all(&self.buf)?;
        Ok(())
    }

    /// Flushes and returns the writer.
    pub(crate) fn finish(mut self) -> Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}
