//! The file around the rows: magic `TezosRep`, version 0, the header, one row per block.

use std::io::{Read, Write};

use super::events::{BlockRow, Header};
use crate::error::{Result, TraceError};
use crate::repr::{AtCut, ReprReader, ReprWriter};

/// The first eight bytes of a replayable Octez context trace.
pub const CONTEXT_TRACE_MAGIC: &[u8; 8] = b"TezosRep";

/// The only version of the replayable actions trace `tezos-context-trace` defines.
pub const CONTEXT_TRACE_VERSION: i32 = 0;

fn fault(block: u64, reason: String) -> TraceError {
    TraceError::ContextTrace { block, event: None, reason }
}

/// Reads a replayable Octez context trace one block (row) at a time.
pub struct ContextTraceReader<R> {
    file: ReprReader<R>,
    header: Header,
}

impl<R: Read> ContextTraceReader<R> {
    /// Checks the magic and the version and reads the header.
    pub fn new(r: R) -> Result<Self> {
        let (file, version, header) =
            ReprReader::open(r, CONTEXT_TRACE_MAGIC, "a replayable Octez context trace", fault)?;
        if version != CONTEXT_TRACE_VERSION {
            return Err(fault(
                0,
                format!("unsupported replayable actions trace version {version} (only 0 is defined)"),
            ));
        }
        let header = Header::decode(&header).map_err(|e| fault(0, format!("header: {e}")))?;
        Ok(ContextTraceReader { file, header })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Rows (blocks) read so far.
    pub fn rows_read(&self) -> u64 {
        self.file.rows_read()
    }

    /// The next row; `None` at the end of the file (one cut inside a row is an error).
    pub fn next_row(&mut self) -> Result<Option<BlockRow>> {
        self.read(AtCut::Fail)
    }

    /// As [`ContextTraceReader::next_row`], but a file that ends inside a row ends there (a
    /// recording cut at a byte count); [`ContextTraceReader::ended_inside_a_row`] tells.
    pub fn next_row_or_cut(&mut self) -> Result<Option<BlockRow>> {
        self.read(AtCut::End)
    }

    fn read(&mut self, at_cut: AtCut) -> Result<Option<BlockRow>> {
        let block = self.file.rows_read();
        let Some(bytes) = self.file.next_row(at_cut)? else { return Ok(None) };
        BlockRow::decode(bytes).map(Some).map_err(|(event, reason)| TraceError::ContextTrace {
            block,
            event: Some(event),
            reason: reason.to_string(),
        })
    }

    /// Whether [`ContextTraceReader::next_row_or_cut`] met the end of the file inside a row.
    pub fn ended_inside_a_row(&self) -> bool {
        self.file.ended_inside_a_row()
    }
}

/// Writes a replayable Octez context trace (for tests and tools that build one).
pub struct ContextTraceWriter<W> {
    file: ReprWriter<W>,
    buf: Vec<u8>,
}

impl<W: Write> ContextTraceWriter<W> {
    /// Writes the magic, version 0 and the header.
    pub fn new(w: W, header: &Header) -> Result<Self> {
        let mut buf = Vec::new();
        header.encode(&mut buf);
        Ok(ContextTraceWriter { file: ReprWriter::new(w, CONTEXT_TRACE_MAGIC, CONTEXT_TRACE_VERSION, &buf)?, buf })
    }

    /// Appends one row.
    pub fn write_row(&mut self, row: &BlockRow) -> Result<()> {
        self.buf.clear();
        row.encode(&mut self.buf);
        self.file.write_row(&self.buf)
    }

    /// Flushes and returns the writer.
    pub fn finish(self) -> Result<W> {
        self.file.finish()
    }
}
