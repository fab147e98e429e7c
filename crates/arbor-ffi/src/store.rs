//! Stores: open and close, checkout, commit, commit info, the last commit and refresh.

use std::ffi::c_char;
use std::time::Duration;

use arbor::{Config, Durability, Hash, Store};

use crate::status::{guard, ArborStatus, Failure};
use crate::types::{arg, bytes, fs_path, new_tree, out, ArborBytes, ArborHash, ArborTree};

/// An open store. Made by `arbor_store_open`, freed by `arbor_store_close`.
#[derive(Debug)]
pub struct ArborStore(pub(crate) Store);

/// When a commit's data reaches stable storage.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArborDurability {
    /// Every commit is fsynced before `arbor_commit` returns (the default).
    EveryCommit = 0,
    /// The log is fsynced when a commit finds the last sync older than `sync_interval_ms`,
    /// and on close: a power loss may drop the commits of the last interval, never older ones.
    Interval = 1,
    /// `arbor_commit` returns once written, while the commit's fsync runs beside the caller;
    /// the next commit (or head change, flush, close) waits for it first. A power loss may
    /// drop the last commit returned, never an earlier one.
    Pipelined = 2,
}

impl ArborDurability {
    /// The policy a C caller's number names (C enums may hold any int, so the field is read
    /// as a number and checked).
    fn from_c(value: u32, interval_ms: u64) -> Result<Durability, Failure> {
        match value {
            v if v == ArborDurability::EveryCommit as u32 => Ok(Durability::EveryCommit),
            v if v == ArborDurability::Interval as u32 => Ok(Durability::Interval(Duration::from_millis(interval_ms))),
            v if v == ArborDurability::Pipelined as u32 => Ok(Durability::Pipelined),
            v => Err(Failure::new(ArborStatus::InvalidArgument, format!("unknown durability {v} in the config"))),
        }
    }
}

/// Options for `arbor_store_open`; start from `arbor_config_default`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ArborConfig {
    /// Budget of the decoded-object cache, in bytes.
    pub cache_bytes: u64,
    /// Durability policy of commits: one of the `ArborDurability` values (another number is
    /// refused with `ARBOR_STATUS_INVALID_ARGUMENT`).
    pub durability: u32,
    /// Interval of `ARBOR_DURABILITY_INTERVAL`, in milliseconds (ignored otherwise).
    pub sync_interval_ms: u64,
    /// Open without writing: no lock is taken and commits are refused; `arbor_store_refresh`
    /// picks up what a writer committed since.
    pub read_only: bool,
}

/// Fills `config` with the defaults (1 GiB cache, every commit durable, writable).
///
/// # Safety
/// `config` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_config_default(config: *mut ArborConfig) -> ArborStatus {
    guard("arbor_config_default", || {
        // SAFETY: caller's contract.
        let o = unsafe { out(config, "config") }?;
        let d = Config::default();
        o.write(ArborConfig {
            cache_bytes: d.cache_bytes,
            durability: ArborDurability::EveryCommit as u32,
            sync_interval_ms: 1000,
            read_only: d.read_only,
        });
        Ok(())
    })
}

/// Opens (creating it if missing, unless read-only) the store in directory `dir` with
/// `config` (NULL: the defaults) and stores a new handle in `*store`.
/// Fails with `ARBOR_STATUS_LOCKED` if another writer holds the directory.
///
/// # Safety
/// `dir` must be a NUL-terminated string; `config` NULL or valid; `store` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_store_open(
    dir: *const c_char,
    config: *const ArborConfig,
    store: *mut *mut ArborStore,
) -> ArborStatus {
    guard("arbor_store_open", || {
        // SAFETY: caller's contract, for each argument.
        let (dir, o) = unsafe { (fs_path(dir, "dir")?, out(store, "store")?) };
        let mut cfg = Config::default();
        // SAFETY: caller's contract.
        if let Some(c) = unsafe { config.as_ref() } {
            cfg.cache_bytes = c.cache_bytes;
            cfg.read_only = c.read_only;
            cfg.durability = ArborDurability::from_c(c.durability, c.sync_interval_ms)?;
        }
        let s = Store::open_with(dir, cfg)?;
        o.write(Box::into_raw(Box::new(ArborStore(s))));
        Ok(())
    })
}

/// Syncs what was committed, releases the writer lock and frees the handle, which is freed
/// even when the final sync fails (the status says so). Trees of the store stay readable
/// (they keep its files open) until freed. NULL does nothing. Must not run while another
/// thread uses the same handle.
///
/// # Safety
/// `store` must be NULL or a handle from `arbor_store_open` not closed yet.
#[no_mangle]
pub unsafe extern "C" fn arbor_store_close(store: *mut ArborStore) -> ArborStatus {
    guard("arbor_store_close", || {
        if store.is_null() {
            return Ok(());
        }
        // SAFETY: a live handle made by `arbor_store_open`, given back once.
        let s = unsafe { Box::from_raw(store) };
        s.0.close()?;
        Ok(())
    })
}

/// Stores in `*tree` a new handle on the empty tree of this store, to build a first commit.
///
/// # Safety
/// `store` must be a live handle; `tree` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_store_empty(store: *const ArborStore, tree: *mut *mut ArborTree) -> ArborStatus {
    guard("arbor_store_empty", || {
        // SAFETY: caller's contract.
        let (s, o) = unsafe { (arg(store, "store")?, out(tree, "tree")?) };
        o.write(new_tree(s.0.empty()));
        Ok(())
    })
}

/// Stores in `*tree` a new handle on the tree of `commit` (Tezos `checkout`). Fails with
/// `ARBOR_STATUS_UNKNOWN_COMMIT` if the store has no such commit (`*tree` is then untouched).
///
/// # Safety
/// `store` must be a live handle; `commit` valid; `tree` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_checkout(
    store: *const ArborStore,
    commit: *const ArborHash,
    tree: *mut *mut ArborTree,
) -> ArborStatus {
    guard("arbor_checkout", || {
        // SAFETY: caller's contract.
        let (s, c, o) = unsafe { (arg(store, "store")?, arg(commit, "commit")?, out(tree, "tree")?) };
        let t = s.0.checkout(&Hash::from(*c))?;
        o.write(new_tree(t));
        Ok(())
    })
}

/// True in `*exists` if `commit` can be checked out (Tezos `exists`).
///
/// # Safety
/// `store` must be a live handle; `commit` valid; `exists` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_store_contains(
    store: *const ArborStore,
    commit: *const ArborHash,
    exists: *mut bool,
) -> ArborStatus {
    guard("arbor_store_contains", || {
        // SAFETY: caller's contract.
        let (s, c, o) = unsafe { (arg(store, "store")?, arg(commit, "commit")?, out(exists, "exists")?) };
        o.write(s.0.contains(&Hash::from(*c)));
        Ok(())
    })
}

/// Commits `tree` (a directory) with `n_parents` parent hashes, a date in seconds, and author
/// and message bytes, durably under the store's policy, and stores the commit hash in
/// `*commit` (Tezos `commit`). Commits from several threads are serialised.
///
/// # Safety
/// `store`, `tree` must be live handles; `parents` must hold `n_parents` hashes (NULL if 0);
/// `author` and `message` must hold their lengths in bytes (NULL if 0); `commit` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_commit(
    store: *const ArborStore,
    tree: *const ArborTree,
    parents: *const ArborHash,
    n_parents: usize,
    date: i64,
    author: *const u8,
    author_len: usize,
    message: *const u8,
    message_len: usize,
    commit: *mut ArborHash,
) -> ArborStatus {
    // SAFETY: caller's contract.
    unsafe {
        commit_passed(
            "arbor_commit",
            store,
            Passed::Lent(tree),
            parents,
            n_parents,
            date,
            author,
            author_len,
            message,
            message_len,
            commit,
        )
    }
}

/// Commits `tree` as `arbor_commit` does, taking the handle: for a caller that frees the tree
/// once committed, as a node does after each block. The store keeps the tree as its working
/// tree either way; given the tree, it lets go of the tree's cold part while the commit's
/// sync runs (Rust `Store::commit_owned`) rather than at the next checkout, and what is
/// durable when the call returns is the same. The handle is freed by this call whatever it
/// returns, an error included (check the parent out again to retry): do not use or free it
/// afterwards.
///
/// # Safety
/// As `arbor_commit`; `tree` must be NULL or a handle arbor made and not freed yet (not one
/// borrowed from a list or a fold callback).
#[no_mangle]
pub unsafe extern "C" fn arbor_commit_owned(
    store: *const ArborStore,
    tree: *mut ArborTree,
    parents: *const ArborHash,
    n_parents: usize,
    date: i64,
    author: *const u8,
    author_len: usize,
    message: *const u8,
    message_len: usize,
    commit: *mut ArborHash,
) -> ArborStatus {
    // SAFETY: caller's contract: a handle made by `new_tree`, given back once, or NULL.
    let given = (!tree.is_null()).then(|| unsafe { Box::from_raw(tree) });
    // SAFETY: caller's contract.
    unsafe {
        commit_passed(
            "arbor_commit_owned",
            store,
            Passed::Given(given),
            parents,
            n_parents,
            date,
            author,
            author_len,
            message,
            message_len,
            commit,
        )
    }
}

/// The tree a commit entry point was passed: lent by the caller, or handed over (None: NULL).
enum Passed {
    Lent(*const ArborTree),
    Given(Option<Box<ArborTree>>),
}

/// The body of `arbor_commit` and `arbor_commit_owned` (`function`): checks the arguments in
/// order (store, tree, commit, author, message, parents) and commits.
///
/// # Safety
/// As `arbor_commit`.
#[expect(clippy::too_many_arguments, reason = "the C entry points' arguments, passed on as they came")]
unsafe fn commit_passed(
    function: &str,
    store: *const ArborStore,
    tree: Passed,
    parents: *const ArborHash,
    n_parents: usize,
    date: i64,
    author: *const u8,
    author_len: usize,
    message: *const u8,
    message_len: usize,
    commit: *mut ArborHash,
) -> ArborStatus {
    guard(function, || {
        // SAFETY: caller's contract.
        let s = unsafe { arg(store, "store") }?;
        /// The tree, checked.
        enum Checked<'t> {
            Lent(&'t ArborTree),
            Given(Box<ArborTree>),
        }
        let tree = match tree {
            // SAFETY: caller's contract.
            Passed::Lent(t) => Checked::Lent(unsafe { arg(t, "tree") }?),
            Passed::Given(t) => Checked::Given(t.ok_or_else(|| Failure::null("tree"))?),
        };
        // SAFETY: caller's contract.
        let o = unsafe { out(commit, "commit") }?;
        // SAFETY: caller's contract.
        let (author, message) =
            unsafe { (bytes(author, author_len, "author")?, bytes(message, message_len, "message")?) };
        // SAFETY: caller's contract.
        let parents = unsafe { hashes(parents, n_parents) }?;
        let (h, _) = match tree {
            Checked::Lent(t) => s.0.commit_with_stats(&t.0, &parents, date, author, message)?,
            Checked::Given(t) => s.0.commit_owned(t.0, &parents, date, author, message)?,
        };
        o.write(h.into());
        Ok(())
    })
}

/// What a commit records. Filled by `arbor_commit_info`; its buffers belong to the caller, who
/// releases them with `arbor_commit_info_free`.
#[repr(C)]
#[derive(Debug)]
pub struct ArborCommitInfo {
    /// The commit's hash.
    pub hash: ArborHash,
    /// Hash of its tree.
    pub tree: ArborHash,
    /// Parent hashes, in the order given at commit (NULL if none).
    pub parents: *mut ArborHash,
    /// Number of parents.
    pub n_parents: usize,
    /// Date in seconds.
    pub date: i64,
    /// Author bytes.
    pub author: ArborBytes,
    /// Message bytes.
    pub message: ArborBytes,
}

/// Fills `*info` with what `commit` records (Tezos `get_commit_info`).
///
/// # Safety
/// `store` must be a live handle; `commit` valid; `info` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_commit_info(
    store: *const ArborStore,
    commit: *const ArborHash,
    info: *mut ArborCommitInfo,
) -> ArborStatus {
    guard("arbor_commit_info", || {
        // SAFETY: caller's contract.
        let (s, c, o) = unsafe { (arg(store, "store")?, arg(commit, "commit")?, out(info, "info")?) };
        let i = s.0.commit_info(&Hash::from(*c))?;
        let n_parents = i.parents.len();
        let parents = if n_parents == 0 {
            std::ptr::null_mut()
        } else {
            let b: Box<[ArborHash]> = i.parents.into_iter().map(ArborHash::from).collect();
            Box::into_raw(b).cast::<ArborHash>()
        };
        o.write(ArborCommitInfo {
            hash: i.hash.into(),
            tree: i.tree.into(),
            parents,
            n_parents,
            date: i.date,
            author: ArborBytes::from_vec(i.author),
            message: ArborBytes::from_vec(i.message),
        });
        Ok(())
    })
}

/// Frees the buffers of a commit info filled by `arbor_commit_info` and clears them (so a
/// second call does nothing). NULL does nothing.
///
/// # Safety
/// `info` must be NULL or filled by `arbor_commit_info` (or already freed by this function).
#[no_mangle]
pub unsafe extern "C" fn arbor_commit_info_free(info: *mut ArborCommitInfo) {
    // SAFETY: caller's contract.
    let Some(i) = (unsafe { info.as_mut() }) else { return };
    if !i.parents.is_null() {
        let raw = std::ptr::slice_from_raw_parts_mut(i.parents, i.n_parents);
        // SAFETY: made by `arbor_commit_info` as a boxed slice of `n_parents` hashes.
        drop(unsafe { Box::from_raw(raw) });
    }
    let author = std::mem::replace(&mut i.author, ArborBytes::NONE);
    let message = std::mem::replace(&mut i.message, ArborBytes::NONE);
    // SAFETY: both were made by `arbor_commit_info` and are freed once (replaced by NONE).
    unsafe {
        crate::types::arbor_bytes_free(author);
        crate::types::arbor_bytes_free(message);
    }
    i.parents = std::ptr::null_mut();
    i.n_parents = 0;
}

/// The most recent commit: `*found` is false on an empty store (`*commit` untouched).
///
/// # Safety
/// `store` must be a live handle; `found` and `commit` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_store_last_commit(
    store: *const ArborStore,
    found: *mut bool,
    commit: *mut ArborHash,
) -> ArborStatus {
    guard("arbor_store_last_commit", || {
        // SAFETY: caller's contract.
        let (s, f, o) = unsafe { (arg(store, "store")?, out(found, "found")?, out(commit, "commit")?) };
        let last = s.0.last_commit();
        f.write(last.is_some());
        if let Some(h) = last {
            o.write(h.into());
        }
        Ok(())
    })
}

/// For a store opened read-only beside a writer: picks up the commits and heads written since
/// it was opened or last refreshed; `*new_commits` (NULL allowed) gets how many appeared.
/// Thread-safe; a writable store is always current (0).
///
/// # Safety
/// `store` must be a live handle; `new_commits` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_store_refresh(store: *const ArborStore, new_commits: *mut usize) -> ArborStatus {
    guard("arbor_store_refresh", || {
        // SAFETY: caller's contract.
        let s = unsafe { arg(store, "store") }?;
        let n = s.0.refresh()?;
        // SAFETY: caller's contract.
        if let Some(o) = unsafe { new_commits.as_mut() } {
            *o = n;
        }
        Ok(())
    })
}

/// Syncs every commit now and records a recovery point (useful under the interval policy).
///
/// # Safety
/// `store` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn arbor_store_flush(store: *const ArborStore) -> ArborStatus {
    guard("arbor_store_flush", || {
        // SAFETY: caller's contract.
        unsafe { arg(store, "store") }?.0.flush()?;
        Ok(())
    })
}

/// The hash a commit of a tree with this hash, these parents and metadata would have, without
/// writing anything (Tezos `Context.hash`), in `*commit`.
///
/// # Safety
/// `tree` valid; `parents` must hold `n_parents` hashes (NULL if 0); `author` and `message`
/// must hold their lengths in bytes (NULL if 0); `commit` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_commit_hash(
    tree: *const ArborHash,
    parents: *const ArborHash,
    n_parents: usize,
    date: i64,
    author: *const u8,
    author_len: usize,
    message: *const u8,
    message_len: usize,
    commit: *mut ArborHash,
) -> ArborStatus {
    guard("arbor_commit_hash", || {
        // SAFETY: caller's contract, for each argument.
        let (t, o) = unsafe { (arg(tree, "tree")?, out(commit, "commit")?) };
        // SAFETY: caller's contract.
        let (author, message) =
            unsafe { (bytes(author, author_len, "author")?, bytes(message, message_len, "message")?) };
        // SAFETY: caller's contract.
        let parents = unsafe { hashes(parents, n_parents) }?;
        o.write(arbor_core::commit_hash(&Hash::from(*t), &parents, date, author, message).into());
        Ok(())
    })
}

/// The `n` hashes at `p` (NULL allowed when `n` is 0).
///
/// # Safety
/// `p` must point to `n` hashes, or be NULL.
unsafe fn hashes(p: *const ArborHash, n: usize) -> Result<Vec<Hash>, Failure> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(Failure::null("parents"));
    }
    // SAFETY: non-NULL and `n` hashes by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.iter().map(|h| Hash::from(*h)).collect())
}
