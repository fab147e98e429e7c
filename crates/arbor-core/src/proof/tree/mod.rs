//! Building proofs from any tree that can show its directories and inodes as they are hashed.

pub(crate) mod octez;
mod prove;
mod reference;
mod source;

pub use prove::prove;
pub use reference::RefSource;
pub use source::{ProofSource, ProveError, SourceDir, SourceInode};
