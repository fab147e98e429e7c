//! Import: rebuilds a snapshot's tree in a store, a directory at a time, and commits it only
//! once every checksum, count and the tree hash agree with the file.
//!
//! Memory: only the directories on the path from the root to the current entry are being
//! built. A finished sub-directory holding much in memory is written to the log with
//! [`Store::persist`] and grafted into its parent as a small on-disk tree; one that holds
//! little is grafted as it is, so a state of many tiny directories does not cost one log
//! write each. A directory still being built is persisted part-way once it holds more than
//! [`PARTIAL_WEIGHT`], so a directory of many small sub-directories stays bounded too (its
//! earlier records become unreferenced garbage in the log, a few per `PARTIAL_WEIGHT`).

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use arbor_core::commit_hash;

use super::export::{TAG_DIR, TAG_VALUE};
use super::format::SnapReader;
use super::{Counts, ImportStats, SnapshotError};
use crate::error::{io_err, Error, Result};
use crate::path::{Step, MAX_PATH_STEPS};
use crate::store::Store;
use crate::tree::Tree;

/// A finished sub-directory holding at least this many bytes in memory is persisted before
/// it is grafted into its parent. Persisting every one instead (measured on the 1M-value
/// Tezos-like state, 473k directories) cost one write each: 0.7 s more system time, for
/// 33 MiB less peak RSS.
const CHILD_WEIGHT: u64 = 256 << 10;
/// A directory being built is persisted part-way once it holds this many bytes in memory.
const PARTIAL_WEIGHT: u64 = 8 << 20;
/// Approximate memory of one binding besides its value bytes (step, pointer, node).
const ENTRY_WEIGHT: u64 = 96;

/// Imports the snapshot read from `input` into `store` and returns the commit it made.
///
/// The store may already hold other commits: the import only adds this one (and sets no
/// head). If it already holds this commit, the file is still read through and checked, but
/// nothing is written. The commit is as durable as any other under the store's durability
/// policy when this returns. On any error nothing is committed; records already written for
/// finished sub-directories are unreferenced, and a writable open cuts them off the log's
/// tail if no commit followed them.
pub fn import<R: Read>(store: &Store, input: R) -> Result<ImportStats> {
    import_named(store, input, PathBuf::from("<snapshot input>"))
}

/// [`import`] of the file at `path`.
pub fn import_file(store: &Store, path: impl AsRef<Path>) -> Result<ImportStats> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(io_err("opening snapshot", path))?;
    import_named(store, BufReader::with_capacity(1 << 20, file), path.to_path_buf())
}

fn import_named<R: Read>(store: &Store, input: R, name: PathBuf) -> Result<ImportStats> {
    let mut r = SnapReader::new(input, name);
    let header = r.header()?;
    let ours = store.config().inode;
    if header.inode != ours {
        return Err(SnapshotError::InodeShape { file: header.inode, store: ours }.into());
    }
    let c = &header.commit;
    // The metadata must name the commit before anything is built on its word.
    let named = commit_hash(&c.tree, &c.parents, c.date, &c.author, &c.message);
    if named != c.hash {
        return Err(SnapshotError::CommitHashMismatch { expected: c.hash, actual: named }.into());
    }
    let written = !store.contains(&c.hash);
    let max_len = store.config().max_value_len;
    let mut b = Builder { store, r: &mut r, build: written, stack: Vec::new(), counts: Counts::default(), max_len };
    let root = b.run()?;
    let tree_counts = b.counts;
    let counts = r.finish(tree_counts)?;
    if let Some(root) = root {
        let actual = root.hash();
        if actual != c.tree {
            return Err(SnapshotError::TreeHashMismatch { expected: c.tree, actual }.into());
        }
        let (made, _) = store.commit_with_stats(&root, &c.parents, c.date, &c.author, &c.message)?;
        if made != c.hash {
            return Err(SnapshotError::CommitHashMismatch { expected: c.hash, actual: made }.into());
        }
    }
    Ok(ImportStats { commit: c.hash, counts, file_bytes: r.pos(), written })
}

/// A directory being read (and, unless only checking, built).
struct Frame {
    /// Its step in the parent (empty for the root).
    name: Step,
    /// The directory built so far; None when only checking.
    tree: Option<Tree>,
    count: u64,
    left: u64,
    /// Previous step, for the sorted order of a flat directory.
    last: Vec<u8>,
    /// CRC-32C of the steps in arrival order, for the inode order of a large directory.
    order: u32,
    /// Bytes the directory holds in memory, children not yet persisted included.
    weight: u64,
}

/// Reads the tree stream and rebuilds it.
struct Builder<'a, R: Read> {
    store: &'a Store,
    r: &'a mut SnapReader<R>,
    build: bool,
    stack: Vec<Frame>,
    counts: Counts,
    max_len: usize,
}

/// Adds one step to a running CRC of steps, each prefixed by its length.
fn crc_step(crc: u32, step: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c_append(crc, &(step.len() as u64).to_le_bytes()), step)
}

impl<R: Read> Builder<'_, R> {
    fn malformed(&self, what: &'static str) -> Error {
        SnapshotError::Malformed { offset: self.r.block_at(), what }.into()
    }

    fn push(&mut self, name: Step, count: u64) {
        self.counts.dirs += 1;
        let tree = self.build.then(|| self.store.empty());
        self.stack.push(Frame { name, tree, count, left: count, last: Vec::new(), order: 0, weight: ENTRY_WEIGHT });
    }

    /// A length read from the stream, refused above the store's value limit before allocating:
    /// a value as `ValueTooLarge` (a store may be configured below the exporter's), a step
    /// as malformed.
    fn len(&mut self, what: &'static str) -> Result<usize> {
        let n = self.r.leb()?;
        match usize::try_from(n) {
            Ok(n) if n <= self.max_len => Ok(n),
            _ if what == "value length" => {
                Err(Error::ValueTooLarge { len: usize::try_from(n).unwrap_or(usize::MAX), max: self.max_len })
            }
            _ => Err(self.malformed(what)),
        }
    }

    /// Reads the whole tree; returns its root (None when only checking).
    fn run(&mut self) -> Result<Option<Tree>> {
        let count = self.r.leb()?;
        self.push(Step::new(), count);
        let (mut step, mut value) = (Vec::new(), Vec::new());
        let large_above = u64::from(self.store.config().inode.stable_hash);
        while let Some(top) = self.stack.last_mut() {
            if top.left == 0 {
                let done = self.stack.pop().expect("a frame is on the stack");
                let (tree, weight) = self.close(done)?;
                match self.stack.last_mut() {
                    None => return Ok(tree.map(|(t, _)| t)),
                    Some(parent) => {
                        if let (Some(p), Some((t, name))) = (parent.tree.as_mut(), tree) {
                            p.add_tree_mut(&[&name[..]], &t)?;
                        }
                        parent.weight += weight;
                        self.maybe_persist_top()?;
                    }
                }
                continue;
            }
            top.left -= 1;
            let large = top.count > large_above;
            // The entry's path has a step per open directory. A deeper tree is refused while
            // reading, before anything of it is built: no tree may be deeper, and walks over
            // one (hashing it, writing it) would run out of stack.
            let steps = self.stack.len();
            if steps > MAX_PATH_STEPS {
                return Err(Error::PathTooDeep { steps, max: MAX_PATH_STEPS });
            }
            let n = self.len("step length")?;
            if n == 0 {
                return Err(self.malformed("empty step"));
            }
            self.r.bytes(n, &mut step)?;
            let top = self.stack.last_mut().expect("a frame is on the stack");
            if large {
                top.order = crc_step(top.order, &step);
            } else if !top.last.is_empty() && step <= top.last {
                return Err(self.malformed("steps of a directory out of order"));
            } else {
                top.last.clone_from(&step);
            }
            match self.r.byte()? {
                TAG_VALUE => {
                    let n = self.len("value length")?;
                    self.r.bytes(n, &mut value)?;
                    self.counts.values += 1;
                    self.counts.value_bytes += n as u64;
                    let top = self.stack.last_mut().expect("a frame is on the stack");
                    if let Some(t) = top.tree.as_mut() {
                        t.add_mut(&[&step], &value)?;
                    }
                    top.weight += ENTRY_WEIGHT + n as u64;
                    self.maybe_persist_top()?;
                }
                TAG_DIR => {
                    let count = self.r.leb()?;
                    if count == 0 {
                        return Err(self.malformed("empty directory below the root"));
                    }
                    self.push(Step::from_slice(&step), count);
                }
                _ => return Err(self.malformed("unknown entry tag")),
            }
        }
        unreachable!("the loop returns when the root is closed")
    }

    /// Checks a finished directory against its count and order, persists it if it holds
    /// enough; returns it (with its name) and the memory its parent takes over.
    fn close(&mut self, f: Frame) -> Result<(Option<(Tree, Step)>, u64)> {
        let Some(tree) = f.tree else { return Ok((None, 0)) };
        let dir = tree.ctx.dir_of(&tree.root)?.ok_or(Error::NotADirectory)?;
        if dir.len() != f.count {
            return Err(self.malformed("a directory repeats a step"));
        }
        if f.count > u64::from(self.store.config().inode.stable_hash) {
            // Large directories come in inode order: the rebuilt one must list the same way.
            let mut crc = 0;
            tree.ctx.each_entry(&dir, &mut |s, _| {
                crc = crc_step(crc, s);
                Ok(true)
            })?;
            if crc != f.order {
                return Err(self.malformed("a large directory is not in inode order"));
            }
        }
        drop(dir);
        let root = self.stack.is_empty();
        if !root && f.weight >= CHILD_WEIGHT {
            let t = self.store.persist(&tree)?;
            return Ok((Some((t, f.name)), ENTRY_WEIGHT));
        }
        Ok((Some((tree, f.name)), f.weight))
    }

    /// Persists the directory on top of the stack part-way if it holds too much memory.
    fn maybe_persist_top(&mut self) -> Result<()> {
        let top = self.stack.last_mut().expect("a frame is on the stack");
        if top.weight >= PARTIAL_WEIGHT {
            if let Some(t) = top.tree.as_mut() {
                *t = self.store.persist(t)?;
            }
            top.weight = ENTRY_WEIGHT;
        }
        Ok(())
    }
}
