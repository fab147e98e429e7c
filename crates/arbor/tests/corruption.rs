//! Damaged stores: random single-bit flips anywhere in the chunk files, the control file and
//! the commit index, truncated chunks, unknown format versions, and invalid arguments.
//!
//! Whatever the damage, every operation must either return the right answer or an error:
//! never a panic and never a wrong value (a wrong value, a missing value, a commit that was
//! never made). Outcomes are counted and printed.

mod common;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbor::io::{FileSystem, MemFs, OsFs, TornWrites};
use arbor::{Config, Depth, Error, Hash, InodeConfig, Order, Store, Tree};
use common::{apply_model, apply_tree, assert_fsck_clean, block_ops, check_values_and_hash, Model, Rng};

const DIR: &str = "/store";

/// The commits of a test store: hash, tree hash, date and model, in order; and its heads.
struct History {
    commits: Vec<(Hash, Hash, i64, Model)>,
    heads: BTreeMap<String, Hash>,
}

/// Writes a small history: a 300-entry directory (stored as inodes), nested directories,
/// inline and separate values, two heads. `close` leaves a control file covering everything;
/// otherwise only the control file written at creation exists and opening scans the whole
/// log (the torn-tail recovery path).
fn build(store: &Store, commits: u64, close: bool) -> History {
    let mut tree = store.empty();
    let mut model = Model::new();
    let mut history = History { commits: Vec::new(), heads: BTreeMap::new() };
    for k in 0..300u32 {
        let p = vec![b"inodes".to_vec(), format!("{:08x}", k.wrapping_mul(2_654_435_761)).into_bytes()];
        let v = if k % 7 == 0 { vec![k as u8; 200] } else { k.to_le_bytes().to_vec() };
        tree = tree.add(&p, &v).unwrap();
        common::model_add(&mut model, &p, &v);
    }
    for n in 0..commits {
        let ops = block_ops(3, n, 30);
        tree = apply_tree(tree, &ops);
        apply_model(&mut model, &ops);
        let parents: Vec<Hash> = history.commits.last().map(|c| c.0).into_iter().collect();
        let h = store.commit(&tree, &parents, n as i64, "Tezos", "m").unwrap();
        history.commits.push((h, tree.hash(), n as i64, model.clone()));
        if n % 2 == 1 {
            let name = if n % 4 == 1 { "main" } else { "other" };
            store.set_head(name, &h).unwrap();
            history.heads.insert(name.to_string(), h);
        }
    }
    if close {
        store.clone().close().unwrap();
    }
    history
}

/// The files of the store in `fs` (durable bytes), relative to the store directory.
fn store_files(fs: &MemFs) -> Vec<(PathBuf, Vec<u8>)> {
    let durable = fs.crash(TornWrites::None);
    let mut out = Vec::new();
    for sub in ["", "pack"] {
        let dir = Path::new(DIR).join(sub);
        for name in durable.list(&dir).unwrap() {
            let p = dir.join(&name);
            if name == "LOCK" || name == "pack" {
                continue;
            }
            out.push((PathBuf::from(sub).join(&name), durable.file_bytes(&p).unwrap()));
        }
    }
    out
}

/// A fresh in-memory disk holding `files`.
fn disk(files: &[(PathBuf, Vec<u8>)]) -> MemFs {
    let fs = MemFs::new();
    fs.create_dir_all(&Path::new(DIR).join("pack")).unwrap();
    for (p, b) in files {
        fs.set_file_bytes(&Path::new(DIR).join(p), b).unwrap();
    }
    fs
}

/// What one damaged store did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    /// Open failed with `Error::Corrupt`.
    OpenCorrupt,
    /// Open failed with `Error::UnsupportedVersion` (a flip in a version field).
    OpenUnsupportedVersion,
    /// Open failed with another error.
    OpenOther,
    /// Opened; every commit there, every read right, fsck clean: the flip hit bytes that
    /// mean nothing (such as the padding of an index entry).
    Harmless,
    /// Opened at an earlier commit: the damaged record was taken for a torn tail.
    FewerCommits,
    /// Opened; some reads returned errors, and fsck reported problems.
    ReadErrors,
    /// Opened; every read right but fsck reported problems.
    FsckOnly,
}

/// Opens a damaged store and reads everything, checking that every answer is either right or
/// an error. Panics (the test fails) on a wrong answer.
fn examine(open: &dyn Fn() -> arbor::Result<Store>, history: &History, what: &str) -> Outcome {
    let store = match open() {
        Ok(s) => s,
        Err(Error::Corrupt { .. }) => return Outcome::OpenCorrupt,
        Err(Error::UnsupportedVersion { .. }) => return Outcome::OpenUnsupportedVersion,
        Err(_) => return Outcome::OpenOther,
    };
    // The commits listed must be a prefix of what was committed: no commit that was never
    // made, none out of order.
    let listed = store.commits();
    let want: Vec<Hash> = history.commits.iter().map(|c| c.0).take(listed.len()).collect();
    assert_eq!(listed, want, "{what}: listed commits are not a prefix of the history");
    for (name, h) in store.heads() {
        assert_eq!(history.heads.get(&name), Some(&h), "{what}: head {name}");
    }
    let mut errors = 0;
    for (h, tree_hash, date, m) in &history.commits {
        if !store.contains(h) {
            assert!(matches!(store.checkout(h), Err(Error::UnknownCommit(_))), "{what}: checkout of a missing commit");
            continue;
        }
        match store.commit_info(h) {
            Ok(info) => assert_eq!((info.tree, info.date), (*tree_hash, *date), "{what}: commit info"),
            Err(_) => errors += 1,
        }
        let t = match store.checkout(h) {
            Ok(t) => t,
            Err(_) => {
                errors += 1;
                continue;
            }
        };
        assert_eq!(t.hash(), *tree_hash, "{what}: tree hash of a checkout");
        for (k, v) in m {
            match t.find(k) {
                Ok(Some(got)) => assert_eq!(&got, v, "{what}: wrong value at {}", common::show(k)),
                Ok(None) => panic!("{what}: the value at {} is missing (no error)", common::show(k)),
                Err(_) => errors += 1,
            }
        }
        match t.length(&["inodes"]) {
            Ok(n) => assert_eq!(n, 300, "{what}: length of a large directory"),
            Err(_) => errors += 1,
        }
    }
    let fsck = store.fsck();
    if errors > 0 {
        assert!(!fsck.errors.is_empty(), "{what}: reads failed but fsck found nothing");
        return Outcome::ReadErrors;
    }
    if listed.len() < history.commits.len() {
        assert!(fsck.errors.is_empty(), "{what}: fsck errors on the commits that remain: {:?}", fsck.errors);
        return Outcome::FewerCommits;
    }
    if !fsck.errors.is_empty() {
        return Outcome::FsckOnly;
    }
    Outcome::Harmless
}

/// Runs `examine`, turning a panic inside the engine into a test failure that says where.
fn examine_guarded(open: &dyn Fn() -> arbor::Result<Store>, history: &History, what: &str) -> Outcome {
    match catch_unwind(AssertUnwindSafe(|| examine(open, history, what))) {
        Ok(o) => o,
        Err(e) => {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("{what}: panicked: {msg}");
        }
    }
}

/// Flips `flips` random bits, each in a fresh copy of the store, and examines the result
/// with a read-only and (alternately) a writable open.
fn flip_campaign(files: &[(PathBuf, Vec<u8>)], history: &History, flips: usize, seed: u64) -> BTreeMap<String, usize> {
    let mut rng = Rng::new(seed);
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for i in 0..flips {
        // Each file is as likely to be hit as any other, so that the small control file and
        // index get their share.
        let f = rng.below(files.len() as u64) as usize;
        let mut damaged = files.to_vec();
        let bytes = &mut damaged[f].1;
        let at = rng.below(bytes.len() as u64) as usize;
        let bit = rng.below(8) as u8;
        bytes[at] ^= 1 << bit;
        let what = format!("flip {i}: bit {bit} of byte {at} of {}", damaged[f].0.display());
        let fs = disk(&damaged);
        let read_only = i % 2 == 0;
        let open = || Store::open_with(DIR, Config::default().with_fs(Arc::new(fs.clone())).with_read_only(read_only));
        let outcome = examine_guarded(&open, history, &what);
        let file_kind = match damaged[f].0.extension().and_then(|e| e.to_str()) {
            Some("chunk") => "chunk",
            Some("idx") => "index",
            _ => "control",
        };
        *counts.entry(format!("{file_kind}: {outcome:?}")).or_insert(0) += 1;
    }
    counts
}

#[test]
fn random_bit_flips_in_memory() {
    for (close, chunk_bytes) in [(true, 8192), (false, 1 << 30)] {
        let fs = MemFs::new();
        let cfg = Config::default().with_fs(Arc::new(fs.clone())).with_chunk_bytes(chunk_bytes).with_control_every(4);
        let store = Store::open_with(DIR, cfg).unwrap();
        let history = build(&store, 5, close);
        drop(store);
        let files = store_files(&fs);
        // The pristine copy must read back in full, or the campaign proves nothing.
        let pristine = disk(&files);
        let open = || Store::open_with(DIR, Config::default().with_fs(Arc::new(pristine.clone())));
        assert_eq!(examine_guarded(&open, &history, "pristine"), Outcome::Harmless);
        let counts = flip_campaign(&files, &history, 1000, 42 + u64::from(close));
        let sizes: Vec<String> = files.iter().map(|(p, b)| format!("{} {} B", p.display(), b.len())).collect();
        println!("bit flips (closed store: {close}; files {sizes:?}): {counts:#?}");
    }
}

/// Copies a store directory, flipping one bit of one file.
fn copy_dir(from: &Path, to: &Path, flip: Option<(&Path, usize, u8)>) {
    for sub in ["", "pack"] {
        std::fs::create_dir_all(to.join(sub)).unwrap();
        for e in std::fs::read_dir(from.join(sub)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() || e.file_name() == "LOCK" {
                continue;
            }
            let rel = Path::new(sub).join(e.file_name());
            let mut bytes = std::fs::read(e.path()).unwrap();
            if let Some((p, at, bit)) = flip {
                if p == rel {
                    bytes[at] ^= 1 << bit;
                }
            }
            std::fs::write(to.join(&rel), bytes).unwrap();
        }
    }
}

#[test]
fn random_bit_flips_on_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    let store = Store::open(&base).unwrap();
    let history = build(&store, 4, true);
    drop(store);
    let mut files: Vec<(PathBuf, u64)> = Vec::new();
    for sub in ["", "pack"] {
        for e in std::fs::read_dir(base.join(sub)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() && e.file_name() != "LOCK" {
                files.push((Path::new(sub).join(e.file_name()), e.metadata().unwrap().len()));
            }
        }
    }
    let mut rng = Rng::new(7);
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for i in 0..150 {
        let (rel, len) = &files[rng.below(files.len() as u64) as usize];
        let at = rng.below(*len) as usize;
        let bit = rng.below(8) as u8;
        let dir = tmp.path().join(format!("copy{i}"));
        copy_dir(&base, &dir, Some((rel, at, bit)));
        let what = format!("on disk, flip {i}: bit {bit} of byte {at} of {}", rel.display());
        let read_only = i % 2 == 0;
        let open = || Store::open_with(&dir, Config::default().with_fs(Arc::new(OsFs)).with_read_only(read_only));
        let outcome = examine_guarded(&open, &history, &what);
        *counts.entry(format!("{outcome:?}")).or_insert(0) += 1;
        std::fs::remove_dir_all(&dir).unwrap();
    }
    println!("bit flips on disk: {counts:#?}");
}

/// `durable_end` of a control file (see the layout in `pack/control.rs`: magic, version,
/// body length, then uid, generation, two u32 of inode shape, durable_end).
fn control_durable_end(control: &[u8]) -> u64 {
    u64::from_le_bytes(control[40..48].try_into().unwrap())
}

/// Cuts the last chunk at every length from the control file's recovery point to its end
/// (a torn tail): the store must open, at a prefix of the history no longer than what the
/// cut keeps, every remaining commit reading back exactly and fsck clean. Cuts below the
/// recovery point are damage, not torn tails: they may fail, but never give wrong values.
fn truncation_campaign(files: &[(PathBuf, Vec<u8>)], history: &History, step: usize) -> (usize, usize) {
    let control = &files.iter().find(|f| f.0 == Path::new("control")).unwrap().1;
    let durable_end = control_durable_end(control);
    let (last_i, last) =
        files.iter().enumerate().filter(|(_, f)| f.0.starts_with("pack")).max_by_key(|(_, f)| &f.0).unwrap();
    let start: u64 = last.0.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    let len = last.1.len();
    let torn_from = durable_end.saturating_sub(start) as usize;
    let mut previous = 0;
    let (mut torn, mut damaged) = (0, 0);
    let mut cut = 0;
    while cut <= len {
        let mut files2 = files.to_vec();
        files2[last_i].1.truncate(cut);
        let what = format!("last chunk cut at {cut} of {len} (recovery point at {torn_from})");
        for read_only in [true, false] {
            let fs = disk(&files2);
            let open =
                || Store::open_with(DIR, Config::default().with_fs(Arc::new(fs.clone())).with_read_only(read_only));
            if cut >= torn_from {
                let store = open().unwrap_or_else(|e| panic!("{what}: a torn tail must open: {e}"));
                let n = store.commits().len();
                let want: Vec<Hash> = history.commits[..n].iter().map(|c| c.0).collect();
                assert_eq!(store.commits(), want, "{what}: not a prefix");
                assert!(n >= previous, "{what}: a longer tail kept fewer commits ({n} < {previous})");
                for (h, _, _, m) in &history.commits[..n] {
                    check_values_and_hash(&store.checkout(h).unwrap(), m, InodeConfig::TEZOS);
                }
                assert_fsck_clean(&store, &what);
                if !read_only {
                    previous = n;
                }
                torn += 1;
            } else {
                examine_guarded(&open, history, &what);
                damaged += 1;
            }
        }
        cut += if cut < 64 || cut + 64 > len { 1 } else { step };
    }
    assert_eq!(previous, history.commits.len(), "the uncut chunk keeps every commit");
    (torn, damaged)
}

#[test]
fn truncated_last_chunk_opens_at_an_earlier_commit() {
    // One chunk and no control file beyond the one written at creation: every cut is a torn
    // tail. Then several chunks with a recent control file: cuts below its recovery point are
    // damage.
    for (chunk_bytes, control_every, close) in [(1u64 << 30, 256u32, false), (8192, 4, false), (8192, 4, true)] {
        let fs = MemFs::new();
        let cfg = Config::default()
            .with_fs(Arc::new(fs.clone()))
            .with_chunk_bytes(chunk_bytes)
            .with_control_every(control_every);
        let store = Store::open_with(DIR, cfg).unwrap();
        let history = build(&store, 6, close);
        drop(store);
        let files = store_files(&fs);
        let (torn, damaged) = truncation_campaign(&files, &history, 37);
        println!(
            "truncation (chunk {chunk_bytes}, control every {control_every}, closed {close}): \
             {torn} torn-tail opens checked, {damaged} cuts below the recovery point"
        );
    }
}

#[test]
fn unknown_format_versions_are_reported() {
    let fs = MemFs::new();
    let store = Store::open_with(DIR, common::mem_config(&fs)).unwrap();
    build(&store, 2, true);
    drop(store);
    let files = store_files(&fs);
    // A chunk header with an earlier version (1, before delta records; 2, before deltas of
    // deltas; 3, before changes named by their base's binding) or a future one, and a valid
    // checksum: all refused, naming the two versions.
    for version in [1u32, 2, 3, 5] {
        let mut f = files.clone();
        let chunk = f.iter_mut().find(|x| x.0.starts_with("pack")).unwrap();
        chunk.1[8..12].copy_from_slice(&version.to_le_bytes());
        let crc = crc32c::crc32c(&chunk.1[..28]);
        chunk.1[28..32].copy_from_slice(&crc.to_le_bytes());
        for read_only in [true, false] {
            let d = disk(&f);
            let r = Store::open_with(DIR, Config::default().with_fs(Arc::new(d)).with_read_only(read_only));
            assert!(
                matches!(r, Err(Error::UnsupportedVersion { found, supported: 4, .. }) if found == version),
                "chunk version {version}: {r:?}"
            );
        }
    }
    // A control file with a future version and a valid checksum.
    let mut f = files.clone();
    let control = &mut f.iter_mut().find(|x| x.0 == Path::new("control")).unwrap().1;
    control[8..12].copy_from_slice(&7u32.to_le_bytes());
    let n = control.len();
    let crc = crc32c::crc32c(&control[..n - 4]);
    control[n - 4..].copy_from_slice(&crc.to_le_bytes());
    for read_only in [true, false] {
        let d = disk(&f);
        let r = Store::open_with(DIR, Config::default().with_fs(Arc::new(d)).with_read_only(read_only));
        assert!(matches!(r, Err(Error::UnsupportedVersion { found: 7, supported: 2, .. })), "control version: {r:?}");
    }
}

#[test]
fn oversized_values_are_refused() {
    let fs = MemFs::new();
    let store = Store::open_with(DIR, common::mem_config(&fs).with_max_value_len(1000)).unwrap();
    let t = store.empty();
    let ok = t.add(&["a"], &[1u8; 1000]).unwrap();
    assert!(matches!(t.add(&["b"], &[1u8; 1001]), Err(Error::ValueTooLarge { len: 1001, max: 1000 })));
    assert!(matches!(t.of_value(&[0u8; 5000]), Err(Error::ValueTooLarge { len: 5000, max: 1000 })));
    // The refused add changed nothing, and the accepted one commits and reads back.
    let h = store.commit(&ok, &[], 0, "Tezos", "").unwrap();
    assert_eq!(store.checkout(&h).unwrap().find(&["a"]).unwrap(), Some(vec![1u8; 1000]));
    assert_eq!(store.checkout(&h).unwrap().find(&["b"]).unwrap(), None);
}

#[test]
fn empty_steps_are_refused_everywhere() {
    let fs = MemFs::new();
    let store = Store::open_with(DIR, common::mem_config(&fs)).unwrap();
    let t = store.empty().add(&["a", "b"], b"1").unwrap();
    let bad: &[&[u8]] = &[b"a", b"", b"c"];
    let is_empty_step = |r: arbor::Result<()>| matches!(r, Err(Error::EmptyStep { index: 1 }));
    assert!(is_empty_step(t.add(bad, b"x").map(|_| ())));
    assert!(is_empty_step(t.remove(bad).map(|_| ())));
    assert!(is_empty_step(t.add_tree(bad, &t).map(|_| ())));
    assert!(is_empty_step(t.find(bad).map(|_| ())));
    assert!(is_empty_step(t.find_tree(bad).map(|_| ())));
    assert!(is_empty_step(t.mem(bad).map(|_| ())));
    assert!(is_empty_step(t.mem_tree(bad).map(|_| ())));
    assert!(is_empty_step(t.length(bad).map(|_| ())));
    assert!(is_empty_step(t.list(bad, None, None).map(|_| ())));
    assert!(is_empty_step(t.fold(bad, Some(Depth::Le(2)), Order::Sorted, |_, _| Ok(true))));
    assert!(matches!(Tree::empty().add(&[""], b"x"), Err(Error::EmptyStep { index: 0 })));
    assert!(matches!(arbor::parse_path("a//b"), Err(Error::EmptyStep { index: 1 })));
}

// Regression: a single flipped bit in the header of the last chunk once made a writable open
// delete the whole chunk file (taking it for a chunk whose creation a crash interrupted). A
// chunk longer than its header cannot be a torn creation: the header is synced before anything
// is appended, so this must be reported as corruption and the file kept.
#[test]
fn a_damaged_header_of_the_last_chunk_is_not_deleted() {
    for close in [true, false] {
        let fs = MemFs::new();
        let store = Store::open_with(DIR, common::mem_config(&fs)).unwrap();
        build(&store, 3, close);
        drop(store);
        let files = store_files(&fs);
        let (i, chunk) = files.iter().enumerate().find(|(_, f)| f.0.starts_with("pack")).unwrap();
        assert!(chunk.1.len() > 32, "the chunk holds records after its header");
        for at in [0usize, 9, 13, 21, 29] {
            let mut damaged = files.clone();
            damaged[i].1[at] ^= 0x04;
            let d = disk(&damaged);
            let what = format!("closed {close}: header byte {at} flipped");
            let open = || Store::open_with(DIR, Config::default().with_fs(Arc::new(d.clone())));
            // Whatever the writable open answers, it must not destroy the chunk.
            let r = open();
            drop(r);
            let path = Path::new(DIR).join(&damaged[i].0);
            assert_eq!(
                d.file_bytes(&path).map(|b| b.len()),
                Some(damaged[i].1.len()),
                "{what}: the writable open removed or cut the damaged chunk"
            );
        }
    }
}

// Regression: bit rot in a record past the control file's recovery point (the last up to
// `control_every` commits) was once taken for a torn tail: a writable open truncated the log
// there, durably dropping commits that were synced and reported durable. A record followed by
// complete, valid commits that the commit index names cannot be a torn write.
#[test]
fn bit_rot_before_the_last_commit_is_not_taken_for_a_torn_tail() {
    let fs = MemFs::new();
    // The default policy: the control file is rewritten every 256 commits, so after the first
    // few commits every open scans them.
    let store = Store::open_with(DIR, common::mem_config(&fs)).unwrap();
    let mut tree = store.empty();
    let mut ends = Vec::new();
    let mut commits = Vec::new();
    for n in 0..3u64 {
        tree = apply_tree(tree, &block_ops(9, n, 30));
        let parents: Vec<Hash> = commits.last().copied().into_iter().collect();
        commits.push(store.commit(&tree, &parents, n as i64, "Tezos", "").unwrap());
        ends.push(store.log_bytes());
    }
    drop(store);
    let files = store_files(&fs);
    let (i, chunk) = files.iter().enumerate().find(|(_, f)| f.0.starts_with("pack")).unwrap();
    assert_eq!(chunk.1.len() as u64, ends[2], "one chunk, starting at offset 0");
    // One bit in the middle of the records of commit 1.
    let at = ((ends[0] + ends[1]) / 2) as usize;
    let mut damaged = files.clone();
    damaged[i].1[at] ^= 0x10;
    let d = disk(&damaged);
    match Store::open_with(DIR, Config::default().with_fs(Arc::new(d.clone()))) {
        Err(e) => println!("open reports the damage: {e}"),
        Ok(store) => {
            // Commit 2 is intact; commit 1 may be unreadable, but neither may vanish.
            assert!(
                store.contains(&commits[1]) && store.contains(&commits[2]),
                "a bit flipped at offset {at} (commit 1 of 3) made the open drop commits 1 and 2: {} commits left",
                store.commits().len()
            );
            assert!(!store.fsck().errors.is_empty(), "fsck misses the flipped bit");
        }
    }
    let len = d.file_bytes(&Path::new(DIR).join(&damaged[i].0)).map(|b| b.len() as u64);
    assert_eq!(len, Some(ends[2]), "the open cut the log after a flipped bit, destroying intact commits");
}

#[test]
fn pristine_stores_pass_fsck() {
    // The baseline of every campaign above.
    let fs = MemFs::new();
    let store = Store::open_with(DIR, common::mem_config(&fs)).unwrap();
    let history = build(&store, 3, true);
    assert_fsck_clean(&store, "pristine");
    for (h, _, _, m) in &history.commits {
        check_values_and_hash(&store.checkout(h).unwrap(), m, InodeConfig::TEZOS);
    }
}

/// Recomputes the CRC-32C in the last 4 bytes of `bytes[range]` over the bytes before it, so
/// a deliberate change is seen as what it is rather than as a checksum mismatch.
fn reseal(bytes: &mut [u8], range: std::ops::Range<usize>) {
    let crc = crc32c::crc32c(&bytes[range.start..range.end - 4]);
    bytes[range.end - 4..range.end].copy_from_slice(&crc.to_le_bytes());
}

/// The kind of corruption an open or read reports, for the typed checks below.
fn corruption<T: std::fmt::Debug>(r: arbor::Result<T>, what: &str) -> arbor::Corruption {
    match r {
        Err(Error::Corrupt { kind, .. }) => kind,
        other => panic!("{what}: expected a corruption error, got {other:?}"),
    }
}

#[test]
fn damage_is_reported_as_what_it_is() {
    use arbor::Corruption;
    let fs = MemFs::new();
    let store = Store::open_with(DIR, common::mem_config(&fs)).unwrap();
    // A directory of two one-byte values: one FLAT_DIR record of a known body.
    let tree = store.empty().add(&["d", "a"], b"x").unwrap().add(&["d", "b"], b"y").unwrap();
    let h = store.commit(&tree, &[], 0, "Tezos", "").unwrap();
    store.clone().close().unwrap();
    let files = store_files(&fs);
    let chunk_at = files.iter().position(|f| f.0.starts_with("pack")).unwrap();
    let control_at = files.iter().position(|f| f.0 == Path::new("control")).unwrap();
    let open = |files: &[(PathBuf, Vec<u8>)]| Store::open_with(DIR, Config::default().with_fs(Arc::new(disk(files))));

    // A chunk renamed: its header still says it starts at 0.
    let mut f = files.clone();
    f[chunk_at].0 = PathBuf::from("pack").join(format!("{:020}.chunk", 4096));
    assert_eq!(corruption(open(&f), "renamed chunk"), Corruption::ChunkStart { header: 0 });

    // A chunk header naming another store (with a valid checksum).
    let mut f = files.clone();
    let uid = u64::from_le_bytes(f[chunk_at].1[20..28].try_into().unwrap());
    f[chunk_at].1[20..28].copy_from_slice(&(uid ^ 1).to_le_bytes());
    reseal(&mut f[chunk_at].1, 0..32);
    assert_eq!(corruption(open(&f), "foreign chunk"), Corruption::ForeignStore { store_uid: uid, file_uid: uid ^ 1 });

    // A control file whose inode configuration cannot be (40 entries; at most 32).
    let mut f = files.clone();
    let control = &mut f[control_at].1;
    control[32..36].copy_from_slice(&40u32.to_le_bytes());
    let n = control.len();
    reseal(control, 0..n);
    assert_eq!(
        corruption(open(&f), "control inode configuration"),
        Corruption::InvalidField { field: "inode entries", value: 40 }
    );

    // The directory's record with its two bindings swapped, resealed: out of order at 1.
    let mut f = files.clone();
    let body = [2u8, 2, b'a', 0, 1, b'x', 2, b'b', 0, 1, b'y'];
    let mut frame = vec![0x02, body.len() as u8];
    frame.extend_from_slice(&body);
    let chunk = &mut f[chunk_at].1;
    let at = chunk.windows(frame.len()).position(|w| w == frame).expect("the directory's record");
    // Frame: kind, length, then the body (steps at body bytes 2 and 7).
    chunk[at + 4] = b'b';
    chunk[at + 9] = b'a';
    reseal(chunk, at..at + frame.len() + 4);
    let damaged = open(&f).unwrap();
    let tree = damaged.checkout(&h).unwrap();
    assert_eq!(
        corruption(tree.find(&["d", "a"]), "swapped bindings"),
        Corruption::OutOfOrder { what: "bindings", index: 1 }
    );
    let report = damaged.fsck();
    assert!(report.errors.iter().any(|e| e.contains("bindings out of order at index 1")), "{:?}", report.errors);
}

#[test]
fn a_prefix_of_another_generation_is_reported() {
    use arbor::{Corruption, GcMode};
    let fs = MemFs::new();
    let store = Store::open_with(DIR, common::mem_config(&fs)).unwrap();
    let mut tree = store.empty();
    let mut commits = Vec::new();
    for n in 0..4u64 {
        tree = apply_tree(tree, &block_ops(5, n, 20));
        let parents: Vec<Hash> = commits.last().copied().into_iter().collect();
        commits.push(store.commit(&tree, &parents, n as i64, "Tezos", "").unwrap());
    }
    store.gc_blocking(&commits[2], GcMode::Drop).unwrap();
    store.clone().close().unwrap();
    let files = store_files(&fs);
    let prefix_at = files.iter().position(|f| f.0.to_string_lossy().starts_with("pack/prefix-")).expect("a prefix");
    let generation = u64::from_le_bytes(files[prefix_at].1[20..28].try_into().unwrap());
    let mut f = files.clone();
    f[prefix_at].1[20..28].copy_from_slice(&(generation + 7).to_le_bytes());
    reseal(&mut f[prefix_at].1, 0..32);
    let r = Store::open_with(DIR, Config::default().with_fs(Arc::new(disk(&f))));
    assert_eq!(
        corruption(r, "prefix generation"),
        Corruption::PrefixMismatch { field: "generation", expected: generation, found: generation + 7 }
    );
}
