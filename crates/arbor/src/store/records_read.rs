//! How many records a store handle read from its log, by what they hold: the cold part of a
//! workload, which the object cache and the working tree did not serve.

use crate::pack::log::KINDS_COUNTED;
use crate::pack::record::kind;

/// Records a store handle read from its log since it was opened, by kind (FORMAT.md section
/// 5), counting only those found ([`crate::Store::records_read`] counts every read, found or
/// not). A delta record's read is followed by its base's (and a delta of a delta by two
/// more): the full records in here include those bases.
///
/// Subtract two readings ([`RecordsRead::since`]) for what one stretch of work read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordsRead {
    /// Values too long to be inlined in their parent (CONTENTS).
    pub contents: u64,
    /// Flat directories, full (FLAT_DIR).
    pub flat_dirs: u64,
    /// Flat directories given as their changes (FLAT_DIR_DELTA).
    pub flat_dir_deltas: u64,
    /// Inodes holding bindings, full (INODE_VALUES).
    pub values_inodes: u64,
    /// Inodes holding bindings, given as their changes (INODE_VALUES_DELTA).
    pub values_inode_deltas: u64,
    /// Inodes holding child inodes, full (INODE_TREE).
    pub tree_inodes: u64,
    /// Inodes holding child inodes, given as their changes (INODE_TREE_DELTA).
    pub tree_inode_deltas: u64,
    /// Commits, heads and any other kind.
    pub other: u64,
}

impl RecordsRead {
    /// The counts the log keeps by kind, named.
    pub(crate) fn of(by_kind: [u64; KINDS_COUNTED]) -> RecordsRead {
        let named = [
            kind::CONTENTS,
            kind::FLAT_DIR,
            kind::FLAT_DIR_DELTA,
            kind::INODE_VALUES,
            kind::INODE_VALUES_DELTA,
            kind::INODE_TREE,
            kind::INODE_TREE_DELTA,
        ];
        let at = |k: u8| by_kind[usize::from(k)];
        let other = by_kind.iter().sum::<u64>() - named.iter().map(|&k| at(k)).sum::<u64>();
        RecordsRead {
            contents: at(kind::CONTENTS),
            flat_dirs: at(kind::FLAT_DIR),
            flat_dir_deltas: at(kind::FLAT_DIR_DELTA),
            values_inodes: at(kind::INODE_VALUES),
            values_inode_deltas: at(kind::INODE_VALUES_DELTA),
            tree_inodes: at(kind::INODE_TREE),
            tree_inode_deltas: at(kind::INODE_TREE_DELTA),
            other,
        }
    }

    /// What was read after `earlier`, a reading of the same handle taken before this one.
    pub fn since(&self, earlier: &RecordsRead) -> RecordsRead {
        RecordsRead {
            contents: self.contents.saturating_sub(earlier.contents),
            flat_dirs: self.flat_dirs.saturating_sub(earlier.flat_dirs),
            flat_dir_deltas: self.flat_dir_deltas.saturating_sub(earlier.flat_dir_deltas),
            values_inodes: self.values_inodes.saturating_sub(earlier.values_inodes),
            values_inode_deltas: self.values_inode_deltas.saturating_sub(earlier.values_inode_deltas),
            tree_inodes: self.tree_inodes.saturating_sub(earlier.tree_inodes),
            tree_inode_deltas: self.tree_inode_deltas.saturating_sub(earlier.tree_inode_deltas),
            other: self.other.saturating_sub(earlier.other),
        }
    }

    /// Every record counted.
    pub fn total(&self) -> u64 {
        self.contents
            + self.flat_dirs
            + self.flat_dir_deltas
            + self.values_inodes
            + self.values_inode_deltas
            + self.tree_inodes
            + self.tree_inode_deltas
            + self.other
    }
}
