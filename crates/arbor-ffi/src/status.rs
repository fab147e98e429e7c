//! Status codes, the thread-local last error, and the guard every entry point runs in.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use arbor::Error;

/// What a call did: `ARBOR_STATUS_OK`, or the kind of problem. The message naming the problem
/// is given by `arbor_last_error` on the same thread.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArborStatus {
    /// Success.
    Ok = 0,
    /// A pointer argument that must not be NULL was NULL.
    NullPointer = 1,
    /// A text argument (head name, hash text) is not UTF-8.
    InvalidUtf8 = 2,
    /// An argument is out of range or malformed (the message says which).
    InvalidArgument = 3,
    /// A path has an empty step.
    BadPath = 4,
    /// A value is larger than the store accepts.
    ValueTooLarge = 5,
    /// No commit with this hash is in the store.
    UnknownCommit = 6,
    /// The commit was removed by garbage collection.
    CommitDropped = 7,
    /// An object of a dropped commit was read.
    ObjectDropped = 8,
    /// An operating-system I/O error.
    Io = 9,
    /// A store file is corrupt.
    Corrupt = 10,
    /// A store file has a format version this build does not read.
    UnsupportedVersion = 11,
    /// Another writer holds the store.
    Locked = 12,
    /// A write on a store opened read-only.
    ReadOnly = 13,
    /// An earlier write failed; the store must be reopened before writing again.
    Poisoned = 14,
    /// A commit was asked for a tree that is not a directory.
    NotADirectory = 15,
    /// A tree of another store was mixed into this one.
    ForeignTree = 16,
    /// A garbage collection is already running.
    GcRunning = 17,
    /// A snapshot file is damaged or does not match the store.
    Snapshot = 18,
    /// A proof does not decode or does not verify.
    Proof = 19,
    /// A panic inside arbor was caught at the boundary (a bug: please report the message).
    Panic = 20,
    /// An error of a kind this version of the interface does not name.
    Other = 21,
}

/// A failed call: its status and the message naming the problem.
#[derive(Debug)]
pub(crate) struct Failure {
    pub status: ArborStatus,
    pub message: String,
}

impl Failure {
    pub(crate) fn new(status: ArborStatus, message: impl Into<String>) -> Failure {
        Failure { status, message: message.into() }
    }

    /// A NULL pointer given for the argument `what`.
    pub(crate) fn null(what: &str) -> Failure {
        Failure::new(ArborStatus::NullPointer, format!("argument `{what}` is NULL"))
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        let status = match &e {
            Error::Io { .. } => ArborStatus::Io,
            Error::Corrupt { .. } => ArborStatus::Corrupt,
            Error::UnknownCommit(_) => ArborStatus::UnknownCommit,
            Error::EmptyStep { .. } | Error::PathTooDeep { .. } => ArborStatus::BadPath,
            Error::ValueTooLarge { .. } => ArborStatus::ValueTooLarge,
            Error::UnsupportedVersion { .. } => ArborStatus::UnsupportedVersion,
            Error::Locked { .. } => ArborStatus::Locked,
            Error::ReadOnly => ArborStatus::ReadOnly,
            Error::Poisoned => ArborStatus::Poisoned,
            Error::NotADirectory => ArborStatus::NotADirectory,
            Error::ForeignTree => ArborStatus::ForeignTree,
            Error::CommitDropped { .. } => ArborStatus::CommitDropped,
            Error::ObjectDropped { .. } => ArborStatus::ObjectDropped,
            Error::GcRunning => ArborStatus::GcRunning,
            Error::InvalidArgument(_) => ArborStatus::InvalidArgument,
            Error::Snapshot(_) => ArborStatus::Snapshot,
            _ => ArborStatus::Other,
        };
        Failure { status, message: e.to_string() }
    }
}

/// Result of the body of an entry point.
pub(crate) type FfiResult<T = ()> = Result<T, Failure>;

thread_local! {
    /// Message of the last failed call on this thread.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn record(function: &str, status: ArborStatus, message: &str) -> ArborStatus {
    // An interior NUL cannot be carried by a C string: shown as U+2400 instead.
    let text = format!("{function}: {message}").replace('\0', "\u{2400}");
    let text = CString::new(text).unwrap_or_default();
    LAST_ERROR.with(|l| *l.borrow_mut() = text);
    status
}

/// Runs the body of the entry point `function`: returns `Ok`, or records the failure's message
/// and returns its status. A panic is caught here and never unwinds into the caller.
pub(crate) fn guard(function: &str, body: impl FnOnce() -> FfiResult) -> ArborStatus {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => ArborStatus::Ok,
        Ok(Err(f)) => record(function, f.status, &f.message),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic with no message".to_string());
            record(function, ArborStatus::Panic, &format!("internal error (panic): {what}"))
        }
    }
}

/// The message of the last call that failed on the calling thread, as
/// `"<function>: <what is wrong>"`; an empty string if none has failed. The text is owned by
/// arbor and stays valid until the next failing call on the same thread; do not free it.
/// Thread-safe (each thread has its own).
#[no_mangle]
pub extern "C" fn arbor_last_error() -> *const c_char {
    LAST_ERROR.with(|l| l.borrow().as_ptr())
}

/// A short constant description of a status code (owned by arbor, never freed).
#[no_mangle]
pub extern "C" fn arbor_status_name(status: ArborStatus) -> *const c_char {
    let s: &'static std::ffi::CStr = match status {
        ArborStatus::Ok => c"ok",
        ArborStatus::NullPointer => c"null pointer",
        ArborStatus::InvalidUtf8 => c"invalid UTF-8",
        ArborStatus::InvalidArgument => c"invalid argument",
        ArborStatus::BadPath => c"bad path",
        ArborStatus::ValueTooLarge => c"value too large",
        ArborStatus::UnknownCommit => c"unknown commit",
        ArborStatus::CommitDropped => c"commit dropped",
        ArborStatus::ObjectDropped => c"object dropped",
        ArborStatus::Io => c"I/O error",
        ArborStatus::Corrupt => c"corrupt store",
        ArborStatus::UnsupportedVersion => c"unsupported version",
        ArborStatus::Locked => c"locked",
        ArborStatus::ReadOnly => c"read-only",
        ArborStatus::Poisoned => c"poisoned",
        ArborStatus::NotADirectory => c"not a directory",
        ArborStatus::ForeignTree => c"foreign tree",
        ArborStatus::GcRunning => c"gc running",
        ArborStatus::Snapshot => c"snapshot error",
        ArborStatus::Proof => c"proof error",
        ArborStatus::Panic => c"internal panic",
        ArborStatus::Other => c"other error",
    };
    s.as_ptr()
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;

    fn last() -> String {
        // SAFETY: arbor_last_error returns a valid NUL-terminated string owned by this thread.
        unsafe { CStr::from_ptr(arbor_last_error()) }.to_string_lossy().into_owned()
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let s = guard("arbor_test", || panic!("boom {}", 7));
        std::panic::set_hook(prev);
        assert_eq!(s, ArborStatus::Panic);
        assert_eq!(last(), "arbor_test: internal error (panic): boom 7");
    }

    #[test]
    fn errors_map_to_statuses_and_keep_their_message() {
        let s = guard("arbor_x", || Err(Error::EmptyStep { index: 2 }.into()));
        assert_eq!(s, ArborStatus::BadPath);
        assert_eq!(last(), "arbor_x: path step 2 is empty");
        assert_eq!(guard("arbor_y", || Ok(())), ArborStatus::Ok);
        assert_eq!(last(), "arbor_x: path step 2 is empty", "a success leaves the last error");
    }
}
