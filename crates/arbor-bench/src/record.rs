//! Recording a trace of what an application does to its store, for replaying it later
//! (`docs/TRACE.md`, section "Recording").
//!
//! Wrap the store in a [`RecordingStore`], take trees from it with
//! [`checkout`](RecordingStore::checkout) or [`empty`](RecordingStore::empty), work on them
//! through [`RecordingTree`] (each operation runs on the real tree and is recorded with its
//! result), and [`commit`](RecordingStore::commit) them: each commit writes one block.
//!
//! ```
//! use arbor_bench::record::RecordingStore;
//!
//! let dir = tempfile::tempdir()?;
//! let store = arbor::Store::open(dir.path())?;
//! let mut rec = RecordingStore::new(store, Vec::new(), "example")?;
//! let mut tree = rec.empty();
//! tree.add(&["a", "b"], b"1")?;
//! assert_eq!(tree.find(&["a", "b"])?, Some(b"1".to_vec()));
//! let hash = rec.commit(&mut tree, 1_700_000_000, b"Tezos", b"block 1", 1, 3)?;
//! let mut tree = rec.checkout(&hash)?;
//! tree.remove(&["a"])?;
//! rec.commit(&mut tree, 1_700_000_030, b"Tezos", b"block 2", 2, 0)?;
//! let (_store, trace) = rec.finish()?;
//! assert!(trace.starts_with(arbor_trace::MAGIC));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::io::Write;

use arbor::{Depth, Hash, Kind, Order, Step, Store, Tree};
use arbor_trace::{
    BlockEncoder, CommitRecord, Digest, InitialState, Parent, Source, TraceError, TraceHeader, TraceWriter, TreeSummary,
};

/// Why recording failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum RecordError {
    /// The store failed; nothing was recorded for that operation.
    Store(arbor::Error),
    /// The trace could not be written, or the operation cannot be expressed in it.
    Trace(TraceError),
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Store(e) => write!(f, "store: {e}"),
            RecordError::Trace(e) => write!(f, "trace: {e}"),
        }
    }
}

impl std::error::Error for RecordError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RecordError::Store(e) => Some(e),
            RecordError::Trace(e) => Some(e),
        }
    }
}

impl From<arbor::Error> for RecordError {
    fn from(e: arbor::Error) -> Self {
        RecordError::Store(e)
    }
}

impl From<TraceError> for RecordError {
    fn from(e: TraceError) -> Self {
        RecordError::Trace(e)
    }
}

/// Result of the recorder's operations.
pub type Result<T, E = RecordError> = std::result::Result<T, E>;

fn too_large(what: &str, n: usize) -> RecordError {
    RecordError::Trace(TraceError::InvalidInput(format!("{what} {n} does not fit the trace's 32 bits")))
}

fn to_u32(what: &str, n: Option<usize>) -> Result<Option<u32>> {
    n.map(|v| u32::try_from(v).map_err(|_| too_large(what, v))).transpose()
}

/// A store whose commits are recorded, with the operations that built them, as a trace
/// written to `W`.
pub struct RecordingStore<W: Write> {
    store: Store,
    writer: TraceWriter<W>,
    /// The commit of the last block written, which the next block may name as `Previous`.
    previous: Option<Hash>,
}

impl<W: Write> RecordingStore<W> {
    /// Starts a trace in `out` whose header says it was recorded from `description` and
    /// starts from an empty tree. The trace replays into a fresh store when every commit
    /// the application checks out was made while recording.
    pub fn new(store: Store, out: W, description: &str) -> Result<Self> {
        let source = Source::Recorded { description: description.to_string() };
        let writer = TraceWriter::new(out, &TraceHeader::new(source, InitialState::None))?;
        Ok(RecordingStore { store, writer, previous: None })
    }

    /// The store recorded into (operations on it directly are not recorded).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Blocks (commits) written so far.
    pub fn blocks_written(&self) -> u64 {
        self.writer.blocks_written()
    }

    /// The tree of a commit, recording from here on (Tezos `Context.checkout`).
    pub fn checkout(&self, hash: &Hash) -> Result<RecordingTree> {
        Ok(RecordingTree { tree: self.store.checkout(hash)?, origin: Some(*hash), ops: BlockEncoder::new() })
    }

    /// The empty tree, recording from here on; its block's parent is `Genesis`.
    pub fn empty(&self) -> RecordingTree {
        RecordingTree { tree: self.store.empty(), origin: None, ops: BlockEncoder::new() }
    }

    /// Commits `tree` and writes one block: the commit the tree came from as its parent
    /// (`Genesis` for [`empty`](Self::empty), `Previous` for the last block's commit, else
    /// its hash), the operations recorded on the tree since, and the commit with its hash.
    ///
    /// The commit's parents are the commit the tree was checked out from (none for an
    /// empty tree): that is what the trace format can express, and what a replay commits
    /// with. Afterwards `tree` continues as a fresh checkout of the new commit.
    pub fn commit(
        &mut self,
        tree: &mut RecordingTree,
        date: i64,
        author: &[u8],
        message: &[u8],
        level: u64,
        transactions: u32,
    ) -> Result<Hash> {
        let parents = tree.origin.as_slice();
        let (hash, _) = self.store.commit_with_stats(&tree.tree, parents, date, author, message)?;
        let parent = match tree.origin {
            None => Parent::Genesis,
            Some(h) if Some(h) == self.previous => Parent::Previous,
            Some(h) => Parent::Hash(h.0),
        };
        let record = CommitRecord { date, message: message.to_vec(), author: author.to_vec(), hash: Some(hash.0) };
        self.writer.write_encoded(level, transactions, parent, &record, &tree.ops)?;
        self.previous = Some(hash);
        tree.origin = Some(hash);
        tree.ops.clear();
        Ok(hash)
    }

    /// Closes the trace (operations on trees not committed are dropped) and returns the
    /// store and the writer.
    pub fn finish(self) -> Result<(Store, W)> {
        let out = self.writer.finish()?;
        Ok((self.store, out))
    }
}

/// A tree whose operations are recorded, with their results, into the block its next
/// commit writes. Reads take `&mut self` because they are recorded too.
pub struct RecordingTree {
    tree: Tree,
    /// The commit the tree was checked out from (`None`: the empty tree).
    origin: Option<Hash>,
    ops: BlockEncoder,
}

impl RecordingTree {
    /// The tree as it is now. Reads made through it are not recorded.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// Operations recorded since the last checkout or commit.
    pub fn recorded_ops(&self) -> u64 {
        self.ops.op_count()
    }

    /// The value at `path` (Tezos `Context.find`).
    pub fn find<S: AsRef<[u8]>>(&mut self, path: &[S]) -> Result<Option<Vec<u8>>> {
        let value = self.tree.find(path)?;
        self.ops.find(path, value.as_deref().map(Digest::of).as_ref())?;
        Ok(value)
    }

    /// Whether a value is at `path` (Tezos `Context.mem`).
    pub fn mem<S: AsRef<[u8]>>(&mut self, path: &[S]) -> Result<bool> {
        let found = self.tree.mem(path)?;
        self.ops.mem(path, found)?;
        Ok(found)
    }

    /// Whether a value or a directory is at `path` (Tezos `Context.mem_tree`).
    pub fn mem_tree<S: AsRef<[u8]>>(&mut self, path: &[S]) -> Result<bool> {
        let found = self.tree.mem_tree(path)?;
        self.ops.mem_tree(path, found)?;
        Ok(found)
    }

    /// The subtree at `path` (Tezos `Context.find_tree`); operations on it are not recorded.
    pub fn find_tree<S: AsRef<[u8]>>(&mut self, path: &[S]) -> Result<Option<Tree>> {
        let found = self.tree.find_tree(path)?;
        let summary = match &found {
            None => None,
            Some(t) if t.kind() == Kind::Value => Some(TreeSummary { is_value: true, children: 0 }),
            Some(t) => Some(TreeSummary { is_value: false, children: t.length::<&[u8]>(&[])? }),
        };
        self.ops.find_tree(path, summary)?;
        Ok(found)
    }

    /// Sets the value at `path` (Tezos `Context.add`).
    pub fn add<S: AsRef<[u8]>>(&mut self, path: &[S], value: &[u8]) -> Result<()> {
        self.tree.add_mut(path, value)?;
        self.ops.add(path, value)?;
        Ok(())
    }

    /// Removes whatever is at `path` (Tezos `Context.remove`).
    pub fn remove<S: AsRef<[u8]>>(&mut self, path: &[S]) -> Result<()> {
        self.tree.remove_mut(path)?;
        self.ops.remove(path)?;
        Ok(())
    }

    /// Grafts `sub` at `path` (Tezos `Context.add_tree`). The trace records the subtree's
    /// values (a value tree as an `add`), so this costs a walk of `sub`.
    pub fn add_tree<S: AsRef<[u8]>>(&mut self, path: &[S], sub: &Tree) -> Result<()> {
        self.tree.add_tree_mut(path, sub)?;
        if sub.kind() == Kind::Value {
            let value = sub.to_value()?.unwrap_or_default();
            self.ops.add(path, &value)?;
            return Ok(());
        }
        let mut leaves: Vec<(Vec<Step>, Vec<u8>)> = Vec::new();
        sub.fold::<&[u8], _>(&[], None, Order::Undefined, |key, t| {
            if let Some(v) = t.to_value()? {
                leaves.push((key.to_vec(), v));
            }
            Ok(true)
        })?;
        self.ops.add_tree(path, &leaves)?;
        Ok(())
    }

    /// Children of the directory at `path`, skipping `offset`, at most `length`
    /// (Tezos `Context.list`).
    pub fn list<S: AsRef<[u8]>>(
        &mut self,
        path: &[S],
        offset: Option<usize>,
        length: Option<usize>,
    ) -> Result<Vec<(Step, Tree)>> {
        let (o, l) = (to_u32("list offset", offset)?, to_u32("list length", length)?);
        let children = self.tree.list(path, offset, length)?;
        let n = u32::try_from(children.len()).map_err(|_| too_large("list result", children.len()))?;
        self.ops.list(path, o, l, n)?;
        Ok(children)
    }

    /// Number of children of the directory at `path` (Tezos `Context.length`).
    pub fn length<S: AsRef<[u8]>>(&mut self, path: &[S]) -> Result<u64> {
        let n = self.tree.length(path)?;
        self.ops.length(path, n)?;
        Ok(n)
    }

    /// Visits in pre-order the subtree at `path` and everything below it down to relative
    /// depth `depth` (all depths when `None`), as [`Tree::fold`] with `Depth::Le`; `f`
    /// returns false to stop. The trace records how many entries lie strictly below `path`
    /// within the bound, so the walk goes on counting (without calling `f`) after a stop.
    pub fn fold<S, F>(&mut self, path: &[S], depth: Option<u32>, order: Order, mut f: F) -> Result<()>
    where
        S: AsRef<[u8]>,
        F: FnMut(&[Step], &Tree) -> arbor::Result<bool>,
    {
        let mut visited = 0u64;
        let mut going = true;
        let bound = depth.map(|d| Depth::Le(d as usize));
        self.tree.fold(path, bound, order, |key, t| {
            if !key.is_empty() {
                visited += 1;
            }
            if going {
                going = f(key, t)?;
            }
            Ok(true)
        })?;
        self.ops.fold(path, depth, visited)?;
        Ok(())
    }
}
