//! The writer's state, and the one way to get at it: locked, checked, and with the previous
//! commit's background sync finished.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{MappedMutexGuard, MutexGuard};

use super::crash::crash_point;
use super::index::IndexFile;
use super::CrashPoint;
use super::Shared;
use crate::config::Durability;
use crate::error::{io_err, Error, Result};
use crate::pack::log::{Chunk, LogWriter, Prepare, Unwritten};
use arbor_core::{Hash, HashBatch};

/// State only the writer touches.
#[derive(Debug)]
pub(super) struct Writer {
    pub log: LogWriter,
    pub index: IndexFile,
    pub commits_since_control: u32,
    pub last_sync: Instant,
    /// Bytes written but not yet synced (relaxed durability, or a sync still running).
    pub unsynced: bool,
    /// Commits written by this instance: stamped on the nodes each one writes.
    pub seq: u32,
    /// The last commit's fdatasync, running beside the caller (`Durability::Pipelined`).
    pending: Option<PendingSync>,
    /// How long taking the writer waited for that sync to finish.
    pub waited: Duration,
    /// The index entry of the commit that sync makes durable, appended once it has: an
    /// index entry is recovery's proof that its commit was durable (`open::check_not_bit_rot`).
    pending_entry: Option<(Hash, u64)>,
    /// The buffer the committing thread gathers node inputs in when it hashes parts of the
    /// tree (`tree::Parts::write_each`), kept from commit to commit.
    pub hash_batch: HashBatch,
    /// The thread that hashes parts of each commit's tree beside the committing one, started
    /// with the first commit that has parts to share.
    pub hash_helper: Option<super::helper::HashHelper>,
    /// The thread that writes and syncs beside the committing one, started with the first
    /// sync it runs.
    sync_worker: Option<SyncWorker>,
}

/// A thread of the writer's that writes handed-over records and syncs the log, one job at a
/// time, for as long as the writer lives: a thread started for each commit cost the
/// committing thread a `clone3` (with the hashing helper's, 0.8% of a replay's samples).
#[derive(Debug)]
struct SyncWorker {
    jobs: mpsc::Sender<SyncJob>,
}

/// One write-then-sync for the [`SyncWorker`]: the outcomes go back on the job's channels.
struct SyncJob {
    file: Arc<dyn crate::io::File>,
    /// The records to write first, and where to send their buffer once written.
    unwritten: Option<(Unwritten, mpsc::SyncSender<std::io::Result<Vec<u8>>>)>,
    done: mpsc::SyncSender<std::io::Result<()>>,
    /// Zeros to write past the records once they are synced, and whether after `done` is
    /// sent (`Config::zeros_after_commit`) or before.
    prepare: Option<(Prepare, bool)>,
}

impl SyncWorker {
    /// Starts the thread; it ends when the writer (the jobs' sender) goes.
    fn start() -> std::io::Result<SyncWorker> {
        let (jobs, queue) = mpsc::channel::<SyncJob>();
        std::thread::Builder::new().name("arbor-sync".into()).spawn(move || {
            for job in queue {
                job.run();
            }
        })?;
        Ok(SyncWorker { jobs })
    }
}

impl SyncJob {
    fn run(self) {
        // A receiver only goes away with a writer dropped after a panic: nothing to tell.
        if let Some((unwritten, written)) = self.unwritten {
            let outcome = unwritten.write();
            let failed = outcome.is_err();
            let _ = written.send(outcome);
            if failed {
                let _ = self.done.send(Err(std::io::Error::other("the records to sync were not written")));
                return;
            }
        }
        let synced = self.file.sync_data();
        let prepare = self.prepare.filter(|_| synced.is_ok());
        let (before, after) = match prepare {
            Some((p, true)) => (None, Some(p)),
            Some((p, false)) => (Some(p), None),
            None => (None, None),
        };
        if let Some(prepare) = before {
            prepare.run();
        }
        let _ = self.done.send(synced);
        // After the answer: the commit does not wait for this; the next job runs after it,
        // and the writer's next change waits for it (`Writer::settle_all`).
        if let Some(prepare) = after {
            prepare.run();
        }
    }
}

/// An fdatasync running on a thread of its own, after writing the records handed to it.
#[derive(Debug)]
struct PendingSync {
    /// The records' buffer once written, if records were handed over.
    written: Option<mpsc::Receiver<std::io::Result<Vec<u8>>>>,
    done: mpsc::Receiver<std::io::Result<()>>,
    chunk: Arc<Chunk>,
}

impl Writer {
    /// A writer appending with `log` and `index`, after `recovered` commits found past the
    /// last control file.
    pub fn new(log: LogWriter, index: IndexFile, recovered: u32) -> Writer {
        Writer {
            log,
            index,
            commits_since_control: recovered,
            last_sync: Instant::now(),
            unsynced: false,
            seq: 0,
            pending: None,
            waited: Duration::ZERO,
            pending_entry: None,
            hash_batch: HashBatch::new(),
            hash_helper: None,
            sync_worker: None,
        }
    }

    /// Enters the commit `hash` at `offset`, just synced by policy, in the commit index: now,
    /// or under `Pipelined` once its sync is done.
    pub fn index_commit(&mut self, hash: Hash, offset: u64) -> Result<()> {
        if self.pending.is_some() {
            debug_assert!(self.pending_entry.is_none(), "one commit per sync");
            self.pending_entry = Some((hash, offset));
            return Ok(());
        }
        self.index.append(&hash, offset)
    }

    /// Makes what was just flushed durable as `durability` says, and returns how long the
    /// caller waited for it. Under `Pipelined` the sync starts on its own thread and the next
    /// taking of the writer waits for it ([`Shared::lock_writer`]).
    pub fn sync_by_policy(&mut self, durability: Durability) -> Result<Duration> {
        let started = Instant::now();
        match durability {
            Durability::EveryCommit => self.sync_now()?,
            Durability::Interval(d) if self.last_sync.elapsed() >= d => self.sync_now()?,
            Durability::Interval(_) => self.unsynced = true,
            Durability::Pipelined => {
                debug_assert!(self.pending.is_none(), "the writer was taken without settling");
                self.pending = Some(PendingSync::start(&mut self.sync_worker, self.log.chunk(), (None, None))?);
                self.unsynced = true;
            }
        }
        Ok(started.elapsed())
    }

    /// Hands the records appended since the last flush to a thread of its own, which writes
    /// them to the log and then syncs it, while this one runs `beside`; then waits for the
    /// records to be written, and under `EveryCommit` for the sync (under `Pipelined` the
    /// next taking of the writer waits for it, [`Shared::lock_writer`]). Returns how long
    /// this thread waited after `beside`. A sync waited for here is settled as a `Pipelined`
    /// one is ([`Writer::settle`]), but its wait is this commit's, not the next one's.
    ///
    /// Writing a block's records (`pwrite`: the copy into the page cache, 0.6-0.7 ms a block
    /// of the tezos-mainnet replay) came before the eviction `beside` and the sync; on the
    /// second core it overlaps the eviction. Nothing reads the records before this returns:
    /// readers see the log up to the end the commit publishes after it.
    pub fn write_and_sync_beside(
        &mut self,
        durability: Durability,
        (chunk_bytes, zeros_after_commit): (u64, bool),
        beside: impl FnOnce(),
    ) -> Result<Duration> {
        debug_assert!(matches!(durability, Durability::EveryCommit | Durability::Pipelined));
        self.settle()?;
        let unwritten = self.log.hand_over();
        let prepare = self.log.prepare(unwritten.byte_count(), chunk_bytes).map(|p| (p, zeros_after_commit));
        let job = (Some(unwritten), prepare);
        let pending = self.pending.insert(PendingSync::start(&mut self.sync_worker, self.log.chunk(), job)?);
        beside();
        let started = Instant::now();
        let buffer = pending.wait_written()?;
        self.log.give_back(buffer);
        crash_point(CrashPoint::CommitAfterWrite);
        if durability == Durability::EveryCommit {
            let before = self.waited;
            self.settle()?;
            self.waited = before;
        } else {
            self.unsynced = true;
        }
        Ok(started.elapsed())
    }

    /// Syncs the log now, on this thread.
    pub fn sync_now(&mut self) -> Result<()> {
        self.settle()?;
        self.log.sync()?;
        self.last_sync = Instant::now();
        self.unsynced = false;
        Ok(())
    }

    /// Waits for a background sync to finish, then for the zeros the sync thread prepares
    /// after it (`LogWriter::prepare`): what the writer's next change must wait for (its
    /// records go where the zeros go). A failure of either is this call's.
    pub(super) fn settle_all(&mut self) -> Result<()> {
        self.settle()?;
        let started = Instant::now();
        let prepared = self.log.wait_prepared();
        self.waited += started.elapsed();
        prepared
    }

    /// Waits for a background sync to finish; its failure is this call's.
    fn settle(&mut self) -> Result<()> {
        let Some(pending) = self.pending.take() else { return Ok(()) };
        let started = Instant::now();
        let result = pending.wait();
        self.waited += started.elapsed();
        result?;
        self.last_sync = Instant::now();
        self.unsynced = false;
        match self.pending_entry.take() {
            Some((hash, offset)) => self.index.append(&hash, offset),
            None => Ok(()),
        }
    }
}

impl PendingSync {
    /// Hands the writer's sync thread (started if need be) a job: write `unwritten` (if any),
    /// then sync `chunk`, then (after answering) write the zeros of `prepare`, if any.
    fn start(
        worker: &mut Option<SyncWorker>,
        chunk: Arc<Chunk>,
        (unwritten, prepare): (Option<Unwritten>, Option<(Prepare, bool)>),
    ) -> Result<PendingSync> {
        let (done_tx, done) = mpsc::sync_channel(1);
        let (written_tx, written) = unwritten.as_ref().map(|_| mpsc::sync_channel(1)).unzip();
        let job = SyncJob { file: chunk.file.clone(), unwritten: unwritten.zip(written_tx), done: done_tx, prepare };
        let sent = match worker {
            Some(w) => w.jobs.send(job),
            None => {
                let started = SyncWorker::start().map_err(io_err("starting a sync thread for", &chunk.path))?;
                worker.insert(started).jobs.send(job)
            }
        };
        if sent.is_err() {
            // The thread is gone (it panicked): the next sync starts another.
            *worker = None;
            return Err(io_err("syncing", &chunk.path)(std::io::Error::other("the sync thread died")));
        }
        Ok(PendingSync { written, done, chunk })
    }

    /// Waits for the records handed over to be written; returns their buffer.
    fn wait_written(&mut self) -> Result<Vec<u8>> {
        let path = &self.chunk.path;
        let written = self.written.take().expect("records were handed over");
        match written.recv() {
            Ok(r) => r.map_err(io_err("appending to", path)),
            Err(_) => Err(io_err("appending to", path)(std::io::Error::other("the sync thread died"))),
        }
    }

    fn wait(self) -> Result<()> {
        let path = &self.chunk.path;
        match self.done.recv() {
            Ok(r) => r.map_err(io_err("syncing", path)),
            Err(_) => Err(io_err("syncing", path)(std::io::Error::other("the sync thread died"))),
        }
    }
}

impl Shared {
    /// The writer, locked, for a change to the store: refused on a read-only handle and on a
    /// poisoned store, and with the previous commit's background sync (and the zeros prepared
    /// after it) finished, so nothing is
    /// ever written after a commit before that commit is durable (the promise recovery reads
    /// in `COMMIT_SYNCED_ALONE`). A failed background sync poisons the store: a commit was
    /// acknowledged that may not be durable.
    pub(super) fn lock_writer(&self) -> Result<MappedMutexGuard<'_, Writer>> {
        let guard = MutexGuard::try_map(self.writer.lock(), Option::as_mut).map_err(|_| Error::ReadOnly)?;
        let mut w = guard;
        if self.poisoned.load(Ordering::Acquire) {
            return Err(Error::Poisoned);
        }
        if let Err(e) = w.settle_all() {
            self.poisoned.store(true, Ordering::Release);
            return Err(e);
        }
        Ok(w)
    }

    /// Runs `change` with the writer ([`Shared::lock_writer`]). A failure, or a panic,
    /// part-way leaves the log and the nodes' remembered offsets out of step: the store is
    /// then poisoned, refusing further writes until it is reopened and recovered.
    pub(super) fn change<T>(&self, change: impl FnOnce(&mut Writer) -> Result<T>) -> Result<T> {
        let mut w = self.lock_writer()?;
        let poison = PoisonOnUnwind(&self.poisoned);
        let result = change(&mut w);
        std::mem::forget(poison);
        if result.is_err() {
            self.poisoned.store(true, Ordering::Release);
        }
        result
    }
}

/// Poisons the store if dropped, i.e. if a write panicked part-way.
struct PoisonOnUnwind<'a>(&'a AtomicBool);

impl Drop for PoisonOnUnwind<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}
