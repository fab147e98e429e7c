//! The store: commits of trees in an append-only log (Tezos `Context.index` and its
//! `checkout` / `commit`).

mod appended;
mod budget;
mod catalog;
mod check;
mod commit_options;
mod crash;
mod gc;
mod helper;
mod index;
mod load;
mod open;
mod records_read;
mod recover;
mod repair;
mod weight;
mod write;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use arbor_core::{commit_hash, Hash};
use parking_lot::Mutex;

pub use crate::pack::fields::FieldBytes;
pub use appended::{Appended, KindBytes, RECORD_KIND_NAMES};
pub use check::{FsckReport, StoreStats};
pub use commit_options::CommitOptions;
#[cfg(any(test, feature = "crash-points"))]
pub use crash::arm_crash_point;
use crash::crash_point;
pub use crash::CrashPoint;
pub use gc::{GcHandle, GcMode, GcReport};
pub use records_read::RecordsRead;
pub use repair::RepairReport;
pub use write::WriteStats;

use crate::config::{Config, Durability};
use crate::error::{Error, Result};
use crate::io::LockGuard;
use crate::pack::control::Control;
use crate::pack::log::LogWriter;
use crate::pack::record::{kind, CommitBody, HeadBody};
use crate::tree::{Ctx, Ptr, Tree, MAX_HEIGHT};
use catalog::Catalog;
use load::Loader;
use write::Persister;
use writer::Writer;

/// What a commit records besides its tree (Tezos `Context.get_commit_info` and friends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    /// The commit's hash.
    pub hash: Hash,
    /// Hash of the committed tree.
    pub tree: Hash,
    /// Parent commit hashes, in the order given.
    pub parents: Vec<Hash>,
    /// Date in seconds (Tezos: the block timestamp).
    pub date: i64,
    /// Author (Tezos: `Tezos`).
    pub author: Vec<u8>,
    /// Message.
    pub message: Vec<u8>,
}

/// The tree of the writer's last commit, kept in memory for the next block.
#[derive(Debug)]
struct Working {
    hash: Hash,
    /// None once lent to a checkout (see [`Store::checkout`]).
    root: Option<Ptr>,
    /// The commit sequence number that wrote it.
    seq: u32,
    /// Whether that commit let go of its cold part already (a tree handed over,
    /// [`Store::commit_owned`]); else the checkout that lends it does.
    evicted: bool,
}

/// The tree a commit writes: lent by the caller, or handed over ([`Store::commit_owned`]).
enum Committing<'t> {
    Lent(&'t Tree),
    Given(Tree),
}

impl Committing<'_> {
    fn tree(&self) -> &Tree {
        match self {
            Committing::Lent(t) => t,
            Committing::Given(t) => t,
        }
    }
}

/// A commit that writes more records than this (a bulk load, an import) leaves no working
/// tree: keeping all it wrote in memory would not be bounded by anything.
const WORKING_MAX_RECORDS: u64 = 100_000;

/// Room the commit's hash input buffers (`Writer::hash_batch`, and the hashing helper's) keep
/// from one commit to the next: a block's largest rank of changed nodes in one part takes well
/// under this; a bulk load's (tens of MiB) is given back.
const HASH_BATCH_KEPT: usize = 1 << 20;

/// Everything a store's handles and trees share.
#[derive(Debug)]
pub(crate) struct Shared {
    dir: PathBuf,
    config: Config,
    loader: Arc<Loader>,
    /// The commits and heads.
    catalog: Catalog,
    writer: Mutex<Option<Writer>>,
    poisoned: AtomicBool,
    /// Garbage collection: the last one, and the one running.
    gc: gc::GcCoordinator,
    /// Serialises control file rewrites (the writer's and a collection's).
    control_lock: Mutex<()>,
    /// Generation of the last control file written.
    control_generation: std::sync::atomic::AtomicU64,
    /// The writer's last committed tree (see [`Config::working_commits`]).
    working: Mutex<Option<Working>>,
    /// The memory budget the working tree and the object cache share.
    budget: budget::Budget,
    _lock: Option<Box<dyn LockGuard>>,
}

/// A store of commits, opened on a directory. Cheap to clone; one clone may commit while
/// others read from other threads. Readers see only complete commits.
#[derive(Debug, Clone)]
pub struct Store {
    shared: Arc<Shared>,
    ctx: Arc<Ctx>,
}

impl Store {
    /// Opens (creating if missing) the store in `dir` with the default configuration.
    pub fn open(dir: impl AsRef<Path>) -> Result<Store> {
        Store::open_with(dir, Config::default())
    }

    /// Opens (creating if missing, unless read-only) the store in `dir`.
    pub fn open_with(dir: impl AsRef<Path>, config: Config) -> Result<Store> {
        open::open(dir.as_ref(), config)
    }

    /// Finds the longest intact history of a damaged store (a chunk cut short, a lost or
    /// damaged index or control file) and, with `apply`, cuts the log there and rewrites the
    /// index and control file to match; without it, changes nothing and reports the plan:
    /// what is kept, and each commit and head that would be dropped. Needs the directory's
    /// writer lock. A store that needs nothing is reported intact and left alone.
    pub fn repair(dir: impl AsRef<Path>, config: &Config, apply: bool) -> Result<RepairReport> {
        repair::repair(dir.as_ref(), config, apply)
    }

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// How many records this handle read from its log since it was opened: nodes and values
    /// it did not hold in memory or in its cache, with the older versions delta records are
    /// built on (copied out of the log's mapped files or read with a system call each:
    /// [`Config::mapped_reads`]).
    pub fn records_read(&self) -> u64 {
        self.shared.loader.log.records_read()
    }

    /// Of the records this handle read from its log since it was opened, those found, by kind.
    pub fn records_read_by_kind(&self) -> RecordsRead {
        RecordsRead::of(self.shared.loader.log.found_by_kind())
    }

    /// The configuration the store was opened with.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// The empty tree, for building a first commit (Tezos `Context.Tree.empty`).
    pub fn empty(&self) -> Tree {
        Tree::at(Ptr::dir(Arc::new(crate::tree::Dir::empty())), self.ctx.clone(), 0)
    }

    /// True if `hash` names a commit of this store that can be checked out (Tezos
    /// `Context.exists`); false for one dropped by garbage collection.
    pub fn contains(&self, hash: &Hash) -> bool {
        self.commit_offset(hash).is_ok()
    }

    fn commit_offset(&self, hash: &Hash) -> Result<u64> {
        let offset = self.shared.catalog.offset(hash).ok_or(Error::UnknownCommit(*hash))?;
        let gc = self.shared.loader.log.gc_view();
        if offset < gc.floor && !gc.archive {
            return Err(Error::CommitDropped { hash: *hash, kept_from: gc.floor });
        }
        Ok(offset)
    }

    fn read_commit(&self, offset: u64) -> Result<CommitBody> {
        // Through the loader, which retries a read that fails across a collection's switch:
        // a read-only handle may meet the commit's chunk hollowed out before it refreshes.
        let frame = self.shared.loader.read(offset)?;
        let (k, body) = frame.parts();
        let file = || self.shared.loader.file_of(offset);
        if k != kind::COMMIT {
            let kind = crate::error::Corruption::UnexpectedRecordKind { expected: "commit", found: k };
            return Err(Error::Corrupt { file: file(), offset, kind });
        }
        CommitBody::decode(body).map_err(|e| Error::Corrupt { file: file(), offset, kind: e.into() })
    }

    /// The tree of a commit (Tezos `Context.checkout`); its nodes load lazily.
    ///
    /// The writer's last commit comes back, once, as the tree it committed, with what the
    /// last few commits wrote still in memory (nodes older than [`Config::working_commits`]
    /// go to the cache first). The store lends that tree rather than sharing it: the caller's
    /// changes then happen in place, with no copy of each node on a changed path and no
    /// freeing of the old versions; committing the result makes it the working tree again.
    /// A second checkout of the same commit meanwhile reads it from the log and the cache.
    pub fn checkout(&self, hash: &Hash) -> Result<Tree> {
        let lent = self.shared.working.lock().as_mut().filter(|w| w.hash == *hash).and_then(|w| {
            let mut root = w.root.take()?;
            if !w.evicted {
                self.evict_working(&mut root, w.seq);
            }
            Some(root)
        });
        match lent {
            // Bounded as any tree read from a store: the working tree's bound is not kept.
            Some(root) => Ok(Tree::at(root, self.ctx.clone(), MAX_HEIGHT)),
            None => self.stored_tree(hash),
        }
    }

    /// Lets go of the cold part of the working tree `root`, written by commit `seq`: in one
    /// of `count` shares of the tree (`tree::Share`), the nodes that no commit of the last
    /// `working_commits` wrote. The shares are as many as the window's commits, but no more
    /// than a large directory's root inode has slots (32 in Tezos's shape: a share past the
    /// slots would have none), so every node is visited once every `count` commits, at most
    /// `working_commits + count` commits' writes stay in memory, no block walks all of them,
    /// and the weight of every share is known as of the last `count` commits.
    ///
    /// When the working tree holds more than three quarters of the memory budget
    /// (`Budget::pressed`), only what commit `seq` wrote stays in the share visited: the
    /// tree shrinks to what the last `count` commits wrote.
    fn evict_working(&self, root: &mut Ptr, seq: u32) {
        let window = self.shared.config.working_commits.max(1);
        if let Some(source) = &self.ctx.source {
            let count = window.min(self.ctx.cfg.entries);
            let kept = if self.shared.budget.pressed() { 1 } else { window };
            let share = crate::tree::Share { index: seq % count, count };
            let held = crate::tree::evict(root, seq.saturating_sub(kept - 1), share, source.as_ref());
            self.shared.budget.share_held(share, held, &self.shared.loader.cache);
        }
    }

    /// The tree of a commit as its records hold it: a pointer to its root record.
    fn stored_tree(&self, hash: &Hash) -> Result<Tree> {
        let offset = self.commit_offset(hash)?;
        let c = self.read_commit(offset)?;
        let tree_at = offset.checked_sub(c.tree_back).filter(|_| c.tree_back > 0).ok_or_else(|| Error::Corrupt {
            file: self.shared.loader.file_of(offset),
            offset,
            kind: crate::error::Corruption::DanglingOffset(offset.wrapping_sub(c.tree_back)),
        })?;
        // No commit holds a tree deeper than the maximum (`Tree::add_tree` refuses to build
        // one, snapshot import to read one); walks over a stored one refuse it all the same.
        Ok(Tree::at(load::root_ptr(tree_at, c.tree_hash), self.ctx.clone(), MAX_HEIGHT))
    }

    /// A commit's metadata.
    pub fn commit_info(&self, hash: &Hash) -> Result<CommitInfo> {
        let c = self.read_commit(self.commit_offset(hash)?)?;
        Ok(CommitInfo {
            hash: *hash,
            tree: c.tree_hash,
            parents: c.parents.iter().map(|p| p.0).collect(),
            date: c.date,
            author: c.author,
            message: c.message,
        })
    }

    /// The most recent commit, if any.
    pub fn last_commit(&self) -> Option<Hash> {
        self.shared.catalog.last().map(|c| c.0)
    }

    /// Every commit in the order they were written.
    pub fn commits(&self) -> Vec<Hash> {
        self.shared.catalog.order().into_iter().map(|c| c.0).collect()
    }

    /// Commits `tree` with the given parents and metadata and returns the commit hash
    /// (Tezos `Context.commit`). Returns once the commit is durable under the configured
    /// policy. Parents need not be in this store (their hashes are what counts).
    pub fn commit(&self, tree: &Tree, parents: &[Hash], date: i64, author: &str, message: &str) -> Result<Hash> {
        self.commit_with_stats(tree, parents, date, author.as_bytes(), message.as_bytes()).map(|(h, _)| h)
    }

    /// [`Store::commit`] with raw metadata bytes, also returning what was written.
    pub fn commit_with_stats(
        &self,
        tree: &Tree,
        parents: &[Hash],
        date: i64,
        author: &[u8],
        message: &[u8],
    ) -> Result<(Hash, WriteStats)> {
        self.check_committable(tree)?;
        self.shared.change(|w| self.write_commit(w, Committing::Lent(tree), parents, date, author, message))
    }

    /// [`Store::commit_with_stats`] of a tree the caller gives up, as a node does once a
    /// block's context is committed (its next block checks the commit out again).
    ///
    /// The store keeps a committed tree's nodes as its working tree, and the checkout that
    /// lends it back first lets go of its cold part ([`Store::checkout`]). That cannot happen
    /// while the caller holds the tree. Handed over, it happens inside the commit, on this
    /// thread, while the log's sync runs on another, where it would otherwise wait for the
    /// disk: about a millisecond a block on tezos-mainnet. What is durable when the commit
    /// returns does not change. The tree is gone even when the commit fails (a refused
    /// tree included): the caller checks the parent out again.
    pub fn commit_owned(
        &self,
        tree: Tree,
        parents: &[Hash],
        date: i64,
        author: &[u8],
        message: &[u8],
    ) -> Result<(Hash, WriteStats)> {
        self.check_committable(&tree)?;
        self.shared.change(|w| self.write_commit(w, Committing::Given(tree), parents, date, author, message))
    }

    /// Refuses a tree of another store (its nodes name offsets in another log, or it was
    /// built with another inode shape) and a tree that is not a directory.
    fn check_committable(&self, tree: &Tree) -> Result<()> {
        self.check_not_foreign(tree)?;
        if tree.kind() != crate::tree::Kind::Dir {
            return Err(Error::NotADirectory);
        }
        Ok(())
    }

    fn check_not_foreign(&self, tree: &Tree) -> Result<()> {
        if !Arc::ptr_eq(&tree.ctx, &self.ctx) && (tree.ctx.source.is_some() || tree.ctx.cfg != self.ctx.cfg) {
            return Err(Error::ForeignTree);
        }
        Ok(())
    }

    /// Writes the in-memory nodes of a directory tree to the log without committing it and
    /// returns the same tree rooted at its record, so the caller can drop the nodes (bulk
    /// loads build huge trees a subtree at a time). What is written this way is only durable
    /// once a commit that references it is: a crash before that drops it at recovery.
    pub fn persist(&self, tree: &Tree) -> Result<Tree> {
        self.check_not_foreign(tree)?;
        let d = match &tree.root {
            Ptr::Dir(d) => d.clone(),
            Ptr::Disk(_) if tree.kind() == crate::tree::Kind::Dir => return Ok(tree.clone()),
            _ => return Err(Error::NotADirectory),
        };
        let sh = &self.shared;
        let offset = sh.change(|w| {
            let mut p = sh.persister(&mut w.log, w.seq);
            // Flushed and published so the returned tree can be read back before any commit.
            let result = p.dir(&d);
            sh.gc.note_roots(std::mem::take(&mut p.below_floor));
            let offset = result?;
            w.log.flush()?;
            sh.loader.log.set_end(w.log.pos());
            Ok(offset)
        })?;
        let root = Ptr::Disk(crate::tree::DiskPtr { offset, hash: *d.hash(), kind: arbor_core::ChildKind::Node });
        Ok(Tree::at(root, self.ctx.clone(), tree.height))
    }

    fn write_commit(
        &self,
        w: &mut Writer,
        committing: Committing<'_>,
        parents: &[Hash],
        date: i64,
        author: &[u8],
        message: &[u8],
    ) -> Result<(Hash, WriteStats)> {
        let sh = &self.shared;
        let tree = committing.tree();
        let waited = std::mem::take(&mut w.waited);
        let chunk_bytes = sh.config.chunk_bytes;
        w.log.maybe_roll(&sh.loader.log, chunk_bytes)?;
        crash_point(CrashPoint::CommitBeforeObjects);
        let started = Instant::now();
        w.seq = w.seq.wrapping_add(1);
        // The changed tree is hashed in parts (`tree::Parts`) by the writer's hashing helper
        // and this thread, while this thread writes each part once it is hashed, then the
        // rest, children first. A tree with fewer than two parts is hashed first, from the root
        // down, its top in parallel (`prehash`), then written.
        let parts = Arc::new(crate::tree::Parts::of(&tree.root));
        let mut p = sh.persister(&mut w.log, w.seq);
        let (written, hashed) = if parts.len() >= 2 {
            let helping = helper::HashHelper::help(&mut w.hash_helper, &parts);
            let written = crate::tree::hashing_alone(|| {
                parts.write_each(&mut w.hash_batch, |part| p.inode_offset(part).map(drop))?;
                p.root(tree)
            });
            // Every part is hashed by the time the root is written; the helper may still hold
            // them (waited for on an error too).
            (written, helping.map_or_else(Instant::now, helper::Helping::wait))
        } else {
            tree.hash();
            let hashed = Instant::now();
            (p.root(tree), hashed)
        };
        // The parts hold the changed slots of the large directories: gone before the
        // eviction below, which changes only what nothing else holds.
        drop(parts);
        w.hash_batch.shrink_to(HASH_BATCH_KEPT);
        let root = written?;
        let tree_hash = tree.hash();
        p.note(root);
        let mut stats = p.stats;
        sh.gc.note_roots(p.below_floor);
        let parents_at: Vec<(Hash, Option<u64>)> = parents.iter().map(|h| (*h, sh.catalog.offset(h))).collect();
        let at = w.log.pos();
        let body = CommitBody {
            tree_hash,
            tree_back: at - root,
            parents: parents_at,
            date,
            author: author.to_vec(),
            message: message.to_vec(),
            // Pipelined: the sync runs beside the caller, but the writer is not taken again
            // before it is done (`lock_writer`), so nothing follows this record unsynced.
            flags: match sh.config.durability {
                Durability::EveryCommit | Durability::Pipelined => crate::pack::record::COMMIT_SYNCED_ALONE,
                Durability::Interval(_) => 0,
            },
        };
        w.log.scratch.clear();
        body.encode(&mut w.log.scratch);
        let offset = w.log.append_scratch(kind::COMMIT)?;
        let hash = commit_hash(&tree_hash, parents, date, author, message);
        let written_at = Instant::now();
        let keep = sh.config.working_commits > 0 && stats.objects <= WORKING_MAX_RECORDS;
        // The root the store keeps as its working tree; a tree handed over gives it up whole,
        // and its cold part is let go of here, while the records are written and synced.
        let (mut root, evict_now) = match committing {
            Committing::Lent(t) => (t.root.clone(), false),
            Committing::Given(t) => (t.into_root(), keep),
        };
        let evict_now = evict_now && matches!(root, Ptr::Dir(_));
        let seq = w.seq;
        let synced = match sh.config.durability {
            durability @ (Durability::EveryCommit | Durability::Pipelined) if evict_now => {
                let zeros = (chunk_bytes, sh.config.zeros_after_commit);
                w.write_and_sync_beside(durability, zeros, || self.evict_working(&mut root, seq))?
            }
            durability => {
                w.log.flush()?;
                crash_point(CrashPoint::CommitAfterWrite);
                // (Pipelined: the sync has started on its own thread.)
                let synced = w.sync_by_policy(durability)?;
                if evict_now {
                    self.evict_working(&mut root, seq);
                }
                synced
            }
        };
        crash_point(CrashPoint::CommitAfterSync);
        stats.hashing = hashed - started;
        stats.writing = written_at - started;
        stats.syncing = waited + synced;
        w.index_commit(hash, offset)?;
        sh.loader.log.set_end(w.log.pos());
        sh.catalog.publish(&[(hash, offset)]);
        w.commits_since_control += 1;
        if w.commits_since_control >= sh.config.control_every {
            if sh.config.durability == Durability::Pipelined {
                // The recovery point must not run ahead of what is durable.
                w.sync_now()?;
            }
            if !w.unsynced {
                self.write_control(w)?;
            }
        }
        let working = match root {
            Ptr::Dir(_) if keep => Some(Working { hash, root: Some(root), seq: w.seq, evicted: evict_now }),
            _ => None,
        };
        // A previous working tree nobody checked out is freed here, inside the commit (it is
        // the commit's cost); one that was lent and changed into this commit's is not there.
        drop(std::mem::replace(&mut *sh.working.lock(), working));
        Ok((hash, stats))
    }

    /// Syncs the index and rewrites the control file so recovery starts from here.
    fn write_control(&self, w: &mut Writer) -> Result<()> {
        self.shared.write_control(w)
    }

    /// Makes every commit durable now (useful under a relaxed policy) and records a
    /// recovery point.
    pub fn flush(&self) -> Result<()> {
        if self.shared.writer.lock().is_none() {
            return Ok(());
        }
        self.shared.change(|w| {
            w.log.flush()?;
            w.sync_now()?;
            self.write_control(w)
        })
    }

    /// Points the named head at a commit of this store, durably (Irmin branches).
    pub fn set_head(&self, name: &str, hash: &Hash) -> Result<()> {
        let offset = self.commit_offset(hash)?;
        self.write_head(HeadBody { name: name.to_string(), target: Some((*hash, offset)) })
    }

    /// Removes a named head; true if it existed.
    pub fn remove_head(&self, name: &str) -> Result<bool> {
        if self.shared.catalog.head(name).is_none() {
            return Ok(false);
        }
        self.write_head(HeadBody { name: name.to_string(), target: None })?;
        Ok(true)
    }

    fn write_head(&self, head: HeadBody) -> Result<()> {
        if head.name.is_empty() || head.name.len() > 255 {
            return Err(Error::InvalidArgument(format!("head name must be 1-255 bytes: {:?}", head.name)));
        }
        let sh = &self.shared;
        sh.change(|w| {
            w.log.scratch.clear();
            head.encode(&mut w.log.scratch);
            w.log.append_scratch(kind::HEAD)?;
            w.log.flush()?;
            w.sync_now()?;
            sh.loader.log.set_end(w.log.pos());
            Ok(())
        })?;
        let mut heads = sh.catalog.heads_mut();
        match head.target {
            Some(t) => heads.insert(head.name, t),
            None => heads.remove(&head.name),
        };
        Ok(())
    }

    /// The commit a named head points at.
    pub fn head(&self, name: &str) -> Option<Hash> {
        self.shared.catalog.head(name).map(|h| h.0)
    }

    /// Every named head.
    pub fn heads(&self) -> Vec<(String, Hash)> {
        self.shared.catalog.heads().into_iter().map(|(n, h, _)| (n, h)).collect()
    }

    /// Syncs everything and records a recovery point; the store stays usable by other clones.
    pub fn close(self) -> Result<()> {
        self.flush()
    }

    /// For a store opened read-only beside a writer: picks up the commits and heads the
    /// writer has completely written (on the same machine, synced or not) since this store
    /// was opened or last refreshed. Returns how many
    /// new commits became visible. A writable store is always current; this returns 0.
    pub fn refresh(&self) -> Result<usize> {
        if self.shared.writer.lock().is_some() {
            return Ok(0);
        }
        let log = &self.shared.loader.log;
        // The chunk files before the control file: a collection removes chunks only once its
        // control file names it, so a chunk this listing misses lies below the floor of the
        // control file read next, and the scan below starts at that floor.
        log.reload_chunks()?;
        let mut control = self.refresh_gc()?;
        let end = log.end();
        let mut retries = 0;
        let (found, from) = loop {
            let view = log.gc_view();
            // A drop collection's floor above this handle's end: the records between are gone
            // (their chunks removed, the start of the floor's chunk punched out), and so are
            // the commits among them. The scan starts at the floor.
            let from = if view.archive { end } else { end.max(view.floor) };
            let found = recover::scan(log, from, false)?;
            // A scan that stopped may have read a range that a collection switched after the
            // control file above punched out meanwhile: on its routing, the scan starts again.
            if found.stopped.is_some() && retries < load::SWITCH_RETRIES {
                let floor = view.floor;
                control = self.refresh_gc()?;
                if log.gc_view().floor != floor {
                    retries += 1;
                    continue;
                }
            }
            break (found, from);
        };
        // Head records were skipped with the dropped range (a removal among them): the heads
        // start from a control file written at or after the floor, as of its durable end, and
        // the scan's head records from the floor on replay whatever changed since.
        let base_heads = match control.filter(|c| c.durable_end >= from) {
            _ if from <= end => None,
            Some(c) => Some(c.heads),
            None => Control::read(self.shared.config.fs.as_ref(), &self.shared.dir)?
                .filter(|c| c.durable_end >= from)
                .map(|c| c.heads),
        };
        // Readers must be able to read a commit's objects before they can find the commit.
        log.set_end(found.valid_end.max(log.end()));
        {
            let mut heads = self.shared.catalog.heads_mut();
            if let Some(base) = base_heads {
                *heads = base.into_iter().map(|(n, h, o)| (n, (h, o))).collect();
            }
            for (_, h) in &found.heads {
                match &h.target {
                    Some(t) => heads.insert(h.name.clone(), *t),
                    None => heads.remove(&h.name),
                };
            }
        }
        self.shared.catalog.publish(&found.commits);
        Ok(found.commits.len())
    }

    /// Picks up a garbage collection the writer finished since this handle looked; returns
    /// the control file read.
    fn refresh_gc(&self) -> Result<Option<Control>> {
        let sh = &self.shared;
        let fs = sh.config.fs.as_ref();
        let log = &sh.loader.log;
        let mut retries = 0;
        loop {
            let Some(control) = Control::read(fs, &sh.dir)? else { return Ok(None) };
            let Some(g) = control.gc.filter(|g| Some(*g) != sh.gc.last()) else { return Ok(Some(control)) };
            match gc::load_view(fs, log, g) {
                Ok(view) => {
                    log.set_gc_view(view);
                    sh.gc.set_last(g);
                    if !g.archive {
                        sh.catalog.forget_below(g.floor);
                    }
                    return Ok(Some(control));
                }
                // A newer collection replaced the prefix this control file names (and removed
                // it) since the control file was read: take up the newer one.
                Err(_)
                    if retries < load::SWITCH_RETRIES
                        && Control::read(fs, &sh.dir).ok().flatten().and_then(|c| c.gc) != Some(g) =>
                {
                    retries += 1
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Bytes of the log (all chunk files).
    pub fn log_bytes(&self) -> u64 {
        self.shared.loader.log.end()
    }
}

impl Shared {
    /// A persister appending to `log`, aware of garbage collection done and under way.
    fn persister<'a>(&'a self, log: &'a mut LogWriter, seq: u32) -> Persister<'a> {
        Persister {
            seq,
            w: log,
            uid: self.loader.uid,
            inline_max: self.config.inline_max,
            stats: WriteStats::default(),
            gc: self.loader.log.gc_view(),
            pending_floor: self.gc.pending_floor(),
            below_floor: Vec::new(),
        }
    }

    /// Syncs the index and rewrites the control file so recovery starts from here.
    fn write_control(&self, w: &mut Writer) -> Result<()> {
        let index_count = w.index.sync()?;
        crash_point(CrashPoint::ControlAfterIndexSync);
        self.store_control(w.log.pos(), index_count)?;
        crash_point(CrashPoint::ControlAfterWrite);
        w.commits_since_control = 0;
        Ok(())
    }

    /// Writes the control file for a log whose first `durable_end` bytes and index whose
    /// first `index_count` entries are durable, with the heads and GC state in memory now.
    fn store_control(&self, durable_end: u64, index_count: u64) -> Result<()> {
        let _serial = self.control_lock.lock();
        let control = Control {
            uid: self.loader.log.uid,
            generation: self.control_generation.fetch_add(1, Ordering::AcqRel) + 1,
            inode: self.loader.inode,
            durable_end,
            index_count,
            last_commit: self.catalog.last(),
            heads: self.catalog.heads(),
            gc: self.gc.last(),
        };
        control.write(self.config.fs.as_ref(), &self.dir)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Best effort: sync what was written and record a recovery point. Errors here change
        // nothing durable, so they are ignored; the next open recovers from the log either way.
        let mut guard = self.writer.lock();
        if let Some(w) = guard.as_mut() {
            // Nothing of this writer's may write the log once it is gone: a writer opened next
            // (in this process, once the lock is let go) cuts the log back to its valid end and
            // appends there, where zeros prepared late would land on its records.
            let settled = w.settle_all();
            if settled.is_ok() && !self.poisoned.load(Ordering::Acquire) && (w.unsynced || w.commits_since_control > 0)
            {
                let _ = w.log.flush().and_then(|_| w.sync_now());
                // And a recovery point, so the next open does not rescan this session's log.
                let _ = self.write_control(w);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Arc;

    use arbor_core::toolbox::SplitMix64;

    use super::weight;
    use crate::io::MemFs;
    use crate::tree::{DirBody, Held, IPtr, Inode, InodeBody, Ptr};
    use crate::{Config, Store};

    /// Calls `node` on every directory and inode in memory below `ptr`, `ptr` included, with
    /// whether the budget weighs it (`Budget::share_held`): below a slot of the first large
    /// directory's root inode on its path, and not the root inode of a large directory
    /// (weighed with its directory).
    fn resident(ptr: &Ptr, below: bool, node: &mut dyn FnMut(Held<'_>, bool)) {
        fn inode(i: &Inode, below: bool, node: &mut dyn FnMut(Held<'_>, bool)) {
            node(Held::Inode(i), below && i.depth > 0);
            let below = below || i.depth == 0;
            match &i.body {
                InodeBody::Values(entries) => entries.iter().for_each(|(_, c)| resident(c, below, node)),
                InodeBody::Tree(slots) => slots.iter().for_each(|s| {
                    if let IPtr::Mem(sub) = s {
                        inode(sub, below, node);
                    }
                }),
            }
        }
        if let Ptr::Dir(d) = ptr {
            node(Held::Dir(d), below);
            match &d.body {
                DirBody::Flat(entries) => entries.iter().for_each(|(_, c)| resident(c, below, node)),
                DirBody::Large(root) => inode(root, below, node),
            }
        }
    }

    /// Nodes (directories and inodes) in memory below `ptr`, `ptr` included.
    fn in_memory(ptr: &Ptr) -> u64 {
        let mut n = 0;
        resident(ptr, false, &mut |_, _| n += 1);
        n
    }

    /// What the budget weighs of the working tree `ptr` (`Budget::share_held`).
    fn working_weight(ptr: &Ptr) -> u64 {
        let mut w = 0;
        resident(ptr, false, &mut |node, weighed| {
            if weighed {
                w += weight::held(node) as u64;
            }
        });
        w
    }

    /// What the working tree lets go of goes to the cache whole (on the adopting thread): once
    /// a base of 2,000 accounts has left the working tree, reading every account again reads
    /// nothing from the log.
    #[test]
    fn the_nodes_a_working_tree_lets_go_of_are_read_from_the_cache() {
        let fs = Arc::new(crate::io::FaultFs::new(Arc::new(MemFs::new()), 7));
        let store = Store::open_with("/s", Config::default().with_fs(fs.clone()).with_working_commits(4)).unwrap();
        let id = |n: u64| format!("{:040x}", arbor_core::toolbox::splitmix::mix64(n));
        let mut tree = store.empty();
        for n in 0..2_000u64 {
            tree.add_mut(&["index", &id(n), "balance"], &n.to_le_bytes()).unwrap();
        }
        let mut head = store.commit(&tree, &[], 0, "t", "base").unwrap();
        drop(tree);
        // Each block checked out from the last (a tree dropped unused takes the working tree
        // with it), changing one account, well past the window and a cycle of the shares.
        let mut tree = store.checkout(&head).unwrap();
        let base_nodes = in_memory(&tree.root);
        for block in 1..=12u64 {
            tree.add_mut(&["index", &id(block), "balance"], &(block + 10_000).to_le_bytes()).unwrap();
            head = store.commit(&tree, &[head], block as i64, "t", "block").unwrap();
            // (Dropped first: nodes the last block's tree shares cannot be let go of.)
            drop(tree);
            tree = store.checkout(&head).unwrap();
        }
        let resident = in_memory(&tree.root);
        assert!(resident * 10 < base_nodes, "{resident} nodes still in memory, {base_nodes} after the base");
        store.shared.loader.adopter.settle();
        let ops = fs.ops();
        for n in 0..2_000u64 {
            let expected = if (1..=12).contains(&n) { n + 10_000 } else { n };
            let found = tree.find(&["index", &id(n), "balance"]).unwrap();
            assert_eq!(found.as_deref(), Some(&expected.to_le_bytes()[..]), "account {n}");
        }
        assert_eq!(fs.ops(), ops, "file operations while reading what the working tree let go of");
    }

    /// The working tree holds no more than what the last two windows of commits wrote, though
    /// each checkout visits one share of it: blocks touching different accounts each time
    /// would otherwise keep every account they ever touched in memory.
    #[test]
    fn the_working_tree_stays_within_two_windows_of_writes() {
        working_tree_bound(false, 1 << 30, 4);
    }

    /// The same bound with each block's tree handed over: the commit evicts, not the checkout,
    /// and the commits are the same.
    #[test]
    fn a_tree_handed_over_is_evicted_by_its_commit_within_the_same_bound() {
        assert_eq!(working_tree_bound(true, 1 << 30, 4), working_tree_bound(false, 1 << 30, 4));
    }

    /// A working tree past three quarters of the memory budget keeps what one window of
    /// commits wrote, not two, and a window longer than a large directory's slots (32) is cut
    /// to that many commits; the commits are the same.
    #[test]
    fn a_working_tree_over_its_budget_keeps_one_window_of_writes() {
        let roomy = working_tree_bound(false, 1 << 30, 4);
        assert_eq!(working_tree_bound(false, 1, 4), roomy);
        assert_eq!(working_tree_bound(true, 1, 4), roomy);
        assert_eq!(working_tree_bound(true, 1, 64), roomy);
    }

    /// Commits 60 blocks of 40 changes over a 3,000-account state, each block checked out
    /// from the last, with a memory budget of `budget` bytes (1: always pressed) and a window
    /// of `window` commits; with `owned`, each block's tree is handed to `commit_owned`
    /// (unhashed, so that the commit hashes it in parts). Returns the commits, in order.
    fn working_tree_bound(owned: bool, budget: u64, window: u32) -> Vec<arbor_core::Hash> {
        let fs = MemFs::new();
        let config = Config::default().with_fs(Arc::new(fs)).with_working_commits(window).with_cache_bytes(budget);
        // Commits whose writes may stay: the window and one cycle of the shares (at most
        // a root inode's slots); pressed, one cycle.
        let pressed = budget == 1;
        let shares = window.min(arbor_core::InodeConfig::TEZOS.entries);
        let kept = if pressed { shares } else { window + shares } as usize;
        let store = Store::open_with("/s", config).unwrap();
        let id = |n: u64| format!("{:040x}", arbor_core::toolbox::splitmix::mix64(n));
        let mut tree = store.empty();
        for n in 0..3_000 {
            tree.add_mut(&["index", &id(n), "balance"], &n.to_le_bytes()).unwrap();
        }
        let (mut head, base) = store.commit_with_stats(&tree, &[], 0, b"t", b"base").unwrap();
        // A tree the caller holds keeps its nodes from being evicted.
        drop(tree);
        // Records each commit wrote, newest last.
        let mut written: VecDeque<u64> = VecDeque::from([base.objects]);
        let mut rng = SplitMix64::new(3);
        let mut late_peak = 0;
        let mut commits = vec![head];
        for block in 1..=60i64 {
            let mut tree = store.checkout(&head).unwrap();
            let resident = in_memory(&tree.root);
            let bound: u64 = written.iter().rev().take(kept).sum();
            // Pressed from the first eviction on, every slot has been visited pressed by then.
            let settled = if pressed { kept as i64 + 1 } else { kept as i64 };
            if !pressed || block > settled {
                assert!(
                    resident <= bound + 4,
                    "block {block}: {resident} nodes in memory, the last {kept} commits wrote {bound}"
                );
            }
            if block > settled {
                late_peak = late_peak.max(resident);
                // The budget's weight of the working tree (each share as weighed at its last
                // eviction) follows what it holds, and the cache has the rest of the budget.
                let (held, weight) = (store.shared.budget.held(), working_weight(&tree.root));
                // Pressed, a share holds one commit's writes when weighed and up to a
                // window's by its next visit: the count lags further behind the tree.
                let lag = if pressed { kept as u64 + 1 } else { 2 };
                assert!(
                    held <= 2 * weight && weight <= lag * held,
                    "block {block}: {held} bytes counted, {weight} held"
                );
                assert_eq!(store.shared.budget.cache_given(), store.shared.budget.cache_part(held));
                assert!(store.shared.loader.cache.capacity() >= store.shared.budget.cache_given());
            }
            for _ in 0..40 {
                let n = rng.below(3_000);
                tree.add_mut(&["index", &id(n), "balance"], &(block as u64).to_le_bytes()).unwrap();
            }
            let (h, stats) = if owned {
                store.commit_owned(tree, &[head], block, b"t", b"block").unwrap()
            } else {
                store.commit_with_stats(&tree, &[head], block, b"t", b"block").unwrap()
            };
            written.push_back(stats.objects);
            head = h;
            commits.push(h);
        }
        // Eviction did happen: once two windows have passed, the base is out of memory.
        assert!(late_peak < base.objects / 2, "{late_peak} nodes in memory, base {}", base.objects);
        commits
    }

    /// A block's change to a node it read through the cache happens to that node in place,
    /// and the cache lets go of the version the change supersedes; the older commit still
    /// reads it, from its record.
    #[test]
    fn a_change_takes_its_node_from_the_cache() {
        let fs: Arc<MemFs> = Arc::new(MemFs::new());
        let config = || Config::default().with_fs(fs.clone());
        let path = |n: u64| [String::from("index"), format!("{n:08}"), String::from("balance")];
        let old = {
            let store = Store::open_with("/s", config()).unwrap();
            let mut tree = store.empty();
            for n in 0..100u64 {
                tree.add_mut(&path(n), &n.to_le_bytes()).unwrap();
            }
            store.commit(&tree, &[], 0, "t", "base").unwrap()
        };
        // Reopened: an empty cache, and no working tree to lend.
        let store = Store::open_with("/s", config()).unwrap();
        let mut tree = store.checkout(&old).unwrap();
        let Ptr::Disk(root) = &tree.root else { panic!("a stored tree starts on disk") };
        let root = root.offset;
        let cached = |offset: u64| store.shared.loader.cache.get(&offset).is_some();
        assert_eq!(tree.find(&path(7)).unwrap(), Some(7u64.to_le_bytes().to_vec()));
        assert!(cached(root), "a read caches the root directory");
        tree.add_mut(&path(7), b"seven").unwrap();
        assert!(!cached(root), "the cache still holds the root version the change superseded");
        assert_eq!(tree.find(&path(7)).unwrap(), Some(b"seven".to_vec()));
        let new = store.commit(&tree, &[old], 1, "t", "change").unwrap();
        drop(tree);
        assert_eq!(store.checkout(&old).unwrap().find(&path(7)).unwrap(), Some(7u64.to_le_bytes().to_vec()));
        assert_eq!(store.checkout(&new).unwrap().find(&path(7)).unwrap(), Some(b"seven".to_vec()));
        assert_eq!(store.checkout(&old).unwrap().find(&path(8)).unwrap(), Some(8u64.to_le_bytes().to_vec()));
    }

    /// With `inline_max` below the size of a small value (held inside its binding, with no
    /// place for its record's offset), small values get records of their own at each write
    /// of their parent, and read back as written, in a sound store.
    #[test]
    fn small_values_get_records_of_their_own_when_inline_max_is_smaller() {
        let fs: Arc<MemFs> = Arc::new(MemFs::new());
        let config = || Config::default().with_fs(fs.clone()).with_inline_max(2);
        let value = |n: u64| (0..(n % 16) as u8).map(|i| i ^ n as u8).collect::<Vec<u8>>();
        let (mut commits, mut expected) = (Vec::new(), Vec::new());
        {
            let store = Store::open_with("/s", config()).unwrap();
            let mut tree = store.empty();
            for round in 0..3u64 {
                for n in 0..40u64 {
                    tree.add_mut(&["d", &format!("{n:02}")], &value(n * (round + 1))).unwrap();
                }
                let parents: Vec<_> = commits.last().copied().into_iter().collect();
                let (h, stats) = store.commit_with_stats(&tree, &parents, 0, b"t", b"m").unwrap();
                // Each value longer than 2 bytes gets a record (their directory is new).
                let long = (0..40u64).filter(|n| value(n * (round + 1)).len() > 2).count() as u64;
                assert!(stats.objects >= long + 2, "{long} values longer than 2 bytes: {stats:?}");
                assert_eq!(h, store.commit(&tree, &parents, 0, "t", "m").unwrap());
                commits.push(h);
                expected.push(tree.hash());
                tree = store.checkout(&h).unwrap();
            }
        }
        let store = Store::open_with("/s", config()).unwrap();
        for (round, (h, tree_hash)) in commits.iter().zip(&expected).enumerate() {
            let tree = store.checkout(h).unwrap();
            assert_eq!(tree.hash(), *tree_hash);
            for n in 0..40u64 {
                let got = tree.find(&["d", &format!("{n:02}")]).unwrap();
                assert_eq!(got, Some(value(n * (round as u64 + 1))));
            }
        }
        let report = store.fsck();
        assert!(report.errors.is_empty(), "{:?}", report.errors);
    }
}
