//! The flat operation stream: a trace translated for stores without directories.
//!
//! Every path becomes a 32-byte key ([`key_of`]); every operation becomes a get, an existence
//! test, a put or a delete of one key. The peers replay this stream (the Rust ones through
//! [`FlatReader`], the Go program through its own decoder of the same bytes), so the
//! translation is done once, before any backend runs, and costs no backend anything.
//!
//! Layout (integers little-endian):
//!
//! ```text
//! file    = "ARBFLAT1" frame* end
//! frame   = kind:u8 len:u32 payload[len]
//!   'I'   = nops:u32 op*                                       initial-state batch
//!   'B'   = level:u64 trace_ops:u32 transactions:u32 nops:u32 op*   one block
//! end     = 'E' 0:u32
//! op      = 1 key:32 expect        get
//!         | 2 key:32 expect        existence test
//!         | 3 key:32 len:u32 bytes put
//!         | 4 key:32               delete
//! expect  = 0 | 1 | 2 | 3 len:u32 n:u8 bytes[n]
//!           (not checked | absent | present | a value of that length and digest)
//! ```

use std::io::{Read, Write};

use arbor_core::toolbox::{Cursor, CursorError};
use arbor_trace::Digest;

use crate::error::{CompareError, Result};

/// Magic bytes at the start of a flat stream.
pub const FLAT_MAGIC: &[u8; 8] = b"ARBFLAT1";

/// A flat key: BLAKE2b-256 of the path's steps joined with `/`.
pub type Key = [u8; 32];

/// The flat key of a path: BLAKE2b-256 (no key, 32-byte output) of its steps joined with `/`.
pub fn key_of<S: AsRef<[u8]>>(path: &[S]) -> Key {
    let mut state = blake2b_simd::Params::new().hash_length(32).to_state();
    for (i, step) in path.iter().enumerate() {
        if i > 0 {
            state.update(b"/");
        }
        state.update(step.as_ref());
    }
    let mut key = [0u8; 32];
    key.copy_from_slice(state.finalize().as_bytes());
    key
}

/// What a read must return, when the peer can answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The peer cannot answer (the trace's answer is about a directory): not checked.
    Unchecked,
    /// No value under the key.
    Absent,
    /// Some value under the key.
    Present,
    /// This value (length and digest, as the trace records `find`).
    Value(Digest),
}

impl Expect {
    /// Whether `got` satisfies the expectation; `None` when it is not checked.
    pub fn check(&self, got: Option<&[u8]>) -> Option<bool> {
        match (self, got) {
            (Expect::Unchecked, _) => None,
            (Expect::Absent, g) => Some(g.is_none()),
            (Expect::Present, g) => Some(g.is_some()),
            (Expect::Value(d), Some(v)) => Some(d.matches(v)),
            (Expect::Value(_), None) => Some(false),
        }
    }
}

/// One operation on a flat store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlatOp {
    /// Read the value under the key.
    Get(Key, Expect),
    /// Test whether the key holds a value (a read whose value is not needed).
    Has(Key, Expect),
    /// Write a value.
    Put(Key, Vec<u8>),
    /// Delete the key.
    Del(Key),
}

/// One frame of the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A batch of the initial state (puts, and deletes if the state overwrote itself).
    Initial(Vec<FlatOp>),
    /// One block.
    Block(FlatBlock),
}

/// One block of the flat stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlatBlock {
    /// Block level.
    pub level: u64,
    /// Operations of the block in the original trace (the figure operations/s counts).
    pub trace_ops: u32,
    /// Chain transactions in the block.
    pub transactions: u32,
    /// The flat operations.
    pub ops: Vec<FlatOp>,
}

fn put_expect(out: &mut Vec<u8>, e: &Expect) {
    match e {
        Expect::Unchecked => out.push(0),
        Expect::Absent => out.push(1),
        Expect::Present => out.push(2),
        Expect::Value(d) => {
            out.push(3);
            out.extend_from_slice(&(d.value_len() as u32).to_le_bytes());
            let s = d.stored_bytes();
            out.push(s.len() as u8);
            out.extend_from_slice(s);
        }
    }
}

fn put_ops(out: &mut Vec<u8>, ops: &[FlatOp]) {
    out.extend_from_slice(&(ops.len() as u32).to_le_bytes());
    for op in ops {
        match op {
            FlatOp::Get(k, e) | FlatOp::Has(k, e) => {
                out.push(if matches!(op, FlatOp::Get(..)) { 1 } else { 2 });
                out.extend_from_slice(k);
                put_expect(out, e);
            }
            FlatOp::Put(k, v) => {
                out.push(3);
                out.extend_from_slice(k);
                out.extend_from_slice(&(v.len() as u32).to_le_bytes());
                out.extend_from_slice(v);
            }
            FlatOp::Del(k) => {
                out.push(4);
                out.extend_from_slice(k);
            }
        }
    }
}

/// Writes a flat stream.
pub struct FlatWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
}

impl<W: Write> FlatWriter<W> {
    /// Starts a stream (writes the magic bytes).
    pub fn new(mut out: W) -> std::io::Result<Self> {
        out.write_all(FLAT_MAGIC)?;
        Ok(FlatWriter { out, buf: Vec::new() })
    }

    fn frame(&mut self, kind: u8) -> std::io::Result<()> {
        self.out.write_all(&[kind])?;
        self.out.write_all(&(self.buf.len() as u32).to_le_bytes())?;
        self.out.write_all(&self.buf)
    }

    /// Writes one initial-state batch.
    pub fn initial(&mut self, ops: &[FlatOp]) -> std::io::Result<()> {
        self.buf.clear();
        put_ops(&mut self.buf, ops);
        self.frame(b'I')
    }

    /// Writes one block.
    pub fn block(&mut self, b: &FlatBlock) -> std::io::Result<()> {
        self.buf.clear();
        self.buf.extend_from_slice(&b.level.to_le_bytes());
        self.buf.extend_from_slice(&b.trace_ops.to_le_bytes());
        self.buf.extend_from_slice(&b.transactions.to_le_bytes());
        put_ops(&mut self.buf, &b.ops);
        self.frame(b'B')
    }

    /// Writes the end frame and returns the sink.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.buf.clear();
        self.frame(b'E')?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl From<CursorError> for CompareError {
    /// Only the truncated-read error can come from the fixed-size reads below.
    fn from(_: CursorError) -> Self {
        CompareError::Flat("frame ends inside an operation".into())
    }
}

fn key(c: &mut Cursor<'_>) -> Result<Key> {
    Ok(c.array::<32>()?)
}

fn expect(c: &mut Cursor<'_>) -> Result<Expect> {
    Ok(match c.u8()? {
        0 => Expect::Unchecked,
        1 => Expect::Absent,
        2 => Expect::Present,
        3 => {
            let len = c.u32_le()? as u64;
            let n = c.u8()? as usize;
            let stored = c.take(n)?;
            Expect::Value(Digest::from_parts(len, stored).ok_or_else(|| CompareError::Flat("bad value digest".into()))?)
        }
        t => return Err(CompareError::Flat(format!("unknown expectation {t}"))),
    })
}

fn ops(c: &mut Cursor<'_>) -> Result<Vec<FlatOp>> {
    let n = c.u32_le()? as usize;
    let mut ops = Vec::with_capacity(n.min(1 << 20));
    for _ in 0..n {
        let tag = c.u8()?;
        let key = key(c)?;
        ops.push(match tag {
            1 => FlatOp::Get(key, expect(c)?),
            2 => FlatOp::Has(key, expect(c)?),
            3 => {
                let len = c.u32_le()? as usize;
                FlatOp::Put(key, c.take(len)?.to_vec())
            }
            4 => FlatOp::Del(key),
            t => return Err(CompareError::Flat(format!("unknown operation tag {t}"))),
        });
    }
    Ok(ops)
}

/// Reads a flat stream frame by frame.
pub struct FlatReader<R: Read> {
    input: R,
    buf: Vec<u8>,
}

impl<R: Read> FlatReader<R> {
    /// Checks the magic bytes.
    pub fn new(mut input: R) -> Result<Self> {
        let mut magic = [0u8; 8];
        input.read_exact(&mut magic).map_err(|e| CompareError::Flat(format!("reading the magic: {e}")))?;
        if &magic != FLAT_MAGIC {
            return Err(CompareError::Flat("not a flat operation stream".into()));
        }
        Ok(FlatReader { input, buf: Vec::new() })
    }

    /// The next frame, or `None` after the end frame.
    pub fn next_frame(&mut self) -> Result<Option<Frame>> {
        let mut head = [0u8; 5];
        self.input.read_exact(&mut head).map_err(|e| CompareError::Flat(format!("truncated stream: {e}")))?;
        let len = u32::from_le_bytes(head[1..5].try_into().expect("4 bytes")) as usize;
        self.buf.resize(len, 0);
        self.input.read_exact(&mut self.buf).map_err(|e| CompareError::Flat(format!("truncated frame: {e}")))?;
        let mut c = Cursor::new(&self.buf);
        let frame = match head[0] {
            b'E' => return Ok(None),
            b'I' => Frame::Initial(ops(&mut c)?),
            b'B' => {
                let level = c.u64_le()?;
                let trace_ops = c.u32_le()?;
                let transactions = c.u32_le()?;
                Frame::Block(FlatBlock { level, trace_ops, transactions, ops: ops(&mut c)? })
            }
            k => return Err(CompareError::Flat(format!("unknown frame kind {k:#x}"))),
        };
        if !c.is_empty() {
            return Err(CompareError::Flat("bytes left over at the end of a frame".into()));
        }
        Ok(Some(frame))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let k = key_of(&["data", "version"]);
        let ops = vec![
            FlatOp::Get(k, Expect::Value(Digest::of(b"a value longer than eight bytes"))),
            FlatOp::Get(k, Expect::Value(Digest::of(b"short"))),
            FlatOp::Has(k, Expect::Absent),
            FlatOp::Has(k, Expect::Unchecked),
            FlatOp::Get(k, Expect::Present),
            FlatOp::Put(k, b"v".to_vec()),
            FlatOp::Del(k),
        ];
        let block = FlatBlock { level: 7, trace_ops: 9, transactions: 2, ops: ops.clone() };
        let mut w = FlatWriter::new(Vec::new()).unwrap();
        w.initial(&ops[5..6]).unwrap();
        w.block(&block).unwrap();
        let bytes = w.finish().unwrap();
        let mut r = FlatReader::new(bytes.as_slice()).unwrap();
        assert_eq!(r.next_frame().unwrap(), Some(Frame::Initial(ops[5..6].to_vec())));
        assert_eq!(r.next_frame().unwrap(), Some(Frame::Block(block)));
        assert_eq!(r.next_frame().unwrap(), None);
    }

    #[test]
    fn key_joins_steps_with_slashes() {
        let whole = blake2b_simd::Params::new().hash_length(32).hash(b"data/contracts/global_counter");
        assert_eq!(&key_of(&["data", "contracts", "global_counter"])[..], whole.as_bytes());
    }
}
