//! Firewood 0.3.1: a 16-ary Merkle trie in one file, nodes addressed by offset, revisions in
//! memory, persisted by a background worker.
//!
//! Equal durability: Firewood's `commit` returns before the revision is written (a background
//! thread persists it), and its persistence writes with `pwrite` without ever syncing the
//! file. So after each commit the harness (1) waits until the committed revision's root node
//! has been persisted by the worker (polling the revision's root, 20 µs sleeps), then (2)
//! calls `fdatasync` on `firewood.db`. The block counts as done only after both, so its time
//! includes the persistence Firewood would otherwise overlap with the next block.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use firewood::api::{Db as _, DbView as _, Proposal as _};
use firewood::db::{BatchOp, Db, DbConfig};
use firewood::manager::RevisionManagerConfig;
use firewood_storage::{Committed, FileBacked, NodeHashAlgorithm, NodeStore, RootReader};

use super::FlatStore;
use crate::error::{CompareError, IoContext, Result};
use crate::flat::Key;

/// Node cache of the database, bytes (1 GiB, as arbor's cache; Firewood's default is 192 MB).
pub const NODE_CACHE_BYTES: usize = 1 << 30;

/// The longest the harness waits for a revision to be persisted.
const PERSIST_TIMEOUT: Duration = Duration::from_secs(300);

fn err(e: impl std::fmt::Display) -> CompareError {
    CompareError::Peer { backend: "firewood", what: e.to_string() }
}

/// One line for the report.
pub fn describe() -> String {
    format!(
        "MerkleDB (SHA-256) node hashing; node cache {} MiB; other settings Firewood's defaults (128 revisions in memory, 1 unpersisted commit at most)",
        NODE_CACHE_BYTES >> 20
    )
}

/// A Firewood database under the harness.
pub struct FirewoodStore {
    db: Option<Db>,
    file: File,
    revision: Option<Arc<NodeStore<Committed, FileBacked>>>,
    waits: u64,
    wait_time: Duration,
}

impl FirewoodStore {
    /// Creates a database in `dir`.
    pub fn create(dir: &Path) -> Result<FirewoodStore> {
        std::fs::create_dir_all(dir).ctx(|| format!("creating {}", dir.display()))?;
        let manager =
            RevisionManagerConfig::builder().node_cache_memory_limit(NODE_CACHE_BYTES.try_into().map_err(err)?).build();
        let cfg = DbConfig::builder()
            .node_hash_algorithm(NodeHashAlgorithm::MerkleDB)
            .truncate(true)
            .manager(manager)
            .build();
        let db = Db::new(dir, cfg).map_err(err)?;
        let path = dir.join("firewood.db");
        let file = File::open(&path).ctx(|| format!("opening {}", path.display()))?;
        Ok(FirewoodStore { db: Some(db), file, revision: None, waits: 0, wait_time: Duration::ZERO })
    }

    fn db(&self) -> Result<&Db> {
        self.db.as_ref().ok_or_else(|| err("closed"))
    }

    /// Waits until the latest committed revision is on disk (written by the worker).
    fn await_persisted(&mut self) -> Result<()> {
        let db = self.db()?;
        let Some(root) = db.root_hash() else { return Ok(()) };
        let rev = db.revision(root).map_err(err)?;
        let start = Instant::now();
        loop {
            let node = rev.root_as_maybe_persisted_node();
            if node.as_ref().and_then(|n| n.unpersisted()).is_none() {
                break;
            }
            if start.elapsed() > PERSIST_TIMEOUT {
                return Err(err("a committed revision was not persisted within 300 s"));
            }
            std::thread::sleep(Duration::from_micros(20));
        }
        self.waits += 1;
        self.wait_time += start.elapsed();
        Ok(())
    }
}

impl FlatStore for FirewoodStore {
    fn begin_block(&mut self) -> Result<()> {
        let db = self.db()?;
        self.revision = match db.root_hash() {
            Some(root) => Some(db.revision(root).map_err(err)?),
            None => None,
        };
        Ok(())
    }

    fn get(&mut self, key: &Key) -> Result<Option<Vec<u8>>> {
        match &self.revision {
            Some(rev) => Ok(rev.val(key.as_slice()).map_err(err)?.map(|v| v.to_vec())),
            None => Ok(None),
        }
    }

    fn commit(&mut self, _level: u64, writes: Vec<(Key, Option<Vec<u8>>)>) -> Result<()> {
        self.revision = None;
        let batch: Vec<BatchOp<Key, Vec<u8>>> = writes
            .into_iter()
            .map(|(key, v)| match v {
                Some(value) => BatchOp::Put { key, value },
                None => BatchOp::Delete { key },
            })
            .collect();
        let db = self.db()?;
        let proposal = db.propose(batch).map_err(err)?;
        proposal.commit().map_err(err)?;
        self.await_persisted()?;
        self.file.sync_data().ctx(|| "fdatasync of firewood.db".into())
    }

    fn root(&self) -> String {
        let root = self.db.as_ref().and_then(|db| db.root_hash());
        root.map_or_else(|| "empty".into(), |h| arbor_core::toolbox::hex::encode(h.as_ref()))
    }

    fn close(mut self: Box<Self>) -> Result<Vec<String>> {
        self.revision = None;
        if let Some(db) = self.db.take() {
            db.close().map_err(err)?;
        }
        Ok(vec![format!(
            "waited {:.1} s in all for the background worker to persist {} revisions",
            self.wait_time.as_secs_f64(),
            self.waits
        )])
    }
}
