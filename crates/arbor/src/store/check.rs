//! fsck and statistics over every object reachable from the commits.

use std::collections::HashMap;

use arbor_core::{commit_hash, contents_hash, ChildKind, Hash};

use super::Store;
use crate::error::{Error, Result};
use crate::pack::record::kind;
use crate::path::MAX_PATH_STEPS;
use crate::tree::{Dir, DirBody, IPtr, Inode, InodeBody, Ptr};

/// What fsck found.
#[derive(Debug, Default, Clone)]
pub struct FsckReport {
    /// Commits checked.
    pub commits: u64,
    /// Distinct objects checked (checksum, decoding and hash).
    pub objects: u64,
    /// Problems found, each naming the file and offset; empty when the store is sound.
    pub errors: Vec<String>,
    /// True when the check stopped early after reaching its limit of reported problems.
    pub truncated: bool,
}

/// Statistics of the objects reachable from every commit (each object counted once).
#[derive(Debug, Default, Clone)]
pub struct StoreStats {
    /// Commits.
    pub commits: u64,
    /// Size of the log in bytes.
    pub log_bytes: u64,
    /// Distinct records per kind: contents, flat directories, values inodes, tree inodes.
    pub records: [u64; 4],
    /// Bytes of those records (with framing) per kind, same order.
    pub record_bytes: [u64; 4],
    /// Of those records, the directories and inodes stored as deltas of a full record or
    /// of a delta (counted under their full kind above too).
    pub delta_records: u64,
    /// Of the delta records, those whose base is itself a delta (level 2, FORMAT.md 5.8).
    pub chained_delta_records: u64,
    /// Bytes of the delta records (with framing).
    pub delta_bytes: u64,
    /// Values stored inline in their parent's record.
    pub inlined_values: u64,
    /// Values stored as records of their own.
    pub separate_values: u64,
    /// Number of values (inline or not) by path depth: `depths[d]` values at depth `d`.
    pub depths: Vec<u64>,
    /// Largest directory seen (entries).
    pub max_dir_entries: u64,
    /// Values by size: `value_sizes[k]` counts values of `2^k..2^(k+1)` bytes (empty values in
    /// bucket 0), as the Lima audit (Tarides, 2023) published the context's content sizes.
    pub value_sizes: [u64; 32],
    /// Directories by entry count: `dir_fanout[k]` counts directories of `2^k..2^(k+1)` entries.
    pub dir_fanout: [u64; 32],
}

/// The log2 bucket of a size: `floor(log2(n))`, 0 for 0.
fn log2_bucket(n: u64) -> usize {
    (63 - n.max(1).leading_zeros()) as usize
}

/// Gives up after this many errors: a badly damaged store would otherwise flood the report.
const MAX_ERRORS: usize = 100;

struct Walk<'a> {
    store: &'a Store,
    /// Objects checked, with the hash their first parent recorded: a second pointer to the
    /// same offset must record the same hash.
    seen: HashMap<u64, Hash>,
    /// Records counted in the statistics (a delta's base is counted once, with no hash), and
    /// whether each is a delta.
    counted: HashMap<u64, bool>,
    inode_counts: HashMap<u64, u64>,
    stats: StoreStats,
    errors: Vec<String>,
    first_error: Option<Error>,
    objects: u64,
}

fn slot_index(k: u8) -> usize {
    match k {
        kind::CONTENTS => 0,
        kind::FLAT_DIR | kind::FLAT_DIR_DELTA => 1,
        kind::INODE_VALUES | kind::INODE_VALUES_DELTA => 2,
        _ => 3,
    }
}

impl Walk<'_> {
    fn fail(&mut self, e: impl ToString) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(e.to_string());
        }
    }

    /// Counts the record at `offset` (once), and the records it is a delta of.
    fn record_size(&mut self, offset: u64) -> Result<()> {
        let mut next = Some(offset);
        // Whether the record just counted is a delta whose base is `next`.
        let mut from_delta = false;
        while let Some(at) = next.take() {
            if let Some(&is_delta) = self.counted.get(&at) {
                if from_delta && is_delta {
                    self.stats.chained_delta_records += 1;
                }
                break;
            }
            let frame = self.store.shared.loader.read(at)?;
            let (k, body) = frame.parts();
            let framed = 1 + arbor_core::leb128::len_u64(body.len() as u64) as u64 + body.len() as u64 + 4;
            self.stats.records[slot_index(k)] += 1;
            self.stats.record_bytes[slot_index(k)] += framed;
            self.objects += 1;
            next = crate::pack::refs::delta_base(k, body, at).map_err(|e| Error::Corrupt {
                file: self.store.shared.loader.file_of(at),
                offset: at,
                kind: e.into(),
            })?;
            self.counted.insert(at, next.is_some());
            if next.is_some() {
                self.stats.delta_records += 1;
                self.stats.delta_bytes += framed;
                if from_delta {
                    self.stats.chained_delta_records += 1;
                }
            }
            from_delta = next.is_some();
        }
        Ok(())
    }

    /// True if the object at `offset` was checked already (under the same hash, else an error).
    fn already(&mut self, offset: u64, hash: Hash) -> Result<bool> {
        match self.seen.insert(offset, hash) {
            None => Ok(false),
            Some(h) if h == hash => Ok(true),
            Some(h) => Err(self.mismatch(offset, h, hash)),
        }
    }

    fn mismatch(&self, offset: u64, expected: Hash, actual: Hash) -> Error {
        Error::Corrupt {
            file: self.store.shared.loader.file_of(offset),
            offset,
            kind: crate::error::Corruption::HashMismatch { expected, actual },
        }
    }

    fn depth_value(&mut self, depth: usize) {
        if self.stats.depths.len() <= depth {
            self.stats.depths.resize(depth + 1, 0);
        }
        self.stats.depths[depth] += 1;
    }

    fn child(&mut self, p: &Ptr, depth: usize) -> Result<()> {
        // No tree is deeper than the maximum; a stored one that is (written by another
        // program, or damaged) is reported rather than followed until the stack ends.
        if depth > MAX_PATH_STEPS {
            return Err(Error::PathTooDeep { steps: depth, max: MAX_PATH_STEPS });
        }
        match p {
            Ptr::Value(_) | Ptr::Small(_) => {
                let len = p.value_bytes().map_or(0, <[u8]>::len);
                self.stats.value_sizes[log2_bucket(len as u64)] += 1;
                self.stats.inlined_values += 1;
                self.depth_value(depth);
                Ok(())
            }
            Ptr::Dir(_) => Ok(()),
            Ptr::Disk(d) => match d.kind {
                ChildKind::Contents => {
                    self.stats.separate_values += 1;
                    self.depth_value(depth);
                    if self.already(d.offset, d.hash)? {
                        return Ok(());
                    }
                    self.record_size(d.offset)?;
                    let v = self.store.shared.loader.load_value(d)?;
                    self.stats.value_sizes[log2_bucket(v.bytes.len() as u64)] += 1;
                    let actual = contents_hash(&v.bytes);
                    if actual != d.hash {
                        return Err(self.mismatch(d.offset, d.hash, actual));
                    }
                    Ok(())
                }
                ChildKind::Node => self.dir(d.offset, d.hash, depth),
            },
        }
    }

    fn dir(&mut self, offset: u64, expected: Hash, depth: usize) -> Result<()> {
        if self.already(offset, expected)? {
            return Ok(());
        }
        self.record_size(offset)?;
        let dir: Dir = self.store.shared.loader.decode_dir(offset, None)?;
        self.stats.max_dir_entries = self.stats.max_dir_entries.max(dir.len());
        self.stats.dir_fanout[log2_bucket(dir.len())] += 1;
        match &dir.body {
            DirBody::Flat(entries) => {
                for (_, p) in entries {
                    self.child(p, depth + 1)?;
                }
            }
            DirBody::Large(root) => {
                self.inode_children(root, offset, depth)?;
            }
        }
        let actual = *dir.hash();
        if actual != expected {
            return Err(self.mismatch(offset, expected, actual));
        }
        Ok(())
    }

    /// Checks the children of an inode and that its count adds up.
    fn inode_children(&mut self, node: &Inode, offset: u64, depth: usize) -> Result<()> {
        match &node.body {
            InodeBody::Values(entries) => {
                for (_, p) in entries {
                    self.child(p, depth + 1)?;
                }
            }
            InodeBody::Tree(slots) => {
                let mut sum = 0;
                for s in slots {
                    if let IPtr::Disk { offset: o, hash } = s {
                        sum += self.inode(*o, *hash, node.depth + 1, depth)?;
                    }
                }
                if sum != node.count {
                    return Err(Error::Corrupt {
                        file: self.store.shared.loader.file_of(offset),
                        offset,
                        kind: crate::error::Corruption::CountMismatch { recorded: node.count, actual: sum },
                    });
                }
            }
        }
        Ok(())
    }

    fn inode(&mut self, offset: u64, expected: Hash, inode_depth: u32, depth: usize) -> Result<u64> {
        if self.already(offset, expected)? {
            if let Some(c) = self.inode_counts.get(&offset) {
                return Ok(*c);
            }
        }
        self.record_size(offset)?;
        let node = self.store.shared.loader.decode_inode(offset, None, inode_depth)?;
        self.inode_children(&node, offset, depth)?;
        let actual = *node.hash();
        if actual != expected {
            return Err(self.mismatch(offset, expected, actual));
        }
        self.inode_counts.insert(offset, node.count);
        Ok(node.count)
    }

    fn run(&mut self, only: Option<&[Hash]>) {
        let commits: Vec<(Hash, u64)> = match only {
            None => self.store.shared.catalog.order(),
            Some(hashes) => {
                let catalog = &self.store.shared.catalog;
                let mut out = Vec::with_capacity(hashes.len());
                for h in hashes {
                    match catalog.offset(h) {
                        Some(o) => out.push((*h, o)),
                        None => {
                            self.fail(format!("unknown commit {h}"));
                            self.first_error.get_or_insert(Error::UnknownCommit(*h));
                        }
                    }
                }
                out
            }
        };
        for (hash, offset) in commits {
            if self.errors.len() >= MAX_ERRORS {
                break;
            }
            self.stats.commits += 1;
            let r = (|| {
                let c = self.store.read_commit(offset)?;
                let parents: Vec<Hash> = c.parents.iter().map(|p| p.0).collect();
                let actual = commit_hash(&c.tree_hash, &parents, c.date, &c.author, &c.message);
                if actual != hash {
                    return Err(self.mismatch(offset, hash, actual));
                }
                let tree = self.store.stored_tree(&hash)?;
                if let Ptr::Disk(d) = &tree.root {
                    self.dir(d.offset, d.hash, 0)?;
                }
                Ok(())
            })();
            if let Err(e) = r {
                self.fail(format!("commit {hash}: {e}"));
                self.first_error.get_or_insert(e);
            }
        }
    }
}

impl Store {
    fn walk(&self, only: Option<&[Hash]>) -> Walk<'_> {
        let mut w = Walk {
            store: self,
            seen: HashMap::new(),
            counted: HashMap::new(),
            inode_counts: HashMap::new(),
            stats: StoreStats { log_bytes: self.log_bytes(), ..StoreStats::default() },
            errors: Vec::new(),
            first_error: None,
            objects: 0,
        };
        w.run(only);
        w
    }

    /// Reads every object reachable from every commit, checking checksums, encodings,
    /// inode counts and hashes. Problems are reported, not returned as an error.
    pub fn fsck(&self) -> FsckReport {
        let w = self.walk(None);
        let truncated = w.errors.len() >= MAX_ERRORS;
        FsckReport { commits: w.stats.commits, objects: w.objects, errors: w.errors, truncated }
    }

    /// Statistics of every object reachable from the commits; the first problem met (such
    /// as [`Error::Corrupt`]) is returned as the error.
    pub fn stats(&self) -> Result<StoreStats> {
        self.stats_of(None)
    }

    /// [`Store::stats`] over the objects reachable from the given commits only (all when None):
    /// the state of one commit is what an audit of a context at a given level measures.
    pub fn stats_of(&self, commits: Option<&[Hash]>) -> Result<StoreStats> {
        let w = self.walk(commits);
        match w.first_error {
            Some(e) => Err(e),
            None => Ok(w.stats),
        }
    }
}
