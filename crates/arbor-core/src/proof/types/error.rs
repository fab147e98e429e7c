//! Why a proof was rejected (or could not be built).

use alloc::vec::Vec;
use core::fmt;

use crate::hash::Hash;
use crate::tezos::InodeConfig;

/// A path as owned steps, as carried in proofs and errors.
pub type Path = Vec<Vec<u8>>;

/// Why decoding, verifying or building a proof failed.
///
/// Decoding errors carry the byte offset where the input went wrong; verification errors carry
/// the path (the steps from the root) of the node concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProofError {
    /// The input does not start with the proof magic bytes `ARBP`.
    BadMagic,
    /// The proof was written by an encoding version this build does not read.
    UnsupportedVersion(u8),
    /// The input ends inside the proof: it was cut short.
    Truncated {
        /// Offset at which more bytes were needed.
        at: usize,
    },
    /// Bytes follow the end of the proof.
    TrailingBytes {
        /// Offset of the first byte after the proof.
        at: usize,
    },
    /// The bytes do not spell a proof: an unknown tag, a non-minimal integer, an unsorted or
    /// repeated entry, a node of the wrong shape for its place, and the like.
    Malformed {
        /// Offset of the offending field.
        at: usize,
        /// What is wrong there.
        what: &'static str,
    },
    /// A path has an empty step (steps are non-empty byte strings).
    EmptyStep,
    /// The proof nests deeper than [`super::MAX_NESTING`] levels (directories plus inodes), or an
    /// inode tree deeper than [`super::MAX_INODE_DEPTH`] would be needed.
    TooDeep,
    /// The inode configuration is unusable (fewer than 2 or more than
    /// [`super::MAX_INODE_ENTRIES`] slots).
    BadConfig(InodeConfig),
    /// The proof was made for another inode configuration than the verifier expects.
    ConfigMismatch {
        /// Configuration the verifier expects.
        expected: InodeConfig,
        /// Configuration the proof records.
        found: InodeConfig,
    },
    /// The root hash recomputed from the proof is not the trusted root.
    RootMismatch {
        /// The trusted root hash given to the verifier.
        expected: Hash,
        /// The root hash the proof hashes to.
        computed: Hash,
    },
    /// The before-root hash recorded in the proof is not what its tree hashes to.
    BeforeMismatch {
        /// Hash recorded in the proof.
        recorded: Hash,
        /// Hash recomputed from the proof's tree.
        computed: Hash,
    },
    /// The after-root hash recorded in the proof is not what applying its writes gives.
    AfterMismatch {
        /// Hash recorded in the proof.
        recorded: Hash,
        /// Hash recomputed by applying the writes to the proved tree.
        computed: Hash,
    },
    /// A claimed path (or a change the writes make) needs a part of the tree the proof
    /// only gives by its hash: the proof does not cover it.
    NotProvable {
        /// Path of the blinded node.
        path: Path,
    },
    /// The proof shows a node that none of its claims needs: a proof carries nothing beyond
    /// what its reads and writes touch, so that it has exactly one valid encoding.
    Excess {
        /// Path of the needless node.
        path: Path,
    },
    /// An element of a stream proof does not hash to what its parent announced.
    HashMismatch {
        /// Offset of the element.
        at: usize,
        /// Hash the parent announced.
        expected: Hash,
        /// Hash of the element.
        computed: Hash,
    },
    /// An Octez proof value breaks a rule of its shape (unsorted bindings, an inode of the
    /// wrong size, a chain of single-slot inodes not folded into an extender, and the like):
    /// found after decoding, or refused before encoding.
    BadShape(&'static str),
    /// An Octez proof's version field has bits this build does not know, or does not tell
    /// the kind of proof (tree or stream) or the shape the verifier expects.
    OctezVersion(u16),
    /// The value cannot be written in the requested encoding (a step longer than 255 bytes,
    /// an inode with no slot, a shape the encoding has no room for, and the like).
    Unencodable(&'static str),
    /// An element of an Octez stream proof does not hash to what its parent announced.
    ElementMismatch {
        /// Index of the element in the stream.
        index: usize,
        /// Hash the parent announced.
        expected: Hash,
        /// Hash of the element.
        computed: Hash,
    },
    /// An Octez stream proof ran out of elements before the replay of its reads ended.
    StreamTooShort,
    /// An Octez stream proof holds elements the replay of its reads never used.
    UnusedElements {
        /// Elements the replay used.
        used: usize,
        /// Elements in the stream.
        total: usize,
    },
    /// The proof's read paths are not the ones the verifier asked about.
    ReadsMismatch,
    /// The proof's writes are not the ones the verifier expected.
    WritesMismatch,
}

impl fmt::Display for ProofError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadMagic => f.write_str("not a proof (bad magic bytes)"),
            Self::UnsupportedVersion(v) => write!(f, "unsupported proof encoding version {v}"),
            Self::Truncated { at } => write!(f, "proof truncated at byte {at}"),
            Self::TrailingBytes { at } => write!(f, "unexpected bytes after the proof, from byte {at}"),
            Self::Malformed { at, what } => write!(f, "malformed proof at byte {at}: {what}"),
            Self::EmptyStep => f.write_str("a path has an empty step"),
            Self::TooDeep => f.write_str("proof nests too deep"),
            Self::BadConfig(c) => {
                write!(f, "unusable inode configuration ({} slots, flat up to {})", c.entries, c.stable_hash)
            }
            Self::ConfigMismatch { expected, found } => write!(
                f,
                "proof is for inode configuration ({}, {}), expected ({}, {})",
                found.entries, found.stable_hash, expected.entries, expected.stable_hash
            ),
            Self::RootMismatch { expected, computed } => {
                write!(f, "proof hashes to root {computed}, expected {expected}")
            }
            Self::BeforeMismatch { recorded, computed } => {
                write!(f, "proof records before-root {recorded} but hashes to {computed}")
            }
            Self::AfterMismatch { recorded, computed } => {
                write!(f, "proof records after-root {recorded} but its writes give {computed}")
            }
            Self::NotProvable { path } => write!(f, "proof does not cover {}", Show(path)),
            Self::Excess { path } => write!(f, "proof shows {} which no claim needs", Show(path)),
            Self::HashMismatch { at, expected, computed } => {
                write!(f, "element at byte {at} hashes to {computed}, expected {expected}")
            }
            Self::ElementMismatch { index, expected, computed } => {
                write!(f, "stream element {index} hashes to {computed}, expected {expected}")
            }
            Self::StreamTooShort => f.write_str("stream proof ends before the reads are replayed"),
            Self::UnusedElements { used, total } => {
                write!(f, "stream proof has {total} elements but replaying the reads uses {used}")
            }
            Self::BadShape(what) => write!(f, "proof breaks a shape rule: {what}"),
            Self::OctezVersion(v) => write!(f, "unexpected Octez proof version field {v:#06x}"),
            Self::Unencodable(what) => write!(f, "cannot encode the proof: {what}"),
            Self::ReadsMismatch => f.write_str("proof is not about the expected paths"),
            Self::WritesMismatch => f.write_str("proof does not make the expected writes"),
        }
    }
}

impl core::error::Error for ProofError {}

/// Renders a path as `/a/b`, escaping steps that are not printable ASCII as `0x…` hex.
pub struct Show<'a>(pub &'a [Vec<u8>]);

impl fmt::Display for Show<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("/");
        }
        for step in self.0 {
            f.write_str("/")?;
            if step.iter().all(|&b| b.is_ascii_graphic() && b != b'/') {
                // Checked ASCII just above, so this cannot fail.
                f.write_str(core::str::from_utf8(step).unwrap_or("?"))?;
            } else {
                f.write_str("0x")?;
                for b in step {
                    write!(f, "{b:02x}")?;
                }
            }
        }
        Ok(())
    }
}
