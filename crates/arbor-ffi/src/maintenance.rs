//! Garbage collection and snapshots.

use std::ffi::c_char;

use arbor::snapshot::{export_file, import_file};
use arbor::{GcMode, Hash};

use crate::status::{guard, ArborStatus};
use crate::store::ArborStore;
use crate::types::{arg, fs_path, out, ArborHash};

/// What a garbage collection does with history older than the kept commit.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArborGcMode {
    /// Rolling node: older commits and what only they reach are dropped, space given back.
    Drop = 0,
    /// Archive node: nothing is dropped; older chunks move to the read-only lower layer.
    Archive = 1,
}

/// What a garbage collection did.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ArborGcReport {
    /// Commits that can no longer be checked out.
    pub commits_dropped: u64,
    /// Records kept below the kept commit.
    pub objects_kept: u64,
    /// Bytes of those records.
    pub bytes_kept: u64,
    /// Bytes given back to the file system.
    pub bytes_freed: u64,
}

/// Runs a garbage collection on the calling thread, keeping `keep_from` and every commit
/// written after it; fills `*report` (NULL allowed). Other threads may keep reading and
/// committing meanwhile; one collection runs at a time (`ARBOR_STATUS_GC_RUNNING`).
///
/// # Safety
/// `store` must be a live handle; `keep_from` valid; `report` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_gc(
    store: *const ArborStore,
    keep_from: *const ArborHash,
    mode: ArborGcMode,
    report: *mut ArborGcReport,
) -> ArborStatus {
    guard("arbor_gc", || {
        // SAFETY: caller's contract.
        let (s, k) = unsafe { (arg(store, "store")?, arg(keep_from, "keep_from")?) };
        let mode = match mode {
            ArborGcMode::Drop => GcMode::Drop,
            ArborGcMode::Archive => GcMode::Archive,
        };
        let r = s.0.gc_blocking(&Hash::from(*k), mode)?;
        // SAFETY: caller's contract.
        if let Some(o) = unsafe { report.as_mut() } {
            *o = ArborGcReport {
                commits_dropped: r.commits_dropped,
                objects_kept: r.objects_kept,
                bytes_kept: r.bytes_kept,
                bytes_freed: r.bytes_freed,
            };
        }
        Ok(())
    })
}

/// Writes the snapshot of `commit` to the file `path` (through `path` + ".tmp", renamed once
/// complete).
///
/// # Safety
/// `store` must be a live handle; `commit` valid; `path` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn arbor_snapshot_export(
    store: *const ArborStore,
    commit: *const ArborHash,
    path: *const c_char,
) -> ArborStatus {
    guard("arbor_snapshot_export", || {
        // SAFETY: caller's contract.
        let (s, c, p) = unsafe { (arg(store, "store")?, arg(commit, "commit")?, fs_path(path, "path")?) };
        export_file(&s.0, &Hash::from(*c), p)?;
        Ok(())
    })
}

/// Imports the snapshot file `path` into the store, checking everything before committing,
/// and stores the commit it made (or found already there) in `*commit`.
///
/// # Safety
/// `store` must be a live handle; `path` NUL-terminated; `commit` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_snapshot_import(
    store: *const ArborStore,
    path: *const c_char,
    commit: *mut ArborHash,
) -> ArborStatus {
    guard("arbor_snapshot_import", || {
        // SAFETY: caller's contract.
        let (s, p, o) = unsafe { (arg(store, "store")?, fs_path(path, "path")?, out(commit, "commit")?) };
        let r = import_file(&s.0, p)?;
        o.write(r.commit.into());
        Ok(())
    })
}
