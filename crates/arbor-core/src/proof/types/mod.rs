//! The types every part of the proof module shares: the partial tree, the proof and its
//! claims, what a verified proof tells, errors and limits. Nothing here depends on another
//! part of the proof module.

pub mod error;
pub mod limits;
pub mod proof;
pub mod tree;
pub mod verified;

pub use error::{Path, ProofError, Show};
pub use limits::{MAX_INODE_DEPTH, MAX_INODE_ENTRIES, MAX_NESTING};
pub use proof::{Proof, Write};
pub use tree::{Entries, ProofInode, ProofTree};
pub use verified::{Proved, Verified};
