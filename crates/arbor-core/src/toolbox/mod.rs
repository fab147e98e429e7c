//! Small helpers every arbor crate shares, kept once here (the lowest crate of the
//! workspace) rather than copied: hex spelling, a bounds-checked byte cursor, LEB128
//! integers, the SplitMix64 generator and in-line comparisons of short byte strings. None of
//! them does I/O.

pub mod bytes;
pub mod cursor;
pub mod hex;
pub mod leb128;
pub mod splitmix;

pub use cursor::{Cursor, CursorError};
pub use splitmix::SplitMix64;
