//! NOMT 1.0.5: a binary Merkle trie in 4 KiB pages on an on-disk hash table, values in a
//! B+tree, driven through io_uring.
//!
//! A block is one session: reads through the session (the committed state), then
//! `finish` with the block's writes sorted by key, then `commit`, which writes the pages and
//! values and syncs them before returning (NOMT has no deferred mode): the block is durable
//! when `commit` returns.

use std::path::Path;

use nomt::hasher::Blake3Hasher;
use nomt::{KeyReadWrite, Nomt, Options, Session, SessionParams};

use super::FlatStore;
use crate::error::{CompareError, Result};
use crate::flat::Key;

/// NOMT settings the harness chooses.
#[derive(Clone, Copy, Debug)]
pub struct NomtSettings {
    /// Hash-table buckets (4 KiB pages), fixed when the database is created.
    pub buckets: u32,
    /// Commit worker threads.
    pub commit_concurrency: usize,
    /// Page cache, MiB.
    pub page_cache_mib: usize,
    /// Leaf cache, MiB.
    pub leaf_cache_mib: usize,
}

impl NomtSettings {
    /// Settings for a state of `values` values: one bucket per 25 values, at least 64,000
    /// (NOMT's default). A 1,000,000-value state occupied 4,161 buckets here (0.4% of its
    /// values), so this leaves the table over ten times larger than the state needs, with room
    /// for the growth of a replay, far from the occupancy where a hash table slows down.
    /// Caches 512 + 512 MiB (twice NOMT's defaults: 1 GiB in all, as arbor's cache).
    pub fn for_values(values: u64) -> NomtSettings {
        let buckets = (values / 25).clamp(64_000, u32::MAX as u64) as u32;
        NomtSettings { buckets, commit_concurrency: 2, page_cache_mib: 512, leaf_cache_mib: 512 }
    }

    /// One line for the report.
    pub fn describe(&self) -> String {
        format!(
            "Blake3 hasher; {} hash-table buckets ({} MiB, preallocated); page cache {} MiB, leaf cache {} MiB; commit concurrency {}; rollback log off",
            self.buckets,
            self.buckets as u64 * 4096 / 1048576,
            self.page_cache_mib,
            self.leaf_cache_mib,
            self.commit_concurrency
        )
    }
}

fn err(e: impl std::fmt::Display) -> CompareError {
    CompareError::Peer { backend: "nomt", what: format!("{e:#}") }
}

/// Why NOMT cannot run here, if it cannot (io_uring missing or forbidden).
pub fn unavailable() -> Option<String> {
    match nomt::check_iou_permissions() {
        nomt::IoUringPermission::Allowed => None,
        nomt::IoUringPermission::Denied => Some("io_uring is denied to this process (NOMT needs it)".into()),
        nomt::IoUringPermission::NotSupported => Some("io_uring is not supported by this kernel or platform".into()),
    }
}

/// A NOMT database under the harness.
pub struct NomtStore {
    db: Nomt<Blake3Hasher>,
    session: Option<Session<Blake3Hasher>>,
}

impl NomtStore {
    /// Creates a database in `dir` (which must be empty or missing).
    pub fn create(dir: &Path, s: &NomtSettings) -> Result<NomtStore> {
        let mut o = Options::new();
        o.path(dir);
        o.hashtable_buckets(s.buckets);
        o.commit_concurrency(s.commit_concurrency);
        o.page_cache_size(s.page_cache_mib);
        o.leaf_cache_size(s.leaf_cache_mib);
        o.bitbox_seed([7; 16]);
        o.rollback(false);
        let db = Nomt::<Blake3Hasher>::open(o).map_err(err)?;
        Ok(NomtStore { db, session: None })
    }
}

impl FlatStore for NomtStore {
    fn begin_block(&mut self) -> Result<()> {
        self.session = Some(self.db.begin_session(SessionParams::default()));
        Ok(())
    }

    fn get(&mut self, key: &Key) -> Result<Option<Vec<u8>>> {
        let session = self.session.as_ref().ok_or_else(|| err("read outside a block"))?;
        session.read(*key).map_err(err)
    }

    fn commit(&mut self, _level: u64, writes: Vec<(Key, Option<Vec<u8>>)>) -> Result<()> {
        let session = self.session.take().ok_or_else(|| err("commit outside a block"))?;
        let actuals = writes.into_iter().map(|(k, v)| (k, KeyReadWrite::Write(v))).collect();
        let finished = session.finish(actuals).map_err(err)?;
        finished.commit(&self.db).map_err(err)
    }

    fn root(&self) -> String {
        arbor_core::toolbox::hex::encode(&self.db.root().into_inner())
    }

    fn close(self: Box<Self>) -> Result<Vec<String>> {
        let u = self.db.hash_table_utilization();
        let share = u.occupied as f64 / u.capacity.max(1) as f64;
        Ok(vec![format!(
            "hash table at the end: {} of {} buckets occupied ({:.1}%)",
            u.occupied,
            u.capacity,
            share * 100.0
        )])
    }
}
