//! Tree handles: reads (find, mem, length, hash) and functional updates (add, remove), each
//! returning a new handle and leaving the input unchanged, as Tezos's `Context.Tree` does.

use arbor::{Kind, Tree};

use crate::status::{guard, ArborStatus};
use crate::types::{arg, bytes, new_tree, out, path, ArborBytes, ArborHash, ArborSlice, ArborTree};

/// What a tree is at its root.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArborKind {
    /// A value (Tezos `` `Value ``).
    Value = 0,
    /// A directory (Tezos `` `Tree ``).
    Dir = 1,
}

/// Stores in `*tree` a new handle on the empty directory, tied to no store, hashed with the
/// Tezos inode shape (Tezos `Tree.empty`); it can be committed to any Tezos-shaped store.
///
/// # Safety
/// `tree` must be writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_empty(tree: *mut *mut ArborTree) -> ArborStatus {
    guard("arbor_tree_empty", || {
        // SAFETY: caller's contract.
        unsafe { out(tree, "tree") }?.write(new_tree(Tree::empty()));
        Ok(())
    })
}

/// Stores in `*tree` a new handle on a tree that is the single value `value` (Tezos
/// `Tree.of_value`), with the store shape of `like`.
///
/// # Safety
/// `like` must be a live handle; `value` must hold `len` bytes (NULL if 0); `tree` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_of_value(
    like: *const ArborTree,
    value: *const u8,
    len: usize,
    tree: *mut *mut ArborTree,
) -> ArborStatus {
    guard("arbor_tree_of_value", || {
        // SAFETY: caller's contract.
        let (l, v, o) = unsafe { (arg(like, "like")?, bytes(value, len, "value")?, out(tree, "tree")?) };
        o.write(new_tree(l.0.of_value(v)?));
        Ok(())
    })
}

/// Stores in `*copy` a new handle on the same tree (O(1)); both must be freed.
///
/// # Safety
/// `tree` must be a live handle; `copy` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_clone(tree: *const ArborTree, copy: *mut *mut ArborTree) -> ArborStatus {
    guard("arbor_tree_clone", || {
        // SAFETY: caller's contract.
        let (t, o) = unsafe { (arg(tree, "tree")?, out(copy, "copy")?) };
        o.write(new_tree(t.0.clone()));
        Ok(())
    })
}

/// Frees a tree handle. NULL does nothing. Must not run while another thread uses the handle.
///
/// # Safety
/// `tree` must be NULL or a handle arbor made and not freed yet (not one borrowed from a list
/// or a fold callback).
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_free(tree: *mut ArborTree) {
    if !tree.is_null() {
        // SAFETY: a handle made by `new_tree`, given back once.
        drop(unsafe { Box::from_raw(tree) });
    }
}

/// The tree's hash (Tezos `Tree.hash`), in `*hash`.
///
/// # Safety
/// `tree` must be a live handle; `hash` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_hash(tree: *const ArborTree, hash: *mut ArborHash) -> ArborStatus {
    guard("arbor_tree_hash", || {
        // SAFETY: caller's contract.
        let (t, o) = unsafe { (arg(tree, "tree")?, out(hash, "hash")?) };
        o.write(t.0.hash().into());
        Ok(())
    })
}

/// Whether the root is a value or a directory (Tezos `Tree.kind`), in `*kind`.
///
/// # Safety
/// `tree` must be a live handle; `kind` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_kind(tree: *const ArborTree, kind: *mut ArborKind) -> ArborStatus {
    guard("arbor_tree_kind", || {
        // SAFETY: caller's contract.
        let (t, o) = unsafe { (arg(tree, "tree")?, out(kind, "kind")?) };
        o.write(match t.0.kind() {
            Kind::Value => ArborKind::Value,
            Kind::Dir => ArborKind::Dir,
        });
        Ok(())
    })
}

/// True in `*empty` for the empty directory (Tezos `Tree.is_empty`).
///
/// # Safety
/// `tree` must be a live handle; `empty` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_is_empty(tree: *const ArborTree, empty: *mut bool) -> ArborStatus {
    guard("arbor_tree_is_empty", || {
        // SAFETY: caller's contract.
        let (t, o) = unsafe { (arg(tree, "tree")?, out(empty, "empty")?) };
        o.write(t.0.is_empty()?);
        Ok(())
    })
}

/// The value of a tree that is a value (Tezos `Tree.to_value`): `*found` false and `*value`
/// `{NULL, 0}` for a directory. The caller frees `*value` with `arbor_bytes_free`.
///
/// # Safety
/// `tree` must be a live handle; `found` and `value` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_to_value(
    tree: *const ArborTree,
    found: *mut bool,
    value: *mut ArborBytes,
) -> ArborStatus {
    guard("arbor_tree_to_value", || {
        // SAFETY: caller's contract.
        let (t, f, o) = unsafe { (arg(tree, "tree")?, out(found, "found")?, out(value, "value")?) };
        let v = t.0.to_value()?;
        f.write(v.is_some());
        o.write(v.map_or(ArborBytes::NONE, ArborBytes::from_vec));
        Ok(())
    })
}

/// The value at a path (Tezos `Tree.find`): `*found` false and `*value` `{NULL, 0}` if no
/// value is there. The caller frees `*value` with `arbor_bytes_free`.
///
/// # Safety
/// `tree` must be a live handle; `steps` must hold `n_steps` slices; `found`, `value` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_find(
    tree: *const ArborTree,
    steps: *const ArborSlice,
    n_steps: usize,
    found: *mut bool,
    value: *mut ArborBytes,
) -> ArborStatus {
    guard("arbor_tree_find", || {
        // SAFETY: caller's contract.
        let (t, p) = unsafe { (arg(tree, "tree")?, path(steps, n_steps)?) };
        // SAFETY: caller's contract.
        let (f, o) = unsafe { (out(found, "found")?, out(value, "value")?) };
        let v = t.0.find(&p)?;
        f.write(v.is_some());
        o.write(v.map_or(ArborBytes::NONE, ArborBytes::from_vec));
        Ok(())
    })
}

/// True in `*result` if a value is at the path (Tezos `Tree.mem`).
///
/// # Safety
/// `tree` must be a live handle; `steps` must hold `n_steps` slices; `result` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_mem(
    tree: *const ArborTree,
    steps: *const ArborSlice,
    n_steps: usize,
    result: *mut bool,
) -> ArborStatus {
    guard("arbor_tree_mem", || {
        // SAFETY: caller's contract.
        let (t, p, o) = unsafe { (arg(tree, "tree")?, path(steps, n_steps)?, out(result, "result")?) };
        o.write(t.0.mem(&p)?);
        Ok(())
    })
}

/// True in `*result` if a value or a directory is at the path (Tezos `Tree.mem_tree`).
///
/// # Safety
/// `tree` must be a live handle; `steps` must hold `n_steps` slices; `result` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_mem_tree(
    tree: *const ArborTree,
    steps: *const ArborSlice,
    n_steps: usize,
    result: *mut bool,
) -> ArborStatus {
    guard("arbor_tree_mem_tree", || {
        // SAFETY: caller's contract.
        let (t, p, o) = unsafe { (arg(tree, "tree")?, path(steps, n_steps)?, out(result, "result")?) };
        o.write(t.0.mem_tree(&p)?);
        Ok(())
    })
}

/// The subtree at a path (Tezos `Tree.find_tree`): a new handle in `*subtree`, or NULL if
/// nothing is there.
///
/// # Safety
/// `tree` must be a live handle; `steps` must hold `n_steps` slices; `subtree` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_find_tree(
    tree: *const ArborTree,
    steps: *const ArborSlice,
    n_steps: usize,
    subtree: *mut *mut ArborTree,
) -> ArborStatus {
    guard("arbor_tree_find_tree", || {
        // SAFETY: caller's contract.
        let (t, p, o) = unsafe { (arg(tree, "tree")?, path(steps, n_steps)?, out(subtree, "subtree")?) };
        o.write(t.0.find_tree(&p)?.map_or(std::ptr::null_mut(), new_tree));
        Ok(())
    })
}

/// Number of children of the directory at a path, 0 for a value or nothing (Tezos
/// `Tree.length`), in `*length`.
///
/// # Safety
/// `tree` must be a live handle; `steps` must hold `n_steps` slices; `length` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_length(
    tree: *const ArborTree,
    steps: *const ArborSlice,
    n_steps: usize,
    length: *mut u64,
) -> ArborStatus {
    guard("arbor_tree_length", || {
        // SAFETY: caller's contract.
        let (t, p, o) = unsafe { (arg(tree, "tree")?, path(steps, n_steps)?, out(length, "length")?) };
        o.write(t.0.length(&p)?);
        Ok(())
    })
}

/// A new handle in `*result` on the tree with `value` at the path, directories created on the
/// way and whatever was there replaced (Tezos `Tree.add`). `tree` is unchanged.
///
/// # Safety
/// `tree` must be a live handle; `steps` must hold `n_steps` slices; `value` must hold `len`
/// bytes (NULL if 0); `result` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_add(
    tree: *const ArborTree,
    steps: *const ArborSlice,
    n_steps: usize,
    value: *const u8,
    len: usize,
    result: *mut *mut ArborTree,
) -> ArborStatus {
    guard("arbor_tree_add", || {
        // SAFETY: caller's contract.
        let (t, p, v) = unsafe { (arg(tree, "tree")?, path(steps, n_steps)?, bytes(value, len, "value")?) };
        // SAFETY: caller's contract.
        let o = unsafe { out(result, "result") }?;
        o.write(new_tree(t.0.add(&p, v)?));
        Ok(())
    })
}

/// A new handle in `*result` on the tree with `subtree` grafted at the path; an empty
/// `subtree` removes the path (Tezos `Tree.add_tree`). Both inputs are unchanged.
///
/// # Safety
/// `tree`, `subtree` must be live handles; `steps` must hold `n_steps` slices; `result`
/// writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_add_tree(
    tree: *const ArborTree,
    steps: *const ArborSlice,
    n_steps: usize,
    subtree: *const ArborTree,
    result: *mut *mut ArborTree,
) -> ArborStatus {
    guard("arbor_tree_add_tree", || {
        // SAFETY: caller's contract.
        let (t, p, sub) = unsafe { (arg(tree, "tree")?, path(steps, n_steps)?, arg(subtree, "subtree")?) };
        // SAFETY: caller's contract.
        let o = unsafe { out(result, "result") }?;
        o.write(new_tree(t.0.add_tree(&p, &sub.0)?));
        Ok(())
    })
}

/// A new handle in `*result` on the tree without whatever is at the path; directories left
/// empty disappear (Tezos `Tree.remove`). `tree` is unchanged.
///
/// # Safety
/// `tree` must be a live handle; `steps` must hold `n_steps` slices; `result` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_remove(
    tree: *const ArborTree,
    steps: *const ArborSlice,
    n_steps: usize,
    result: *mut *mut ArborTree,
) -> ArborStatus {
    guard("arbor_tree_remove", || {
        // SAFETY: caller's contract.
        let (t, p, o) = unsafe { (arg(tree, "tree")?, path(steps, n_steps)?, out(result, "result")?) };
        o.write(new_tree(t.0.remove(&p)?));
        Ok(())
    })
}
