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
    /// `commit` returns once written, while the commit's fdatasync runs on a thread of its
    /// own; the next commit (or any other change, `flush` or closing) waits for that sync
    /// before writing anything. The caller's work on the next block overlaps the sync. A power
    /// loss may drop the last commit returned, never an earlier one; the store still opens
    /// at a consistent commit.
    Pipelined,
}

/// Options for opening a store.
///
/// Fields may be added in any release, so a `Config` is built from [`Config::default`] and
/// the `with_*` setters (or by assigning its public fields), never as a struct literal:
///
/// ```
/// use arbor::{Config, Durability};
///
/// let config = Config::default().with_cache_bytes(64 << 20).with_durability(Durability::EveryCommit);
/// assert_eq!(config.cache_bytes, 64 << 20);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// Budget of decoded nodes in memory, in bytes (default 1 GiB): the writer's working
    /// tree (see [`Config::working_commits`]) and the object cache share it, the cache taking
    /// what the working tree leaves and never less than a quarter (a working tree over three
    /// quarters keeps what the last 32 commits wrote at most). Each node is weighed at
    /// what the allocator holds for it, so the process grows by about this much for reading
    /// whatever the state size (plus the trees the caller holds): 500 blocks of the
    /// 1,000,000-value replay measured max RSS of 152.8 MiB with a 64 MiB budget. The
    /// tezos-mainnet replay of 1,000,000 values runs ~14% slower with 512 MiB than with 1 GiB.
    pub cache_bytes: u64,
    /// Values of at most this many bytes are stored inside their parent directory's record
    /// (default 128). A longer value is a record of its own, which a cold read of it reads
    /// separately: with 32, values of 33-128 bytes (15% of a mainnet context's values,
    /// `workload.md`) were 13% of the records a 300-block replay of 30M values read. 128
    /// against 32, alternating replays of 300 blocks on initial states loaded with each
    /// (mean block, read calls per block, bytes appended per value written): 30M values
    /// 20.09 / 19.87 → 19.22 / 19.16 ms, 1,965 → 1,780 reads, 132.9 → 130.5 B; 1M values
    /// 11.54 / 11.75 → 11.33 / 11.94 ms, 367 → 303 reads, 118.8 → 116.5 B.
    pub inline_max: usize,
    /// Largest value accepted by `add`.
    pub max_value_len: usize,
    /// A new log chunk file is started when the current one exceeds this size.
    pub chunk_bytes: u64,
    /// Durability policy of commits.
    pub durability: Durability,
    /// Whether the zeros the writer prepares past a handed-over commit's records (FORMAT.md
    /// 3.2) are written after the commit returns, beside the next block (true, the default),
    /// or before it returns: every file operation then comes in one order whatever the
    /// threads' timing, which a harness that replays a run from its seed, killing or failing
    /// the n-th operation, needs (`arbor-torture`).
    pub zeros_after_commit: bool,
    /// Inode shape; `InodeConfig::TEZOS` gives Tezos context hashes.
    pub inode: InodeConfig,
    /// The control file (recovery starting point) is rewritten every this many commits.
    pub control_every: u32,
    /// Open without writing (no lock taken; sees commits durable at open or `refresh`).
    pub read_only: bool,
    /// The writer keeps the tree of its last commit in memory for the next block (checking
    /// that commit out returns it); a node stays there this many commits after the last one
    /// that wrote it, then goes back to the object cache. 0 keeps no working tree. Each
    /// checkout visits one of this many shares of the tree for it (`tree::Share`), but never
    /// more than a large directory's root inode has slots (32 in Tezos's shape), so every
    /// node is visited at least once in 32 commits and no block walks the whole tree. The
    /// working tree counts in [`Config::cache_bytes`], and one past three quarters of it keeps
    /// only what the last 32 commits (or this many, if fewer) wrote. Default 32, chosen when
    /// each eviction walked the whole tree (1,000 blocks of the 1M-value replay, window 8 /
    /// 16 / 32 / 64: mean block 26.5 / 24.2 / 22.2 / 23.0 ms, p99 54 / 61 / 59 / 75 ms, max RSS
    /// 1,168 / 1,161 / 1,107 / 936 MiB); see ARCHITECTURE.md for a longer window measured
    /// since.
    pub working_commits: u32,
    /// Records are copied out of the log's files mapped into memory, where the file
    /// system maps files (the OS one does; the in-memory one of the tests does not), rather
    /// than read with a system call each. A record is copied from there only where
    /// the file is known to hold it, and arbor never shortens a log file below what it may
    /// read; but another program that shortens a log file while the store is open would then
    /// kill the process (`SIGBUS`) rather than make a read fail. The mapped pages count in
    /// the process's resident memory, as file pages the kernel may drop at any time; they are
    /// not part of [`Config::cache_bytes`]. Default on: with it, replays spent less CPU a
    /// block, 0.2-0.4 ms of about 10 at 1M values (500 blocks), 1.5-2.5 ms of about 14 at 10M
    /// and 2.3-4.8 ms of about 20 at 30M (300 blocks) (ARCHITECTURE.md, "Performance today").
    pub mapped_reads: bool,
    /// File system to use; the OS one by default, an in-memory fault-injecting one in tests.
    pub fs: Arc<dyn FileSystem>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cache_bytes: 1 << 30,
            inline_max: 128,
            max_value_len: 64 << 20,
            chunk_bytes: 1 << 30,
            durability: Durability::EveryCommit,
            zeros_after_commit: true,
            inode: InodeConfig::TEZOS,
            control_every: 256,
            read_only: false,
            working_commits: 32,
            mapped_reads: true,
            fs: Arc::new(OsFs),
        }
    }
}

/// A setter per field, each returning the changed configuration.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $field:ident: $ty:ty;)*) => {
        impl Config {
            $(
                $(#[$doc])*
                #[must_use]
                pub fn $name(mut self, value: $ty) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

setters! {
    /// Sets [`Config::cache_bytes`].
    with_cache_bytes: cache_bytes: u64;
    /// Sets [`Config::inline_max`].
    with_inline_max: inline_max: usize;
    /// Sets [`Config::max_value_len`].
    with_max_value_len: max_value_len: usize;
    /// Sets [`Config::chunk_bytes`].
    with_chunk_bytes: chunk_bytes: u64;
    /// Sets [`Config::durability`].
    with_durability: durability: Durability;
    /// Sets [`Config::zeros_after_commit`].
    with_zeros_after_commit: zeros_after_commit: bool;
    /// Sets [`Config::inode`].
    with_inode: inode: InodeConfig;
    /// Sets [`Config::control_every`].
    with_control_every: control_every: u32;
    /// Sets [`Config::read_only`].
    with_read_only: read_only: bool;
    /// Sets [`Config::mapped_reads`].
    with_mapped_reads: mapped_reads: bool;
    /// Sets [`Config::working_commits`].
    with_working_commits: working_commits: u32;
    /// Sets [`Config::fs`].
    with_fs: fs: Arc<dyn FileSystem>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setters_change_only_their_field() {
        let c = Config::default().with_cache_bytes(7).with_read_only(true).with_control_every(3);
        let d = Config::default();
        assert_eq!((c.cache_bytes, c.read_only, c.control_every), (7, true, 3));
        assert_eq!((c.inline_max, c.chunk_bytes, c.working_commits), (d.inline_max, d.chunk_bytes, d.working_commits));
    }
}
