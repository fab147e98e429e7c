//! Fuzzes the store's record decoders: the log's frame parser and the body decoders that need
//! no store (through `arbor::fuzzing`, which exists for this), then a whole store whose log is
//! made of the input's records, read through the public API (recovery scan, checkout, a fold
//! over every commit's tree, fsck, stats). Nothing may panic; every failure is an error.
//!
//! Input: a run of `kind:u8 | len:u16 LE | body (len bytes)` triples. Each becomes a record with a
//! valid checksum (else the decoders behind the checksum would be out of the fuzzer's reach),
//! written after the 32-byte header of a real chunk, at global offset 32. The raw input is
//! also given to the frame parser as is, checksums and all.
#![no_main]

use std::path::Path;
use std::sync::{Arc, OnceLock};

use arbor::io::{FileSystem, MemFs, TornWrites};
use arbor::{Config, Order, Store};
use libfuzzer_sys::fuzz_target;

const DIR: &str = "/s";
const CHUNK0: &str = "/s/pack/00000000000000000000.chunk";

/// A store on an in-memory file system holding the chunk header every iteration starts from.
fn template() -> &'static MemFs {
    static TEMPLATE: OnceLock<MemFs> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let fs = MemFs::new();
        let store = Store::open_with(DIR, config(&fs)).expect("a fresh store opens");
        store.close().expect("the template store closes");
        fs
    })
}

fn config(fs: &MemFs) -> Config {
    // A small cache: the default budget is sized for a node, and every iteration opens stores.
    Config::default().with_cache_bytes(1 << 20).with_fs(Arc::new(fs.clone()) as Arc<dyn FileSystem>)
}

/// The input's triples as framed records.
fn records(data: &[u8]) -> Vec<u8> {
    let mut log = Vec::new();
    let mut rest = data;
    while let [kind, lo, hi, tail @ ..] = rest {
        let n = usize::from(u16::from_le_bytes([*lo, *hi])).min(tail.len());
        arbor::fuzzing::frame(&mut log, *kind, &tail[..n]);
        rest = &tail[n..];
    }
    log
}

fuzz_target!(|data: &[u8]| {
    arbor::fuzzing::decode_records(data);
    let log = records(data);
    assert_eq!(arbor::fuzzing::decode_records(&log), count_frames(data), "every framed record parses");

    let fs = template().crash(TornWrites::None);
    let header = fs.file_bytes(Path::new(CHUNK0)).expect("the template has chunk 0");
    let mut chunk = header[..32].to_vec();
    chunk.extend_from_slice(&log);
    fs.set_file_bytes(Path::new(CHUNK0), &chunk).unwrap();
    // No control file and no index: the store is rebuilt from the log by the recovery scan.
    for name in ["control", "commits.idx"] {
        let path = Path::new(DIR).join(name);
        if fs.exists(&path) {
            fs.remove_file(&path).unwrap();
        }
    }
    for read_only in [true, false] {
        let Ok(store) = Store::open_with(DIR, config(&fs).with_read_only(read_only)) else { continue };
        for commit in store.commits() {
            let _ = store.commit_info(&commit);
            let Ok(tree) = store.checkout(&commit) else { continue };
            let _ = tree.hash();
            let mut steps = 0usize;
            let _ = tree.fold::<&[u8], _>(&[], None, Order::Undefined, |_, t| {
                let _ = t.to_value();
                steps += 1;
                Ok(steps < 10_000)
            });
        }
        let _ = store.heads();
        let _ = store.fsck();
        let _ = store.stats();
    }
});

/// How many triples the input holds (each framed as one record).
fn count_frames(data: &[u8]) -> usize {
    let mut n = 0;
    let mut rest = data;
    while let [_, lo, hi, tail @ ..] = rest {
        rest = &tail[usize::from(u16::from_le_bytes([*lo, *hi])).min(tail.len())..];
        n += 1;
    }
    n
}
