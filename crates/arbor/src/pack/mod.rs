//! The on-disk log: chunk files of checksummed records, and the control file.

pub(crate) mod control;
pub(crate) mod fields;
pub(crate) mod frames;
pub(crate) mod log;
pub(crate) mod prefix;
pub(crate) mod record;
pub(crate) mod refs;
