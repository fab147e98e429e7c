//! Opening a store: lock, control file, chunk files, index, and recovery of the log tail.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use arbor_core::Hash;
use parking_lot::Mutex;

use super::catalog::Catalog;
use super::gc::GcCoordinator;
use super::index::IndexFile;
use super::load::{new_cache, Loader};
use super::recover::scan;
use super::{Shared, Store, Writer};
use crate::config::Config;
use crate::error::{io_err, Error, Result};
use crate::pack::control::Control;
use crate::pack::log::{Log, LogWriter, CHUNK_HEADER_LEN};
use crate::pack::prefix::parse_prefix_name;
use crate::tree::Ctx;

/// Name of the lock file a writer holds.
pub(super) const LOCK_FILE: &str = "LOCK";

fn random_uid() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    h.finish() | 1
}

/// A process-unique id for each opened store instance (never 0, which marks memory-only trees).
fn next_instance() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

pub(super) fn open(dir: &Path, config: Config) -> Result<Store> {
    if !config.read_only {
        return open_once(dir, config);
    }
    // A read-only open beside a writer may meet a garbage collection's switch half-way (the
    // control file it read names a prefix the collection has just removed): when the open
    // fails and the control file has changed since, it starts again on the new one.
    let control = |config: &Config| Control::read(config.fs.as_ref(), dir).ok().flatten().and_then(|c| c.gc);
    let mut attempts = 0;
    loop {
        let before = control(&config);
        match open_once(dir, config.clone()) {
            Err(_) if attempts < 3 && control(&config) != before => attempts += 1,
            r => return r,
        }
    }
}

fn open_once(dir: &Path, config: Config) -> Result<Store> {
    let fs = config.fs.clone();
    let writable = !config.read_only;
    let shape = config.inode;
    if config.inline_max > 4096 || shape.entries == 0 || shape.entries > 32 || shape.stable_hash < shape.entries {
        return Err(Error::InvalidArgument(
            "inline_max must be at most 4096, inode entries in 1..=32 and stable_hash >= entries".into(),
        ));
    }
    if writable {
        if !fs.exists(dir) {
            // Every directory created on the way must be made durable in its parent, or a
            // power loss could take the whole store with it.
            let mut created = Vec::new();
            let mut d = Some(dir);
            while let Some(p) = d.filter(|p| !p.as_os_str().is_empty() && !fs.exists(p)) {
                created.push(p.to_path_buf());
                d = p.parent();
            }
            fs.create_dir_all(dir).map_err(io_err("creating", dir))?;
            for c in created.iter().rev() {
                let parent = c.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                fs.sync_dir(parent).map_err(io_err("syncing", parent))?;
            }
        }
    } else if !fs.exists(dir) {
        return Err(Error::Io {
            op: "opening",
            path: dir.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no store here"),
        });
    }
    let lock = if writable {
        match fs.lock_exclusive(&dir.join(LOCK_FILE)) {
            Ok(l) => Some(l),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                return Err(Error::Locked { dir: dir.to_path_buf() })
            }
            Err(e) => return Err(io_err("locking", dir.join(LOCK_FILE))(e)),
        }
    } else {
        None
    };
    let control = Control::read(fs.as_ref(), dir)?;
    let fresh = control.is_none();
    let control = match control {
        Some(c) => c,
        None => {
            let uid = existing_uid(&fs, dir)?.unwrap_or_else(random_uid);
            Control {
                uid,
                generation: 0,
                inode: config.inode,
                durable_end: 0,
                index_count: 0,
                last_commit: None,
                heads: Vec::new(),
                gc: None,
            }
        }
    };
    if control.inode != config.inode {
        return Err(Error::InvalidArgument(format!(
            "store was created with inode shape {:?}, opened with {:?}",
            control.inode, config.inode
        )));
    }
    let mut log = Log::open(fs.clone(), &dir.join("pack"), control.uid, writable)?;
    log.mapped_reads = config.mapped_reads;
    if let Some(g) = control.gc {
        let view = super::gc::load_view(fs.as_ref(), &log, g)?;
        if writable {
            // A collection that crashed after its switch left space to give back.
            super::gc::finish_release(&log, fs.as_ref(), g.generation, g.floor, g.archive)?;
        }
        log.set_gc_view(view);
    } else if writable {
        // A first collection that crashed before its switch left a prefix nobody names.
        for name in fs.list(&log.dir).map_err(io_err("listing", &log.dir))? {
            if parse_prefix_name(&name).is_some() {
                let path = log.dir.join(&name);
                fs.remove_file(&path).map_err(io_err("removing", &path))?;
            }
        }
    }
    let start = match log.chunks().first() {
        Some(c) if control.durable_end == 0 => c.start + CHUNK_HEADER_LEN,
        Some(_) => control.durable_end,
        None => CHUNK_HEADER_LEN,
    };
    let found = scan(&log, start, writable)?;
    let mut order = Vec::new();
    let mut untrusted = Vec::new();
    let index = IndexFile::open(fs.as_ref(), dir, control.index_count, writable, &mut order, &mut untrusted)?;
    if let Some((at, kind)) = found.stopped.as_ref().filter(|_| writable) {
        check_not_bit_rot(&log, *at, kind, &untrusted)?;
    }
    let mut heads: BTreeMap<String, (arbor_core::Hash, u64)> =
        control.heads.iter().map(|(n, h, o)| (n.clone(), (*h, *o))).collect();
    for (_, h) in &found.heads {
        match h.target {
            Some(t) => heads.insert(h.name.clone(), t),
            None => heads.remove(&h.name),
        };
    }
    log.set_end(found.valid_end);
    let writer = if writable {
        truncate_tail(&log, found.valid_end)?;
        let mut index = index;
        for (h, o) in &found.commits {
            index.append(h, *o)?;
        }
        Some(Writer::new(LogWriter::new(&log, found.valid_end), index, found.commits.len() as u32))
    } else {
        None
    };
    order.extend(found.commits.iter().copied());
    let catalog = Catalog::new(order, heads);
    // Dropped commits stay in the map (checking one out names the collection as the
    // reason) but not in the history.
    if let Some(g) = control.gc.filter(|g| !g.archive) {
        catalog.forget_below(g.floor);
    }
    // Nodes remember where this instance wrote them; a new instance (after a crash, say)
    // must not trust those offsets, so the id is new at every open.
    let instance = next_instance();
    let budget = super::budget::Budget::new(config.cache_bytes);
    let loader = Arc::new(Loader {
        log,
        cache: Arc::new(new_cache(budget.cache_part(0))),
        adopter: Default::default(),
        uid: instance,
        inode: control.inode,
        read_only: config.read_only,
    });
    let ctx = Arc::new(Ctx {
        cfg: control.inode,
        source: Some(loader.clone()),
        uid: instance,
        max_value_len: config.max_value_len,
    });
    let shared = Shared {
        dir: dir.to_path_buf(),
        config,
        loader,
        catalog,
        writer: Mutex::new(writer),
        poisoned: AtomicBool::new(false),
        gc: GcCoordinator::new(control.gc),
        control_lock: Mutex::new(()),
        control_generation: std::sync::atomic::AtomicU64::new(control.generation),
        working: Mutex::new(None),
        budget,
        _lock: lock,
    };
    let store = Store { shared: Arc::new(shared), ctx };
    if writable && fresh {
        // A new store gets its control file at once, so its identity is fixed.
        let mut g = store.shared.writer.lock();
        let w = g.as_mut().expect("writable");
        store.write_control(w)?;
    }
    Ok(store)
}

/// A scan that stopped at a damaged record is a torn tail only if no commit that was
/// acknowledged lies beyond it. A commit synced alone (`EveryCommit`, `Pipelined`) enters the
/// commit index only once its sync is done, so an index entry naming such a commit, valid,
/// past the damage proves the damage is bit rot: report it instead of truncating acknowledged
/// commits away. Under `Interval` durability an entry proves nothing (the commit's bytes
/// may not have been synced when the entry was written, and a power loss may keep the entry
/// and tear the bytes before the commit): the damage is taken for a torn tail.
fn check_not_bit_rot(log: &Log, at: u64, kind: &crate::error::Corruption, untrusted: &[(Hash, u64)]) -> Result<()> {
    let saved = log.end();
    // Let the evidence be read wherever it lies in the files, past the scan's valid end.
    let file_end = match log.chunks().last() {
        Some(c) => c.start + c.file.len().map_err(io_err("reading the length of", &c.path))?,
        None => return Ok(()),
    };
    log.set_end(file_end);
    let mut evidence = None;
    for (hash, offset) in untrusted.iter().filter(|(_, o)| *o > at) {
        let Ok(frame) = log.read(*offset) else { continue };
        if frame.kind() != crate::pack::record::kind::COMMIT {
            continue;
        }
        let Ok(c) = crate::pack::record::CommitBody::decode(frame.body()) else { continue };
        if c.flags & crate::pack::record::COMMIT_SYNCED_ALONE == 0 {
            continue;
        }
        let parents: Vec<Hash> = c.parents.iter().map(|p| p.0).collect();
        if arbor_core::commit_hash(&c.tree_hash, &parents, c.date, &c.author, &c.message) == *hash {
            evidence = Some(*offset);
            break;
        }
    }
    log.set_end(saved);
    match evidence {
        None => Ok(()),
        Some(_) => {
            let chunk = log.chunks().into_iter().rev().find(|c| c.start <= at);
            let (file, offset) = chunk.map_or((log.dir.clone(), at), |c| (c.path.clone(), at - c.start));
            Err(Error::Corrupt { file, offset, kind: kind.clone() })
        }
    }
}

/// The uid in the first chunk header of a store whose control file was never written.
pub(super) fn existing_uid(fs: &Arc<dyn crate::io::FileSystem>, dir: &Path) -> Result<Option<u64>> {
    let pack = dir.join("pack");
    if !fs.exists(&pack) {
        return Ok(None);
    }
    let probe = Log::open(fs.clone(), &pack, 0, false)?;
    let Some(first) = probe.chunks().into_iter().next() else { return Ok(None) };
    let mut h = [0u8; CHUNK_HEADER_LEN as usize];
    first.file.read_exact_at(&mut h, 0).map_err(io_err("reading", &first.path))?;
    Ok(Some(u64::from_le_bytes(h[20..28].try_into().expect("8"))))
}

/// Cuts the log back to `end`, durably, dropping what an unfinished commit left.
pub(super) fn truncate_tail(log: &Log, end: u64) -> Result<()> {
    let chunks = log.chunks();
    let Some(last) = chunks.iter().rev().find(|c| c.start < end) else { return Ok(()) };
    log.drop_chunks_from(last.start + 1)?;
    let keep = end - last.start;
    let len = last.file.len().map_err(io_err("reading the length of", &last.path))?;
    if len < keep {
        // The control file promises data the chunk does not have: never pad it with zeros.
        return Err(Error::Corrupt { file: last.path.clone(), offset: len, kind: crate::error::Corruption::Truncated });
    }
    if len != keep {
        last.cut(keep).map_err(io_err("truncating", &last.path))?;
    }
    // What recovery kept may have reached the file without being synced (the writer died
    // between write and fsync): make it durable before anyone builds on it.
    last.file.sync_data().map_err(io_err("syncing", &last.path))?;
    Ok(())
}
