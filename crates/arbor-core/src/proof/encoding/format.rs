//! The constants of the tree proof encoding: magic bytes, version and tags (the stream
//! encoding reuses the node tags).

/// The four bytes every encoded proof starts with.
pub const MAGIC: [u8; 4] = *b"ARBP";

/// The encoding version this build writes and reads.
pub const VERSION: u8 = 1;

/// Tags of [`ProofTree`] nodes.
pub(crate) mod tag {
    /// A value: `leb(len) ‖ bytes`.
    pub const VALUE: u8 = 0x00;
    /// A blinded value: its 32-byte hash.
    pub const BLINDED_VALUE: u8 = 0x01;
    /// A flat directory: `leb(n) ‖ [step ‖ child]…`.
    pub const NODE: u8 = 0x02;
    /// A blinded directory: its 32-byte hash.
    pub const BLINDED_NODE: u8 = 0x03;
    /// A large directory: its root inode follows.
    pub const INODE: u8 = 0x04;
    /// A blinded inode: its 32-byte hash.
    pub const INODE_BLINDED: u8 = 0x10;
    /// A Values inode: `leb(n) ‖ [step ‖ child]…`.
    pub const INODE_VALUES: u8 = 0x11;
    /// A Tree inode: `leb(count) ‖ leb(k) ‖ [leb(slot) ‖ child inode]…`.
    pub const INODE_TREE: u8 = 0x12;
    /// A write that removes.
    pub const REMOVE: u8 = 0x00;
    /// A write that adds a value.
    pub const ADD: u8 = 0x01;
}
