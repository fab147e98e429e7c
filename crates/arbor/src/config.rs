//! Store configuration.

use std::sync::Arc;
use std::time::Duration;

use arbor_core::InodeConfig;

use crate::io::{FileSystem, OsFs};

/// When a commit's data reaches stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Durability {
    /// `commit` returns after the commit and everything before it are fsynced (the default).
    EveryCommit,
    /// `commit` returns once written; the log is fsynced when a commit finds the last sync older
    /// than this interval, and on close. A power loss may drop the commits of the last interval,
    /// never anything older, and the store still opens at a consistent commit.
    Interval(Duration),
}

/// Options for opening a store.
#[derive(Debug, Clone)]
pub struct Config {
    /// Budget of the decoded-object cache, in bytes. Memory for reading stays within this
    /// whatever the state size (plus the trees the caller holds).
    pub cache_bytes: u64,
    /// Values of at most this many bytes are stored inside their parent directory's record.
    pub inline_max: usize,
    /// Largest value accepted by `add`.
    pub max_value_len: usize,
    /// A new log chunk file is started when the current one exceeds this size.
    pub chunk_bytes: u64,
    /// Durability policy of commits.
    pub durability: Durability,
    /// Inode shape; `InodeConfig::TEZOS` gives Tezos context hashes.
    pub inode: InodeConfig,
    /// The control file (recovery starting point) is rewritten every this many commits.
    pub control_every: u32,
    /// Open without writing (no lock taken; sees commits durable at open or `refresh`).
    pub read_only: bool,
    /// The writer keeps the tree of its last commit in memory for the next block (checking
    /// that commit out returns it); a node stays there this many commits after the last one
    /// that wrote it, then goes back to the object cache. 0 keeps no working tree.
    pub working_commits: u32,
    /// File system to use; the OS one by default, an in-memory fault-injecting one in tests.
    pub fs: Arc<dyn FileSystem>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cache_bytes: 512 << 20,
            inline_max: 32,
            max_value_len: 64 << 20,
            chunk_bytes: 1 << 30,
            durability: Durability::EveryCommit,
            inode: InodeConfig::TEZOS,
            control_every: 256,
            read_only: false,
            working_commits: 8,
            fs: Arc::new(OsFs),
        }
    }
}
