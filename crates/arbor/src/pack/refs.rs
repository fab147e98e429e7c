//! The objects a record points at, for garbage collection: the only code that follows
//! pointers without building tree nodes.

use super::record::{kind, ChildRef, CommitBody, DecodeError, Reader};

/// Appends to `out` the global offsets the record of `kind` and `body` at offset `at` points
/// at: children of directories and inodes (a delta's base included), and a commit's tree (not its parents: history is
/// not reachability, and a commit's parents may be dropped while it is kept).
pub(crate) fn children(record_kind: u8, body: &[u8], at: u64, out: &mut Vec<u64>) -> Result<(), DecodeError> {
    let target = |back: u64| {
        if back == 0 || back > at {
            Err(DecodeError::Dangling(at.wrapping_sub(back)))
        } else {
            Ok(at - back)
        }
    };
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
        kind::FLAT_DIR_DELTA | kind::INODE_VALUES_DELTA => {
            if record_kind == kind::INODE_VALUES_DELTA {
                r.leb()?;
            }
            out.push(target(r.leb()?)?);
            r.leb()?;
            let n = r.len()?;
            for _ in 0..n {
                if let (_, Some(ChildRef::Ref { back, .. })) = r.change_ref()? {
                    out.push(target(back)?);
                }
            }
        }
        kind::INODE_TREE_DELTA => {
            r.leb()?;
            out.push(target(r.leb()?)?);
            r.leb()?;
            let changed = r.leb()?;
            for _ in 0..changed.count_ones() {
                let back = r.leb()?;
                if back != 0 {
                    r.hash()?;
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
        other => return Err(DecodeError::UnknownKind(other)),
    }
    Ok(())
}

/// The global offset of the full record a delta record (FLAT_DIR_DELTA, INODE_VALUES_DELTA,
/// INODE_TREE_DELTA) at `at` is a version of; None for any other kind.
pub(crate) fn delta_base(record_kind: u8, body: &[u8], at: u64) -> Result<Option<u64>, DecodeError> {
    let mut r = Reader::new(body);
    match record_kind {
        kind::FLAT_DIR_DELTA => {}
        kind::INODE_VALUES_DELTA | kind::INODE_TREE_DELTA => {
            r.leb()?;
        }
        _ => return Ok(None),
    }
    let back = r.leb()?;
    if back == 0 || back > at {
        return Err(DecodeError::Dangling(at.wrapping_sub(back)));
    }
    Ok(Some(at - back))
}
