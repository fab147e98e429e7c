//! The file around the rows: magic, version, header, length-prefixed rows.

use std::io::{Read, Write};

use super::rows::Row;
use crate::error::{Result, TraceError};
use crate::repr::{AtCut, ReprReader, ReprWriter};

/// The first eight bytes of an irmin-bench replayable trace.
pub const IRMIN_MAGIC: &[u8; 8] = b"IrmRepBT";

/// The only version of the replayable trace format irmin-bench defines.
pub const IRMIN_VERSION: i32 = 0;

fn irmin(row: u64, reason: String) -> TraceError {
    TraceError::Irmin { row, reason }
}

/// Reads the rows of an irmin-bench replayable trace one at a time.
pub struct IrminReader<R> {
    file: ReprReader<R>,
}

impl<R: Read> IrminReader<R> {
    /// Checks the magic, the version and the (empty) header.
    pub fn new(r: R) -> Result<Self> {
        let (file, version, header) = ReprReader::open(r, IRMIN_MAGIC, "an irmin-bench replayable trace", irmin)?;
        if version != IRMIN_VERSION {
            return Err(irmin(0, format!("unsupported replayable trace version {version} (only 0 is defined)")));
        }
        // The header type is `unit`, which takes no bytes.
        if !header.is_empty() {
            return Err(irmin(0, format!("header of {} bytes; version 0 headers are empty", header.len())));
        }
        Ok(IrminReader { file })
    }

    /// Rows read so far.
    pub fn rows_read(&self) -> u64 {
        self.file.rows_read()
    }

    /// The next row; `None` at the end of the file (the format has no end
    /// marker: a file cut between rows reads as a shorter trace, one cut inside a row is an
    /// error).
    pub fn next_row(&mut self) -> Result<Option<Row>> {
        self.read(AtCut::Fail)
    }

    /// As [`IrminReader::next_row`], but a file that ends inside a row ends there, as
    /// irmin-bench's replayer reads it (it reads only the rows it needs, and the recordings
    /// published for it are cut at a byte count); [`IrminReader::ended_inside_a_row`] tells.
    pub fn next_row_or_cut(&mut self) -> Result<Option<Row>> {
        self.read(AtCut::End)
    }

    fn read(&mut self, at_cut: AtCut) -> Result<Option<Row>> {
        let row = self.file.rows_read();
        let Some(bytes) = self.file.next_row(at_cut)? else { return Ok(None) };
        Row::decode(bytes).map(Some).map_err(|e| irmin(row, e.to_string()))
    }

    /// Whether [`IrminReader::next_row_or_cut`] met the end of the file inside a row.
    pub fn ended_inside_a_row(&self) -> bool {
        self.file.ended_inside_a_row()
    }
}

/// Writes an irmin-bench replayable trace (for tests and tools that build
/// one): the preamble, then one length-prefixed row per call.
pub struct IrminWriter<W> {
    file: ReprWriter<W>,
    buf: Vec<u8>,
}

impl<W: Write> IrminWriter<W> {
    /// Writes the magic, version 0 and the empty header.
    pub fn new(w: W) -> Result<Self> {
        Ok(IrminWriter { file: ReprWriter::new(w, IRMIN_MAGIC, IRMIN_VERSION, &[])?, buf: Vec::new() })
    }

    /// Appends one row.
    pub fn write_row(&mut self, row: &Row) -> Result<()> {
        self.buf.clear();
        row.encode(&mut self.buf);
        self.file.write_row(&self.buf)
    }

    /// Flushes and returns the writer.
    pub fn finish(self) -> Result<W> {
        self.file.finish()
    }
}
