//! The data model of a trace: blocks of context operations with their results.

use serde::Serialize;

/// A path in the context tree: a sequence of steps, each a non-empty byte
/// string. The empty path is the root.
pub type Path = Vec<Vec<u8>>;

/// What a trace records about a value returned by a read, enough for a replay
/// to check the value it reads.
///
/// Values of at most [`Digest::INLINE_MAX`] bytes are kept whole, so the check
/// is exact; longer values are summarised by their length and the first 8
/// bytes of their BLAKE2b-256 hash. Most Tezos values are this short (78.9%
/// of contents are under 8 bytes), so most reads carry the value itself.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Digest {
    len: u64,
    bytes: [u8; 8],
}

impl Digest {
    /// Longest value stored whole rather than hashed.
    pub const INLINE_MAX: usize = 8;

    /// The digest of `value`.
    pub fn of(value: &[u8]) -> Digest {
        let mut bytes = [0u8; 8];
        if value.len() <= Self::INLINE_MAX {
            bytes[..value.len()].copy_from_slice(value);
        } else {
            let h = blake2b_simd::Params::new().hash_length(32).hash(value);
            bytes.copy_from_slice(&h.as_bytes()[..8]);
        }
        Digest { len: value.len() as u64, bytes }
    }

    /// Rebuilds a digest from a length and its stored bytes: the value itself
    /// when `len <= 8` (then `stored.len()` must equal `len`), otherwise the
    /// 8-byte hash prefix. Returns `None` when the two do not fit together.
    pub fn from_parts(len: u64, stored: &[u8]) -> Option<Digest> {
        let expected = if len <= Self::INLINE_MAX as u64 { len as usize } else { 8 };
        if stored.len() != expected {
            return None;
        }
        let mut bytes = [0u8; 8];
        bytes[..stored.len()].copy_from_slice(stored);
        Some(Digest { len, bytes })
    }

    /// Length in bytes of the summarised value.
    pub fn value_len(&self) -> u64 {
        self.len
    }

    /// Whether the value is stored whole (`value_len() <= 8`).
    pub fn is_inline(&self) -> bool {
        self.len <= Self::INLINE_MAX as u64
    }

    /// The bytes kept in the trace: the value itself when inline, otherwise
    /// the first 8 bytes of its BLAKE2b-256 hash.
    pub fn stored_bytes(&self) -> &[u8] {
        if self.is_inline() {
            &self.bytes[..self.len as usize]
        } else {
            &self.bytes
        }
    }

    /// Whether `value` is (up to the 64-bit hash prefix) the summarised value.
    pub fn matches(&self, value: &[u8]) -> bool {
        value.len() as u64 == self.len && Digest::of(value) == *self
    }
}

/// What `find_tree` returned for a path that exists.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct TreeSummary {
    /// The path holds a value (then `children` is 0).
    pub is_value: bool,
    /// Number of direct children when the path is an inner node.
    pub children: u64,
}

/// One context operation and what it returned when it was recorded or
/// generated.
///
/// Semantics (also in `docs/TRACE.md`): a path is either absent, a value
/// (leaf) or an inner node with at least one child; empty nodes do not exist.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Op {
    /// Read the value at `path`; `None` when the path is absent or a node.
    Find {
        /// Path read.
        path: Path,
        /// Digest of the value read.
        result: Option<Digest>,
    },
    /// Whether `path` holds a value.
    Mem {
        /// Path tested.
        path: Path,
        /// True when the path holds a value.
        result: bool,
    },
    /// Whether `path` exists (value or node).
    MemTree {
        /// Path tested.
        path: Path,
        /// True when the path exists.
        result: bool,
    },
    /// Read the subtree at `path`.
    FindTree {
        /// Path read.
        path: Path,
        /// Shape of what was found, `None` when absent.
        result: Option<TreeSummary>,
    },
    /// Set the value at `path`, replacing whatever was there.
    Add {
        /// Path written.
        path: Path,
        /// The new value.
        value: Vec<u8>,
    },
    /// Replace the subtree at `path` by the given leaves (paths relative to
    /// `path`); an empty list removes `path`.
    AddTree {
        /// Root of the replaced subtree.
        path: Path,
        /// Relative `(path, value)` leaves of the new subtree.
        tree: Vec<(Path, Vec<u8>)>,
    },
    /// Remove the value or subtree at `path` (no-op when absent).
    Remove {
        /// Path removed.
        path: Path,
    },
    /// List the children of the node at `path` in step order, skipping
    /// `offset` and returning at most `length`.
    List {
        /// Node listed.
        path: Path,
        /// Children skipped first.
        offset: Option<u32>,
        /// Maximum number of children returned.
        length: Option<u32>,
        /// Number of children returned.
        result: u32,
    },
    /// Number of children of the node at `path` (0 for values and absent
    /// paths).
    Length {
        /// Node measured.
        path: Path,
        /// Number of children.
        result: u64,
    },
    /// Visit the entries (values and nodes) strictly below `path`, down to
    /// relative depth `depth` (1 = children only; `None` = unbounded).
    Fold {
        /// Root of the fold.
        path: Path,
        /// Maximum relative depth visited.
        depth: Option<u32>,
        /// Number of entries visited.
        result: u64,
    },
    /// Copy the value or subtree at `path` to `to` (`find_tree path`, which
    /// must find something, then `add_tree to` with it): Irmin's `copy`,
    /// which traces recorded by irmin-bench contain.
    Copy {
        /// Source of the copy; it must exist.
        path: Path,
        /// Destination, replaced by the copy.
        to: Path,
    },
}

/// The kind of an [`Op`], without its data.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Serialize)]
pub enum OpKind {
    /// [`Op::Find`].
    Find,
    /// [`Op::Mem`].
    Mem,
    /// [`Op::MemTree`].
    MemTree,
    /// [`Op::FindTree`].
    FindTree,
    /// [`Op::Add`].
    Add,
    /// [`Op::AddTree`].
    AddTree,
    /// [`Op::Remove`].
    Remove,
    /// [`Op::List`].
    List,
    /// [`Op::Length`].
    Length,
    /// [`Op::Fold`].
    Fold,
    /// [`Op::Copy`].
    Copy,
}

impl OpKind {
    /// All kinds, in tag order.
    pub const ALL: [OpKind; 11] = [
        OpKind::Find,
        OpKind::Mem,
        OpKind::MemTree,
        OpKind::FindTree,
        OpKind::Add,
        OpKind::AddTree,
        OpKind::Remove,
        OpKind::List,
        OpKind::Length,
        OpKind::Fold,
        OpKind::Copy,
    ];

    /// The class used by the workload figures (mem / read / write).
    pub fn class(self) -> OpClass {
        match self {
            OpKind::Mem | OpKind::MemTree => OpClass::Mem,
            OpKind::Find | OpKind::FindTree | OpKind::List | OpKind::Length | OpKind::Fold => OpClass::Read,
            OpKind::Add | OpKind::AddTree | OpKind::Remove | OpKind::Copy => OpClass::Write,
        }
    }

    /// Lower-case name, as used in reports.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Find => "find",
            OpKind::Mem => "mem",
            OpKind::MemTree => "mem_tree",
            OpKind::FindTree => "find_tree",
            OpKind::Add => "add",
            OpKind::AddTree => "add_tree",
            OpKind::Remove => "remove",
            OpKind::List => "list",
            OpKind::Length => "length",
            OpKind::Fold => "fold",
            OpKind::Copy => "copy",
        }
    }
}

/// The three classes of operations the published workload figures count per block.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize)]
pub enum OpClass {
    /// Existence tests: `mem`, `mem_tree`.
    Mem,
    /// Reads: `find`, `find_tree`, `list`, `length`, `fold`.
    Read,
    /// Writes: `add`, `add_tree`, `remove`.
    Write,
}

impl Op {
    /// The path the operation applies to.
    pub fn path(&self) -> &Path {
        match self {
            Op::Find { path, .. }
            | Op::Mem { path, .. }
            | Op::MemTree { path, .. }
            | Op::FindTree { path, .. }
            | Op::Add { path, .. }
            | Op::AddTree { path, .. }
            | Op::Remove { path }
            | Op::List { path, .. }
            | Op::Length { path, .. }
            | Op::Fold { path, .. }
            | Op::Copy { path, .. } => path,
        }
    }

    /// The kind of the operation.
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Find { .. } => OpKind::Find,
            Op::Mem { .. } => OpKind::Mem,
            Op::MemTree { .. } => OpKind::MemTree,
            Op::FindTree { .. } => OpKind::FindTree,
            Op::Add { .. } => OpKind::Add,
            Op::AddTree { .. } => OpKind::AddTree,
            Op::Remove { .. } => OpKind::Remove,
            Op::List { .. } => OpKind::List,
            Op::Length { .. } => OpKind::Length,
            Op::Fold { .. } => OpKind::Fold,
            Op::Copy { .. } => OpKind::Copy,
        }
    }
}

/// Which commit a block's context starts from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Parent {
    /// The commit holding the initial state (an empty tree when the trace has
    /// no initial state).
    Genesis,
    /// The commit made by the previous block of the trace.
    Previous,
    /// An explicitly named commit (recorded traces with forks).
    Hash([u8; 32]),
}

/// The commit that closes a block.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CommitRecord {
    /// Commit date, seconds since the Unix epoch.
    pub date: i64,
    /// Commit message.
    pub message: Vec<u8>,
    /// Commit author.
    pub author: Vec<u8>,
    /// The resulting commit hash when known (recorded traces); generated
    /// traces leave it `None`.
    pub hash: Option<[u8; 32]>,
}

/// One block: a checkout of the parent, operations, one commit.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Block {
    /// Block level (height).
    pub level: u64,
    /// Number of chain transactions (manager operations) in the block.
    pub transactions: u32,
    /// Commit the block starts from.
    pub parent: Parent,
    /// Context operations, in order.
    pub ops: Vec<Op>,
    /// The commit made at the end of the block.
    pub commit: CommitRecord,
}

/// Where a trace comes from.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Source {
    /// Recorded from a real node; free-form description.
    Recorded {
        /// What was recorded, by which tool.
        description: String,
    },
    /// Produced by a generator.
    Generated {
        /// Workload profile name, e.g. `tezos-mainnet`.
        profile: String,
        /// Generator seed.
        seed: u64,
        /// Every other generator parameter, as `(name, value)` text pairs.
        params: Vec<(String, String)>,
    },
}

impl Source {
    /// The value of a generator parameter, if this is a generated trace that
    /// records it.
    pub fn param(&self, name: &str) -> Option<&str> {
        match self {
            Source::Generated { params, .. } => params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()),
            Source::Recorded { .. } => None,
        }
    }
}

/// The state a replay must load before block 1. Only its parameters are
/// stored: the state itself is re-derived with [`crate::initial_state`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum InitialState {
    /// Start from an empty tree.
    None,
    /// The deterministic stream `initial_state(profile, seed, values)`.
    Generated {
        /// Workload profile name.
        profile: String,
        /// Seed of the stream.
        seed: u64,
        /// Number of `(path, value)` pairs.
        values: u64,
    },
}

/// The header at the start of every trace.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TraceHeader {
    /// Format version ([`crate::FORMAT_VERSION`] for traces written by this
    /// crate).
    pub version: u16,
    /// Where the trace comes from.
    pub source: Source,
    /// What a replay loads before the first block.
    pub initial_state: InitialState,
}

impl TraceHeader {
    /// A header of the current format version.
    pub fn new(source: Source, initial_state: InitialState) -> Self {
        TraceHeader { version: crate::FORMAT_VERSION, source, initial_state }
    }
}
