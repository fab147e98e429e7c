//! Listing a directory and folding over a tree through a C callback.

use std::ffi::c_void;

use arbor::{Depth, Order, Step};

use crate::status::{guard, ArborStatus, Failure};
use crate::types::{arg, out, path, ArborSlice, ArborTree};

/// Children of a directory, made by `arbor_tree_list` and freed with `arbor_list_free`.
#[derive(Debug)]
pub struct ArborList(Vec<(Step, ArborTree)>);

/// Lists the children of the directory at a path (Tezos `Tree.list`), skipping `offset` and
/// keeping at most `length` (a negative `length`: all), into a new list in `*list`. The order is
/// Octez's (docs/ORDER.md): irmin-pack's stored order for a directory unchanged since it was
/// written or read, sorted by step otherwise. A value or nothing at the path gives an empty list.
///
/// # Safety
/// `tree` must be a live handle; `steps` must hold `n_steps` slices; `list` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_list(
    tree: *const ArborTree,
    steps: *const ArborSlice,
    n_steps: usize,
    offset: usize,
    length: i64,
    list: *mut *mut ArborList,
) -> ArborStatus {
    guard("arbor_tree_list", || {
        // SAFETY: caller's contract.
        let (t, p, o) = unsafe { (arg(tree, "tree")?, path(steps, n_steps)?, out(list, "list")?) };
        // Beyond the address space is as good as unlimited.
        let length = (length >= 0).then(|| usize::try_from(length).unwrap_or(usize::MAX));
        let entries = t.0.list(&p, Some(offset), length)?;
        let entries = entries.into_iter().map(|(s, t)| (s, ArborTree(t))).collect();
        o.write(Box::into_raw(Box::new(ArborList(entries))));
        Ok(())
    })
}

/// Number of entries of a list (0 for NULL).
///
/// # Safety
/// `list` must be NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn arbor_list_len(list: *const ArborList) -> usize {
    // SAFETY: caller's contract.
    unsafe { list.as_ref() }.map_or(0, |l| l.0.len())
}

/// Entry `index` of a list: its step in `*step` and its tree in `*tree`, both borrowed from the
/// list (valid until `arbor_list_free`; clone the tree with `arbor_tree_clone` to keep it).
///
/// # Safety
/// `list` must be a live list; `step` and `tree` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_list_get(
    list: *const ArborList,
    index: usize,
    step: *mut ArborSlice,
    tree: *mut *const ArborTree,
) -> ArborStatus {
    guard("arbor_list_get", || {
        // SAFETY: caller's contract.
        let (l, s, t) = unsafe { (arg(list, "list")?, out(step, "step")?, out(tree, "tree")?) };
        let (k, v) = l.0.get(index).ok_or_else(|| {
            Failure::new(ArborStatus::InvalidArgument, format!("index {index} out of a list of {}", l.0.len()))
        })?;
        s.write(ArborSlice { ptr: k.as_ptr(), len: k.len() });
        t.write(v);
        Ok(())
    })
}

/// Frees a list and the trees it lends. NULL does nothing.
///
/// # Safety
/// `list` must be NULL or a list from `arbor_tree_list` not freed yet.
#[no_mangle]
pub unsafe extern "C" fn arbor_list_free(list: *mut ArborList) {
    if !list.is_null() {
        // SAFETY: made by `arbor_tree_list`, given back once.
        drop(unsafe { Box::from_raw(list) });
    }
}

/// Which depths a fold visits, counted from the folded path (depth 0), as Tezos's
/// `` `Eq | `Le | `Lt | `Ge | `Gt ``; `ARBOR_DEPTH_ANY` visits all.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArborDepth {
    /// Every depth (the bound is ignored).
    Any = 0,
    /// Exactly the bound.
    Eq = 1,
    /// At most the bound.
    Le = 2,
    /// Less than the bound.
    Lt = 3,
    /// At least the bound.
    Ge = 4,
    /// More than the bound.
    Gt = 5,
}

/// Order in which a fold visits a directory's children.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArborOrder {
    /// By step bytes (sorts large directories).
    Sorted = 0,
    /// Octez's `Undefined` order (docs/ORDER.md; cheaper than sorting when unchanged).
    Storage = 1,
}

/// Called by `arbor_tree_fold` for each subtree visited: `ctx` as given, the subtree's path
/// relative to the folded path (`key_len` steps at `key`, borrowed for the call) and the
/// subtree (borrowed for the call; clone it to keep it). Returns 0 to go on, anything else to
/// stop the fold. It must not unwind (longjmp, C++ exceptions) through arbor.
pub type ArborFoldFn = Option<
    unsafe extern "C" fn(ctx: *mut c_void, key: *const ArborSlice, key_len: usize, tree: *const ArborTree) -> i32,
>;

/// Visits in pre-order every subtree (directories and values) below a path whose depth the
/// bound admits (Tezos `Tree.fold`), calling `callback` on each. A callback that returns
/// non-zero stops the fold, which still returns `ARBOR_STATUS_OK`. Nothing at the path visits
/// nothing.
///
/// # Safety
/// `tree` must be a live handle; `steps` must hold `n_steps` slices; `callback` must be a
/// valid function pointer; `ctx` is passed through untouched.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_fold(
    tree: *const ArborTree,
    steps: *const ArborSlice,
    n_steps: usize,
    depth: ArborDepth,
    bound: usize,
    order: ArborOrder,
    callback: ArborFoldFn,
    ctx: *mut c_void,
) -> ArborStatus {
    guard("arbor_tree_fold", || {
        // SAFETY: caller's contract.
        let (t, p) = unsafe { (arg(tree, "tree")?, path(steps, n_steps)?) };
        let f = callback.ok_or_else(|| Failure::null("callback"))?;
        let depth = match depth {
            ArborDepth::Any => None,
            ArborDepth::Eq => Some(Depth::Eq(bound)),
            ArborDepth::Le => Some(Depth::Le(bound)),
            ArborDepth::Lt => Some(Depth::Lt(bound)),
            ArborDepth::Ge => Some(Depth::Ge(bound)),
            ArborDepth::Gt => Some(Depth::Gt(bound)),
        };
        let order = match order {
            ArborOrder::Sorted => Order::Sorted,
            ArborOrder::Storage => Order::Undefined,
        };
        let mut key: Vec<ArborSlice> = Vec::new();
        t.0.fold(&p, depth, order, |k, sub| {
            key.clear();
            key.extend(k.iter().map(|s| ArborSlice { ptr: s.as_ptr(), len: s.len() }));
            let handle = ArborTree(sub.clone());
            // SAFETY: the caller vouches for `f`; the key and handle outlive the call.
            let stop = unsafe { f(ctx, key.as_ptr(), key.len(), &handle) };
            Ok(stop == 0)
        })?;
        Ok(())
    })
}
