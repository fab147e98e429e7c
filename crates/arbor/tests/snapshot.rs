//! Snapshots: export one commit to a file, import it into a fresh store. Round trips of
//! random and Tezos-like states (same commit hash, every value read back), an independent
//! encoder written from docs/SNAPSHOT.md that must match the exporter byte for byte, crafted
//! malformed files, and every single-byte corruption and every truncation of a small file.

mod common;

use arbor::io::MemFs;
use arbor::snapshot::{self, SnapshotError};
use arbor::{Error, Hash, InodeConfig, Store};
use arbor_core::commit_hash;
use common::{apply_model, apply_tree, assert_fsck_clean, block_ops, check_values_and_hash, mem_config, Model, Rng};

/// A fresh in-memory store of the given inode shape.
fn mem_store(cfg: InodeConfig) -> Store {
    let fs = MemFs::new();
    Store::open_with("/s", mem_config(&fs).with_inode(cfg)).unwrap()
}

/// Commits the model as one tree and returns the commit.
fn commit_model(store: &Store, m: &Model, parents: &[Hash], date: i64, message: &[u8]) -> Hash {
    let mut t = store.empty();
    for (k, v) in m {
        t.add_mut(k, v).unwrap();
    }
    store.commit_with_stats(&t, parents, date, b"Tezos \xff", message).unwrap().0
}

fn export(store: &Store, commit: &Hash) -> Vec<u8> {
    let mut out = Vec::new();
    let stats = snapshot::export(store, commit, &mut out).unwrap();
    assert_eq!(stats.file_bytes, out.len() as u64);
    out
}

/// Imports `file` into a fresh store and checks commit, metadata, values and hash.
fn round_trip(from: &Store, commit: &Hash, m: &Model) -> Vec<u8> {
    let cfg = from.config().inode;
    let file = export(from, commit);
    let to = mem_store(cfg);
    let stats = snapshot::import(&to, &file[..]).unwrap();
    assert_eq!(stats.commit, *commit);
    assert!(stats.written);
    assert_eq!(stats.counts.values, m.len() as u64);
    assert_eq!(stats.counts.value_bytes, m.values().map(|v| v.len() as u64).sum::<u64>());
    assert_eq!(to.commits(), vec![*commit]);
    assert_eq!(to.commit_info(commit).unwrap(), from.commit_info(commit).unwrap());
    check_values_and_hash(&to.checkout(commit).unwrap(), m, cfg);
    assert_fsck_clean(&to, "imported store");
    file
}

fn random_model(seed: u64, values: usize) -> Model {
    let mut rng = Rng::new(seed);
    let mut m = Model::new();
    let sizes = [0usize, 1, 5, 31, 32, 33, 100, 128, 129, 1000, 4096, 70_000];
    for i in 0..values {
        let depth = 1 + rng.below(6) as usize;
        let mut p: Vec<Vec<u8>> =
            (0..depth).map(|d| format!("d{d}_{}", rng.below(3 + 2 * d as u64)).into_bytes()).collect();
        p.push(format!("v{i}").into_bytes());
        let len = sizes[rng.below(sizes.len() as u64) as usize];
        let v: Vec<u8> = (0..len).map(|j| (rng.next_u64() as usize ^ j) as u8).collect();
        common::model_add(&mut m, &p, &v);
    }
    // A large directory (an inode tree in the Tezos shape) with binary, hex and long steps.
    for i in 0..3000u32 {
        let step = match i % 3 {
            0 => format!("{:08x}", i.wrapping_mul(2_654_435_761)).into_bytes(),
            1 => vec![0xff, (i >> 8) as u8, i as u8, 0],
            _ => format!("{}{i}", "x".repeat(60)).into_bytes(),
        };
        common::model_add(&mut m, &[b"big".to_vec(), step], &i.to_le_bytes());
    }
    // A value longer than a block (1 MiB), so the stream crosses blocks inside it.
    common::model_add(&mut m, &[b"huge".to_vec()], &vec![7u8; (5 << 20) / 2]);
    m
}

#[test]
fn random_states_round_trip_in_the_tezos_shape() {
    for seed in 0..3 {
        let store = mem_store(InodeConfig::TEZOS);
        let m = random_model(seed, 2000);
        let parent = Hash([seed as u8; 32]);
        let h = commit_model(&store, &m, &[parent, Hash([9; 32])], -5 - seed as i64, b"multi\nline \x00 message");
        let file = round_trip(&store, &h, &m);
        // Export is deterministic: the same commit gives the same bytes.
        assert_eq!(export(&store, &h), file);
    }
}

#[test]
fn small_inode_shape_and_deep_paths_round_trip() {
    let store = mem_store(InodeConfig::SMALL_TEST);
    let mut m = Model::new();
    for i in 0..400u32 {
        let p = vec![format!("k{}", i % 37).into_bytes(), format!("{i}").into_bytes()];
        common::model_add(&mut m, &p, format!("{i}").as_bytes());
    }
    let deep: Vec<Vec<u8>> = (0..40).map(|d| format!("level{d}").into_bytes()).collect();
    common::model_add(&mut m, &deep, b"bottom");
    let h = commit_model(&store, &m, &[], 0, b"");
    round_trip(&store, &h, &m);
}

#[test]
fn block_workload_head_round_trips() {
    let store = mem_store(InodeConfig::TEZOS);
    let (mut t, mut m, mut parent) = (store.empty(), Model::new(), Vec::new());
    for n in 0..12 {
        let ops = block_ops(11, n, 400);
        t = apply_tree(t, &ops);
        apply_model(&mut m, &ops);
        let h = store.commit(&t, &parent, n as i64, "Tezos", &format!("block {n}")).unwrap();
        parent = vec![h];
    }
    round_trip(&store, &parent[0], &m);
}

#[test]
fn tezos_like_initial_state_round_trips() {
    let store = mem_store(InodeConfig::TEZOS);
    let mut m = Model::new();
    let mut t = store.empty();
    for (p, v) in arbor_trace::initial_state(arbor_trace::Profile::TezosMainnet, 3, 30_000) {
        t.add_mut(&p, &v).unwrap();
        common::model_add(&mut m, &p, &v);
    }
    let h = store.commit(&t, &[], 0, "Tezos", "initial state").unwrap();
    round_trip(&store, &h, &m);
}

/// Big enough for import to persist finished sub-directories (over 256 KiB each) and to
/// persist directories part-way (over 8 MiB): a large directory of 1 KiB values, and a flat
/// directory of 200 sub-directories of 100 KiB each.
#[test]
fn states_that_import_persists_in_pieces_round_trip() {
    let store = mem_store(InodeConfig::TEZOS);
    let mut m = Model::new();
    for i in 0..10_000u32 {
        let v = vec![(i % 251) as u8; 1000 + (i % 7) as usize];
        common::model_add(&mut m, &[b"large".to_vec(), format!("{i:x}").into_bytes()], &v);
    }
    for i in 0..200u32 {
        for j in 0..10u32 {
            let p = vec![b"flat".to_vec(), format!("c{i:03}").into_bytes(), format!("{j}").into_bytes()];
            common::model_add(&mut m, &p, &vec![(i + j) as u8; 10_000]);
        }
    }
    for i in 0..6u32 {
        let p = vec![b"sub".to_vec(), format!("s{i}").into_bytes(), b"x".to_vec()];
        common::model_add(&mut m, &p, &vec![i as u8; 300_000]);
    }
    let h = commit_model(&store, &m, &[], 1, b"big");
    round_trip(&store, &h, &m);
}

#[test]
fn empty_root_round_trips() {
    let store = mem_store(InodeConfig::TEZOS);
    let h = store.commit(&store.empty(), &[], 0, "Tezos", "empty").unwrap();
    round_trip(&store, &h, &Model::new());
}

#[test]
fn import_into_a_store_with_commits_adds_one_and_a_second_import_writes_nothing() {
    let from = mem_store(InodeConfig::TEZOS);
    let m = random_model(7, 300);
    let h = commit_model(&from, &m, &[], 3, b"x");
    let file = export(&from, &h);

    let to = mem_store(InodeConfig::TEZOS);
    let other = to.commit(&to.empty().add(&["other"], b"1").unwrap(), &[], 0, "Tezos", "").unwrap();
    assert!(snapshot::import(&to, &file[..]).unwrap().written);
    assert_eq!(to.commits(), vec![other, h]);
    let log = to.log_bytes();
    let again = snapshot::import(&to, &file[..]).unwrap();
    assert!(!again.written);
    assert_eq!((again.commit, to.log_bytes(), to.commits().len()), (h, log, 2));
    check_values_and_hash(&to.checkout(&h).unwrap(), &m, InodeConfig::TEZOS);
    // Checked even when nothing is written.
    let mut bad = file.clone();
    let n = bad.len();
    bad[n / 2] ^= 0x10;
    assert!(matches!(snapshot::import(&to, &bad[..]), Err(Error::Snapshot(_))));
}

/// A rolling node: a snapshot of an old commit taken before a collection drops it brings it
/// back when imported into the same store; commits kept by the collection export as before.
#[test]
fn snapshots_and_garbage_collection() {
    let fs = MemFs::new();
    let store = Store::open_with("/s", mem_config(&fs).with_chunk_bytes(16 << 10)).unwrap();
    let (mut t, mut m, mut history) = (store.empty(), Model::new(), Vec::<(Hash, Model)>::new());
    for n in 0..30 {
        let ops = block_ops(5, n, 200);
        t = apply_tree(t, &ops);
        apply_model(&mut m, &ops);
        let parents: Vec<Hash> = history.last().map(|c| c.0).into_iter().collect();
        history.push((store.commit(&t, &parents, n as i64, "Tezos", "").unwrap(), m.clone()));
    }
    let (old, old_model) = history[3].clone();
    let old_file = export(&store, &old);
    store.gc_blocking(&history[20].0, arbor::GcMode::Drop).unwrap();
    assert!(matches!(store.checkout(&old), Err(Error::CommitDropped { .. })));
    for (h, model) in &history[20..] {
        round_trip(&store, h, model);
    }
    let back = snapshot::import(&store, &old_file[..]).unwrap();
    assert!(back.written, "a dropped commit is not held: the import writes it again");
    check_values_and_hash(&store.checkout(&old).unwrap(), &old_model, InodeConfig::TEZOS);
    assert_fsck_clean(&store, "after importing a dropped commit");
}

#[test]
fn files_on_disk_and_their_header() {
    let dir = tempfile::tempdir().unwrap();
    let from = Store::open(dir.path().join("a")).unwrap();
    let m = random_model(2, 100);
    let h = commit_model(&from, &m, &[Hash([1; 32])], 42, b"on disk");
    let path = dir.path().join("snap.arbor");
    let stats = snapshot::export_file(&from, &h, &path).unwrap();
    assert_eq!(stats.file_bytes, std::fs::metadata(&path).unwrap().len());
    assert!(!dir.path().join("snap.arbor.tmp").exists());
    let header = snapshot::read_header(&path).unwrap();
    assert_eq!((header.inode, header.commit.clone()), (InodeConfig::TEZOS, from.commit_info(&h).unwrap()));
    let to = Store::open(dir.path().join("b")).unwrap();
    assert_eq!(snapshot::import_file(&to, &path).unwrap().counts, stats.counts);
    drop(to);
    let to = Store::open(dir.path().join("b")).unwrap();
    check_values_and_hash(&to.checkout(&h).unwrap(), &m, InodeConfig::TEZOS);
    // A missing commit is the engine's error, and leaves no file behind.
    let missing = dir.path().join("missing.arbor");
    assert!(matches!(snapshot::export_file(&from, &Hash([3; 32]), &missing), Err(Error::UnknownCommit(_))));
    assert!(!missing.exists() && !dir.path().join("missing.arbor.tmp").exists());
}

/// Where the first block starts: after the header's 16 bytes, body and crc.
fn header_len(file: &[u8]) -> usize {
    20 + u32::from_le_bytes(file[12..16].try_into().unwrap()) as usize
}

/// Asserts that importing `file` fails with a snapshot error into a fresh store, which is
/// left without commits; returns the error.
fn refused(file: &[u8], cfg: InodeConfig) -> SnapshotError {
    let to = mem_store(cfg);
    let e = match snapshot::import(&to, file) {
        Err(Error::Snapshot(e)) => e,
        other => panic!("expected a snapshot error, got {other:?}"),
    };
    assert!(to.commits().is_empty(), "a refused import committed");
    e
}

/// A small snapshot: a few values and a directory large enough to be an inode tree in the
/// small shape, so every kind of frame and entry is present.
fn small_file() -> (Vec<u8>, InodeConfig) {
    let cfg = InodeConfig::SMALL_TEST;
    let store = mem_store(cfg);
    let mut t = store.empty().add(&["a", "b"], b"hi").unwrap().add(&["c"], &[0x42; 200]).unwrap();
    for i in 0..6 {
        t.add_mut(&["d", &format!("k{i}")], &[i]).unwrap();
    }
    let h = store.commit(&t, &[Hash([5; 32])], 7, "Tezos", "small").unwrap();
    (export(&store, &h), cfg)
}

#[test]
fn every_single_byte_corruption_is_refused() {
    let (file, cfg) = small_file();
    snapshot::import(&mem_store(cfg), &file[..]).unwrap();
    for i in 0..file.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut bad = file.clone();
            bad[i] ^= flip;
            refused(&bad, cfg);
        }
    }
}

#[test]
fn every_truncation_is_refused_and_extra_bytes_too() {
    let (file, cfg) = small_file();
    for len in 0..file.len() {
        let e = refused(&file[..len], cfg);
        assert!(matches!(e, SnapshotError::Truncated { offset } if offset == len as u64), "{len}: {e}");
    }
    let mut longer = file.clone();
    longer.push(0);
    assert_eq!(refused(&longer, cfg), SnapshotError::TrailingBytes { offset: file.len() as u64 });
}

/// A file of several blocks (values crossing block boundaries): corruptions at random places,
/// of one byte or a burst, and cuts just around each block boundary.
#[test]
fn corruptions_of_a_multi_block_file_are_refused() {
    let cfg = InodeConfig::TEZOS;
    let store = mem_store(cfg);
    let mut m = Model::new();
    let mut rng = Rng::new(77);
    for i in 0..3000u32 {
        let len = if i % 500 == 0 { 700_000 } else { rng.below(300) as usize };
        let v: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        common::model_add(&mut m, &[format!("d{}", i % 7).into_bytes(), format!("{i}").into_bytes()], &v);
    }
    let h = commit_model(&store, &m, &[], 0, b"");
    let file = round_trip(&store, &h, &m);
    let header = header_len(&file);
    assert!(file.len() > 3 << 20, "several blocks");
    for _ in 0..150 {
        let mut bad = file.clone();
        let at = rng.below(file.len() as u64) as usize;
        let burst = 1 + rng.below(16) as usize;
        for b in &mut bad[at..(at + burst).min(file.len())] {
            *b ^= 1 + rng.below(255) as u8;
        }
        refused(&bad, cfg);
    }
    // Every block starts with 'B' after the header: cut just before, at and after each start.
    let mut at = header;
    while file[at] == b'B' {
        for cut in [at - 1, at, at + 1, at + 13] {
            assert!(matches!(refused(&file[..cut], cfg), SnapshotError::Truncated { .. }));
        }
        let packed = u32::from_le_bytes(file[at + 5..at + 9].try_into().unwrap()) as usize;
        at += 13 + packed;
    }
    assert_eq!(file.len() - at, 45, "the trailer follows the last block");
}

#[test]
fn header_errors_are_typed() {
    let (file, cfg) = small_file();
    assert_eq!(refused(b"not a snapshot at all", cfg), SnapshotError::BadMagic);
    let mut v2 = file.clone();
    v2[8] = 2;
    assert_eq!(refused(&v2, cfg), SnapshotError::UnsupportedVersion { found: 2, supported: 1 });
    let e = refused(&file, InodeConfig::TEZOS);
    assert_eq!(e, SnapshotError::InodeShape { file: cfg, store: InodeConfig::TEZOS });

    // A store configured for smaller values than the file holds.
    let fs = MemFs::new();
    let small = Store::open_with("/s", mem_config(&fs).with_inode(cfg).with_max_value_len(199)).unwrap();
    let e = snapshot::import(&small, &file[..]).unwrap_err();
    assert!(matches!(e, Error::ValueTooLarge { len: 200, max: 199 }), "{e}");
    assert!(small.commits().is_empty());
}

/// An encoder written from docs/SNAPSHOT.md alone (no engine code), for byte-for-byte
/// comparison and for crafting malformed files.
mod enc {
    use super::Model;
    use arbor::{CommitInfo, InodeConfig};

    /// A tree whose directories list their entries in stream order.
    #[derive(Clone, Debug)]
    pub enum Node {
        Value(Vec<u8>),
        Dir(Vec<(Vec<u8>, Node)>),
    }

    /// The model as a tree in canonical order: sorted by step, then large directories in
    /// inode order.
    pub fn tree_of(m: &Model, cfg: InodeConfig) -> Node {
        let mut root = Node::Dir(Vec::new());
        for (k, v) in m {
            let mut cur = &mut root;
            for (i, step) in k.iter().enumerate() {
                let Node::Dir(entries) = cur else { unreachable!("values have no children") };
                let at = match entries.binary_search_by(|(s, _)| s.cmp(step)) {
                    Ok(at) => at,
                    Err(at) => {
                        let child = if i + 1 == k.len() { Node::Value(v.clone()) } else { Node::Dir(Vec::new()) };
                        entries.insert(at, (step.clone(), child));
                        at
                    }
                };
                cur = &mut entries[at].1;
            }
        }
        canonical(&mut root, cfg);
        root
    }

    fn canonical(n: &mut Node, cfg: InodeConfig) {
        if let Node::Dir(entries) = n {
            entries.iter_mut().for_each(|(_, c)| canonical(c, cfg));
            if entries.len() > cfg.stable_hash as usize {
                *entries = inode_order(std::mem::take(entries), 0, cfg);
            }
        }
    }

    /// Slot by slot (`caml_hash(depth, step) mod entries`), sorted within a leaf of at most
    /// `entries` bindings.
    fn inode_order(entries: Vec<(Vec<u8>, Node)>, depth: u32, cfg: InodeConfig) -> Vec<(Vec<u8>, Node)> {
        if entries.len() <= cfg.entries as usize {
            return entries;
        }
        let mut slots: Vec<Vec<(Vec<u8>, Node)>> = (0..cfg.entries).map(|_| Vec::new()).collect();
        for e in entries {
            slots[cfg.slot(depth, &e.0) as usize].push(e);
        }
        slots.into_iter().flat_map(|s| inode_order(s, depth + 1, cfg)).collect()
    }

    fn leb(out: &mut Vec<u8>, mut n: u64) {
        while n >= 0x80 {
            out.push(n as u8 | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }

    /// The tree stream of `n`.
    pub fn stream(n: &Node) -> Vec<u8> {
        fn dir(out: &mut Vec<u8>, entries: &[(Vec<u8>, Node)]) {
            leb(out, entries.len() as u64);
            for (step, child) in entries {
                leb(out, step.len() as u64);
                out.extend_from_slice(step);
                match child {
                    Node::Value(v) => {
                        out.push(0);
                        leb(out, v.len() as u64);
                        out.extend_from_slice(v);
                    }
                    Node::Dir(e) => {
                        out.push(1);
                        dir(out, e);
                    }
                }
            }
        }
        let Node::Dir(entries) = n else { panic!("the root is a directory") };
        let mut out = Vec::new();
        dir(&mut out, entries);
        out
    }

    /// Directories, values and value bytes of a tree.
    pub fn counts(n: &Node) -> (u64, u64, u64) {
        match n {
            Node::Value(v) => (0, 1, v.len() as u64),
            Node::Dir(e) => e.iter().map(|(_, c)| counts(c)).fold((1, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2)),
        }
    }

    /// Applies `f` to the entries of the root's child directory `name` (the root's if empty).
    pub fn edit_dir(n: &mut Node, name: &[u8], f: impl FnOnce(&mut Vec<(Vec<u8>, Node)>)) {
        let Node::Dir(root) = n else { panic!("a directory") };
        if name.is_empty() {
            return f(root);
        }
        match root.iter_mut().find(|(s, _)| s == name) {
            Some((_, Node::Dir(e))) => f(e),
            _ => panic!("no directory {name:?}"),
        }
    }

    /// The whole file: header, 1 MiB blocks at zstd level 3, trailer.
    pub fn file(
        cfg: InodeConfig,
        c: &CommitInfo,
        stream: &[u8],
        (dirs, values, value_bytes): (u64, u64, u64),
    ) -> Vec<u8> {
        let mut body = Vec::new();
        for n in [cfg.entries, cfg.stable_hash] {
            body.extend_from_slice(&n.to_le_bytes());
        }
        body.extend_from_slice(c.hash.as_bytes());
        body.extend_from_slice(c.tree.as_bytes());
        body.extend_from_slice(&c.date.to_le_bytes());
        body.extend_from_slice(&(c.parents.len() as u32).to_le_bytes());
        c.parents.iter().for_each(|p| body.extend_from_slice(p.as_bytes()));
        for field in [&c.author, &c.message] {
            body.extend_from_slice(&(field.len() as u32).to_le_bytes());
            body.extend_from_slice(field);
        }
        let mut f = b"ARBORSNP".to_vec();
        f.extend_from_slice(&1u32.to_le_bytes());
        f.extend_from_slice(&(body.len() as u32).to_le_bytes());
        f.extend_from_slice(&body);
        let crc = crc32c::crc32c(&f);
        f.extend_from_slice(&crc.to_le_bytes());
        let mut blocks = 0u64;
        for raw in stream.chunks(1 << 20) {
            let packed = zstd::bulk::compress(raw, 3).unwrap();
            let mut head = vec![b'B'];
            head.extend_from_slice(&(raw.len() as u32).to_le_bytes());
            head.extend_from_slice(&(packed.len() as u32).to_le_bytes());
            let crc = crc32c::crc32c_append(crc32c::crc32c(&head), &packed);
            f.extend_from_slice(&head);
            f.extend_from_slice(&crc.to_le_bytes());
            f.extend_from_slice(&packed);
            blocks += 1;
        }
        f.push(b'E');
        for n in [dirs, values, value_bytes, stream.len() as u64, blocks] {
            f.extend_from_slice(&n.to_le_bytes());
        }
        let crc = crc32c::crc32c(&f);
        f.extend_from_slice(&crc.to_le_bytes());
        f
    }
}

#[test]
fn independent_encoder_matches_the_exporter_byte_for_byte() {
    for cfg in [InodeConfig::TEZOS, InodeConfig::SMALL_TEST] {
        let store = mem_store(cfg);
        let m = random_model(5, 500);
        let h = commit_model(&store, &m, &[Hash([2; 32])], 99, b"spec");
        let info = store.commit_info(&h).unwrap();
        let tree = enc::tree_of(&m, cfg);
        let mine = enc::file(cfg, &info, &enc::stream(&tree), enc::counts(&tree));
        assert!(mine == export(&store, &h), "the documented encoding differs from the exporter's ({cfg:?})");
    }
}

#[test]
fn crafted_files_are_refused_with_typed_errors() {
    let cfg = InodeConfig::TEZOS;
    let store = mem_store(cfg);
    let mut m = Model::new();
    for i in 0..300u32 {
        common::model_add(&mut m, &[b"big".to_vec(), format!("{i}").into_bytes()], b"v");
    }
    common::model_add(&mut m, &[b"a".to_vec(), b"x".to_vec()], b"1");
    common::model_add(&mut m, &[b"b".to_vec()], b"2");
    let h = commit_model(&store, &m, &[], 0, b"");
    let info = store.commit_info(&h).unwrap();
    let tree = enc::tree_of(&m, cfg);
    let build =
        |tree: &enc::Node, info: &arbor::CommitInfo| enc::file(cfg, info, &enc::stream(tree), enc::counts(tree));
    let malformed = |e: SnapshotError, what: &str| match e {
        SnapshotError::Malformed { what: w, .. } if w.contains(what) => {}
        e => panic!("expected a malformed file ({what}), got {e:?}"),
    };
    assert!(snapshot::import(&mem_store(cfg), &build(&tree, &info)[..]).is_ok());

    // Flat directory out of order, and with a repeated step.
    let mut swapped = tree.clone();
    enc::edit_dir(&mut swapped, &[], |e| e.swap(0, 1));
    malformed(refused(&build(&swapped, &info), cfg), "out of order");
    let mut repeated = tree.clone();
    enc::edit_dir(&mut repeated, &[], |e| e[1].0 = e[0].0.clone());
    malformed(refused(&build(&repeated, &info), cfg), "out of order");
    // Large directory: not in inode order, or with a repeated step.
    let mut shuffled = tree.clone();
    enc::edit_dir(&mut shuffled, b"big", |e| e.swap(3, 200));
    malformed(refused(&build(&shuffled, &info), cfg), "inode order");
    let mut twice = tree.clone();
    enc::edit_dir(&mut twice, b"big", |e| e[7].0 = e[8].0.clone());
    malformed(refused(&build(&twice, &info), cfg), "repeats a step");
    // An empty directory below the root.
    let mut empty = tree.clone();
    enc::edit_dir(&mut empty, b"a", |e| e.clear());
    malformed(refused(&build(&empty, &info), cfg), "empty directory");

    // A header whose tree hash is not the tree's, its commit hash recomputed to match.
    let mut other = info.clone();
    other.tree = Hash([0xaa; 32]);
    other.hash = commit_hash(&other.tree, &other.parents, other.date, &other.author, &other.message);
    let e = refused(&build(&tree, &other), cfg);
    assert_eq!(e, SnapshotError::TreeHashMismatch { expected: other.tree, actual: info.tree });
    // A header whose commit hash is not the hash of its metadata.
    let mut lying = info.clone();
    lying.message = b"changed".to_vec();
    let actual = commit_hash(&lying.tree, &lying.parents, lying.date, &lying.author, &lying.message);
    let e = refused(&build(&tree, &lying), cfg);
    assert_eq!(e, SnapshotError::CommitHashMismatch { expected: info.hash, actual });
    // Trailer counts that disagree with the tree.
    let stream = enc::stream(&tree);
    let mut counts = enc::counts(&tree);
    counts.1 += 1;
    let e = refused(&enc::file(cfg, &info, &stream, counts), cfg);
    assert_eq!(e, SnapshotError::CountMismatch { what: "values", stored: counts.1, counted: counts.1 - 1 });
    // Stream bytes after the tree, inside its last block.
    let mut longer = stream.clone();
    longer.push(0);
    malformed(refused(&enc::file(cfg, &info, &longer, enc::counts(&tree)), cfg), "after the end of the tree");
}

/// A snapshot failure is an `arbor::Error` whose `source()` is the typed `SnapshotError`.
#[test]
fn snapshot_errors_are_reachable_through_source() {
    let store = mem_store(InodeConfig::TEZOS);
    let e = snapshot::import(&store, &b"not a snapshot file at all"[..]).unwrap_err();
    let source = std::error::Error::source(&e).expect("a snapshot error has a source");
    assert_eq!(source.downcast_ref::<SnapshotError>(), Some(&SnapshotError::BadMagic), "{e}");
}

/// The tree stream of one chain: `depth` directories named `s`, each the only entry of its
/// parent (the root first), the last holding the value `v`: a value `depth` steps down.
/// Written with a loop, as the stream of a deep tree must be.
fn chain_stream(depth: usize) -> (Vec<u8>, (u64, u64, u64)) {
    let mut out = Vec::new();
    for level in 0..depth {
        // The directory's count (1), its entry's step `s`, then a directory or the value.
        out.extend_from_slice(&[1, 1, b's']);
        match level + 1 == depth {
            false => out.push(1),
            true => out.extend_from_slice(&[0, 1, b'v']),
        }
    }
    (out, (depth as u64, 1, 1))
}

/// Issue 14, item 1: a snapshot whose tree is deeper than `MAX_PATH_STEPS` once overflowed
/// the stack of the importer (hashing or writing the chain it built), aborting the process.
/// It is refused while reading, with nothing committed; one exactly at the maximum imports.
#[test]
fn a_snapshot_deeper_than_the_maximum_is_refused_while_reading() {
    common::isolated("a_snapshot_deeper_than_the_maximum_is_refused_while_reading", || {
        let cfg = InodeConfig::TEZOS;
        let max = arbor::path::MAX_PATH_STEPS;
        // The deepest tree allowed, committed and exported the documented way.
        let from = mem_store(cfg);
        let tree = from.empty().add(&vec!["s"; max], b"v").unwrap();
        let h = from.commit(&tree, &[], 0, "Tezos", "").unwrap();
        let info = from.commit_info(&h).unwrap();
        let (stream, counts) = chain_stream(max);
        let file = enc::file(cfg, &info, &stream, counts);
        assert!(file == export(&from, &h), "the chain stream differs from the exporter's");
        let to = mem_store(cfg);
        assert_eq!(snapshot::import(&to, &file[..]).unwrap().commit, h);
        assert_eq!(to.checkout(&h).unwrap().find(&vec!["s"; max]).unwrap(), Some(b"v".to_vec()));
        // One step deeper, and far deeper: refused with the depth, nothing committed. (The
        // header's tree hash cannot be right for these; it is checked only at the end.)
        for depth in [100_000, max + 1] {
            let (stream, counts) = chain_stream(depth);
            let to = mem_store(cfg);
            match snapshot::import(&to, &enc::file(cfg, &info, &stream, counts)[..]) {
                Err(Error::PathTooDeep { steps, max: m }) => assert_eq!((steps, m), (max + 1, max)),
                other => panic!("a stream {depth} deep: expected PathTooDeep, got {other:?}"),
            }
            assert!(to.commits().is_empty(), "a refused import committed");
        }
    });
}
