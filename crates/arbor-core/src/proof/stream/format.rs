//! The constants and header of the stream encoding.

use alloc::vec::Vec;

use crate::hash::Hash;
use crate::proof::types::{Path, Write};
use crate::tezos::{ChildKind, InodeConfig};

/// The four bytes every stream proof starts with.
pub const STREAM_MAGIC: [u8; 4] = *b"ARBS";

/// The stream encoding version this build writes and reads.
pub const STREAM_VERSION: u8 = 1;

/// Bytes telling a child's kind in an element.
pub(crate) mod kind {
    /// A value.
    pub const VALUE: u8 = 0x00;
    /// A directory.
    pub const DIR: u8 = 0x01;
}

/// What comes before the elements.
pub(crate) struct Header {
    pub config: InodeConfig,
    /// Whether the root is a value or a directory (the first element's kind).
    pub root_kind: ChildKind,
    pub before: Hash,
    pub after: Hash,
    pub reads: Vec<Path>,
    pub writes: Vec<Write>,
}
