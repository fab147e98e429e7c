//! Bounds every decoder and walk holds hostile input to.

/// Deepest nesting of a proof's tree (directory levels plus inode levels) and longest path
/// accepted, which bounds the verifier's recursion.
pub const MAX_NESTING: usize = 512;

/// Deepest inode accepted (the root inode is at depth 0).
pub const MAX_INODE_DEPTH: u32 = 64;

/// Most slots per inode accepted in a proof's configuration.
pub const MAX_INODE_ENTRIES: u32 = 1024;
