//! `Store::repair`: bringing a damaged store back to its longest intact history.
//!
//! Opening recovers from what a crash leaves (a torn tail past the control file's durable
//! end). Other damage makes a store unusable although most of it is intact: a last chunk cut
//! below the durable end (a copy interrupted, a disk replaced), a deleted or damaged
//! `commits.idx`, a damaged control file. Repair reads the log itself, from the start of the
//! live records, and keeps exactly the records before the first one that is cut or damaged:
//! pointers only go backwards (FORMAT.md I1, I2), so every commit found there has its whole
//! tree there (or in the prefix of the last collection). It then rebuilds the index and the
//! control file around that prefix. It changes nothing unless asked to apply its plan.

use std::path::{Path, PathBuf};

use arbor_core::Hash;

use super::index::{ENTRY_LEN, INDEX_FILE};
use super::open::{existing_uid, truncate_tail, LOCK_FILE};
use super::recover::scan;
use crate::config::Config;
use crate::error::{io_err, Error, Result};
use crate::io::{FileSystem, OpenOptions};
use crate::pack::control::Control;
use crate::pack::log::{Log, CHUNK_HEADER_LEN};
use crate::pack::prefix::parse_prefix_name;

/// What [`Store::repair`](super::Store::repair) found, and what it changed or would change.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairReport {
    /// Where the intact log ends, if something after it is cut short or damaged: the file,
    /// the global offset and what is wrong there.
    pub damage: Option<(PathBuf, u64, String)>,
    /// Bytes of log the chunk files hold, from the start of the live records.
    pub log_end: u64,
    /// The end of the intact log: everything before it is kept.
    pub valid_end: u64,
    /// Commits kept, in log order (the last one is the newest).
    pub commits_kept: Vec<Hash>,
    /// Commits the old index or control file named that are not in the intact log.
    pub commits_dropped: Vec<Hash>,
    /// Heads kept, with their commit.
    pub heads_kept: Vec<(String, Hash)>,
    /// Heads dropped because their commit is not kept.
    pub heads_dropped: Vec<(String, Hash)>,
    /// Heads whose last change is lost with the damaged log: they go back to the commit an
    /// earlier change named (name, commit before repair, commit after).
    pub heads_moved: Vec<(String, Hash, Hash)>,
    /// Why the index and control file must be rewritten (empty when they need not be).
    pub rewrites: Vec<String>,
    /// The plan was carried out (`apply`); false for a dry run or when nothing was needed.
    pub applied: bool,
}

impl RepairReport {
    /// True if the store needs no repair: the log is intact to its end and the index and
    /// control file agree with it.
    pub fn is_intact(&self) -> bool {
        self.damage.is_none() && self.commits_dropped.is_empty() && self.rewrites.is_empty()
    }
}

/// Finds the longest intact history of the store in `dir` and, with `apply`, cuts the log
/// there and rewrites the index and control file to match. Takes the writer lock (fails with
/// [`Error::Locked`] beside a writer).
pub(super) fn repair(dir: &Path, config: &Config, apply: bool) -> Result<RepairReport> {
    let fs = config.fs.clone();
    let pack = dir.join("pack");
    if !fs.exists(&pack) {
        return Err(Error::NoStore { dir: dir.to_path_buf() });
    }
    let _lock = match fs.lock_exclusive(&dir.join(LOCK_FILE)) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Err(Error::Locked { dir: dir.to_path_buf() }),
        Err(e) => return Err(io_err("locking", dir.join(LOCK_FILE))(e)),
    };
    let mut rewrites = Vec::new();
    let control = match Control::read(fs.as_ref(), dir) {
        Ok(Some(c)) => Some(c),
        Ok(None) => {
            rewrites.push("the control file is missing".to_string());
            None
        }
        Err(e) => {
            rewrites.push(format!("the control file is unreadable ({e})"));
            None
        }
    };
    let gc = control.as_ref().and_then(|c| c.gc);
    if control.is_none() && has_prefix(fs.as_ref(), &pack)? {
        // Which prefix holds the live records below the floor, and where the floor is, only
        // the control file says: guessing could keep a history with holes.
        return Err(Error::InvalidArgument(format!(
            "cannot repair {}: its control file is lost and a garbage collection's prefix file remains, so \
             which records below the collection's floor are live is unknown; restore a snapshot instead",
            dir.display()
        )));
    }
    let uid = match &control {
        Some(c) => c.uid,
        None => existing_uid(&fs, dir)?.ok_or_else(|| Error::NoStore { dir: dir.to_path_buf() })?,
    };
    let inode = control.as_ref().map_or(config.inode, |c| c.inode);
    let log = Log::open(fs.clone(), &pack, uid, apply)?;
    let chunks = log.chunks();
    let Some(first) = chunks.first() else { return Err(Error::NoStore { dir: dir.to_path_buf() }) };
    let start = gc.map_or(first.start + CHUNK_HEADER_LEN, |g| g.floor.max(first.start + CHUNK_HEADER_LEN));
    let last = chunks.last().expect("non-empty");
    let log_end = last.start + last.file.len().map_err(io_err("reading the length of", &last.path))?;
    let found = scan(&log, start, false)?;
    // Zeros the writer prepared past its records are not a commit that never completed.
    let log_end = found.zeros_from.unwrap_or(log_end);
    let valid_end = found.valid_end;
    let damage = match &found.stopped {
        Some((at, kind)) => Some((file_of(&log, *at), *at, kind.to_string())),
        None if valid_end < log_end => {
            Some((last.path.clone(), valid_end, "records of a commit that never completed".to_string()))
        }
        None => None,
    };

    // Commits: those below the scan's start stay as the old index has them (only an archive
    // collection leaves any); the rest are what the scan found.
    let old_index = read_index(fs.as_ref(), dir, &mut rewrites)?;
    let mut kept: Vec<(Hash, u64)> = old_index.iter().copied().filter(|(_, o)| *o < start).collect();
    kept.extend(found.commits.iter().copied());
    let kept_set: std::collections::HashSet<Hash> = kept.iter().map(|(h, _)| *h).collect();
    let mut dropped: Vec<Hash> = Vec::new();
    let named = old_index.iter().map(|(h, _)| *h).chain(control.as_ref().and_then(|c| c.last_commit).map(|c| c.0));
    for h in named {
        if !kept_set.contains(&h) && !dropped.contains(&h) {
            dropped.push(h);
        }
    }
    if old_index.len() != kept.len() || old_index.iter().zip(&kept).any(|(a, b)| a != b) {
        rewrites.push(format!("the index names {} commits, the intact log {}", old_index.len(), kept.len()));
    }

    // Heads: without a collection, every HEAD record is in the scanned log, in order. After
    // one, the control file's heads stand for the records below the floor.
    let mut heads: std::collections::BTreeMap<String, (Hash, u64)> = std::collections::BTreeMap::new();
    let mut heads_dropped = Vec::new();
    let replay_from = match (&control, gc) {
        (Some(c), Some(_)) => {
            for (name, h, o) in &c.heads {
                if *o < valid_end && kept_set.contains(h) {
                    heads.insert(name.clone(), (*h, *o));
                } else {
                    heads_dropped.push((name.clone(), *h));
                }
            }
            c.durable_end
        }
        _ => 0,
    };
    for (at, h) in found.heads.iter().filter(|(at, _)| *at >= replay_from) {
        debug_assert!(*at < valid_end);
        match h.target {
            Some(t) => heads.insert(h.name.clone(), t),
            None => heads.remove(&h.name),
        };
    }
    let mut heads_moved = Vec::new();
    if let Some(c) = &control {
        for (name, h, _) in &c.heads {
            match heads.get(name) {
                Some((now, _)) if now != h => heads_moved.push((name.clone(), *h, *now)),
                Some(_) => {}
                None if !heads_dropped.iter().any(|(n, _)| n == name) => heads_dropped.push((name.clone(), *h)),
                None => {}
            }
        }
        if c.durable_end > valid_end {
            rewrites.push(format!(
                "the control file says the log is durable to offset {}, the intact log ends at {valid_end}",
                c.durable_end
            ));
        }
    }
    if damage.is_some() && rewrites.is_empty() {
        rewrites.push("the log is cut back".to_string());
    }

    let mut report = RepairReport {
        damage,
        log_end,
        valid_end,
        commits_kept: kept.iter().map(|(h, _)| *h).collect(),
        commits_dropped: dropped,
        heads_kept: heads.iter().map(|(n, (h, _))| (n.clone(), *h)).collect(),
        heads_dropped,
        heads_moved,
        rewrites,
        applied: false,
    };
    if !apply || report.is_intact() {
        return Ok(report);
    }

    // The order makes every crash safe: until the control file is replaced, a normal open
    // still sees the damaged store as it was, and repair can run again; the index is
    // trusted only up to the count the new control file gives.
    truncate_tail(&log, valid_end)?;
    write_index(fs.as_ref(), dir, &kept)?;
    let generation = control.as_ref().map_or(0, |c| c.generation) + 1;
    let new_control = Control {
        uid,
        generation,
        inode,
        durable_end: valid_end,
        index_count: kept.len() as u64,
        last_commit: kept.last().copied(),
        heads: heads.iter().map(|(n, (h, o))| (n.clone(), *h, *o)).collect(),
        gc,
    };
    new_control.write(fs.as_ref(), dir)?;
    report.applied = true;
    Ok(report)
}

/// True if `pack` holds a collection's prefix file.
fn has_prefix(fs: &dyn FileSystem, pack: &Path) -> Result<bool> {
    Ok(fs.list(pack).map_err(io_err("listing", pack))?.iter().any(|n| parse_prefix_name(n).is_some()))
}

/// The chunk file holding `offset`.
fn file_of(log: &Log, offset: u64) -> PathBuf {
    let chunks = log.chunks();
    let i = chunks.partition_point(|c| c.start <= offset).saturating_sub(1);
    chunks.get(i).map_or_else(|| log.dir.clone(), |c| c.path.clone())
}

/// Every well-formed entry at the start of the index file, up to the first damaged one (a
/// missing or damaged file is noted in `rewrites`).
fn read_index(fs: &dyn FileSystem, dir: &Path, rewrites: &mut Vec<String>) -> Result<Vec<(Hash, u64)>> {
    let path = dir.join(INDEX_FILE);
    if !fs.exists(&path) {
        rewrites.push(format!("{INDEX_FILE} is missing"));
        return Ok(Vec::new());
    }
    let file = fs.open(&path, OpenOptions::default()).map_err(io_err("opening", &path))?;
    let len = file.len().map_err(io_err("reading the length of", &path))?;
    let mut bytes = vec![0u8; len as usize];
    file.read_exact_at(&mut bytes, 0).map_err(io_err("reading", &path))?;
    let mut out = Vec::new();
    for e in bytes.chunks_exact(ENTRY_LEN as usize) {
        match super::index::decode(e) {
            Some(entry) => out.push(entry),
            None => {
                rewrites.push(format!("{INDEX_FILE} is damaged after {} entries", out.len()));
                break;
            }
        }
    }
    Ok(out)
}

/// Replaces the index file with `entries`, durably.
fn write_index(fs: &dyn FileSystem, dir: &Path, entries: &[(Hash, u64)]) -> Result<()> {
    let tmp = dir.join("commits.idx.tmp");
    let path = dir.join(INDEX_FILE);
    let file =
        fs.open(&tmp, OpenOptions { create: true, write: true, truncate: true }).map_err(io_err("creating", &tmp))?;
    let mut bytes = Vec::with_capacity(entries.len() * ENTRY_LEN as usize);
    for (h, o) in entries {
        bytes.extend_from_slice(&super::index::encode(h, *o));
    }
    file.write_all_at(&bytes, 0).map_err(io_err("writing", &tmp))?;
    file.sync_data().map_err(io_err("syncing", &tmp))?;
    drop(file);
    fs.rename(&tmp, &path).map_err(io_err("renaming", &tmp))?;
    fs.sync_dir(dir).map_err(io_err("syncing", dir))
}
