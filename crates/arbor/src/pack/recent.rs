//! The stretches of the log a thread read last, so that a record inside one of them is taken
//! from it instead of read again.
//!
//! A record read from the log is most often the parent or a sibling of one read just before:
//! a commit writes a node's children before the node, so a walk down a path reads records a
//! little before the one it read last. Of the `pread` calls of a replay (strace of 40 blocks
//! at 30M values, 100 at 1M), a third asked for a record inside the 8 KiB-aligned block of one
//! of the 16 read before it. A read therefore takes the aligned block around the record (and
//! at least [`FIRST_READ`](super::log) bytes from the record on), and the thread keeps the
//! last [`KEPT`] such stretches.
//!
//! What is kept is right for as long as it is kept: a stretch holds only bytes below the end
//! its log had published when it was read, and below that end a log's bytes never change (a
//! writer appends; the tail a writer's recovery cuts is past every end published; what a
//! collection punches out or removes lies below its floor, where reads go to the prefix or
//! the lower layer before they come here). A stretch names the log instance it was read from
//! ([`Log::instance`](super::log::Log)), not the store: two copies of one store share their
//! offsets, not their bytes.

use std::cell::RefCell;

/// Reads are made around a record from the block of this many bytes that holds it.
pub(crate) const BLOCK: u64 = 8192;

/// How many stretches a thread keeps: 16 of at most 12 KiB.
const KEPT: usize = 16;

/// Bytes of a log read from global offset `at`.
struct Stretch {
    log: u64,
    at: u64,
    bytes: Vec<u8>,
    /// When it was last used (a count of this thread's uses), for replacing the oldest.
    used: u64,
}

/// This thread's stretches.
#[derive(Default)]
struct Kept {
    stretches: Vec<Stretch>,
    uses: u64,
}

thread_local! {
    static KEPT_STRETCHES: RefCell<Kept> = RefCell::new(Kept::default());
}

/// `f` of the bytes from global offset `offset` of log `log` to the end of the stretch kept
/// that holds it, if one does (None otherwise, or if `f` gives None).
pub(crate) fn with_kept<R>(log: u64, offset: u64, f: impl FnOnce(&[u8]) -> Option<R>) -> Option<R> {
    KEPT_STRETCHES
        .try_with(|kept| {
            let mut kept = kept.borrow_mut();
            kept.uses += 1;
            let uses = kept.uses;
            let s = kept
                .stretches
                .iter_mut()
                .find(|s| s.log == log && s.at <= offset && offset < s.at + s.bytes.len() as u64)?;
            s.used = uses;
            f(&s.bytes[(offset - s.at) as usize..])
        })
        .ok()
        .flatten()
}

/// Reads `len` bytes of log `log` from global offset `at` with `read` (which fills the buffer
/// it is given), keeps them in place of the stretch used longest ago, and gives `f` the bytes
/// from global offset `offset` on. The bytes must all lie below the end the log has published.
/// A failed read keeps nothing and returns its error.
pub(crate) fn read_and_keep<R, E>(
    log: u64,
    at: u64,
    len: usize,
    read: impl FnOnce(&mut [u8]) -> Result<(), E>,
    offset: u64,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<R, E> {
    debug_assert!(at <= offset && offset < at + len as u64, "the record is in the stretch read");
    let mut fresh = Vec::new();
    let kept = KEPT_STRETCHES.try_with(|kept| {
        let mut kept = kept.borrow_mut();
        kept.uses += 1;
        let uses = kept.uses;
        let i = if kept.stretches.len() < KEPT {
            kept.stretches.push(Stretch { log, at, bytes: Vec::new(), used: uses });
            kept.stretches.len() - 1
        } else {
            let (i, _) = kept.stretches.iter().enumerate().min_by_key(|(_, s)| s.used).expect("KEPT > 0");
            i
        };
        // Taken out while it is read into: a failed read leaves no stretch behind.
        let s = kept.stretches.swap_remove(i);
        s.bytes
    });
    if let Ok(bytes) = kept {
        fresh = bytes;
    }
    fresh.clear();
    fresh.resize(len, 0);
    read(&mut fresh)?;
    let out = f(&fresh[(offset - at) as usize..]);
    let _ = KEPT_STRETCHES.try_with(|kept| {
        let mut kept = kept.borrow_mut();
        let used = kept.uses;
        kept.stretches.push(Stretch { log, at, bytes: fresh, used });
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{read_and_keep, with_kept, KEPT};

    #[test]
    fn a_thread_keeps_its_last_stretches_by_log_and_replaces_the_oldest() {
        let bytes = |seed: u8| -> Vec<u8> { (0..100u8).map(|i| i.wrapping_mul(seed)).collect() };
        let keep = |log: u64, at: u64, seed: u8| {
            read_and_keep::<_, ()>(
                log,
                at,
                100,
                |buf| {
                    buf.copy_from_slice(&bytes(seed));
                    Ok(())
                },
                at,
                |b| b[0],
            )
            .unwrap()
        };
        keep(1, 1000, 3);
        // Another log at the same offsets: its own bytes.
        keep(2, 1000, 5);
        assert_eq!(with_kept(1, 1010, |b| Some(b.to_vec())), Some(bytes(3)[10..].to_vec()));
        assert_eq!(with_kept(2, 1010, |b| Some(b.to_vec())), Some(bytes(5)[10..].to_vec()));
        assert_eq!(with_kept(1, 1100, |b| Some(b.len())), None, "past the stretch");
        assert_eq!(with_kept(3, 1010, |b| Some(b.len())), None, "a log never read");
        // A failed read keeps nothing.
        assert_eq!(read_and_keep(1, 5000, 10, |_| Err("eof"), 5000, |b| b.len()), Err("eof"));
        assert_eq!(with_kept(1, 5000, |b| Some(b.len())), None);
        // Filling the thread's room replaces the stretch used longest ago: log 2's, as log
        // 1's was used after it.
        assert!(with_kept(1, 1000, |_| Some(())).is_some());
        for k in 0..KEPT as u64 - 1 {
            keep(9, 100_000 * (k + 1), 7);
        }
        assert!(with_kept(1, 1000, |_| Some(())).is_some());
        assert!(with_kept(2, 1000, |_| Some(())).is_none());
    }
}
