//! Encoding and decoding of one block's payload (before framing).

use super::path_codec::{check_path, PathDecoder, PathEncoder};
use crate::error::{Result, TraceError};
use crate::format::DecodeResult;
use crate::op_ref::{BlockMeta, OpRef};
use crate::types::{CommitRecord, Digest, Op, Parent, Path, TreeSummary};
use arbor_core::leb128;
use arbor_core::toolbox::{Cursor, CursorError};

// Operation tags (one byte, first byte of every operation).
const T_FIND_NONE: u8 = 0x01;
const T_FIND_SOME: u8 = 0x02;
const T_MEM_FALSE: u8 = 0x03;
const T_MEM_TRUE: u8 = 0x04;
const T_MEM_TREE_FALSE: u8 = 0x05;
const T_MEM_TREE_TRUE: u8 = 0x06;
const T_FIND_TREE_NONE: u8 = 0x07;
const T_FIND_TREE_VALUE: u8 = 0x08;
const T_FIND_TREE_NODE: u8 = 0x09;
const T_ADD: u8 = 0x0a;
const T_ADD_TREE: u8 = 0x0b;
const T_REMOVE: u8 = 0x0c;
const T_LIST: u8 = 0x0d;
const T_LENGTH: u8 = 0x0e;
const T_FOLD: u8 = 0x0f;
const T_COPY: u8 = 0x10;

/// Tag flag: the operation's path is the previous path of the block, and
/// is not repeated.
const SAME_PATH: u8 = 0x80;

const PARENT_GENESIS: u8 = 0;
const PARENT_PREVIOUS: u8 = 1;
const PARENT_HASH: u8 = 2;

fn invalid(reason: &str) -> TraceError {
    TraceError::InvalidInput(reason.to_string())
}

/// Builds the operations of one block directly in their encoded form.
///
/// [`crate::TraceWriter::write_block`] uses it for a whole [`crate::Block`]; a
/// producer that emits many operations (a recorder, a generator) can call the
/// per-operation methods with borrowed paths — any `&[S]` with
/// `S: AsRef<[u8]>` — and so avoid building an owned [`Op`] for each, then hand
/// the encoder to [`crate::TraceWriter::write_encoded`].
#[derive(Default)]
pub struct BlockEncoder {
    ops: Vec<u8>,
    count: u64,
    paths: PathEncoder,
}

impl BlockEncoder {
    /// An empty encoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets all operations, ready for the next block.
    pub fn clear(&mut self) {
        self.ops.clear();
        self.count = 0;
        self.paths.reset();
    }

    /// Number of operations encoded so far.
    pub fn op_count(&self) -> u64 {
        self.count
    }

    /// Size in bytes of the encoded operations so far.
    pub fn encoded_len(&self) -> usize {
        self.ops.len()
    }

    fn head<S: AsRef<[u8]>>(&mut self, tag: u8, path: &[S]) -> Result<()> {
        check_path(path).map_err(invalid)?;
        if self.count > 0 && self.paths.is_previous(path) {
            self.ops.push(tag | SAME_PATH);
        } else {
            self.ops.push(tag);
            self.paths.encode(&mut self.ops, path).map_err(invalid)?;
        }
        self.count += 1;
        Ok(())
    }

    /// Records `find path` returning `result`.
    pub fn find<S: AsRef<[u8]>>(&mut self, path: &[S], result: Option<&Digest>) -> Result<()> {
        match result {
            None => self.head(T_FIND_NONE, path),
            Some(d) => {
                self.head(T_FIND_SOME, path)?;
                leb128::write_u64(&mut self.ops, d.value_len());
                self.ops.extend_from_slice(d.stored_bytes());
                Ok(())
            }
        }
    }

    /// Records `mem path` returning `result`.
    pub fn mem<S: AsRef<[u8]>>(&mut self, path: &[S], result: bool) -> Result<()> {
        self.head(if result { T_MEM_TRUE } else { T_MEM_FALSE }, path)
    }

    /// Records `mem_tree path` returning `result`.
    pub fn mem_tree<S: AsRef<[u8]>>(&mut self, path: &[S], result: bool) -> Result<()> {
        self.head(if result { T_MEM_TREE_TRUE } else { T_MEM_TREE_FALSE }, path)
    }

    /// Records `find_tree path` returning `result`.
    pub fn find_tree<S: AsRef<[u8]>>(&mut self, path: &[S], result: Option<TreeSummary>) -> Result<()> {
        match result {
            None => self.head(T_FIND_TREE_NONE, path),
            Some(TreeSummary { is_value: true, children }) => {
                if children != 0 {
                    return Err(invalid("a value cannot have children"));
                }
                self.head(T_FIND_TREE_VALUE, path)
            }
            Some(TreeSummary { is_value: false, children }) => {
                self.head(T_FIND_TREE_NODE, path)?;
                leb128::write_u64(&mut self.ops, children);
                Ok(())
            }
        }
    }

    /// Records `add path value`.
    pub fn add<S: AsRef<[u8]>>(&mut self, path: &[S], value: &[u8]) -> Result<()> {
        self.head(T_ADD, path)?;
        leb128::write_bytes(&mut self.ops, value);
        Ok(())
    }

    /// Records `add_tree path leaves` (relative leaf paths; empty removes).
    pub fn add_tree<S, T, V>(&mut self, path: &[S], leaves: &[(Vec<T>, V)]) -> Result<()>
    where
        S: AsRef<[u8]>,
        T: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        for (rel, _) in leaves {
            check_path(rel).map_err(invalid)?;
        }
        self.head(T_ADD_TREE, path)?;
        leb128::write_u64(&mut self.ops, leaves.len() as u64);
        for (rel, value) in leaves {
            self.paths.encode(&mut self.ops, rel).map_err(invalid)?;
            leb128::write_bytes(&mut self.ops, value.as_ref());
        }
        Ok(())
    }

    /// Records `remove path`.
    pub fn remove<S: AsRef<[u8]>>(&mut self, path: &[S]) -> Result<()> {
        self.head(T_REMOVE, path)
    }

    /// Records `list path ?offset ?length` returning `result` children.
    pub fn list<S: AsRef<[u8]>>(
        &mut self,
        path: &[S],
        offset: Option<u32>,
        length: Option<u32>,
        result: u32,
    ) -> Result<()> {
        self.head(T_LIST, path)?;
        self.ops.push(u8::from(offset.is_some()) | (u8::from(length.is_some()) << 1));
        if let Some(o) = offset {
            leb128::write_u64(&mut self.ops, o.into());
        }
        if let Some(l) = length {
            leb128::write_u64(&mut self.ops, l.into());
        }
        leb128::write_u64(&mut self.ops, result.into());
        Ok(())
    }

    /// Records `length path` returning `result`.
    pub fn length<S: AsRef<[u8]>>(&mut self, path: &[S], result: u64) -> Result<()> {
        self.head(T_LENGTH, path)?;
        leb128::write_u64(&mut self.ops, result);
        Ok(())
    }

    /// Records `fold ?depth path` visiting `result` entries.
    pub fn fold<S: AsRef<[u8]>>(&mut self, path: &[S], depth: Option<u32>, result: u64) -> Result<()> {
        self.head(T_FOLD, path)?;
        self.ops.push(u8::from(depth.is_some()));
        if let Some(d) = depth {
            leb128::write_u64(&mut self.ops, d.into());
        }
        leb128::write_u64(&mut self.ops, result);
        Ok(())
    }

    /// Records `copy path to` (the source must exist; see [`Op::Copy`]).
    pub fn copy<S: AsRef<[u8]>, D: AsRef<[u8]>>(&mut self, path: &[S], to: &[D]) -> Result<()> {
        check_path(to).map_err(invalid)?;
        self.head(T_COPY, path)?;
        self.paths.encode(&mut self.ops, to).map_err(invalid)?;
        Ok(())
    }

    /// Records an owned [`Op`].
    pub fn push(&mut self, op: &Op) -> Result<()> {
        match op {
            Op::Find { path, result } => self.find(path, result.as_ref()),
            Op::Mem { path, result } => self.mem(path, *result),
            Op::MemTree { path, result } => self.mem_tree(path, *result),
            Op::FindTree { path, result } => self.find_tree(path, *result),
            Op::Add { path, value } => self.add(path, value),
            Op::AddTree { path, tree } => self.add_tree(path, tree),
            Op::Remove { path } => self.remove(path),
            Op::List { path, offset, length, result } => self.list(path, *offset, *length, *result),
            Op::Length { path, result } => self.length(path, *result),
            Op::Fold { path, depth, result } => self.fold(path, *depth, *result),
            Op::Copy { path, to } => self.copy(path, to),
        }
    }

    /// The full block payload: metadata, commit, operation count, operations.
    pub(crate) fn payload(
        &self,
        out: &mut Vec<u8>,
        level: u64,
        transactions: u32,
        parent: Parent,
        commit: &CommitRecord,
    ) {
        leb128::write_u64(out, level);
        leb128::write_u64(out, transactions.into());
        match parent {
            Parent::Genesis => out.push(PARENT_GENESIS),
            Parent::Previous => out.push(PARENT_PREVIOUS),
            Parent::Hash(h) => {
                out.push(PARENT_HASH);
                out.extend_from_slice(&h);
            }
        }
        leb128::write_i64(out, commit.date);
        leb128::write_bytes(out, &commit.message);
        leb128::write_bytes(out, &commit.author);
        match &commit.hash {
            None => out.push(0),
            Some(h) => {
                out.push(1);
                out.extend_from_slice(h);
            }
        }
        leb128::write_u64(out, self.count);
        out.extend_from_slice(&self.ops);
    }
}

/// Why decoding a block stopped: the payload is malformed, or the visitor
/// returned an error.
pub(crate) enum VisitError<E> {
    /// Malformed payload.
    Decode(&'static str),
    /// The visitor's error.
    Visitor(E),
}

impl<E> From<&'static str> for VisitError<E> {
    fn from(e: &'static str) -> Self {
        VisitError::Decode(e)
    }
}

impl<E> From<CursorError> for VisitError<E> {
    fn from(e: CursorError) -> Self {
        VisitError::Decode(e.as_str())
    }
}

/// Per-block decoding state, reused across blocks.
#[derive(Default)]
pub(crate) struct BlockDecoder {
    paths: PathDecoder,
    root: Path,
    tree: Vec<(Path, Vec<u8>)>,
}

impl BlockDecoder {
    /// Decodes a payload produced by [`BlockEncoder::payload`], handing each
    /// operation to `visit` in order.
    pub(crate) fn decode<E, F>(&mut self, payload: &[u8], mut visit: F) -> Result<BlockMeta, VisitError<E>>
    where
        F: FnMut(OpRef<'_>) -> std::result::Result<(), E>,
    {
        self.paths.reset();
        let mut c = Cursor::new(payload);
        let level = c.leb128()?;
        let transactions = c.leb128_u32()?;
        let parent = match c.u8()? {
            PARENT_GENESIS => Parent::Genesis,
            PARENT_PREVIOUS => Parent::Previous,
            PARENT_HASH => Parent::Hash(c.array::<32>()?),
            _ => return Err(VisitError::Decode("unknown parent tag")),
        };
        let date = c.leb128_i64()?;
        let message = c.bytes()?.to_vec();
        let author = c.bytes()?.to_vec();
        let hash = match c.u8()? {
            0 => None,
            1 => Some(c.array::<32>()?),
            _ => return Err(VisitError::Decode("unknown commit hash tag")),
        };
        let count = c.count()?;
        for i in 0..count {
            let op = self.decode_op(&mut c, i == 0)?;
            visit(op).map_err(VisitError::Visitor)?;
        }
        if !c.is_empty() {
            return Err(VisitError::Decode("trailing bytes after the last operation"));
        }
        Ok(BlockMeta {
            level,
            transactions,
            parent,
            ops: count as u64,
            commit: CommitRecord { date, message, author, hash },
        })
    }

    fn decode_op<'p, 'd: 'p>(&'p mut self, c: &mut Cursor<'d>, first: bool) -> DecodeResult<OpRef<'p>> {
        let byte = c.u8()?;
        let tag = byte & !SAME_PATH;
        if !(T_FIND_NONE..=T_COPY).contains(&tag) {
            return Err("unknown operation tag");
        }
        if byte & SAME_PATH != 0 {
            if first {
                return Err("first operation refers to a previous path");
            }
        } else {
            self.paths.decode(c)?;
        }
        if tag == T_ADD_TREE {
            self.root.clear();
            self.root.extend(self.paths.current().iter().cloned());
            let n = c.count()?;
            self.tree.clear();
            for _ in 0..n {
                self.paths.decode(c)?;
                let rel = self.paths.current().to_vec();
                self.tree.push((rel, c.bytes()?.to_vec()));
            }
            return Ok(OpRef::AddTree { path: &self.root, tree: &self.tree });
        }
        if tag == T_COPY {
            self.root.clear();
            self.root.extend(self.paths.current().iter().cloned());
            self.paths.decode(c)?;
            return Ok(OpRef::Copy { path: &self.root, to: self.paths.current() });
        }
        let path = self.paths.current();
        let op = match tag {
            T_FIND_NONE => OpRef::Find { path, result: None },
            T_FIND_SOME => {
                let len = c.leb128()?;
                let stored = c.take(len.min(Digest::INLINE_MAX as u64) as usize)?;
                let d = Digest::from_parts(len, stored).ok_or("malformed digest")?;
                OpRef::Find { path, result: Some(d) }
            }
            T_MEM_FALSE | T_MEM_TRUE => OpRef::Mem { path, result: tag == T_MEM_TRUE },
            T_MEM_TREE_FALSE | T_MEM_TREE_TRUE => OpRef::MemTree { path, result: tag == T_MEM_TREE_TRUE },
            T_FIND_TREE_NONE => OpRef::FindTree { path, result: None },
            T_FIND_TREE_VALUE => OpRef::FindTree { path, result: Some(TreeSummary { is_value: true, children: 0 }) },
            T_FIND_TREE_NODE => {
                OpRef::FindTree { path, result: Some(TreeSummary { is_value: false, children: c.leb128()? }) }
            }
            T_ADD => OpRef::Add { path, value: c.bytes()? },
            T_REMOVE => OpRef::Remove { path },
            T_LIST => {
                let flags = c.u8()?;
                if flags > 3 {
                    return Err("unknown list flags");
                }
                let offset = if flags & 1 != 0 { Some(c.leb128_u32()?) } else { None };
                let length = if flags & 2 != 0 { Some(c.leb128_u32()?) } else { None };
                OpRef::List { path, offset, length, result: c.leb128_u32()? }
            }
            T_LENGTH => OpRef::Length { path, result: c.leb128()? },
            T_FOLD => {
                let flags = c.u8()?;
                if flags > 1 {
                    return Err("unknown fold flags");
                }
                let depth = if flags == 1 { Some(c.leb128_u32()?) } else { None };
                OpRef::Fold { path, depth, result: c.leb128()? }
            }
            _ => return Err("unknown operation tag"),
        };
        Ok(op)
    }
}
