//! Export: one commit's tree, walked lazily in storage order, written as a snapshot.
//!
//! The tree stream (docs/SNAPSHOT.md §4) is a pre-order walk:
//!
//! ```text
//! dir   := count:leb128 entry*count
//! entry := step_len:leb128 step tag:u8 (tag 0: value_len:leb128 value | tag 1: dir)
//! ```
//!
//! Children come in the engine's storage order, which is canonical: sorted by step for a
//! directory of at most `stable_hash` entries, inode order (slot by slot, a function of the
//! steps and the inode shape alone) above. Only storage order streams: sorting a large
//! directory would hold all its steps, and inode order is what `each_entry` walks with one
//! inode per level in memory. The store's object cache bounds what the walk keeps loaded.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use arbor_core::{ChildKind, Hash};

use super::format::Header;
use super::write::SnapWriter;
use super::{ExportStats, SnapshotError};
use crate::error::{io_err, Error, Result};
use crate::path::MAX_PATH_STEPS;
use crate::store::Store;
use crate::tree::{Ctx, Dir, Ptr};

/// Tags of an entry in the tree stream.
pub(crate) const TAG_VALUE: u8 = 0;
pub(crate) const TAG_DIR: u8 = 1;

/// Writes the snapshot of `commit` to `out` (buffer it: the writer makes small writes only
/// for the header and trailer, but one per block). Memory stays bounded by the tree's depth
/// and the store's cache, whatever the state's size.
pub fn export<W: Write>(store: &Store, commit: &Hash, out: W) -> Result<ExportStats> {
    export_named(store, commit, out, PathBuf::from("<snapshot output>")).map(|(_, s)| s)
}

/// Writes the snapshot of `commit` to the file `path`: first to `path` + `.tmp`, synced, then
/// renamed, so an interrupted export never leaves a partial file under the final name.
pub fn export_file(store: &Store, commit: &Hash, path: impl AsRef<Path>) -> Result<ExportStats> {
    let path = path.as_ref();
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let file = std::fs::File::create(&tmp).map_err(io_err("creating snapshot", &tmp))?;
    let result = export_named(store, commit, BufWriter::with_capacity(1 << 20, file), tmp.clone());
    let (out, stats) = match result {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    let file = out.into_inner().map_err(|e| io_err("writing snapshot", &tmp)(e.into_error()))?;
    file.sync_all().map_err(io_err("syncing snapshot", &tmp))?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(io_err("renaming snapshot", path))?;
    Ok(stats)
}

fn export_named<W: Write>(store: &Store, commit: &Hash, out: W, name: PathBuf) -> Result<(W, ExportStats)> {
    let info = store.commit_info(commit)?;
    let tree = store.checkout(commit)?;
    let mut w = SnapWriter::new(out, name)?;
    w.header(&Header { inode: store.config().inode, commit: info })?;
    let root = tree.ctx.dir_of(&tree.root)?.ok_or(Error::NotADirectory)?;
    Walk { ctx: &tree.ctx, w: &mut w, depth: 0 }.dir(&root, true)?;
    let (out, counts, file_bytes) = w.finish()?;
    Ok((out, ExportStats { commit: *commit, counts, file_bytes }))
}

/// The pre-order walk writing the tree stream.
struct Walk<'a, W: Write> {
    ctx: &'a Ctx,
    w: &'a mut SnapWriter<W>,
    /// Steps from the root to the directory being written.
    depth: usize,
}

impl<W: Write> Walk<'_, W> {
    fn dir(&mut self, dir: &Dir, root: bool) -> Result<()> {
        let n = dir.len();
        if n == 0 && !root {
            return Err(SnapshotError::EmptyDirectory.into());
        }
        self.w.counts.dirs += 1;
        self.w.leb(n)?;
        let ctx = self.ctx;
        let mut seen = 0u64;
        ctx.each_entry(dir, &mut |step, ptr| {
            seen += 1;
            self.entry(step, ptr)?;
            Ok(true)
        })?;
        // The count went out first; a directory whose walk disagrees with it is damaged.
        if seen != n {
            return Err(Error::InvalidArgument(format!("directory claims {n} entries but holds {seen}")));
        }
        Ok(())
    }

    fn entry(&mut self, step: &[u8], ptr: &Ptr) -> Result<()> {
        // A stored tree deeper than the maximum (another program's, or damage) is refused,
        // not followed until the stack ends; no import would take it either.
        let steps = self.depth + 1;
        if steps > MAX_PATH_STEPS {
            return Err(Error::PathTooDeep { steps, max: MAX_PATH_STEPS });
        }
        self.w.leb(step.len() as u64)?;
        self.w.put(step)?;
        match ptr.kind() {
            ChildKind::Contents => {
                let v = self.ctx.value_of(ptr)?.expect("a contents pointer loads a value");
                self.w.put(&[TAG_VALUE])?;
                self.w.leb(v.bytes.len() as u64)?;
                self.w.put(&v.bytes)?;
                self.w.counts.values += 1;
                self.w.counts.value_bytes += v.bytes.len() as u64;
            }
            ChildKind::Node => {
                let d = self.ctx.dir_of(ptr)?.expect("a node pointer loads a directory");
                self.w.put(&[TAG_DIR])?;
                self.depth += 1;
                self.dir(&d, false)?;
                self.depth -= 1;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::tree::{DirBody, Tree};
    use crate::Config;

    /// The public API cannot build an empty directory below the root, but a damaged or foreign
    /// store could hold one: export refuses it, since no import could rebuild its hash.
    #[test]
    fn an_empty_directory_below_the_root_is_refused() {
        let fs = crate::io::MemFs::new();
        let store = Store::open_with("/s", Config { fs: Arc::new(fs), ..Config::default() }).unwrap();
        let empty = Ptr::dir(Arc::new(Dir::empty()));
        let root = Dir::new(DirBody::Flat(
            crate::tree::Bindings::from_sorted(vec![(crate::path::Step::from_slice(b"e"), empty)]).unwrap(),
        ));
        let tree = Tree::at(Ptr::dir(Arc::new(root)), store.empty().ctx, 1);
        let commit = store.commit(&tree, &[], 0, "Tezos", "").unwrap();
        let e = export(&store, &commit, Vec::new()).unwrap_err();
        assert!(matches!(e, Error::Snapshot(SnapshotError::EmptyDirectory)), "{e}");
    }
}
