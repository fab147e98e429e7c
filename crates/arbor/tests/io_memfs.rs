//! Tests of the I/O layer: `OsFs` against a real temporary directory, and
//! `MemFs`'s power-loss model and fault injection.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use arbor::io::{FaultKind, File, FileSystem, MemFs, OpenOptions, OsFs, SyncKind, SyncPoint, TornWrites};

fn rw() -> OpenOptions {
    OpenOptions { create: true, write: true, truncate: false }
}

fn ro() -> OpenOptions {
    OpenOptions::default()
}

fn p(s: &str) -> &Path {
    Path::new(s)
}

fn read_all(f: &dyn File) -> Vec<u8> {
    let mut buf = vec![0; f.len().unwrap() as usize];
    f.read_exact_at(&mut buf, 0).unwrap();
    buf
}

/// Behaviour both implementations must share.
fn basic_file_ops(fs: &dyn FileSystem, root: &Path) {
    let dir = root.join("d");
    fs.create_dir_all(&dir).unwrap();
    let a = dir.join("a");
    assert!(!fs.exists(&a));
    assert_eq!(fs.open(&a, ro()).unwrap_err().kind(), ErrorKind::NotFound);

    let f = fs.open(&a, rw()).unwrap();
    assert!(fs.exists(&a));
    assert_eq!(f.len().unwrap(), 0);
    f.write_all_at(b"hello", 0).unwrap();
    f.write_all_at(b"world", 10).unwrap();
    assert_eq!(f.len().unwrap(), 15);
    assert_eq!(read_all(&*f), b"hello\0\0\0\0\0world");

    let mut buf = [0u8; 8];
    assert_eq!(f.read_at(&mut buf, 12).unwrap(), 3);
    assert_eq!(&buf[..3], b"rld");
    assert_eq!(f.read_at(&mut buf, 15).unwrap(), 0);
    assert_eq!(f.read_at(&mut buf, 100).unwrap(), 0);
    let err = f.read_exact_at(&mut buf, 10).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnexpectedEof);

    f.set_len(3).unwrap();
    assert_eq!(read_all(&*f), b"hel");
    f.set_len(5).unwrap();
    assert_eq!(read_all(&*f), b"hel\0\0");
    f.sync_data().unwrap();
    f.drop_cache().unwrap();

    // Read-only handles cannot write; create without write is rejected.
    let r = fs.open(&a, ro()).unwrap();
    assert_eq!(read_all(&*r), b"hel\0\0");
    assert!(r.write_all_at(b"x", 0).is_err());
    let create_only = OpenOptions { create: true, ..OpenOptions::default() };
    assert_eq!(fs.open(&dir.join("c"), create_only).unwrap_err().kind(), ErrorKind::InvalidInput);
    assert!(fs.open(&dir, ro()).is_err());

    // Truncate on open.
    let t = fs.open(&a, OpenOptions { write: true, truncate: true, ..OpenOptions::default() }).unwrap();
    assert_eq!(t.len().unwrap(), 0);
    t.write_all_at(b"new", 0).unwrap();

    // Rename replaces the target; list is sorted.
    let b = dir.join("b");
    fs.open(&b, rw()).unwrap().write_all_at(b"old b", 0).unwrap();
    fs.open(&dir.join("0"), rw()).unwrap();
    assert_eq!(fs.list(&dir).unwrap(), ["0", "a", "b"]);
    fs.rename(&a, &b).unwrap();
    assert!(!fs.exists(&a));
    assert_eq!(read_all(&*fs.open(&b, ro()).unwrap()), b"new");
    assert_eq!(fs.list(&dir).unwrap(), ["0", "b"]);
    assert_eq!(fs.rename(&a, &b).unwrap_err().kind(), ErrorKind::NotFound);

    // An open handle outlives the removal of its name.
    fs.remove_file(&b).unwrap();
    assert!(!fs.exists(&b));
    assert_eq!(read_all(&*t), b"new");
    assert_eq!(fs.remove_file(&b).unwrap_err().kind(), ErrorKind::NotFound);
    fs.sync_dir(&dir).unwrap();
    assert_eq!(fs.list(&root.join("missing")).unwrap_err().kind(), ErrorKind::NotFound);

    // Locks: a second holder is refused until the guard drops.
    let lock = dir.join("LOCK");
    let guard = fs.lock_exclusive(&lock).unwrap();
    assert!(fs.exists(&lock));
    assert_eq!(fs.lock_exclusive(&lock).unwrap_err().kind(), ErrorKind::WouldBlock);
    drop(guard);
    let _guard = fs.lock_exclusive(&lock).unwrap();
}

#[test]
fn osfs_basic_file_ops() {
    let tmp = tempfile::tempdir().unwrap();
    basic_file_ops(&OsFs, tmp.path());
}

#[test]
fn memfs_basic_file_ops() {
    basic_file_ops(&MemFs::new(), p("/root"));
}

#[test]
fn osfs_lock_excludes_across_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let lock = tmp.path().join("LOCK");
    let fs: Arc<dyn FileSystem> = Arc::new(OsFs);
    let guard = fs.lock_exclusive(&lock).unwrap();
    let fs2 = fs.clone();
    let lock2 = lock.clone();
    let kind = std::thread::spawn(move || fs2.lock_exclusive(&lock2).unwrap_err().kind()).join().unwrap();
    assert_eq!(kind, ErrorKind::WouldBlock);
    drop(guard);
    std::thread::spawn(move || drop(fs.lock_exclusive(&lock).unwrap())).join().unwrap();
}

/// A MemFs with a durable directory `/db`.
fn memfs_with_db() -> MemFs {
    let fs = MemFs::new();
    fs.create_dir_all(p("/db")).unwrap();
    fs.sync_dir(p("/")).unwrap();
    fs
}

#[test]
fn synced_data_survives_crash() {
    let fs = memfs_with_db();
    let f = fs.open(p("/db/log"), rw()).unwrap();
    f.write_all_at(b"durable", 0).unwrap();
    f.sync_data().unwrap();
    fs.sync_dir(p("/db")).unwrap();
    for torn in [TornWrites::None, TornWrites::Keep(7), TornWrites::Garbage(7)] {
        let after = fs.crash(torn);
        assert_eq!(after.file_bytes(p("/db/log")).unwrap(), b"durable");
        assert_eq!(after.list(p("/db")).unwrap(), ["log"]);
    }
    // The crashed disk is independent of the original.
    let after = fs.crash(TornWrites::None);
    f.write_all_at(b"X", 0).unwrap();
    assert_eq!(after.file_bytes(p("/db/log")).unwrap(), b"durable");
    let g = after.open(p("/db/log"), rw()).unwrap();
    g.write_all_at(b"Y", 0).unwrap();
    assert_eq!(fs.file_bytes(p("/db/log")).unwrap(), b"Xurable");
}

#[test]
fn unsynced_appends_are_dropped() {
    let fs = memfs_with_db();
    let f = fs.open(p("/db/log"), rw()).unwrap();
    f.write_all_at(b"abc", 0).unwrap();
    f.sync_data().unwrap();
    fs.sync_dir(p("/db")).unwrap();
    f.write_all_at(b"def", 3).unwrap();
    assert_eq!(fs.file_bytes(p("/db/log")).unwrap(), b"abcdef");
    let after = fs.crash(TornWrites::None);
    assert_eq!(after.file_bytes(p("/db/log")).unwrap(), b"abc");
}

#[test]
fn unsynced_overwrite_and_truncation_are_dropped() {
    let fs = memfs_with_db();
    let f = fs.open(p("/db/f"), rw()).unwrap();
    f.write_all_at(b"0123456789", 0).unwrap();
    f.sync_data().unwrap();
    fs.sync_dir(p("/db")).unwrap();
    f.write_all_at(b"xx", 2).unwrap();
    f.set_len(4).unwrap();
    for torn in [TornWrites::None, TornWrites::Keep(1)] {
        let bytes = fs.crash(torn).file_bytes(p("/db/f")).unwrap();
        assert_eq!(bytes, b"0123456789");
    }
}

#[test]
fn created_file_in_unsynced_dir_disappears() {
    let fs = memfs_with_db();
    let f = fs.open(p("/db/new"), rw()).unwrap();
    f.write_all_at(b"data", 0).unwrap();
    f.sync_data().unwrap();
    let after = fs.crash(TornWrites::None);
    assert!(!after.exists(p("/db/new")));
    assert!(after.exists(p("/db")));

    fs.sync_dir(p("/db")).unwrap();
    let after = fs.crash(TornWrites::None);
    assert_eq!(after.file_bytes(p("/db/new")).unwrap(), b"data");
}

#[test]
fn unsynced_directory_loses_its_files() {
    let fs = MemFs::new();
    fs.create_dir_all(p("/a/b")).unwrap();
    fs.set_file_bytes(p("/a/b/f"), b"x").unwrap();
    fs.sync_dir(p("/a/b")).unwrap();
    fs.sync_dir(p("/a")).unwrap();
    // `/a` itself was never made durable in `/`.
    assert!(!fs.crash(TornWrites::None).exists(p("/a")));
    fs.sync_dir(p("/")).unwrap();
    let after = fs.crash(TornWrites::None);
    assert_eq!(after.file_bytes(p("/a/b/f")).unwrap(), b"x");
}

#[test]
fn rename_is_durable_only_after_sync_dir() {
    let fs = memfs_with_db();
    fs.set_file_bytes(p("/db/tmp"), b"v2").unwrap();
    fs.set_file_bytes(p("/db/current"), b"v1").unwrap();
    fs.rename(p("/db/tmp"), p("/db/current")).unwrap();
    assert_eq!(fs.file_bytes(p("/db/current")).unwrap(), b"v2");

    let before = fs.crash(TornWrites::None);
    assert_eq!(before.file_bytes(p("/db/current")).unwrap(), b"v1");
    assert_eq!(before.file_bytes(p("/db/tmp")).unwrap(), b"v2");

    fs.sync_dir(p("/db")).unwrap();
    let after = fs.crash(TornWrites::None);
    assert_eq!(after.file_bytes(p("/db/current")).unwrap(), b"v2");
    assert!(!after.exists(p("/db/tmp")));
}

#[test]
fn removal_is_durable_only_after_sync_dir() {
    let fs = memfs_with_db();
    fs.set_file_bytes(p("/db/f"), b"x").unwrap();
    fs.remove_file(p("/db/f")).unwrap();
    assert!(fs.crash(TornWrites::None).exists(p("/db/f")));
    fs.sync_dir(p("/db")).unwrap();
    assert!(!fs.crash(TornWrites::None).exists(p("/db/f")));
}

#[test]
fn torn_prefix_lengths_are_within_durable_and_current() {
    let fs = memfs_with_db();
    let f = fs.open(p("/db/log"), rw()).unwrap();
    let current: Vec<u8> = (0..100u8).collect();
    f.write_all_at(&current[..30], 0).unwrap();
    f.sync_data().unwrap();
    fs.sync_dir(p("/db")).unwrap();
    f.write_all_at(&current[30..], 30).unwrap();

    let mut lens = std::collections::BTreeSet::new();
    for seed in 0..200 {
        let bytes = fs.crash(TornWrites::Keep(seed)).file_bytes(p("/db/log")).unwrap();
        assert!((30..=100).contains(&bytes.len()), "len {}", bytes.len());
        assert_eq!(bytes, current[..bytes.len()]);
        lens.insert(bytes.len());
    }
    assert!(lens.len() > 20, "tears should vary: {lens:?}");
    // Same seed, same disk.
    assert_eq!(
        fs.crash(TornWrites::Keep(5)).file_bytes(p("/db/log")),
        fs.crash(TornWrites::Keep(5)).file_bytes(p("/db/log"))
    );

    let mut garbled = 0;
    for seed in 0..200 {
        let bytes = fs.crash(TornWrites::Garbage(seed)).file_bytes(p("/db/log")).unwrap();
        assert!((31..=100).contains(&bytes.len()), "len {}", bytes.len());
        assert_eq!(bytes[..30], current[..30], "synced bytes must not change");
        if bytes[..] != current[..bytes.len()] {
            garbled += 1;
        }
    }
    assert!(garbled > 150, "garbage should usually differ: {garbled}");
}

#[test]
fn injected_faults_fire_on_nth_op() {
    let fs = memfs_with_db();
    let f = fs.open(p("/db/f"), rw()).unwrap();
    fs.fail_after(3, FaultKind::Write);
    f.write_all_at(b"a", 0).unwrap();
    f.sync_data().unwrap(); // syncs do not count for FaultKind::Write
    f.write_all_at(b"b", 1).unwrap();
    let err = f.write_all_at(b"c", 2).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Other);
    assert_eq!(err.to_string(), "injected fault");
    // The failed write had no effect, and the fault fires once.
    assert_eq!(fs.file_bytes(p("/db/f")).unwrap(), b"ab");
    f.write_all_at(b"c", 2).unwrap();

    fs.fail_after(2, FaultKind::Sync);
    f.write_all_at(b"d", 3).unwrap();
    f.sync_data().unwrap();
    f.write_all_at(b"e", 4).unwrap();
    assert_eq!(f.sync_data().unwrap_err().kind(), ErrorKind::Other);
    // A failed sync leaves the durable bytes as they were.
    fs.sync_dir(p("/db")).unwrap();
    assert_eq!(fs.crash(TornWrites::None).file_bytes(p("/db/f")).unwrap(), b"abcd");

    fs.fail_after(2, FaultKind::Any);
    f.write_all_at(b"f", 5).unwrap();
    assert!(fs.sync_dir(p("/db")).is_err());
    f.set_len(1).unwrap();

    fs.fail_after(1, FaultKind::Write);
    assert!(f.set_len(0).is_err());
    assert_eq!(fs.file_bytes(p("/db/f")).unwrap(), b"a");

    fs.fail_after(1, FaultKind::Any);
    fs.clear_fault();
    f.sync_data().unwrap();

    let stats = fs.stats();
    assert_eq!(stats.writes, 9);
    assert_eq!(stats.syncs, 7);
    assert_eq!(stats.bytes_written, 6);
}

#[test]
fn fault_schedule_from_clean_run_hits_every_op() {
    // The intended use: count ops in a clean run, then fail each in turn.
    fn workload(fs: &MemFs) -> std::io::Result<()> {
        fs.create_dir_all(p("/db"))?;
        let f = fs.open(p("/db/f"), rw())?;
        for i in 0..5u64 {
            f.write_all_at(&[i as u8; 4], i * 4)?;
            f.sync_data()?;
        }
        fs.sync_dir(p("/db"))
    }
    let clean = MemFs::new();
    workload(&clean).unwrap();
    let n = clean.stats().writes + clean.stats().syncs;
    assert_eq!(n, 11);
    for i in 1..=n {
        let fs = MemFs::new();
        fs.fail_after(i, FaultKind::Any);
        assert!(workload(&fs).is_err(), "op {i} should fail");
    }
    let fs = MemFs::new();
    fs.fail_after(n + 1, FaultKind::Any);
    workload(&fs).unwrap();
}

#[test]
fn sync_hook_sees_every_sync_and_can_crash() {
    let fs = memfs_with_db();
    let points: Arc<Mutex<Vec<SyncPoint>>> = Arc::default();
    let disks: Arc<Mutex<Vec<Option<Vec<u8>>>>> = Arc::default();
    let handle = fs.clone();
    let (points2, disks2) = (points.clone(), disks.clone());
    fs.set_sync_hook(Box::new(move |point| {
        let disk = handle.crash(TornWrites::None);
        disks2.lock().unwrap().push(disk.file_bytes(p("/db/f")));
        points2.lock().unwrap().push(point);
    }));

    let f = fs.open(p("/db/f"), rw()).unwrap();
    f.write_all_at(b"one", 0).unwrap();
    f.sync_data().unwrap();
    fs.sync_dir(p("/db")).unwrap();
    f.write_all_at(b"two", 3).unwrap();
    f.sync_data().unwrap();
    fs.clear_sync_hook();
    fs.sync_dir(p("/db")).unwrap();

    let points = points.lock().unwrap();
    let seen: Vec<(SyncKind, PathBuf, bool, u64)> =
        points.iter().map(|s| (s.kind, s.path.clone(), s.before, s.seq)).collect();
    let f_path = PathBuf::from("/db/f");
    let db = PathBuf::from("/db");
    // seq 0 was the sync_dir("/") in memfs_with_db, before the hook.
    assert_eq!(
        seen,
        [
            (SyncKind::File, f_path.clone(), true, 1),
            (SyncKind::File, f_path.clone(), false, 1),
            (SyncKind::Dir, db.clone(), true, 2),
            (SyncKind::Dir, db.clone(), false, 2),
            (SyncKind::File, f_path.clone(), true, 3),
            (SyncKind::File, f_path, false, 3),
        ]
    );
    let disks = disks.lock().unwrap();
    let expect: [Option<&[u8]>; 6] = [None, None, None, Some(b"one"), Some(b"one"), Some(b"onetwo")];
    assert_eq!(disks.iter().map(|d| d.as_deref()).collect::<Vec<_>>(), expect);
    assert_eq!(fs.stats().syncs, 5);
}

#[test]
fn flip_bit_changes_exactly_one_bit() {
    let fs = memfs_with_db();
    let data: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37)).collect();
    fs.set_file_bytes(p("/db/f"), &data).unwrap();
    fs.flip_bit(p("/db/f"), 17, 5).unwrap();
    let after = fs.file_bytes(p("/db/f")).unwrap();
    let diff_bits: u32 = data.iter().zip(&after).map(|(a, b)| (a ^ b).count_ones()).sum();
    assert_eq!(diff_bits, 1);
    assert_eq!(after[17], data[17] ^ (1 << 5));
    // The corruption is on the medium: it survives a crash.
    assert_eq!(fs.crash(TornWrites::None).file_bytes(p("/db/f")).unwrap(), after);
    assert!(fs.flip_bit(p("/db/f"), 64, 0).is_err());
    assert!(fs.flip_bit(p("/db/f"), 0, 8).is_err());
    assert!(fs.flip_bit(p("/db/missing"), 0, 0).is_err());
    assert_eq!(fs.file_bytes(p("/db/missing")), None);
}

#[test]
fn memfs_locks_are_per_file_and_not_carried_over_crash() {
    let fs = memfs_with_db();
    let guard = fs.lock_exclusive(p("/db/LOCK")).unwrap();
    // Another handle of the same MemFs sees the lock.
    let clone = fs.clone();
    assert_eq!(clone.lock_exclusive(p("/db/LOCK")).unwrap_err().kind(), ErrorKind::WouldBlock);
    let _other = fs.lock_exclusive(p("/db/OTHER")).unwrap();
    fs.sync_dir(p("/db")).unwrap();
    let after = fs.crash(TornWrites::None);
    let _relocked = after.lock_exclusive(p("/db/LOCK")).unwrap();
    drop(guard);
    let _g = clone.lock_exclusive(p("/db/LOCK")).unwrap();
}

#[test]
fn memfs_namespace_errors() {
    let fs = MemFs::new();
    assert_eq!(fs.open(p("/nodir/f"), rw()).unwrap_err().kind(), ErrorKind::NotFound);
    fs.create_dir_all(p("/d/e")).unwrap();
    fs.set_file_bytes(p("/d/f"), b"").unwrap();
    assert!(fs.create_dir_all(p("/d/f/g")).is_err());
    assert!(fs.open(p("/d/f/g"), rw()).is_err());
    assert_eq!(fs.remove_file(p("/d/e")).unwrap_err().kind(), ErrorKind::IsADirectory);
    assert!(fs.rename(p("/d/f"), p("/d/e")).is_err());
    assert!(fs.rename(p("/d"), p("/d/e/x")).is_err());
    assert!(fs.sync_dir(p("/d/f")).is_err());
    assert!(fs.exists(p("/")) && fs.exists(p("d/./e")) && fs.exists(p("/d/e/../f")));
    assert_eq!(fs.list(p("/")).unwrap(), ["d"]);
    assert_eq!(fs.list(p("/d")).unwrap(), ["e", "f"]);
    // Renaming a directory moves its contents.
    fs.set_file_bytes(p("/d/e/x"), b"x").unwrap();
    fs.rename(p("/d/e"), p("/e2")).unwrap();
    assert_eq!(fs.file_bytes(p("/e2/x")).unwrap(), b"x");
}

#[test]
fn concurrent_reads_while_writing() {
    const CHUNK: usize = 4096;
    const CHUNKS: u64 = 200;
    let tmp = tempfile::tempdir().unwrap();
    let mem = MemFs::new();
    let cases: [(Arc<dyn FileSystem>, PathBuf); 2] =
        [(Arc::new(OsFs), tmp.path().join("f")), (Arc::new(mem), PathBuf::from("/f"))];
    for (fs, path) in cases {
        let f = fs.open(&path, rw()).unwrap();
        // Each chunk is filled with its index, so a reader can tell a torn
        // read from a good one.
        let chunk = |i: u64| vec![(i % 251) as u8 + 1; CHUNK];
        f.write_all_at(&chunk(0), 0).unwrap();
        let done = Arc::new(AtomicBool::new(false));
        std::thread::scope(|s| {
            for _ in 0..4 {
                let f = f.clone();
                let done = done.clone();
                s.spawn(move || {
                    let mut buf = vec![0u8; CHUNK];
                    let mut reads = 0u64;
                    while !done.load(Ordering::Acquire) || reads < 100 {
                        let len = f.len().unwrap() / CHUNK as u64;
                        let i = reads % len.max(1);
                        f.read_exact_at(&mut buf, i * CHUNK as u64).unwrap();
                        assert_eq!(buf, chunk(i), "chunk {i}");
                        reads += 1;
                    }
                });
            }
            for i in 1..CHUNKS {
                f.write_all_at(&chunk(i), i * CHUNK as u64).unwrap();
            }
            done.store(true, Ordering::Release);
        });
        assert_eq!(f.len().unwrap(), CHUNKS * CHUNK as u64);
    }
}
