//! The rows of a replayable Octez context trace (`tezos-context-trace`, module
//! `Replay_actions`, version 0) and their binary form.
//!
//! Every type below mirrors one OCaml type of that module, in the same order of cases and
//! fields, and is read and written in `Repr`'s binary form (see `crate::repr`); the byte
//! layout is in `docs/TRACE.md`, "Importing Octez context traces".

use crate::format::DecodeResult;
use crate::repr::{
    boolean, case, int, int64, key, option, put_bool, put_case, put_int, put_int64, put_key, put_option, put_str, str,
};
use crate::types::Path;
use arbor_core::toolbox::Cursor;

/// Whether a tracked object (tree, context, commit hash) is used again later in the trace.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ScopeEnd {
    /// This is its last occurrence: a replayer may forget it.
    LastOccurrence,
    /// It occurs again later.
    WillReoccur,
}

/// A tree or a context, named by the number the recorder gave it ("tracker").
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Tracked {
    /// Whether it occurs again.
    pub scope: ScopeEnd,
    /// Its tracker.
    pub id: i64,
}

/// Whether a commit hash passed to the context was made earlier in the trace.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StartIn {
    /// A commit of the trace made it.
    Instantiated,
    /// Not made in the trace: it was in the store before the recording started.
    NotInstantiated,
}

/// Whether a commit hash the context returns was already returned earlier in the trace.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StartOut {
    /// First time.
    FirstInstantiation,
    /// An earlier commit had the same hash.
    Reinstantiation,
}

/// A commit hash passed to the context (raw bytes: 32 for Octez).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct HashIn {
    /// Whether the trace made it.
    pub start: StartIn,
    /// Whether it occurs again.
    pub end: ScopeEnd,
    /// The hash's raw bytes.
    pub hash: Vec<u8>,
}

/// A commit hash the context returned (raw bytes: 32 for Octez).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct HashOut {
    /// Whether it was returned before.
    pub start: StartOut,
    /// Whether it occurs again.
    pub end: ScopeEnd,
    /// The hash's raw bytes.
    pub hash: Vec<u8>,
}

/// The `depth` argument of `fold`: which relative depths it visits (0 is the folded tree).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Depth {
    /// Exactly this depth.
    Eq(i64),
    /// This depth and deeper.
    Ge(i64),
    /// Deeper than this.
    Gt(i64),
    /// This depth and shallower.
    Le(i64),
    /// Shallower than this.
    Lt(i64),
}

/// The `order` argument of `fold`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Order {
    /// Steps in increasing order.
    Sorted,
    /// Any order.
    Undefined,
}

/// A tree given whole (`Tree.of_raw`).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Raw {
    /// A value.
    Value(Vec<u8>),
    /// A directory: its bindings.
    Tree(Vec<(Vec<u8>, Raw)>),
}

/// What `Tree.kind` answered.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// A directory.
    Tree,
    /// A value.
    Value,
}

/// Octez's test chain status, with hashes as raw bytes.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum TestChainStatus {
    /// No test chain.
    NotRunning,
    /// A test chain is being set up.
    Forking {
        /// Protocol hash (32 bytes).
        protocol: Vec<u8>,
        /// Expiration, seconds since the epoch.
        expiration: i64,
    },
    /// A test chain is running.
    Running {
        /// Chain id (4 bytes).
        chain_id: Vec<u8>,
        /// Genesis block hash (32 bytes).
        genesis: Vec<u8>,
        /// Protocol hash (32 bytes).
        protocol: Vec<u8>,
        /// Expiration, seconds since the epoch.
        expiration: i64,
    },
}

/// A call on a tree (`Context.Tree.*`). Results the recorder does not keep are absent.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum TreeEvent {
    /// `Tree.empty ctx`.
    Empty {
        /// The context passed.
        ctx: Tracked,
        /// The tree made.
        out: Tracked,
    },
    /// `Tree.of_value ctx value`.
    OfValue {
        /// The context passed.
        ctx: Tracked,
        /// The value.
        value: Vec<u8>,
        /// The tree made.
        out: Tracked,
    },
    /// `Tree.of_raw raw`.
    OfRaw {
        /// The tree given.
        raw: Raw,
        /// The tree made.
        out: Tracked,
    },
    /// `Tree.mem tree key`.
    Mem {
        /// Tree read.
        tree: Tracked,
        /// Path tested.
        key: Path,
        /// The answer.
        result: bool,
    },
    /// `Tree.mem_tree tree key`.
    MemTree {
        /// Tree read.
        tree: Tracked,
        /// Path tested.
        key: Path,
        /// The answer.
        result: bool,
    },
    /// `Tree.find tree key`: whether a value was found.
    Find {
        /// Tree read.
        tree: Tracked,
        /// Path read.
        key: Path,
        /// Whether a value was found.
        found: bool,
    },
    /// `Tree.is_empty tree`.
    IsEmpty {
        /// Tree tested.
        tree: Tracked,
        /// The answer.
        result: bool,
    },
    /// `Tree.kind tree`.
    Kind {
        /// Tree tested.
        tree: Tracked,
        /// The answer.
        result: Kind,
    },
    /// `Tree.hash tree` (the hash is not recorded).
    Hash {
        /// Tree hashed.
        tree: Tracked,
    },
    /// `Tree.equal a b`.
    Equal {
        /// First tree.
        a: Tracked,
        /// Second tree.
        b: Tracked,
        /// The answer.
        result: bool,
    },
    /// `Tree.to_value tree`: whether it is a value.
    ToValue {
        /// Tree read.
        tree: Tracked,
        /// Whether a value came back.
        found: bool,
    },
    /// `Tree.clear ?depth tree` (drops cached data; no effect on content).
    Clear {
        /// The depth argument.
        depth: Option<i64>,
        /// Tree cleared.
        tree: Tracked,
    },
    /// `Tree.find_tree tree key`.
    FindTree {
        /// Tree read.
        tree: Tracked,
        /// Path read.
        key: Path,
        /// The subtree found, if any.
        out: Option<Tracked>,
    },
    /// `Tree.add tree key value`.
    Add {
        /// Tree changed.
        tree: Tracked,
        /// Path written.
        key: Path,
        /// The value.
        value: Vec<u8>,
        /// The tree made.
        out: Tracked,
    },
    /// `Tree.add_tree tree key sub`.
    AddTree {
        /// Tree changed.
        tree: Tracked,
        /// Path written.
        key: Path,
        /// The tree grafted.
        sub: Tracked,
        /// The tree made.
        out: Tracked,
    },
    /// `Tree.remove tree key`.
    Remove {
        /// Tree changed.
        tree: Tracked,
        /// Path removed.
        key: Path,
        /// The tree made.
        out: Tracked,
    },
    /// `Tree.fold ?depth tree key` starts: one `FoldStepEnter` … `FoldStepExit` per entry
    /// visited follows, then `FoldEnd`.
    FoldStart {
        /// The depth argument.
        depth: Option<Depth>,
        /// The order argument.
        order: Order,
        /// Tree folded.
        tree: Tracked,
        /// Path folded, relative to the tree.
        key: Path,
    },
    /// The fold calls its function on an entry (whose step is not recorded).
    FoldStepEnter(Tracked),
    /// The function returns.
    FoldStepExit(Tracked),
    /// The fold ends, having visited this many entries.
    FoldEnd(i64),
}

/// One call on the context (`Context.*`) or its index, as the recorder saw it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Event {
    /// A call on a tree.
    Tree(TreeEvent),
    /// `find_tree ctx key`.
    FindTree {
        /// Context read.
        ctx: Tracked,
        /// Path read.
        key: Path,
        /// The tree found, if any.
        out: Option<Tracked>,
    },
    /// `fold ?depth ctx key` starts (see [`TreeEvent::FoldStart`]).
    FoldStart {
        /// The depth argument.
        depth: Option<Depth>,
        /// The order argument.
        order: Order,
        /// Context folded.
        ctx: Tracked,
        /// Path folded.
        key: Path,
    },
    /// The fold calls its function on an entry.
    FoldStepEnter(Tracked),
    /// The function returns.
    FoldStepExit(Tracked),
    /// The fold ends.
    FoldEnd,
    /// `add_tree ctx key tree`.
    AddTree {
        /// Context changed.
        ctx: Tracked,
        /// Path written.
        key: Path,
        /// The tree grafted.
        tree: Tracked,
        /// The context made.
        out: Tracked,
    },
    /// `mem ctx key`.
    Mem {
        /// Context read.
        ctx: Tracked,
        /// Path tested.
        key: Path,
        /// The answer.
        result: bool,
    },
    /// `mem_tree ctx key`.
    MemTree {
        /// Context read.
        ctx: Tracked,
        /// Path tested.
        key: Path,
        /// The answer.
        result: bool,
    },
    /// `find ctx key`: whether a value was found.
    Find {
        /// Context read.
        ctx: Tracked,
        /// Path read.
        key: Path,
        /// Whether a value was found.
        found: bool,
    },
    /// `get_protocol ctx` (the answer is not recorded).
    GetProtocol {
        /// Context read.
        ctx: Tracked,
    },
    /// `hash ~time ?message ctx`: the hash a commit would get (not recorded).
    Hash {
        /// Commit date, seconds since the epoch.
        time: i64,
        /// Commit message.
        message: Option<Vec<u8>>,
        /// Context hashed.
        ctx: Tracked,
    },
    /// `find_predecessor_block_metadata_hash ctx` (the answer is not recorded).
    FindPredecessorBlockMetadataHash {
        /// Context read.
        ctx: Tracked,
    },
    /// `find_predecessor_ops_metadata_hash ctx` (the answer is not recorded).
    FindPredecessorOpsMetadataHash {
        /// Context read.
        ctx: Tracked,
    },
    /// `get_test_chain ctx` (the answer is not recorded).
    GetTestChain {
        /// Context read.
        ctx: Tracked,
    },
    /// `exists index hash`.
    Exists {
        /// The commit asked about.
        hash: HashIn,
        /// The answer.
        result: bool,
    },
    /// `add ctx key value`.
    Add {
        /// Context changed.
        ctx: Tracked,
        /// Path written.
        key: Path,
        /// The value.
        value: Vec<u8>,
        /// The context made.
        out: Tracked,
    },
    /// `remove ctx key`.
    Remove {
        /// Context changed.
        ctx: Tracked,
        /// Path removed.
        key: Path,
        /// The context made.
        out: Tracked,
    },
    /// `add_protocol ctx hash`.
    AddProtocol {
        /// Context changed.
        ctx: Tracked,
        /// Protocol hash (32 bytes).
        hash: Vec<u8>,
        /// The context made.
        out: Tracked,
    },
    /// `add_predecessor_block_metadata_hash ctx hash`.
    AddPredecessorBlockMetadataHash {
        /// Context changed.
        ctx: Tracked,
        /// The hash (32 bytes).
        hash: Vec<u8>,
        /// The context made.
        out: Tracked,
    },
    /// `add_predecessor_ops_metadata_hash ctx hash`.
    AddPredecessorOpsMetadataHash {
        /// Context changed.
        ctx: Tracked,
        /// The hash (32 bytes).
        hash: Vec<u8>,
        /// The context made.
        out: Tracked,
    },
    /// `add_test_chain ctx status`.
    AddTestChain {
        /// Context changed.
        ctx: Tracked,
        /// The status.
        status: TestChainStatus,
        /// The context made.
        out: Tracked,
    },
    /// `remove_test_chain ctx`.
    RemoveTestChain {
        /// Context changed.
        ctx: Tracked,
        /// The context made.
        out: Tracked,
    },
    /// `fork_test_chain ctx ~protocol ~expiration`.
    ForkTestChain {
        /// Context changed.
        ctx: Tracked,
        /// Protocol hash (32 bytes).
        protocol: Vec<u8>,
        /// Expiration, seconds since the epoch.
        expiration: i64,
        /// The context made.
        out: Tracked,
    },
    /// `checkout index hash`.
    Checkout {
        /// The commit checked out.
        hash: HashIn,
        /// The context made.
        out: Tracked,
    },
    /// `commit_genesis` starts.
    CommitGenesisStart {
        /// Chain id (4 bytes).
        chain_id: Vec<u8>,
        /// Genesis date, seconds since the epoch.
        time: i64,
        /// Genesis protocol hash (32 bytes).
        protocol: Vec<u8>,
    },
    /// `commit_genesis` returns the genesis commit's hash.
    CommitGenesisEnd {
        /// The hash.
        hash: HashOut,
    },
    /// `clear_test_chain index chain_id`.
    ClearTestChain {
        /// Chain id (4 bytes).
        chain_id: Vec<u8>,
    },
    /// `commit ~time ?message ctx`.
    Commit {
        /// Commit date, seconds since the epoch.
        time: i64,
        /// Commit message.
        message: Option<Vec<u8>>,
        /// Context committed.
        ctx: Tracked,
        /// The commit's hash.
        hash: HashOut,
    },
    /// `init` opens the index.
    Init {
        /// Whether read-only.
        readonly: bool,
    },
    /// The genesis `patch_context` callback starts on this (empty) context.
    PatchContextEnter(Tracked),
    /// The callback returns.
    PatchContextExit {
        /// The context it was given.
        ctx: Tracked,
        /// The context it returned.
        out: Tracked,
    },
    /// `gc index hash`.
    Gc {
        /// The commit kept.
        hash: HashIn,
    },
    /// `split index`.
    Split,
}

/// One row: a block's events, from its checkout (or `init` and genesis) to its commit.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BlockRow {
    /// Block level.
    pub level: i64,
    /// Operations in the block (from block explorers' figures; 0 when unknown).
    pub tzop_count: i64,
    /// Transactions among them.
    pub tzop_count_tx: i64,
    /// Contract calls among them.
    pub tzop_count_contract: i64,
    /// Gas used.
    pub tz_gas_used: i64,
    /// Storage size.
    pub tz_storage_size: i64,
    /// Cycle snapshot index.
    pub tz_cycle_snapshot: i64,
    /// Block timestamp.
    pub tz_time: i64,
    /// Seconds since the previous block.
    pub tz_solvetime: i64,
    /// The events, in order.
    pub ops: Vec<Event>,
    /// Whether the genesis commit of this block ran `patch_context`.
    pub uses_patch_context: bool,
}

/// The file's header.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Header {
    /// Level and commit hash the recording started from, if not genesis.
    pub initial_block: Option<(i64, Vec<u8>)>,
    /// Level and commit hash of the last block.
    pub last_block: (i64, Vec<u8>),
    /// Number of rows (blocks).
    pub block_count: i64,
}

// --- encoding -------------------------------------------------------------------------

fn put_scope_end(buf: &mut Vec<u8>, s: ScopeEnd) {
    put_case(buf, if s == ScopeEnd::LastOccurrence { 0 } else { 1 });
}

fn put_tracked(buf: &mut Vec<u8>, t: &Tracked) {
    put_scope_end(buf, t.scope);
    put_int(buf, t.id);
}

fn put_hash_in(buf: &mut Vec<u8>, h: &HashIn) {
    put_case(buf, if h.start == StartIn::Instantiated { 0 } else { 1 });
    put_scope_end(buf, h.end);
    put_str(buf, &h.hash);
}

fn put_hash_out(buf: &mut Vec<u8>, h: &HashOut) {
    put_case(buf, if h.start == StartOut::FirstInstantiation { 0 } else { 1 });
    put_scope_end(buf, h.end);
    put_str(buf, &h.hash);
}

fn put_depth(buf: &mut Vec<u8>, d: &Depth) {
    let (case, n) = match *d {
        Depth::Eq(n) => (0, n),
        Depth::Ge(n) => (1, n),
        Depth::Gt(n) => (2, n),
        Depth::Le(n) => (3, n),
        Depth::Lt(n) => (4, n),
    };
    put_case(buf, case);
    put_int(buf, n);
}

fn put_fold_args(buf: &mut Vec<u8>, depth: &Option<Depth>, order: Order) {
    put_option(buf, depth, put_depth);
    put_case(buf, if order == Order::Sorted { 0 } else { 1 });
}

fn put_raw(buf: &mut Vec<u8>, raw: &Raw) {
    match raw {
        Raw::Value(v) => {
            put_case(buf, 0);
            put_str(buf, v);
        }
        Raw::Tree(bindings) => {
            put_case(buf, 1);
            put_case(buf, bindings.len() as u64);
            for (step, sub) in bindings {
                put_str(buf, step);
                put_raw(buf, sub);
            }
        }
    }
}

fn put_status(buf: &mut Vec<u8>, s: &TestChainStatus) {
    match s {
        TestChainStatus::NotRunning => put_case(buf, 0),
        TestChainStatus::Forking { protocol, expiration } => {
            put_case(buf, 1);
            put_str(buf, protocol);
            put_int64(buf, *expiration);
        }
        TestChainStatus::Running { chain_id, genesis, protocol, expiration } => {
            put_case(buf, 2);
            put_str(buf, chain_id);
            put_str(buf, genesis);
            put_str(buf, protocol);
            put_int64(buf, *expiration);
        }
    }
}

impl TreeEvent {
    /// Appends the event's binary form.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            TreeEvent::Empty { ctx, out } => {
                put_case(buf, 0);
                put_tracked(buf, ctx);
                put_tracked(buf, out);
            }
            TreeEvent::OfValue { ctx, value, out } => {
                put_case(buf, 1);
                put_tracked(buf, ctx);
                put_str(buf, value);
                put_tracked(buf, out);
            }
            TreeEvent::OfRaw { raw, out } => {
                put_case(buf, 2);
                put_raw(buf, raw);
                put_tracked(buf, out);
            }
            TreeEvent::Mem { tree, key, result: r }
            | TreeEvent::MemTree { tree, key, result: r }
            | TreeEvent::Find { tree, key, found: r } => {
                put_case(buf, self.case());
                put_tracked(buf, tree);
                put_key(buf, key);
                put_bool(buf, *r);
            }
            TreeEvent::IsEmpty { tree, result: r } | TreeEvent::ToValue { tree, found: r } => {
                put_case(buf, self.case());
                put_tracked(buf, tree);
                put_bool(buf, *r);
            }
            TreeEvent::Kind { tree, result } => {
                put_case(buf, 7);
                put_tracked(buf, tree);
                put_case(buf, if *result == Kind::Tree { 0 } else { 1 });
            }
            TreeEvent::Hash { tree } => {
                put_case(buf, 8);
                put_tracked(buf, tree);
            }
            TreeEvent::Equal { a, b, result } => {
                put_case(buf, 9);
                put_tracked(buf, a);
                put_tracked(buf, b);
                put_bool(buf, *result);
            }
            TreeEvent::Clear { depth, tree } => {
                put_case(buf, 11);
                put_option(buf, depth, |b, d| put_int(b, *d));
                put_tracked(buf, tree);
            }
            TreeEvent::FindTree { tree, key, out } => {
                put_case(buf, 12);
                put_tracked(buf, tree);
                put_key(buf, key);
                put_option(buf, out, put_tracked);
            }
            TreeEvent::Add { tree, key, value, out } => {
                put_case(buf, 13);
                put_tracked(buf, tree);
                put_key(buf, key);
                put_str(buf, value);
                put_tracked(buf, out);
            }
            TreeEvent::AddTree { tree, key, sub, out } => {
                put_case(buf, 14);
                put_tracked(buf, tree);
                put_key(buf, key);
                put_tracked(buf, sub);
                put_tracked(buf, out);
            }
            TreeEvent::Remove { tree, key, out } => {
                put_case(buf, 15);
                put_tracked(buf, tree);
                put_key(buf, key);
                put_tracked(buf, out);
            }
            TreeEvent::FoldStart { depth, order, tree, key } => {
                put_case(buf, 16);
                put_fold_args(buf, depth, *order);
                put_tracked(buf, tree);
                put_key(buf, key);
            }
            TreeEvent::FoldStepEnter(t) | TreeEvent::FoldStepExit(t) => {
                put_case(buf, self.case());
                put_tracked(buf, t);
            }
            TreeEvent::FoldEnd(n) => {
                put_case(buf, 19);
                put_int(buf, *n);
            }
        }
    }

    /// The case number of this event in the `Tree.t` variant.
    fn case(&self) -> u64 {
        match self {
            TreeEvent::Empty { .. } => 0,
            TreeEvent::OfValue { .. } => 1,
            TreeEvent::OfRaw { .. } => 2,
            TreeEvent::Mem { .. } => 3,
            TreeEvent::MemTree { .. } => 4,
            TreeEvent::Find { .. } => 5,
            TreeEvent::IsEmpty { .. } => 6,
            TreeEvent::Kind { .. } => 7,
            TreeEvent::Hash { .. } => 8,
            TreeEvent::Equal { .. } => 9,
            TreeEvent::ToValue { .. } => 10,
            TreeEvent::Clear { .. } => 11,
            TreeEvent::FindTree { .. } => 12,
            TreeEvent::Add { .. } => 13,
            TreeEvent::AddTree { .. } => 14,
            TreeEvent::Remove { .. } => 15,
            TreeEvent::FoldStart { .. } => 16,
            TreeEvent::FoldStepEnter(_) => 17,
            TreeEvent::FoldStepExit(_) => 18,
            TreeEvent::FoldEnd(_) => 19,
        }
    }

    /// The OCaml name of the call, as reports print it (`Tree.find` …).
    pub fn name(&self) -> &'static str {
        const NAMES: [&str; 20] = [
            "Tree.empty",
            "Tree.of_value",
            "Tree.of_raw",
            "Tree.mem",
            "Tree.mem_tree",
            "Tree.find",
            "Tree.is_empty",
            "Tree.kind",
            "Tree.hash",
            "Tree.equal",
            "Tree.to_value",
            "Tree.clear",
            "Tree.find_tree",
            "Tree.add",
            "Tree.add_tree",
            "Tree.remove",
            "Tree.fold",
            "Tree.fold (step)",
            "Tree.fold (step end)",
            "Tree.fold (end)",
        ];
        NAMES[self.case() as usize]
    }

    fn decode(c: &mut Cursor<'_>) -> DecodeResult<TreeEvent> {
        Ok(match case(c)? {
            0 => TreeEvent::Empty { ctx: tracked(c)?, out: tracked(c)? },
            1 => TreeEvent::OfValue { ctx: tracked(c)?, value: str(c)?, out: tracked(c)? },
            2 => TreeEvent::OfRaw { raw: raw(c, 0)?, out: tracked(c)? },
            3 => TreeEvent::Mem { tree: tracked(c)?, key: key(c)?, result: boolean(c)? },
            4 => TreeEvent::MemTree { tree: tracked(c)?, key: key(c)?, result: boolean(c)? },
            5 => TreeEvent::Find { tree: tracked(c)?, key: key(c)?, found: boolean(c)? },
            6 => TreeEvent::IsEmpty { tree: tracked(c)?, result: boolean(c)? },
            7 => TreeEvent::Kind {
                tree: tracked(c)?,
                result: match case(c)? {
                    0 => Kind::Tree,
                    1 => Kind::Value,
                    _ => return Err("unknown kind (expected 0 `Tree or 1 `Value)"),
                },
            },
            8 => TreeEvent::Hash { tree: tracked(c)? },
            9 => TreeEvent::Equal { a: tracked(c)?, b: tracked(c)?, result: boolean(c)? },
            10 => TreeEvent::ToValue { tree: tracked(c)?, found: boolean(c)? },
            11 => TreeEvent::Clear { depth: option(c, int)?, tree: tracked(c)? },
            12 => TreeEvent::FindTree { tree: tracked(c)?, key: key(c)?, out: option(c, tracked)? },
            13 => TreeEvent::Add { tree: tracked(c)?, key: key(c)?, value: str(c)?, out: tracked(c)? },
            14 => TreeEvent::AddTree { tree: tracked(c)?, key: key(c)?, sub: tracked(c)?, out: tracked(c)? },
            15 => TreeEvent::Remove { tree: tracked(c)?, key: key(c)?, out: tracked(c)? },
            16 => {
                let (depth, order) = fold_args(c)?;
                TreeEvent::FoldStart { depth, order, tree: tracked(c)?, key: key(c)? }
            }
            17 => TreeEvent::FoldStepEnter(tracked(c)?),
            18 => TreeEvent::FoldStepExit(tracked(c)?),
            19 => TreeEvent::FoldEnd(int(c)?),
            _ => return Err("unknown tree event (expected case 0-19)"),
        })
    }
}

impl Event {
    /// Appends the event's binary form.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        put_case(buf, self.case());
        match self {
            Event::Tree(t) => t.encode(buf),
            Event::FindTree { ctx, key, out } => {
                put_tracked(buf, ctx);
                put_key(buf, key);
                put_option(buf, out, put_tracked);
            }
            Event::FoldStart { depth, order, ctx, key } => {
                put_fold_args(buf, depth, *order);
                put_tracked(buf, ctx);
                put_key(buf, key);
            }
            Event::FoldStepEnter(t) | Event::FoldStepExit(t) | Event::PatchContextEnter(t) => put_tracked(buf, t),
            Event::FoldEnd | Event::Split => {}
            Event::AddTree { ctx, key, tree, out } => {
                put_tracked(buf, ctx);
                put_key(buf, key);
                put_tracked(buf, tree);
                put_tracked(buf, out);
            }
            Event::Mem { ctx, key, result: r }
            | Event::MemTree { ctx, key, result: r }
            | Event::Find { ctx, key, found: r } => {
                put_tracked(buf, ctx);
                put_key(buf, key);
                put_bool(buf, *r);
            }
            Event::GetProtocol { ctx }
            | Event::FindPredecessorBlockMetadataHash { ctx }
            | Event::FindPredecessorOpsMetadataHash { ctx }
            | Event::GetTestChain { ctx } => put_tracked(buf, ctx),
            Event::Hash { time, message, ctx } => {
                put_int64(buf, *time);
                put_option(buf, message, |b, m| put_str(b, m));
                put_tracked(buf, ctx);
            }
            Event::Exists { hash, result } => {
                put_hash_in(buf, hash);
                put_bool(buf, *result);
            }
            Event::Add { ctx, key, value, out } => {
                put_tracked(buf, ctx);
                put_key(buf, key);
                put_str(buf, value);
                put_tracked(buf, out);
            }
            Event::Remove { ctx, key, out } => {
                put_tracked(buf, ctx);
                put_key(buf, key);
                put_tracked(buf, out);
            }
            Event::AddProtocol { ctx, hash, out }
            | Event::AddPredecessorBlockMetadataHash { ctx, hash, out }
            | Event::AddPredecessorOpsMetadataHash { ctx, hash, out } => {
                put_tracked(buf, ctx);
                put_str(buf, hash);
                put_tracked(buf, out);
            }
            Event::AddTestChain { ctx, status, out } => {
                put_tracked(buf, ctx);
                put_status(buf, status);
                put_tracked(buf, out);
            }
            Event::RemoveTestChain { ctx, out } | Event::PatchContextExit { ctx, out } => {
                put_tracked(buf, ctx);
                put_tracked(buf, out);
            }
            Event::ForkTestChain { ctx, protocol, expiration, out } => {
                put_tracked(buf, ctx);
                put_str(buf, protocol);
                put_int64(buf, *expiration);
                put_tracked(buf, out);
            }
            Event::Checkout { hash, out } => {
                put_hash_in(buf, hash);
                put_tracked(buf, out);
            }
            Event::CommitGenesisStart { chain_id, time, protocol } => {
                put_str(buf, chain_id);
                put_int64(buf, *time);
                put_str(buf, protocol);
            }
            Event::CommitGenesisEnd { hash } => put_hash_out(buf, hash),
            Event::ClearTestChain { chain_id } => put_str(buf, chain_id),
            Event::Commit { time, message, ctx, hash } => {
                put_int64(buf, *time);
                put_option(buf, message, |b, m| put_str(b, m));
                put_tracked(buf, ctx);
                put_hash_out(buf, hash);
            }
            Event::Init { readonly } => put_bool(buf, *readonly),
            Event::Gc { hash } => put_hash_in(buf, hash),
        }
    }

    /// The case number of this event in the `event` variant.
    fn case(&self) -> u64 {
        match self {
            Event::Tree(_) => 0,
            Event::FindTree { .. } => 1,
            Event::FoldStart { .. } => 2,
            Event::FoldStepEnter(_) => 3,
            Event::FoldStepExit(_) => 4,
            Event::FoldEnd => 5,
            Event::AddTree { .. } => 6,
            Event::Mem { .. } => 7,
            Event::MemTree { .. } => 8,
            Event::Find { .. } => 9,
            Event::GetProtocol { .. } => 10,
            Event::Hash { .. } => 11,
            Event::FindPredecessorBlockMetadataHash { .. } => 12,
            Event::FindPredecessorOpsMetadataHash { .. } => 13,
            Event::GetTestChain { .. } => 14,
            Event::Exists { .. } => 15,
            Event::Add { .. } => 16,
            Event::Remove { .. } => 17,
            Event::AddProtocol { .. } => 18,
            Event::AddPredecessorBlockMetadataHash { .. } => 19,
            Event::AddPredecessorOpsMetadataHash { .. } => 20,
            Event::AddTestChain { .. } => 21,
            Event::RemoveTestChain { .. } => 22,
            Event::ForkTestChain { .. } => 23,
            Event::Checkout { .. } => 24,
            Event::CommitGenesisStart { .. } => 25,
            Event::CommitGenesisEnd { .. } => 26,
            Event::ClearTestChain { .. } => 27,
            Event::Commit { .. } => 28,
            Event::Init { .. } => 29,
            Event::PatchContextEnter(_) => 30,
            Event::PatchContextExit { .. } => 31,
            Event::Gc { .. } => 32,
            Event::Split => 33,
        }
    }

    /// The OCaml name of the call, as reports print it (`find`, `Tree.hash` …).
    pub fn name(&self) -> &'static str {
        const NAMES: [&str; 34] = [
            "Tree",
            "find_tree",
            "fold",
            "fold (step)",
            "fold (step end)",
            "fold (end)",
            "add_tree",
            "mem",
            "mem_tree",
            "find",
            "get_protocol",
            "hash",
            "find_predecessor_block_metadata_hash",
            "find_predecessor_ops_metadata_hash",
            "get_test_chain",
            "exists",
            "add",
            "remove",
            "add_protocol",
            "add_predecessor_block_metadata_hash",
            "add_predecessor_ops_metadata_hash",
            "add_test_chain",
            "remove_test_chain",
            "fork_test_chain",
            "checkout",
            "commit_genesis (start)",
            "commit_genesis (end)",
            "clear_test_chain",
            "commit",
            "init",
            "patch_context (start)",
            "patch_context (end)",
            "gc",
            "split",
        ];
        match self {
            Event::Tree(t) => t.name(),
            _ => NAMES[self.case() as usize],
        }
    }

    fn decode(c: &mut Cursor<'_>) -> DecodeResult<Event> {
        Ok(match case(c)? {
            0 => Event::Tree(TreeEvent::decode(c)?),
            1 => Event::FindTree { ctx: tracked(c)?, key: key(c)?, out: option(c, tracked)? },
            2 => {
                let (depth, order) = fold_args(c)?;
                Event::FoldStart { depth, order, ctx: tracked(c)?, key: key(c)? }
            }
            3 => Event::FoldStepEnter(tracked(c)?),
            4 => Event::FoldStepExit(tracked(c)?),
            5 => Event::FoldEnd,
            6 => Event::AddTree { ctx: tracked(c)?, key: key(c)?, tree: tracked(c)?, out: tracked(c)? },
            7 => Event::Mem { ctx: tracked(c)?, key: key(c)?, result: boolean(c)? },
            8 => Event::MemTree { ctx: tracked(c)?, key: key(c)?, result: boolean(c)? },
            9 => Event::Find { ctx: tracked(c)?, key: key(c)?, found: boolean(c)? },
            10 => Event::GetProtocol { ctx: tracked(c)? },
            11 => Event::Hash { time: int64(c)?, message: option(c, str)?, ctx: tracked(c)? },
            12 => Event::FindPredecessorBlockMetadataHash { ctx: tracked(c)? },
            13 => Event::FindPredecessorOpsMetadataHash { ctx: tracked(c)? },
            14 => Event::GetTestChain { ctx: tracked(c)? },
            15 => Event::Exists { hash: hash_in(c)?, result: boolean(c)? },
            16 => Event::Add { ctx: tracked(c)?, key: key(c)?, value: str(c)?, out: tracked(c)? },
            17 => Event::Remove { ctx: tracked(c)?, key: key(c)?, out: tracked(c)? },
            18 => Event::AddProtocol { ctx: tracked(c)?, hash: str(c)?, out: tracked(c)? },
            19 => Event::AddPredecessorBlockMetadataHash { ctx: tracked(c)?, hash: str(c)?, out: tracked(c)? },
            20 => Event::AddPredecessorOpsMetadataHash { ctx: tracked(c)?, hash: str(c)?, out: tracked(c)? },
            21 => Event::AddTestChain { ctx: tracked(c)?, status: status(c)?, out: tracked(c)? },
            22 => Event::RemoveTestChain { ctx: tracked(c)?, out: tracked(c)? },
            23 => Event::ForkTestChain { ctx: tracked(c)?, protocol: str(c)?, expiration: int64(c)?, out: tracked(c)? },
            24 => Event::Checkout { hash: hash_in(c)?, out: tracked(c)? },
            25 => Event::CommitGenesisStart { chain_id: str(c)?, time: int64(c)?, protocol: str(c)? },
            26 => Event::CommitGenesisEnd { hash: hash_out(c)? },
            27 => Event::ClearTestChain { chain_id: str(c)? },
            28 => Event::Commit { time: int64(c)?, message: option(c, str)?, ctx: tracked(c)?, hash: hash_out(c)? },
            29 => Event::Init { readonly: boolean(c)? },
            30 => Event::PatchContextEnter(tracked(c)?),
            31 => Event::PatchContextExit { ctx: tracked(c)?, out: tracked(c)? },
            32 => Event::Gc { hash: hash_in(c)? },
            33 => Event::Split,
            _ => return Err("unknown event (expected case 0-33)"),
        })
    }
}

impl BlockRow {
    /// A row of these events, the explorer figures unknown (0), without `patch_context`.
    pub fn new(level: i64, ops: Vec<Event>) -> BlockRow {
        BlockRow {
            level,
            tzop_count: 0,
            tzop_count_tx: 0,
            tzop_count_contract: 0,
            tz_gas_used: 0,
            tz_storage_size: 0,
            tz_cycle_snapshot: 0,
            tz_time: 0,
            tz_solvetime: 0,
            ops,
            uses_patch_context: false,
        }
    }

    /// Appends the row's binary form (without its length prefix).
    pub fn encode(&self, buf: &mut Vec<u8>) {
        for n in [
            self.level,
            self.tzop_count,
            self.tzop_count_tx,
            self.tzop_count_contract,
            self.tz_gas_used,
            self.tz_storage_size,
            self.tz_cycle_snapshot,
            self.tz_time,
            self.tz_solvetime,
        ] {
            put_int(buf, n);
        }
        put_case(buf, self.ops.len() as u64);
        for e in &self.ops {
            e.encode(buf);
        }
        put_bool(buf, self.uses_patch_context);
    }

    /// Decodes one row, which must take exactly the whole of `bytes`; on failure, the index
    /// of the event at fault comes with the reason.
    pub fn decode(bytes: &[u8]) -> Result<BlockRow, (u64, &'static str)> {
        let mut c = Cursor::new(bytes);
        let mut fields = [0i64; 9];
        for f in &mut fields {
            *f = int(&mut c).map_err(|e| (0, e))?;
        }
        let n = c.count().map_err(|e| (0, e.as_str()))?;
        let mut ops = Vec::with_capacity(n.min(1 << 16));
        for i in 0..n {
            ops.push(Event::decode(&mut c).map_err(|e| (i as u64, e))?);
        }
        let uses_patch_context = boolean(&mut c).map_err(|e| (n as u64, e))?;
        if !c.is_empty() {
            return Err((n as u64, "the row is longer than its events"));
        }
        let [level, tzop_count, tzop_count_tx, tzop_count_contract, tz_gas_used, tz_storage_size, tz_cycle_snapshot, tz_time, tz_solvetime] =
            fields;
        Ok(BlockRow {
            level,
            tzop_count,
            tzop_count_tx,
            tzop_count_contract,
            tz_gas_used,
            tz_storage_size,
            tz_cycle_snapshot,
            tz_time,
            tz_solvetime,
            ops,
            uses_patch_context,
        })
    }
}

impl Header {
    /// Appends the header's binary form (without its length prefix).
    pub fn encode(&self, buf: &mut Vec<u8>) {
        put_option(buf, &self.initial_block, |b, (level, hash)| {
            put_int(b, *level);
            put_str(b, hash);
        });
        put_int(buf, self.last_block.0);
        put_str(buf, &self.last_block.1);
        put_int(buf, self.block_count);
    }

    /// Decodes the header, which must take exactly the whole of `bytes`.
    pub fn decode(bytes: &[u8]) -> DecodeResult<Header> {
        let mut c = Cursor::new(bytes);
        let initial_block = option(&mut c, |c| Ok((int(c)?, str(c)?)))?;
        let last_block = (int(&mut c)?, str(&mut c)?);
        let block_count = int(&mut c)?;
        if !c.is_empty() {
            return Err("the header is longer than its fields");
        }
        Ok(Header { initial_block, last_block, block_count })
    }
}

// --- decoding helpers -----------------------------------------------------------------

fn scope_end(c: &mut Cursor<'_>) -> DecodeResult<ScopeEnd> {
    match case(c)? {
        0 => Ok(ScopeEnd::LastOccurrence),
        1 => Ok(ScopeEnd::WillReoccur),
        _ => Err("unknown scope end (expected 0 Last_occurence or 1 Will_reoccur)"),
    }
}

fn tracked(c: &mut Cursor<'_>) -> DecodeResult<Tracked> {
    Ok(Tracked { scope: scope_end(c)?, id: int(c)? })
}

fn hash_in(c: &mut Cursor<'_>) -> DecodeResult<HashIn> {
    let start = match case(c)? {
        0 => StartIn::Instantiated,
        1 => StartIn::NotInstantiated,
        _ => return Err("unknown scope start (expected 0 Instanciated or 1 Not_instanciated)"),
    };
    Ok(HashIn { start, end: scope_end(c)?, hash: str(c)? })
}

fn hash_out(c: &mut Cursor<'_>) -> DecodeResult<HashOut> {
    let start = match case(c)? {
        0 => StartOut::FirstInstantiation,
        1 => StartOut::Reinstantiation,
        _ => return Err("unknown scope start (expected 0 First_instanciation or 1 Reinstanciation)"),
    };
    Ok(HashOut { start, end: scope_end(c)?, hash: str(c)? })
}

fn fold_args(c: &mut Cursor<'_>) -> DecodeResult<(Option<Depth>, Order)> {
    let depth = option(c, |c| {
        let case = case(c)?;
        let n = int(c)?;
        Ok(match case {
            0 => Depth::Eq(n),
            1 => Depth::Ge(n),
            2 => Depth::Gt(n),
            3 => Depth::Le(n),
            4 => Depth::Lt(n),
            _ => return Err("unknown depth (expected case 0-4)"),
        })
    })?;
    let order = match case(c)? {
        0 => Order::Sorted,
        1 => Order::Undefined,
        _ => return Err("unknown order (expected 0 `Sorted or 1 `Undefined)"),
    };
    Ok((depth, order))
}

/// Deepest `Raw` nesting read: far beyond any context path, and a bound on the stack a
/// hostile file can make the decoder use.
const MAX_RAW_DEPTH: u32 = 256;

fn raw(c: &mut Cursor<'_>, depth: u32) -> DecodeResult<Raw> {
    if depth > MAX_RAW_DEPTH {
        return Err("a raw tree nested too deeply");
    }
    match case(c)? {
        0 => Ok(Raw::Value(str(c)?)),
        1 => {
            let n = c.count()?;
            let mut bindings = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                bindings.push((str(c)?, raw(c, depth + 1)?));
            }
            Ok(Raw::Tree(bindings))
        }
        _ => Err("unknown raw tree (expected 0 `Value or 1 `Tree)"),
    }
}

fn status(c: &mut Cursor<'_>) -> DecodeResult<TestChainStatus> {
    Ok(match case(c)? {
        0 => TestChainStatus::NotRunning,
        1 => TestChainStatus::Forking { protocol: str(c)?, expiration: int64(c)? },
        2 => TestChainStatus::Running { chain_id: str(c)?, genesis: str(c)?, protocol: str(c)?, expiration: int64(c)? },
        _ => return Err("unknown test chain status (expected case 0-2)"),
    })
}
