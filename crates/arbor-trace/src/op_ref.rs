//! Borrowed views of operations and block metadata, for readers that process
//! a trace without building an owned [`Op`] per operation (replays, stats).

use crate::types::{CommitRecord, Digest, Op, OpKind, Parent, Path, TreeSummary};

/// An operation as decoded, borrowing its path and value from the reader.
/// Same variants and meaning as [`Op`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OpRef<'a> {
    /// See [`Op::Find`].
    Find {
        /// Path read.
        path: &'a [Vec<u8>],
        /// Digest of the value read.
        result: Option<Digest>,
    },
    /// See [`Op::Mem`].
    Mem {
        /// Path tested.
        path: &'a [Vec<u8>],
        /// True when the path holds a value.
        result: bool,
    },
    /// See [`Op::MemTree`].
    MemTree {
        /// Path tested.
        path: &'a [Vec<u8>],
        /// True when the path exists.
        result: bool,
    },
    /// See [`Op::FindTree`].
    FindTree {
        /// Path read.
        path: &'a [Vec<u8>],
        /// Shape of what was found.
        result: Option<TreeSummary>,
    },
    /// See [`Op::Add`].
    Add {
        /// Path written.
        path: &'a [Vec<u8>],
        /// The new value.
        value: &'a [u8],
    },
    /// See [`Op::AddTree`].
    AddTree {
        /// Root of the replaced subtree.
        path: &'a [Vec<u8>],
        /// Relative leaves.
        tree: &'a [(Path, Vec<u8>)],
    },
    /// See [`Op::Remove`].
    Remove {
        /// Path removed.
        path: &'a [Vec<u8>],
    },
    /// See [`Op::List`].
    List {
        /// Node listed.
        path: &'a [Vec<u8>],
        /// Children skipped first.
        offset: Option<u32>,
        /// Maximum number of children returned.
        length: Option<u32>,
        /// Number of children returned.
        result: u32,
    },
    /// See [`Op::Length`].
    Length {
        /// Node measured.
        path: &'a [Vec<u8>],
        /// Number of children.
        result: u64,
    },
    /// See [`Op::Fold`].
    Fold {
        /// Root of the fold.
        path: &'a [Vec<u8>],
        /// Maximum relative depth visited.
        depth: Option<u32>,
        /// Number of entries visited.
        result: u64,
    },
    /// See [`Op::Copy`].
    Copy {
        /// Source of the copy.
        path: &'a [Vec<u8>],
        /// Destination.
        to: &'a [Vec<u8>],
    },
}

impl OpRef<'_> {
    /// The path the operation applies to.
    pub fn path(&self) -> &[Vec<u8>] {
        match *self {
            OpRef::Find { path, .. }
            | OpRef::Mem { path, .. }
            | OpRef::MemTree { path, .. }
            | OpRef::FindTree { path, .. }
            | OpRef::Add { path, .. }
            | OpRef::AddTree { path, .. }
            | OpRef::Remove { path }
            | OpRef::List { path, .. }
            | OpRef::Length { path, .. }
            | OpRef::Fold { path, .. }
            | OpRef::Copy { path, .. } => path,
        }
    }

    /// The kind of the operation.
    pub fn kind(&self) -> OpKind {
        match self {
            OpRef::Find { .. } => OpKind::Find,
            OpRef::Mem { .. } => OpKind::Mem,
            OpRef::MemTree { .. } => OpKind::MemTree,
            OpRef::FindTree { .. } => OpKind::FindTree,
            OpRef::Add { .. } => OpKind::Add,
            OpRef::AddTree { .. } => OpKind::AddTree,
            OpRef::Remove { .. } => OpKind::Remove,
            OpRef::List { .. } => OpKind::List,
            OpRef::Length { .. } => OpKind::Length,
            OpRef::Fold { .. } => OpKind::Fold,
            OpRef::Copy { .. } => OpKind::Copy,
        }
    }

    /// An owned copy.
    pub fn to_op(&self) -> Op {
        let p = self.path().to_vec();
        match *self {
            OpRef::Find { result, .. } => Op::Find { path: p, result },
            OpRef::Mem { result, .. } => Op::Mem { path: p, result },
            OpRef::MemTree { result, .. } => Op::MemTree { path: p, result },
            OpRef::FindTree { result, .. } => Op::FindTree { path: p, result },
            OpRef::Add { value, .. } => Op::Add { path: p, value: value.to_vec() },
            OpRef::AddTree { tree, .. } => Op::AddTree { path: p, tree: tree.to_vec() },
            OpRef::Remove { .. } => Op::Remove { path: p },
            OpRef::List { offset, length, result, .. } => Op::List { path: p, offset, length, result },
            OpRef::Length { result, .. } => Op::Length { path: p, result },
            OpRef::Fold { depth, result, .. } => Op::Fold { path: p, depth, result },
            OpRef::Copy { to, .. } => Op::Copy { path: p, to: to.to_vec() },
        }
    }
}

/// A block's metadata without its operations (see
/// [`crate::TraceReader::next_block_with`]).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BlockMeta {
    /// Block level.
    pub level: u64,
    /// Number of chain transactions in the block.
    pub transactions: u32,
    /// Commit the block starts from.
    pub parent: Parent,
    /// Number of operations.
    pub ops: u64,
    /// The commit made at the end of the block.
    pub commit: CommitRecord,
}
