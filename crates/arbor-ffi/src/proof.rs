//! Merkle proofs: prove what is at some paths of a tree or commit, verify from bytes alone.

use arbor::proof::{verify_paths, Proved, Verified};
use arbor::{Hash, InodeConfig};

use crate::status::{guard, ArborStatus, Failure};
use crate::store::ArborStore;
use crate::types::{arg, bytes, out, path, paths, ArborBytes, ArborHash, ArborPath, ArborSlice, ArborTree};

/// A proof that verified, made by `arbor_proof_verify` and freed with `arbor_verified_free`.
#[derive(Debug)]
pub struct ArborVerified(Verified);

/// What a verified proof tells about one path.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArborProved {
    /// A value is there.
    Value = 0,
    /// A directory is there (its hash is given).
    Dir = 1,
    /// Nothing is there.
    Absent = 2,
    /// The path is not one the proof proves.
    NotProved = 3,
}

/// The proof (docs/PROOFS.md encoding) of what is at each of `n_paths` paths of `tree`, in
/// `*proof`; its root hash is the tree's hash. The caller frees `*proof` with
/// `arbor_bytes_free`.
///
/// # Safety
/// `tree` must be a live handle; `paths_` must hold `n_paths` paths; `proof` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_tree_prove(
    tree: *const ArborTree,
    paths_: *const ArborPath,
    n_paths: usize,
    proof: *mut ArborBytes,
) -> ArborStatus {
    guard("arbor_tree_prove", || {
        // SAFETY: caller's contract.
        let (t, ps, o) = unsafe { (arg(tree, "tree")?, paths(paths_, n_paths)?, out(proof, "proof")?) };
        o.write(ArborBytes::from_vec(t.0.prove(&ps)?.encode()));
        Ok(())
    })
}

/// [`arbor_tree_prove`] in the tree of `commit`; its root hash is the commit's tree hash.
///
/// # Safety
/// `store` must be a live handle; `commit` valid; `paths_` must hold `n_paths` paths; `proof`
/// writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_store_prove(
    store: *const ArborStore,
    commit: *const ArborHash,
    paths_: *const ArborPath,
    n_paths: usize,
    proof: *mut ArborBytes,
) -> ArborStatus {
    guard("arbor_store_prove", || {
        // SAFETY: caller's contract.
        let (s, c) = unsafe { (arg(store, "store")?, arg(commit, "commit")?) };
        // SAFETY: caller's contract.
        let (ps, o) = unsafe { (paths(paths_, n_paths)?, out(proof, "proof")?) };
        o.write(ArborBytes::from_vec(s.0.prove(&Hash::from(*c), &ps)?.encode()));
        Ok(())
    })
}

/// Verifies, from its bytes alone and with the Tezos inode shape, that `proof` proves exactly
/// the `n_paths` paths (and no writes) in the tree whose hash is the trusted `root`; on success
/// stores what it proves in a new `*verified`. A tampered, truncated or mismatched proof
/// fails with `ARBOR_STATUS_PROOF` and a message naming the first problem found.
///
/// # Safety
/// `proof` must hold `len` bytes; `root` valid; `paths_` must hold `n_paths` paths;
/// `verified` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_proof_verify(
    proof: *const u8,
    len: usize,
    root: *const ArborHash,
    paths_: *const ArborPath,
    n_paths: usize,
    verified: *mut *mut ArborVerified,
) -> ArborStatus {
    guard("arbor_proof_verify", || {
        // SAFETY: caller's contract.
        let (b, r) = unsafe { (bytes(proof, len, "proof")?, arg(root, "root")?) };
        // SAFETY: caller's contract.
        let (ps, o) = unsafe { (paths(paths_, n_paths)?, out(verified, "verified")?) };
        let v = verify_paths(b, &Hash::from(*r), InodeConfig::TEZOS, &ps)
            .map_err(|e| Failure::new(ArborStatus::Proof, e.to_string()))?;
        o.write(Box::into_raw(Box::new(ArborVerified(v))));
        Ok(())
    })
}

/// What a verified proof proves at a path: `*proved` says which; for a value `*value` gets a
/// copy (freed by the caller with `arbor_bytes_free`), for a directory `*dir` gets its hash;
/// otherwise they are `{NULL, 0}` and untouched.
///
/// # Safety
/// `verified` must be live; `steps` must hold `n_steps` slices; `proved`, `value`, `dir`
/// writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_verified_find(
    verified: *const ArborVerified,
    steps: *const ArborSlice,
    n_steps: usize,
    proved: *mut ArborProved,
    value: *mut ArborBytes,
    dir: *mut ArborHash,
) -> ArborStatus {
    guard("arbor_verified_find", || {
        // SAFETY: caller's contract.
        let (v, p) = unsafe { (arg(verified, "verified")?, path(steps, n_steps)?) };
        // SAFETY: caller's contract.
        let (k, val, d) = unsafe { (out(proved, "proved")?, out(value, "value")?, out(dir, "dir")?) };
        val.write(ArborBytes::NONE);
        k.write(match v.0.get(&p) {
            Some(Proved::Value(bytes)) => {
                val.write(ArborBytes::from_vec(bytes.clone()));
                ArborProved::Value
            }
            Some(Proved::Dir(h)) => {
                d.write((*h).into());
                ArborProved::Dir
            }
            Some(Proved::Absent) => ArborProved::Absent,
            None => ArborProved::NotProved,
        });
        Ok(())
    })
}

/// Frees a verified proof. NULL does nothing.
///
/// # Safety
/// `verified` must be NULL or made by `arbor_proof_verify` and not freed yet.
#[no_mangle]
pub unsafe extern "C" fn arbor_verified_free(verified: *mut ArborVerified) {
    if !verified.is_null() {
        // SAFETY: made by `arbor_proof_verify`, given back once.
        drop(unsafe { Box::from_raw(verified) });
    }
}
