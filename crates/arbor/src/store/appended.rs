//! What the records written after a commit are, kind by kind and field by field: where the
//! bytes a block appends go (`arbor audit --appended-after`).

use arbor_core::Hash;

use super::Store;
use crate::error::{Error, Result};
use crate::pack::fields::{framed_len, FieldBytes};
use crate::pack::record::kind;

/// Records of one kind: how many, and their framed bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindBytes {
    /// Records.
    pub records: u64,
    /// Their bytes, framing included.
    pub bytes: u64,
}

/// A name for each record kind, at the index of its kind byte (FORMAT.md 4); index 0 for a
/// kind this build does not know. [`StoreStats`](super::StoreStats) counts kinds 1-4 in this
/// order.
pub const RECORD_KIND_NAMES: [&str; 10] = [
    "unknown",
    "contents",
    "flat directories",
    "values inodes",
    "tree inodes",
    "commits",
    "heads",
    "flat directory deltas",
    "values inode deltas",
    "tree inode deltas",
];

/// The records appended after a commit, up to the end of the log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Appended {
    /// Records by kind, at the index of their kind byte ([`RECORD_KIND_NAMES`] names them).
    pub kinds: [KindBytes; RECORD_KIND_NAMES.len()],
    /// Their bytes by field.
    pub fields: FieldBytes,
}

impl Appended {
    /// How many commits the records hold.
    pub fn commits(&self) -> u64 {
        self.kinds[usize::from(kind::COMMIT)].records
    }
}

impl Store {
    /// What the records appended after the commit `after` are, to the end of the log: by
    /// kind and by field ([`FieldBytes`]). A commit below a collection's floor is refused
    /// (`InvalidArgument`): the records after it are no longer all in the log.
    pub fn appended_after(&self, after: &Hash) -> Result<Appended> {
        let offset = self.commit_offset(after)?;
        let log = &self.shared.loader.log;
        if offset < log.gc_view().floor {
            return Err(Error::InvalidArgument(format!(
                "commit {after} is below the last collection's floor: the records after it are not all kept"
            )));
        }
        let commit = self.shared.loader.read(offset)?;
        let from = offset + framed_len(commit.body().len());
        let mut out = Appended::default();
        log.for_each_record(from, log.end(), &mut |at, kind, body| {
            let slot = if kind > 0 && usize::from(kind) < out.kinds.len() { usize::from(kind) } else { 0 };
            out.kinds[slot].records += 1;
            out.kinds[slot].bytes += framed_len(body.len());
            out.fields.add_record(kind, body).map_err(|e| Error::Corrupt {
                file: self.shared.loader.file_of(at),
                offset: at,
                kind: e.into(),
            })
        })?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;

    /// The records after a commit are the next commits' records, every byte counted once:
    /// by kind and by field the totals agree with how far the log grew.
    #[test]
    fn the_bytes_after_a_commit_are_counted_once_by_kind_and_by_field() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut t = store.empty();
        for n in 0..300u32 {
            t.add_mut(&["index", &format!("{:08x}", n * 7919), "balance"], &n.to_le_bytes()).unwrap();
        }
        let first = store.commit(&t, &[], 0, "a", "first").unwrap();
        let before = store.log_bytes();
        let mut t = store.checkout(&first).unwrap();
        t.add_mut(&["index", &format!("{:08x}", 7919), "balance"], b"changed").unwrap();
        t.add_mut(&["index", "new", "counter"], b"1").unwrap();
        let second = store.commit(&t, &[first], 1, "a", "second").unwrap();
        let grown = store.log_bytes() - before;

        let a = store.appended_after(&first).unwrap();
        assert_eq!(a.commits(), 1);
        let by_kind: u64 = a.kinds.iter().map(|k| k.bytes).sum();
        assert_eq!(by_kind, grown, "the kinds' bytes are what the log grew by");
        assert_eq!(a.fields.total(), grown, "the fields' bytes are what the log grew by");
        assert!(a.fields.binding_hashes > 0 && a.fields.inline_values > 0);
        assert_eq!(a.kinds[0].records, 0, "no unknown kind");

        let after_last = store.appended_after(&second).unwrap();
        assert_eq!((after_last.commits(), after_last.fields.total()), (0, 0));
    }
}
