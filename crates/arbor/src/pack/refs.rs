//! The objects a record points at, for garbage collection: the only code that follows
//! pointers without building tree nodes.

use super::record::{kind, ChildRef, CommitBody, DecodeError, Reader};

/// Appends to `out` the global offsets the record of `kind` and `body` at offset `at` points
/// at: children of directories and inodes, and a commit's tree (not its parents: history is
/// not reachability, and a commit's parents may be dropped while it is kept).
pub(crate) fn children(record_kind: u8, body: &[u8], at: u64, out: &mut Vec<u64>) -> Result<(), DecodeError> {
    let target = |back: u64| if back == 0 || back > at { Err("pointer outside the log") } else { Ok(at - back) };
    let mut r = Reader::new(body);
    match record_kind {
        kind::CONTENTS | kind::HEAD => {}
        kind::FLAT_DIR | kind::INODE_VALUES => {
            if record_kind == kind::INODE_VALUES {
                r.leb()?;
            }
            let n = r.len()?;
            for _ in 0..n {
                if let (_, ChildRef::Ref { back, .. }) = r.entry()? {
                    out.push(target(back)?);
                }
            }
        }
        kind::INODE_TREE => {
            r.leb()?;
            r.leb()?;
            let bitmap = r.leb()?;
            for _ in 0..bitmap.count_ones() {
                let back = r.leb()?;
                r.hash()?;
                out.push(target(back)?);
            }
        }
        kind::COMMIT => {
            let c = CommitBody::decode(body)?;
            out.push(target(c.tree_back)?);
        }
        _ => return Err("unknown record kind"),
    }
    Ok(())
}
