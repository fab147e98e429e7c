//! The file around the rows: magic, version, header, length-prefixed rows.

use std::io::{self, Read, Write};

use super::rows::Row;
use crate::error::{Result, TraceError};
use arbor_core::leb128;

/// The first eight bytes of an irmin-bench replayable trace.
pub const IRMIN_MAGIC: &[u8; 8] = b"IrmRepBT";

/// The only version of the replayable trace format irmin-bench defines.
pub const IRMIN_VERSION: i32 = 0;

/// Largest row accepted: far above any real row, low enough that a damaged
/// length cannot make the reader allocate gigabytes.
const MAX_ROW: u64 = 256 << 20;

fn irmin(row: u64, reason: impl Into<String>) -> TraceError {
    TraceError::Irmin { row, reason: reason.into() }
}

/// Reads the rows of an irmin-bench replayable trace one at a time.
pub struct IrminReader<R> {
    r: R,
    rows: u64,
    buf: Vec<u8>,
}

impl<R: Read> IrminReader<R> {
    /// Checks the magic, the version and the (empty) header.
    pub fn new(mut r: R) -> Result<Self> {
        let mut head = [0u8; 12];
        read_exact(&mut r, &mut head, 0, "the file ends inside its 12-byte preamble")?;
        if &head[..8] != IRMIN_MAGIC {
            return Err(irmin(0, "not an irmin-bench replayable trace (magic is not IrmRepBT)"));
        }
        let version = i32::from_be_bytes([head[8], head[9], head[10], head[11]]);
        if version != IRMIN_VERSION {
            return Err(irmin(0, format!("unsupported replayable trace version {version} (only 0 is defined)")));
        }
        let header_len = read_varint(&mut r, 0)?.ok_or_else(|| irmin(0, "the file ends before its header"))?;
        // The header type is `unit`, which takes no bytes.
        if header_len != 0 {
            return Err(irmin(0, format!("header of {header_len} bytes; version 0 headers are empty")));
        }
        Ok(IrminReader { r, rows: 0, buf: Vec::new() })
    }

    /// Rows read so far.
    pub fn rows_read(&self) -> u64 {
        self.rows
    }

    /// The next row; `None` at the end of the file (the format has no end
    /// marker: a file cut between rows reads as a shorter trace).
    pub fn next_row(&mut self) -> Result<Option<Row>> {
        let row = self.rows;
        let Some(len) = read_varint(&mut self.r, row)? else { return Ok(None) };
        if len > MAX_ROW {
            return Err(irmin(row, format!("row length {len} exceeds the {MAX_ROW}-byte limit")));
        }
        self.buf.resize(len as usize, 0);
        read_exact(&mut self.r, &mut self.buf, row, "the file ends inside a row")?;
        let decoded = Row::decode(&self.buf).map_err(|e| irmin(row, e))?;
        self.rows += 1;
        Ok(Some(decoded))
    }
}

fn read_exact(r: &mut impl Read, buf: &mut [u8], row: u64, what: &str) -> Result<()> {
    r.read_exact(buf).map_err(|e| if e.kind() == io::ErrorKind::UnexpectedEof { irmin(row, what) } else { e.into() })
}

/// A varint read byte by byte; `None` when the input ends before its first
/// byte.
fn read_varint(r: &mut impl Read, row: u64) -> Result<Option<u64>> {
    let mut read = 0;
    let v = leb128::read_u64_from(|| {
        let mut b = [0u8; 1];
        match r.read_exact(&mut b) {
            Ok(()) => {
                read += 1;
                Ok(b[0])
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && read == 0 => Err(None),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                Err(Some(irmin(row, "the file ends inside a length prefix")))
            }
            Err(e) => Err(Some(e.into())),
        }
    });
    match v {
        Ok(Some(v)) => Ok(Some(v)),
        Ok(None) => Err(irmin(row, "length prefix larger than 64 bits")),
        Err(None) => Ok(None),
        Err(Some(e)) => Err(e),
    }
}

/// Writes an irmin-bench replayable trace (for tests and tools that build
/// one): the preamble, then one length-prefixed row per call.
pub struct IrminWriter<W> {
    w: W,
    buf: Vec<u8>,
}

impl<W: Write> IrminWriter<W> {
    /// Writes the magic, version 0 and the empty header.
    pub fn new(mut w: W) -> Result<Self> {
        w.write_all(IRMIN_MAGIC)?;
        w.write_all(&IRMIN_VERSION.to_be_bytes())?;
        w.write_all(&[0])?;
        Ok(IrminWriter { w, buf: Vec::new() })
    }

    /// Appends one row.
    pub fn write_row(&mut self, row: &Row) -> Result<()> {
        let mut body = Vec::new();
        row.encode(&mut body);
        self.buf.clear();
        leb128::write_u64(&mut self.buf, body.len() as u64);
        self.buf.extend_from_slice(&body);
        self.w.write_all(&self.buf)?;
        Ok(())
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}
