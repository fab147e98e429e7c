//! Named heads (Irmin-style branches): set, look up, remove and list.

use std::ffi::{c_char, CString};

use arbor::Hash;

use crate::status::{guard, ArborStatus, Failure};
use crate::store::ArborStore;
use crate::types::{arg, out, text, ArborHash};

/// Every head of a store at one moment, made by `arbor_store_heads` and freed with
/// `arbor_heads_free`.
#[derive(Debug)]
pub struct ArborHeads(Vec<(CString, Hash)>);

/// Points the head `name` (1-255 bytes of UTF-8) at `commit`, durably.
///
/// # Safety
/// `store` must be a live handle; `name` NUL-terminated; `commit` valid.
#[no_mangle]
pub unsafe extern "C" fn arbor_set_head(
    store: *const ArborStore,
    name: *const c_char,
    commit: *const ArborHash,
) -> ArborStatus {
    guard("arbor_set_head", || {
        // SAFETY: caller's contract.
        let (s, n, c) = unsafe { (arg(store, "store")?, text(name, "name")?, arg(commit, "commit")?) };
        s.0.set_head(n, &Hash::from(*c))?;
        Ok(())
    })
}

/// The commit the head `name` points at: `*found` false if there is no such head.
///
/// # Safety
/// `store` must be a live handle; `name` NUL-terminated; `found`, `commit` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_head(
    store: *const ArborStore,
    name: *const c_char,
    found: *mut bool,
    commit: *mut ArborHash,
) -> ArborStatus {
    guard("arbor_head", || {
        // SAFETY: caller's contract.
        let (s, n) = unsafe { (arg(store, "store")?, text(name, "name")?) };
        // SAFETY: caller's contract.
        let (f, o) = unsafe { (out(found, "found")?, out(commit, "commit")?) };
        let h = s.0.head(n);
        f.write(h.is_some());
        if let Some(h) = h {
            o.write(h.into());
        }
        Ok(())
    })
}

/// Removes the head `name`; `*removed` (NULL allowed) tells whether it existed.
///
/// # Safety
/// `store` must be a live handle; `name` NUL-terminated; `removed` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_remove_head(
    store: *const ArborStore,
    name: *const c_char,
    removed: *mut bool,
) -> ArborStatus {
    guard("arbor_remove_head", || {
        // SAFETY: caller's contract.
        let (s, n) = unsafe { (arg(store, "store")?, text(name, "name")?) };
        let r = s.0.remove_head(n)?;
        // SAFETY: caller's contract.
        if let Some(o) = unsafe { removed.as_mut() } {
            *o = r;
        }
        Ok(())
    })
}

/// Every head of the store, by name, into a new list in `*heads`.
///
/// # Safety
/// `store` must be a live handle; `heads` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_store_heads(store: *const ArborStore, heads: *mut *mut ArborHeads) -> ArborStatus {
    guard("arbor_store_heads", || {
        // SAFETY: caller's contract.
        let (s, o) = unsafe { (arg(store, "store")?, out(heads, "heads")?) };
        let list = s.0.heads().into_iter().map(|(n, h)| (CString::new(n).unwrap_or_default(), h)).collect();
        o.write(Box::into_raw(Box::new(ArborHeads(list))));
        Ok(())
    })
}

/// Number of heads in a list (0 for NULL).
///
/// # Safety
/// `heads` must be NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn arbor_heads_len(heads: *const ArborHeads) -> usize {
    // SAFETY: caller's contract.
    unsafe { heads.as_ref() }.map_or(0, |h| h.0.len())
}

/// Head `index` of a list: its name in `*name` (NUL-terminated, borrowed from the list until
/// `arbor_heads_free`) and its commit in `*commit`.
///
/// # Safety
/// `heads` must be a live list; `name`, `commit` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_heads_get(
    heads: *const ArborHeads,
    index: usize,
    name: *mut *const c_char,
    commit: *mut ArborHash,
) -> ArborStatus {
    guard("arbor_heads_get", || {
        // SAFETY: caller's contract.
        let (h, n, c) = unsafe { (arg(heads, "heads")?, out(name, "name")?, out(commit, "commit")?) };
        let (k, v) = h.0.get(index).ok_or_else(|| {
            Failure::new(ArborStatus::InvalidArgument, format!("index {index} out of a list of {} heads", h.0.len()))
        })?;
        n.write(k.as_ptr());
        c.write((*v).into());
        Ok(())
    })
}

/// Frees a list of heads. NULL does nothing.
///
/// # Safety
/// `heads` must be NULL or a list from `arbor_store_heads` not freed yet.
#[no_mangle]
pub unsafe extern "C" fn arbor_heads_free(heads: *mut ArborHeads) {
    if !heads.is_null() {
        // SAFETY: made by `arbor_store_heads`, given back once.
        drop(unsafe { Box::from_raw(heads) });
    }
}
