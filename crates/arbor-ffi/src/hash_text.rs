//! Hashes as text: Octez's "Co…" base58check spelling and hex.

use std::ffi::c_char;

use arbor::Hash;

use crate::status::{guard, ArborStatus, Failure};
use crate::types::{arg, out, text, ArborHash};

/// Bytes a buffer needs for a hash's base58 text and its NUL (52 characters + 1).
pub const ARBOR_BASE58_LEN: usize = 53;
/// Bytes a buffer needs for a hash's hex text and its NUL (64 characters + 1).
pub const ARBOR_HEX_LEN: usize = 65;

fn write_text(s: &str, buf: *mut c_char, cap: usize) -> Result<(), Failure> {
    if buf.is_null() {
        return Err(Failure::null("buf"));
    }
    if cap < s.len() + 1 {
        return Err(Failure::new(
            ArborStatus::InvalidArgument,
            format!("buffer of {cap} bytes is too small for {} bytes of text and a NUL", s.len()),
        ));
    }
    // SAFETY: `buf` is non-NULL and, by the caller's contract, writable for `cap` bytes, and
    // `cap` holds the text and its NUL.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), s.len());
        *buf.add(s.len()) = 0;
    }
    Ok(())
}

/// Writes the "Co…" base58check spelling of `hash` (as Octez prints context hashes) and a NUL
/// into `buf`, which holds `cap` bytes (at least `ARBOR_BASE58_LEN`).
///
/// # Safety
/// `hash` valid; `buf` writable for `cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn arbor_hash_to_base58(hash: *const ArborHash, buf: *mut c_char, cap: usize) -> ArborStatus {
    guard("arbor_hash_to_base58", || {
        // SAFETY: caller's contract.
        let h = unsafe { arg(hash, "hash") }?;
        write_text(&Hash::from(*h).to_base58(), buf, cap)
    })
}

/// Writes the lower-case hex spelling of `hash` and a NUL into `buf`, which holds `cap` bytes
/// (at least `ARBOR_HEX_LEN`).
///
/// # Safety
/// `hash` valid; `buf` writable for `cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn arbor_hash_to_hex(hash: *const ArborHash, buf: *mut c_char, cap: usize) -> ArborStatus {
    guard("arbor_hash_to_hex", || {
        // SAFETY: caller's contract.
        let h = unsafe { arg(hash, "hash") }?;
        write_text(&Hash::from(*h).to_hex(), buf, cap)
    })
}

/// Parses 64 hex characters or a "Co…" base58check hash into `*hash`.
///
/// # Safety
/// `text_` NUL-terminated; `hash` writable.
#[no_mangle]
pub unsafe extern "C" fn arbor_hash_parse(text_: *const c_char, hash: *mut ArborHash) -> ArborStatus {
    guard("arbor_hash_parse", || {
        // SAFETY: caller's contract.
        let (t, o) = unsafe { (text(text_, "text")?, out(hash, "hash")?) };
        let h = Hash::parse(t)
            .map_err(|e| Failure::new(ArborStatus::InvalidArgument, format!("not a hash ({e}): {t:?}")))?;
        o.write(h.into());
        Ok(())
    })
}
