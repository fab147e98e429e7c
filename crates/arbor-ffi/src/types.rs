//! The plain C types of the interface (hashes, byte slices, owned buffers, paths) and the
//! checked conversions from raw pointers that every entry point goes through.

use std::ffi::{c_char, CStr};

use arbor::{Hash, Tree};
use smallvec::SmallVec;

use crate::status::{ArborStatus, Failure, FfiResult};

/// A 32-byte Blake2b hash (a commit, tree or value hash), passed by value.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArborHash {
    /// The raw digest.
    pub bytes: [u8; 32],
}

impl From<Hash> for ArborHash {
    fn from(h: Hash) -> Self {
        ArborHash { bytes: h.0 }
    }
}

impl From<ArborHash> for Hash {
    fn from(h: ArborHash) -> Self {
        Hash(h.bytes)
    }
}

/// Borrowed bytes: `len` bytes at `ptr` (which may be NULL when `len` is 0). The caller keeps
/// ownership of what it passes; arbor never frees or keeps a slice beyond the call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ArborSlice {
    /// First byte.
    pub ptr: *const u8,
    /// Number of bytes.
    pub len: usize,
}

/// A path: `len` steps at `steps` (NULL allowed when `len` is 0: the root). Each step is a
/// non-empty byte string.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ArborPath {
    /// The steps, outermost first.
    pub steps: *const ArborSlice,
    /// Number of steps.
    pub len: usize,
}

/// Bytes allocated by arbor and owned by the caller, who frees them with `arbor_bytes_free`
/// (once). `ptr` is NULL when nothing was returned.
#[repr(C)]
#[derive(Debug)]
pub struct ArborBytes {
    /// First byte, or NULL.
    pub ptr: *mut u8,
    /// Number of bytes.
    pub len: usize,
}

impl ArborBytes {
    /// No bytes (what a call stores when it returns nothing).
    pub(crate) const NONE: ArborBytes = ArborBytes { ptr: std::ptr::null_mut(), len: 0 };

    /// Hands `v` over to the caller.
    pub(crate) fn from_vec(v: Vec<u8>) -> ArborBytes {
        let b = v.into_boxed_slice();
        let len = b.len();
        ArborBytes { ptr: Box::into_raw(b).cast::<u8>(), len }
    }
}

/// Frees bytes arbor returned. Passing `{NULL, 0}` does nothing.
///
/// # Safety
/// `bytes` must come from arbor and not have been freed already.
#[no_mangle]
pub unsafe extern "C" fn arbor_bytes_free(bytes: ArborBytes) {
    if !bytes.ptr.is_null() {
        let raw = std::ptr::slice_from_raw_parts_mut(bytes.ptr, bytes.len);
        // SAFETY: the caller passes a buffer made by `ArborBytes::from_vec` (a boxed slice of
        // exactly this length) that it has not freed.
        drop(unsafe { Box::from_raw(raw) });
    }
}

/// A tree: an immutable value, shared cheaply. Made by arbor, freed with `arbor_tree_free`.
#[derive(Debug, Clone)]
pub struct ArborTree(pub(crate) Tree);

impl From<Tree> for ArborTree {
    /// Wraps a tree of the Rust API (for Rust code handing trees to C).
    fn from(t: Tree) -> Self {
        ArborTree(t)
    }
}

/// The bytes of a borrowed slice argument.
///
/// # Safety
/// `s.ptr` must point to `s.len` readable bytes for the call's duration, or be NULL.
pub(crate) unsafe fn bytes<'a>(s: *const u8, len: usize, what: &str) -> FfiResult<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if s.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-NULL and, by the caller's contract, `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(s, len) })
}

/// The steps of a path argument; arbor's own checks reject empty steps.
///
/// # Safety
/// `steps` must point to `len` valid `ArborSlice`s (see [`bytes`]), or be NULL with `len` 0.
pub(crate) unsafe fn path<'a>(steps: *const ArborSlice, len: usize) -> FfiResult<SmallVec<[&'a [u8]; 8]>> {
    if len == 0 {
        return Ok(SmallVec::new());
    }
    if steps.is_null() {
        return Err(Failure::null("steps"));
    }
    // SAFETY: non-NULL and, by the caller's contract, `len` slices.
    let raw = unsafe { std::slice::from_raw_parts(steps, len) };
    raw.iter()
        .enumerate()
        .map(|(i, s)| {
            // SAFETY: each slice obeys the caller's contract.
            unsafe { bytes(s.ptr, s.len, "steps") }
                .map_err(|_| Failure::new(ArborStatus::NullPointer, format!("path step {i} has NULL bytes")))
        })
        .collect()
}

/// Several paths (for proofs).
///
/// # Safety
/// `paths` must point to `len` valid `ArborPath`s, or be NULL with `len` 0.
pub(crate) unsafe fn paths<'a>(paths: *const ArborPath, len: usize) -> FfiResult<Vec<SmallVec<[&'a [u8]; 8]>>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if paths.is_null() {
        return Err(Failure::null("paths"));
    }
    // SAFETY: non-NULL and, by the caller's contract, `len` paths.
    let raw = unsafe { std::slice::from_raw_parts(paths, len) };
    // SAFETY: each path obeys the caller's contract.
    raw.iter().map(|p| unsafe { path(p.steps, p.len) }).collect()
}

/// A NUL-terminated UTF-8 text argument.
///
/// # Safety
/// `s` must be NULL or point to a NUL-terminated string.
pub(crate) unsafe fn text<'a>(s: *const c_char, what: &str) -> FfiResult<&'a str> {
    if s.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    let c = unsafe { CStr::from_ptr(s) };
    c.to_str().map_err(|e| {
        Failure::new(ArborStatus::InvalidUtf8, format!("argument `{what}` is not UTF-8 (byte {})", e.valid_up_to()))
    })
}

/// A NUL-terminated file-system path argument (any bytes but NUL, as Unix allows).
///
/// # Safety
/// `s` must be NULL or point to a NUL-terminated string.
pub(crate) unsafe fn fs_path<'a>(s: *const c_char, what: &str) -> FfiResult<&'a std::path::Path> {
    use std::os::unix::ffi::OsStrExt;
    if s.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    let c = unsafe { CStr::from_ptr(s) };
    if c.is_empty() {
        return Err(Failure::new(ArborStatus::InvalidArgument, format!("argument `{what}` is empty")));
    }
    Ok(std::path::Path::new(std::ffi::OsStr::from_bytes(c.to_bytes())))
}

/// A reference to an input handle or struct.
///
/// # Safety
/// `p` must be NULL or point to a live `T`.
pub(crate) unsafe fn arg<'a, T>(p: *const T, what: &str) -> FfiResult<&'a T> {
    // SAFETY: by the caller's contract a non-NULL `p` points to a live `T`.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::null(what))
}

/// An output location.
///
/// # Safety
/// `p` must be NULL or point to writable memory for a `T` (its old content is not read).
pub(crate) unsafe fn out<'a, T>(p: *mut T, what: &str) -> FfiResult<&'a mut std::mem::MaybeUninit<T>> {
    // SAFETY: by the caller's contract a non-NULL `p` is writable for a `T`; viewing it as
    // `MaybeUninit` never reads or drops the old content.
    unsafe { p.cast::<std::mem::MaybeUninit<T>>().as_mut() }.ok_or_else(|| Failure::null(what))
}

/// Hands a new tree handle over to the caller.
pub(crate) fn new_tree(t: Tree) -> *mut ArborTree {
    Box::into_raw(Box::new(ArborTree(t)))
}
