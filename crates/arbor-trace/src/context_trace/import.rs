//! Converting a replayable Octez context trace into an arbor trace.
//!
//! The recorded node works on immutable contexts and trees: each write makes a new one, and
//! a block may leave some behind (a failed operation is undone by going on from the context
//! before it). Each row of the trace is one block; the importer gives every context the
//! block makes a *version* (a node in a tree of versions rooted at the block's checkout), and
//! every write the arbor operations that make its version from its parent. At the commit,
//! the committed version's chain back to the checkout is the block: its writes, in order,
//! become the block's writes; the writes of versions off that chain were undone and are
//! left out (and counted). Each read is placed right after the write of the version it read,
//! or, for a read of a version off the chain, after its nearest ancestor on the chain when no
//! write in between touched the path read (otherwise it is counted as not expressible).
//!
//! Trees are followed as far as the trace says what they hold (see `tree.rs`): grafting a
//! tree read from the context copies it (`copy`), or nothing when it goes back where it came
//! from unchanged; a tree built in memory becomes one `add_tree` (or `add`); edits on a tree
//! read from the context become the same writes under the graft's path. Reads of a tree that
//! is an unedited subtree of a context become reads of the context at the tree's path.
//!
//! Everything an arbor trace cannot say (hashes, `exists`, equality of trees, reads of trees
//! built or changed in memory, folds at depths an arbor `fold` does not count, calls that
//! record no result) is counted by kind and reason in the summary. A block whose committed
//! chain needs a write the importer cannot express (grafting a tree whose content the trace
//! does not give, writing on a context of an earlier block) stops the import with an error
//! naming the block and the event.

use std::collections::BTreeMap;
use std::io::{Read, Write};

use rustc_hash::FxHashMap;

use super::events::{BlockRow, Depth, Event, Kind, Raw, ScopeEnd, TestChainStatus, Tracked, TreeEvent};
use super::file::ContextTraceReader;
use super::tree::{join, overlaps, Base, Concrete, Edit, TreeVal, VersionId};
use crate::error::{Result, TraceError};
use crate::format::{BlockEncoder, TraceWriter};
use crate::irmin::OCTEZ_AUTHOR;
use crate::types::{CommitRecord, InitialState, Op, Parent, Path, Source, TraceHeader};

/// What an import read and wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextImportSummary {
    /// Rows (blocks) read.
    pub rows: u64,
    /// Blocks the header says the file holds.
    pub header_blocks: i64,
    /// Events read.
    pub events: u64,
    /// Blocks (commits) written.
    pub blocks: u64,
    /// Operations written, commits excluded.
    pub ops: u64,
    /// Commits that carry the hash the recording saw (all of them).
    pub hashes: u64,
    /// Events an arbor trace cannot express, by `"event: reason"`.
    pub not_expressed: BTreeMap<String, u64>,
    /// Writes made on contexts no commit kept (a failed operation undone), left out.
    pub undone_writes: u64,
    /// Events of a last row that ends before its commit, left out.
    pub unfinished_events: u64,
    /// Whether the file ends inside a row (a recording cut at a byte count): the rows before
    /// it are imported, the partial one is not.
    pub cut_row: bool,
}

impl ContextImportSummary {
    /// Events not expressed, all reasons together.
    pub fn not_expressed_total(&self) -> u64 {
        self.not_expressed.values().sum()
    }
}

/// The path of the protocol's data: Octez roots every `Context` key below it.
const DATA: &[u8] = b"data";

/// Keys Octez writes at the root of the context, outside `data`.
const PROTOCOL_KEY: &[u8] = b"protocol";
const TEST_CHAIN_KEY: &[u8] = b"test_chain";
const BLOCK_METADATA_KEY: &[u8] = b"predecessor_block_metadata_hash";
const OPS_METADATA_KEY: &[u8] = b"predecessor_ops_metadata_hash";

/// The message Octez gives the genesis commit.
const GENESIS_MESSAGE: &[u8] = b"Genesis";

/// How a block's first version came about.
#[derive(Clone, Copy, Debug)]
enum Origin {
    /// The empty tree (genesis).
    Genesis,
    /// A checkout of this commit.
    Checkout([u8; 32]),
}

/// One context version of the block being read.
struct Version {
    parent: Option<VersionId>,
    depth: u32,
    /// The path the write that made it changed (none for a first version).
    wrote: Option<Path>,
    /// That write, as an arbor operation.
    op: Option<Op>,
    /// For a first version, what it is.
    origin: Option<Origin>,
    /// Why this version cannot be expressed, and the event that made it.
    poison: Option<(u64, String)>,
}

/// A read waiting for the commit to know where it goes.
struct PendingRead {
    at: VersionId,
    path: Path,
    op: Op,
    label: &'static str,
}

/// A fold under way.
struct Fold {
    /// Its read, when it is expressible: index in the reads, arbor depth, and whether Octez
    /// counted the folded node itself.
    read: Option<(usize, Option<u32>, bool)>,
    entries: u64,
    on_tree: bool,
}

/// The block being read.
#[derive(Default)]
struct BlockState {
    versions: Vec<Version>,
    reads: Vec<PendingRead>,
    folds: Vec<Fold>,
    /// Genesis: date, protocol and the version `patch_context` returned.
    genesis: Option<(i64, Vec<u8>, VersionId)>,
    committed: bool,
}

/// Where the importer is.
struct Importer {
    /// The row being read, which also numbers the versions' block.
    epoch: u64,
    event: u64,
    contexts: FxHashMap<i64, (u64, VersionId)>,
    trees: FxHashMap<i64, TreeVal>,
    block: BlockState,
    summary: ContextImportSummary,
    last_commit: Option<[u8; 32]>,
    /// The block the row's commit closed, ready to be written.
    pending_block: Option<(u64, u32, Parent, CommitRecord, BlockEncoder)>,
}

fn fault(block: u64, event: u64, reason: impl Into<String>) -> TraceError {
    TraceError::ContextTrace { block, event: Some(event), reason: reason.into() }
}

fn data(key: &[Vec<u8>]) -> Path {
    let mut p = Vec::with_capacity(key.len() + 1);
    p.push(DATA.to_vec());
    p.extend_from_slice(key);
    p
}

fn root_key(step: &[u8]) -> Path {
    vec![step.to_vec()]
}

/// The bytes Octez stores for a test chain status (its `Data_encoding` binary form: a tag
/// byte, then the fields; hashes raw, times as 8 bytes big-endian).
pub fn test_chain_status_bytes(s: &TestChainStatus) -> Vec<u8> {
    let mut out = Vec::new();
    match s {
        TestChainStatus::NotRunning => out.push(0),
        TestChainStatus::Forking { protocol, expiration } => {
            out.push(1);
            out.extend_from_slice(protocol);
            out.extend_from_slice(&expiration.to_be_bytes());
        }
        TestChainStatus::Running { chain_id, genesis, protocol, expiration } => {
            out.push(2);
            out.extend_from_slice(chain_id);
            out.extend_from_slice(genesis);
            out.extend_from_slice(protocol);
            out.extend_from_slice(&expiration.to_be_bytes());
        }
    }
    out
}

/// What an arbor `fold` counts for an Octez fold of this depth: the arbor depth, and whether
/// Octez's count includes the folded node itself (depth 0); `None` when no arbor `fold`
/// counts the same entries.
fn fold_depth(depth: Option<Depth>) -> Option<(Option<u32>, bool)> {
    let to_u32 = |d: i64| u32::try_from(d).ok();
    match depth {
        None => Some((None, true)),
        Some(Depth::Eq(1)) => Some((Some(1), false)),
        Some(Depth::Le(d)) if d >= 1 => Some((Some(to_u32(d)?), true)),
        Some(Depth::Lt(d)) if d >= 2 => Some((Some(to_u32(d - 1)?), true)),
        Some(_) => None,
    }
}

impl Importer {
    fn not_expressed(&mut self, what: &str, why: &str) {
        *self.summary.not_expressed.entry(format!("{what}: {why}")).or_insert(0) += 1;
    }

    fn fault(&self, reason: impl Into<String>) -> TraceError {
        fault(self.epoch, self.event, reason)
    }

    // --- contexts and trees ---------------------------------------------------------------

    /// The version of a context passed to a call, forgetting it at its last occurrence.
    fn ctx(&mut self, t: &Tracked) -> std::result::Result<VersionId, &'static str> {
        let found = if t.scope == ScopeEnd::LastOccurrence {
            self.contexts.remove(&t.id)
        } else {
            self.contexts.get(&t.id).copied()
        };
        match found {
            Some((epoch, v)) if epoch == self.epoch => Ok(v),
            Some(_) => Err("a context of an earlier block"),
            None => Err("a context the trace never made"),
        }
    }

    fn bind_ctx(&mut self, t: &Tracked, v: VersionId) {
        if t.scope == ScopeEnd::WillReoccur {
            self.contexts.insert(t.id, (self.epoch, v));
        }
    }

    /// A tree passed to a call, forgetting it at its last occurrence.
    fn tree(&mut self, t: &Tracked) -> TreeVal {
        let found =
            if t.scope == ScopeEnd::LastOccurrence { self.trees.remove(&t.id) } else { self.trees.get(&t.id).cloned() };
        found.unwrap_or_else(|| TreeVal::of(Base::Unknown("a tree the trace never made")))
    }

    fn bind_tree(&mut self, t: &Tracked, v: TreeVal) {
        if t.scope == ScopeEnd::WillReoccur {
            self.trees.insert(t.id, v);
        }
    }

    // --- versions ---------------------------------------------------------------------------

    fn push_version(&mut self, v: Version) -> VersionId {
        let id = self.block.versions.len() as VersionId;
        self.block.versions.push(v);
        id
    }

    fn root(&mut self, origin: Origin) -> VersionId {
        self.push_version(Version { parent: None, depth: 0, wrote: None, op: None, origin: Some(origin), poison: None })
    }

    /// A version made by a write the importer cannot express.
    fn poisoned(&mut self, parent: Option<VersionId>, why: String) -> VersionId {
        let depth = parent.map_or(0, |p| self.block.versions[p as usize].depth + 1);
        let event = self.event;
        self.push_version(Version { parent, depth, wrote: None, op: None, origin: None, poison: Some((event, why)) })
    }

    /// The version `op` makes from `parent`.
    fn write(&mut self, parent: VersionId, op: Op) -> VersionId {
        let depth = self.block.versions[parent as usize].depth + 1;
        let wrote = Some(match &op {
            Op::Copy { to, .. } => to.clone(),
            other => other.path().clone(),
        });
        self.push_version(Version { parent: Some(parent), depth, wrote, op: Some(op), origin: None, poison: None })
    }

    /// Whether `path` holds the same in versions `a` and `b`: no write between them and
    /// their common ancestor touched it.
    fn unchanged(&self, mut a: VersionId, mut b: VersionId, path: &[Vec<u8>]) -> bool {
        let vs = &self.block.versions;
        let touched = |v: VersionId| vs[v as usize].wrote.as_deref().is_some_and(|w| overlaps(w, path));
        while a != b {
            let (da, db) = (vs[a as usize].depth, vs[b as usize].depth);
            let step = |v: VersionId| vs[v as usize].parent;
            if da >= db {
                if touched(a) {
                    return false;
                }
                let Some(p) = step(a) else { return false };
                a = p;
            } else {
                if touched(b) {
                    return false;
                }
                let Some(p) = step(b) else { return false };
                b = p;
            }
        }
        true
    }

    // --- reads ------------------------------------------------------------------------------

    fn read(&mut self, at: VersionId, op: Op, label: &'static str) -> usize {
        let path = op.path().clone();
        self.block.reads.push(PendingRead { at, path, op, label });
        self.block.reads.len() - 1
    }

    /// A read of a context: `make` builds the arbor operation from the absolute path.
    fn ctx_read(&mut self, ctx: &Tracked, key: &[Vec<u8>], label: &'static str, make: impl FnOnce(Path) -> Op) {
        match self.ctx(ctx) {
            Ok(v) => {
                self.read(v, make(data(key)), label);
            }
            Err(why) => self.not_expressed(label, why),
        }
    }

    /// A read of a tree at `key`, as a read of the context it came from.
    fn tree_read(&mut self, tree: &Tracked, key: &[Vec<u8>], label: &'static str, make: impl FnOnce(Path) -> Op) {
        let t = self.tree(tree);
        self.tree_read_of(&t, key, label, make);
    }

    /// [`Importer::tree_read`] for a tree already looked up.
    fn tree_read_of(&mut self, t: &TreeVal, key: &[Vec<u8>], label: &'static str, make: impl FnOnce(Path) -> Op) {
        let sub = t.subtree(key);
        match sub.plain() {
            Some((epoch, at, path)) if epoch == self.epoch => {
                let op = make(path.clone());
                self.read(at, op, label);
            }
            Some(_) => self.not_expressed(label, "a tree of an earlier block"),
            None => {
                let why = match &sub.base {
                    Base::Unknown(why) => why,
                    _ => "a tree built or changed in memory",
                };
                self.not_expressed(label, why);
            }
        }
    }

    fn fold_start(&mut self, at: Option<(VersionId, Path)>, depth: Option<Depth>, on_tree: bool, label: &'static str) {
        let read = match (at, fold_depth(depth)) {
            (Some((v, path)), Some((d, root))) => {
                let i = self.read(v, Op::Fold { path, depth: d, result: 0 }, label);
                Some((i, d, root))
            }
            (None, _) => None,
            (Some(_), None) => {
                self.not_expressed(label, "a depth no arbor fold counts (only all, = 1, <= d, < d)");
                None
            }
        };
        self.block.folds.push(Fold { read, entries: 0, on_tree });
    }

    fn fold_end(&mut self, on_tree: bool, recorded: Option<i64>) -> Result<()> {
        let Some(f) = self.block.folds.pop() else { return Err(self.fault("a fold ends that did not start")) };
        if f.on_tree != on_tree {
            return Err(self.fault("a fold of a tree ends as a fold of a context, or the other way round"));
        }
        if let Some(n) = recorded {
            if u64::try_from(n).ok() != Some(f.entries) {
                return Err(self.fault(format!("the fold ends with {n} entries but {} were visited", f.entries)));
            }
        }
        if let Some((i, depth, root)) = f.read {
            // Octez's count has the folded node itself when the depth takes depth 0 and it is
            // a directory (a value is never visited there), so one less, never below 0.
            let result = if root { f.entries.saturating_sub(1) } else { f.entries };
            let path = self.block.reads[i].path.clone();
            self.block.reads[i].op = Op::Fold { path, depth, result };
        }
        Ok(())
    }

    // --- writes -----------------------------------------------------------------------------

    /// A write on a context: the version it makes from the context passed, or a poisoned one.
    fn ctx_write(
        &mut self,
        ctx: &Tracked,
        out: &Tracked,
        label: &str,
        ops: impl FnOnce(&mut Self, VersionId) -> std::result::Result<VersionId, String>,
    ) {
        let v = match self.ctx(ctx) {
            Ok(v) => ops(self, v).unwrap_or_else(|why| self.poisoned(Some(v), format!("{label}: {why}"))),
            Err(why) => self.poisoned(None, format!("{label} on {why}")),
        };
        self.bind_ctx(out, v);
    }

    /// The writes that put `t` at `dest`, made on top of `cur`.
    fn graft(&mut self, mut cur: VersionId, t: &TreeVal, dest: &[Vec<u8>]) -> std::result::Result<VersionId, String> {
        if let Some(c) = t.concrete() {
            let op = match c {
                Concrete::Value(v) => Op::Add { path: dest.to_vec(), value: v.to_vec() },
                Concrete::Dir(m) => {
                    Op::AddTree { path: dest.to_vec(), tree: m.into_iter().map(|(p, v)| (p, v.to_vec())).collect() }
                }
            };
            return Ok(self.write(cur, op));
        }
        match &t.base {
            Base::Ctx { epoch, at, path } => {
                if *epoch != self.epoch {
                    return Err("grafts a tree of an earlier block".into());
                }
                if !self.unchanged(*at, cur, path) {
                    return Err("grafts a tree read from a context whose content there has changed since".into());
                }
                if path.as_slice() != dest {
                    cur = self.write(cur, Op::Copy { path: path.clone(), to: dest.to_vec() });
                }
            }
            Base::Empty => cur = self.write(cur, Op::Remove { path: dest.to_vec() }),
            Base::Value(v) => cur = self.write(cur, Op::Add { path: dest.to_vec(), value: v.to_vec() }),
            Base::Unknown(why) => return Err(format!("grafts {why}")),
        }
        for (path, edit) in t.edits() {
            let at = join(dest, path);
            cur = match edit {
                Edit::Set(v) => self.write(cur, Op::Add { path: at, value: v.to_vec() }),
                Edit::Remove => self.write(cur, Op::Remove { path: at }),
                Edit::Graft(g) => self.graft(cur, g, &at)?,
            };
        }
        Ok(cur)
    }

    // --- events -----------------------------------------------------------------------------

    fn tree_event(&mut self, e: &TreeEvent) -> Result<()> {
        let label = e.name();
        match e {
            TreeEvent::Empty { ctx, out } => {
                let _ = self.ctx(ctx);
                self.bind_tree(out, TreeVal::of(Base::Empty));
            }
            TreeEvent::OfValue { ctx, value, out } => {
                let _ = self.ctx(ctx);
                self.bind_tree(out, TreeVal::of(Base::Value(value.as_slice().into())));
            }
            TreeEvent::OfRaw { raw, out } => {
                let t = of_raw(raw);
                self.bind_tree(out, t);
            }
            TreeEvent::Mem { tree, key, result } => {
                self.tree_read(tree, key, label, |path| Op::Mem { path, result: *result })
            }
            TreeEvent::MemTree { tree, key, result } => {
                self.tree_read(tree, key, label, |path| Op::MemTree { path, result: *result })
            }
            TreeEvent::Find { tree, key, found } => {
                self.tree_read(tree, key, label, |path| Op::Mem { path, result: *found })
            }
            // A tree the context holds is never empty, and it is a value exactly when `mem`
            // says so at its path.
            TreeEvent::IsEmpty { tree, result } => {
                self.tree_read(tree, &[], label, |path| Op::MemTree { path, result: !*result })
            }
            TreeEvent::Kind { tree, result } => {
                self.tree_read(tree, &[], label, |path| Op::Mem { path, result: *result == Kind::Value })
            }
            TreeEvent::ToValue { tree, found } => {
                self.tree_read(tree, &[], label, |path| Op::Mem { path, result: *found })
            }
            TreeEvent::Hash { tree } => {
                self.tree(tree);
                self.not_expressed(label, "arbor traces have no hash operation (and the hash is not recorded)");
            }
            TreeEvent::Equal { a, b, .. } => {
                self.tree(a);
                self.tree(b);
                self.not_expressed(label, "arbor traces cannot compare two trees");
            }
            TreeEvent::Clear { tree, .. } => {
                self.tree(tree);
                self.not_expressed(label, "drops cached data, changes no content");
            }
            TreeEvent::FindTree { tree, key, out } => {
                let t = self.tree(tree);
                let found = out.is_some();
                self.tree_read_of(&t, key, label, |path| Op::MemTree { path, result: found });
                if let Some(o) = out {
                    self.bind_tree(o, t.subtree(key));
                }
            }
            TreeEvent::Add { tree, key, value, out } => {
                let t = self.tree(tree).with(key.clone(), Edit::Set(value.as_slice().into()));
                self.bind_tree(out, t);
            }
            TreeEvent::AddTree { tree, key, sub, out } => {
                let (t, s) = (self.tree(tree), self.tree(sub));
                self.bind_tree(out, t.with(key.clone(), Edit::Graft(s)));
            }
            TreeEvent::Remove { tree, key, out } => {
                let t = self.tree(tree).with(key.clone(), Edit::Remove);
                self.bind_tree(out, t);
            }
            TreeEvent::FoldStart { depth, tree, key, .. } => {
                let sub = self.tree(tree).subtree(key);
                let at = match sub.plain() {
                    Some((epoch, at, path)) if epoch == self.epoch => Some((at, path.clone())),
                    _ => {
                        self.not_expressed(label, "a tree built or changed in memory, or not of this block");
                        None
                    }
                };
                self.fold_start(at, *depth, true, label);
            }
            TreeEvent::FoldStepEnter(t) => self.fold_step(t)?,
            TreeEvent::FoldStepExit(t) => {
                self.tree(t);
            }
            TreeEvent::FoldEnd(n) => self.fold_end(true, Some(*n))?,
        }
        Ok(())
    }

    fn fold_step(&mut self, t: &Tracked) -> Result<()> {
        let Some(f) = self.block.folds.last_mut() else { return Err(self.fault("a fold step outside a fold")) };
        f.entries += 1;
        self.bind_tree(t, TreeVal::of(Base::Unknown("a tree a fold visited (its step is not recorded)")));
        Ok(())
    }

    fn event(&mut self, e: &Event, row: &BlockRow) -> Result<()> {
        let label = e.name();
        if self.block.committed {
            return Err(self.fault(format!("a {label} event after the block's commit")));
        }
        match e {
            Event::Tree(t) => self.tree_event(t)?,
            Event::FindTree { ctx, key, out } => match self.ctx(ctx) {
                Ok(v) => {
                    self.read(v, Op::MemTree { path: data(key), result: out.is_some() }, label);
                    if let Some(o) = out {
                        self.bind_tree(o, TreeVal::of(Base::Ctx { epoch: self.epoch, at: v, path: data(key) }));
                    }
                }
                Err(why) => {
                    self.not_expressed(label, why);
                    if let Some(o) = out {
                        self.bind_tree(o, TreeVal::of(Base::Unknown("a tree of a context of an earlier block")));
                    }
                }
            },
            Event::FoldStart { depth, ctx, key, .. } => {
                let at = match self.ctx(ctx) {
                    Ok(v) => Some((v, data(key))),
                    Err(why) => {
                        self.not_expressed(label, why);
                        None
                    }
                };
                self.fold_start(at, *depth, false, label);
            }
            Event::FoldStepEnter(t) => self.fold_step(t)?,
            Event::FoldStepExit(t) => {
                self.tree(t);
            }
            Event::FoldEnd => self.fold_end(false, None)?,
            Event::AddTree { ctx, key, tree, out } => {
                let t = self.tree(tree);
                let dest = data(key);
                self.ctx_write(ctx, out, label, |me, v| me.graft(v, &t, &dest));
            }
            Event::Mem { ctx, key, result } => self.ctx_read(ctx, key, label, |path| Op::Mem { path, result: *result }),
            Event::MemTree { ctx, key, result } => {
                self.ctx_read(ctx, key, label, |path| Op::MemTree { path, result: *result })
            }
            // Only whether `find` found a value is recorded: `mem` checks exactly that.
            Event::Find { ctx, key, found } => self.ctx_read(ctx, key, label, |path| Op::Mem { path, result: *found }),
            Event::GetProtocol { ctx }
            | Event::FindPredecessorBlockMetadataHash { ctx }
            | Event::FindPredecessorOpsMetadataHash { ctx }
            | Event::GetTestChain { ctx } => {
                let _ = self.ctx(ctx);
                self.not_expressed(label, "the answer is not recorded");
            }
            Event::Hash { ctx, .. } => {
                let _ = self.ctx(ctx);
                self.not_expressed(label, "arbor traces have no hash operation (and the hash is not recorded)");
            }
            Event::Exists { .. } => self.not_expressed(label, "arbor traces do not ask the store for a commit"),
            Event::Add { ctx, key, value, out } => {
                let op = Op::Add { path: data(key), value: value.clone() };
                self.ctx_write(ctx, out, label, |me, v| Ok(me.write(v, op)));
            }
            Event::Remove { ctx, key, out } => {
                let op = Op::Remove { path: data(key) };
                self.ctx_write(ctx, out, label, |me, v| Ok(me.write(v, op)));
            }
            Event::AddProtocol { ctx, hash, out } => self.root_add(ctx, out, label, PROTOCOL_KEY, hash.clone()),
            Event::AddPredecessorBlockMetadataHash { ctx, hash, out } => {
                self.root_add(ctx, out, label, BLOCK_METADATA_KEY, hash.clone())
            }
            Event::AddPredecessorOpsMetadataHash { ctx, hash, out } => {
                self.root_add(ctx, out, label, OPS_METADATA_KEY, hash.clone())
            }
            Event::AddTestChain { ctx, status, out } => {
                self.root_add(ctx, out, label, TEST_CHAIN_KEY, test_chain_status_bytes(status))
            }
            Event::ForkTestChain { ctx, protocol, expiration, out } => {
                let status = TestChainStatus::Forking { protocol: protocol.clone(), expiration: *expiration };
                self.root_add(ctx, out, label, TEST_CHAIN_KEY, test_chain_status_bytes(&status))
            }
            Event::RemoveTestChain { ctx, out } => {
                let op = Op::Remove { path: root_key(TEST_CHAIN_KEY) };
                self.ctx_write(ctx, out, label, |me, v| Ok(me.write(v, op)));
            }
            Event::Checkout { hash, out } => {
                let h = commit_hash(&hash.hash).map_err(|e| self.fault(e))?;
                let v = self.root(Origin::Checkout(h));
                self.bind_ctx(out, v);
            }
            Event::CommitGenesisStart { time, protocol, .. } => {
                let v = self.root(Origin::Genesis);
                self.block.genesis = Some((*time, protocol.clone(), v));
            }
            Event::PatchContextEnter(ctx) => {
                let Some((_, _, v)) = self.block.genesis else {
                    return Err(self.fault("patch_context outside commit_genesis"));
                };
                self.bind_ctx(ctx, v);
            }
            Event::PatchContextExit { ctx, out } => {
                let _ = self.ctx(ctx);
                let v = self.ctx(out).map_err(|why| self.fault(format!("patch_context returns {why}")))?;
                match &mut self.block.genesis {
                    Some((_, _, base)) => *base = v,
                    None => return Err(self.fault("patch_context outside commit_genesis")),
                }
            }
            Event::CommitGenesisEnd { hash } => {
                let Some((time, protocol, base)) = self.block.genesis.take() else {
                    return Err(self.fault("commit_genesis ends without having started"));
                };
                // What Octez's commit_genesis does after patch_context.
                let v = self.write(base, Op::Add { path: root_key(PROTOCOL_KEY), value: protocol });
                let status = test_chain_status_bytes(&TestChainStatus::NotRunning);
                let v = self.write(v, Op::Add { path: root_key(TEST_CHAIN_KEY), value: status });
                let h = commit_hash(&hash.hash).map_err(|e| self.fault(e))?;
                self.commit(v, time, GENESIS_MESSAGE.to_vec(), h, row)?;
            }
            Event::Commit { time, message, ctx, hash } => {
                let v = self.ctx(ctx).map_err(|why| self.fault(format!("the commit is of {why}")))?;
                let h = commit_hash(&hash.hash).map_err(|e| self.fault(e))?;
                // Octez commits with an empty message when given none.
                self.commit(v, *time, message.clone().unwrap_or_default(), h, row)?;
            }
            Event::ClearTestChain { .. } => {
                self.not_expressed(label, "removes a test chain's branch, not context content")
            }
            Event::Init { .. } => self.not_expressed(label, "opens the store; nothing to replay"),
            Event::Gc { .. } | Event::Split => self.not_expressed(label, "store maintenance, not context content"),
        }
        Ok(())
    }

    fn root_add(&mut self, ctx: &Tracked, out: &Tracked, label: &str, key: &[u8], value: Vec<u8>) {
        let op = Op::Add { path: root_key(key), value };
        self.ctx_write(ctx, out, label, |me, v| Ok(me.write(v, op)));
    }

    /// Writes the block whose commit is version `vc`.
    fn commit(&mut self, vc: VersionId, date: i64, message: Vec<u8>, hash: [u8; 32], row: &BlockRow) -> Result<()> {
        if !self.block.folds.is_empty() {
            return Err(self.fault("a commit inside a fold"));
        }
        let vs = &self.block.versions;
        // The chain from the checkout to the committed version.
        let mut chain = Vec::new();
        let mut v = vc;
        loop {
            let ver = &vs[v as usize];
            if let Some((event, why)) = &ver.poison {
                return Err(fault(
                    self.epoch,
                    *event,
                    format!("the committed context needs a write arbor traces cannot express: {why}"),
                ));
            }
            chain.push(v);
            match ver.parent {
                Some(p) => v = p,
                None => break,
            }
        }
        chain.reverse();
        let origin = vs[chain[0] as usize].origin.ok_or_else(|| self.fault("the committed context has no checkout"))?;
        let mut position = vec![usize::MAX; vs.len()];
        for (i, &v) in chain.iter().enumerate() {
            position[v as usize] = i;
        }
        let mut after: Vec<Vec<Op>> = (0..chain.len()).map(|_| Vec::new()).collect();
        let mut dropped = Vec::new();
        for r in std::mem::take(&mut self.block.reads) {
            // Up to the chain, as long as no write on the way touched the path read.
            let mut v = r.at;
            let placed = loop {
                let ver = &vs[v as usize];
                if position[v as usize] != usize::MAX {
                    break Some(position[v as usize]);
                }
                if ver.wrote.as_deref().is_some_and(|w| overlaps(w, &r.path)) || ver.poison.is_some() {
                    break None;
                }
                match ver.parent {
                    Some(p) => v = p,
                    None => break None,
                }
            };
            match placed {
                Some(i) => after[i].push(r.op),
                None => dropped.push(r.label),
            }
        }
        for label in dropped {
            self.not_expressed(label, "read a context no commit kept, after a write it saw");
        }
        let vs = &mut self.block.versions;
        let written = vs.iter().filter(|v| v.op.is_some()).count() as u64;
        let mut enc = BlockEncoder::new();
        for (i, reads) in after.into_iter().enumerate() {
            if let Some(op) = vs[chain[i] as usize].op.take() {
                enc.push(&op)?;
            }
            for op in reads {
                enc.push(&op)?;
            }
        }
        self.summary.undone_writes += written - (chain.len() as u64 - 1);
        let parent = match origin {
            Origin::Genesis => Parent::Genesis,
            Origin::Checkout(h) if self.last_commit == Some(h) => Parent::Previous,
            Origin::Checkout(h) => Parent::Hash(h),
        };
        let level = u64::try_from(row.level).map_err(|_| self.fault(format!("negative block level {}", row.level)))?;
        let transactions = u32::try_from(row.tzop_count_tx.max(0)).unwrap_or(u32::MAX);
        let commit = CommitRecord { date, message, author: OCTEZ_AUTHOR.to_vec(), hash: Some(hash) };
        self.pending_block = Some((level, transactions, parent, commit, enc));
        self.last_commit = Some(hash);
        self.block.committed = true;
        Ok(())
    }
}

/// A tree given whole, as a tree built in memory.
fn of_raw(raw: &Raw) -> TreeVal {
    fn leaves(raw: &Raw, at: &mut Path, t: TreeVal) -> TreeVal {
        match raw {
            Raw::Value(v) => t.with(at.clone(), Edit::Set(v.as_slice().into())),
            Raw::Tree(bindings) => bindings.iter().fold(t, |t, (step, sub)| {
                at.push(step.clone());
                let t = leaves(sub, at, t);
                at.pop();
                t
            }),
        }
    }
    match raw {
        Raw::Value(v) => TreeVal::of(Base::Value(v.as_slice().into())),
        Raw::Tree(_) => leaves(raw, &mut Vec::new(), TreeVal::of(Base::Empty)),
    }
}

/// A recorded commit hash: Octez records the raw 32 bytes.
fn commit_hash(recorded: &[u8]) -> std::result::Result<[u8; 32], String> {
    <[u8; 32]>::try_from(recorded).map_err(|_| format!("a commit hash of {} bytes (Octez's are 32)", recorded.len()))
}

/// Reads a replayable Octez context trace (`tezos-context-trace`'s `TezosRep` file) from
/// `input` and writes it to `output` as an arbor trace whose blocks carry the recorded commit
/// hashes, so that a replay checks them. `description` goes into the header.
///
/// What maps to what is in the module documentation and `docs/TRACE.md`; what cannot be
/// expressed is counted in the summary, and a block whose commit depends on it is refused.
pub fn import_context_trace<R: Read, W: Write>(
    input: R,
    output: W,
    description: &str,
) -> Result<(W, ContextImportSummary)> {
    let mut reader = ContextTraceReader::new(input)?;
    let header = TraceHeader::new(Source::Recorded { description: description.to_string() }, InitialState::None);
    let mut writer = TraceWriter::new(output, &header)?;
    let mut imp = Importer {
        epoch: 0,
        event: 0,
        contexts: FxHashMap::default(),
        trees: FxHashMap::default(),
        block: BlockState::default(),
        summary: ContextImportSummary { header_blocks: reader.header().block_count, ..Default::default() },
        last_commit: None,
        pending_block: None,
    };
    // A row that ended before its commit: only the last row may (a recording cut short).
    let mut open_row: Option<(u64, u64)> = None;
    while let Some(row) = reader.next_row_or_cut()? {
        let index = reader.rows_read() - 1;
        if let Some((block, events)) = open_row {
            return Err(fault(block, events, "the row ends without a commit, and more rows follow"));
        }
        imp.epoch = index;
        imp.block = BlockState::default();
        imp.summary.rows += 1;
        for (i, e) in row.ops.iter().enumerate() {
            imp.event = i as u64;
            imp.summary.events += 1;
            imp.event(e, &row)?;
        }
        match imp.pending_block.take() {
            Some((level, transactions, parent, commit, enc)) => {
                writer.write_encoded(level, transactions, parent, &commit, &enc)?;
                imp.summary.blocks += 1;
                imp.summary.hashes += 1;
                imp.summary.ops += enc.op_count();
            }
            None => open_row = Some((index, row.ops.len() as u64)),
        }
    }
    if let Some((_, events)) = open_row {
        imp.summary.unfinished_events = events;
    }
    imp.summary.cut_row = reader.ended_inside_a_row();
    Ok((writer.finish()?, imp.summary))
}
