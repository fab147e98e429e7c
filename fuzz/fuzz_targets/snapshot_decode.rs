//! Fuzzes snapshot import (crates/arbor/src/snapshot/): the input imported as a whole
//! snapshot file, then as the tree stream of a snapshot whose header, block and trailer
//! checksums are valid, which puts the stream's decoder (counts, steps, tags, order, values)
//! within the fuzzer's reach. Each import goes into a fresh store on an in-memory file system.
//! Nothing may panic, and an import that fails must leave the store without a commit.
#![no_main]

use std::sync::{Arc, OnceLock};

use arbor::io::{FileSystem, MemFs};
use arbor::{snapshot, Config, Store};
use libfuzzer_sys::fuzz_target;

fn store() -> Store {
    let fs: Arc<dyn FileSystem> = Arc::new(MemFs::new());
    Store::open_with("/s", Config::default().with_cache_bytes(1 << 20).with_fs(fs)).expect("a fresh store opens")
}

/// The header of a real snapshot (a small tree), checksums and commit hash valid.
fn header() -> &'static [u8] {
    static HEADER: OnceLock<Vec<u8>> = OnceLock::new();
    HEADER.get_or_init(|| {
        let s = store();
        let tree = s.empty().add(&["a"], b"hi").and_then(|t| t.add(&["d", "x"], b"1")).expect("adds");
        let commit = s.commit(&tree, &[], 1_700_000_000, "Tezos", "fuzz").expect("commits");
        let mut file = Vec::new();
        snapshot::export(&s, &commit, &mut file).expect("exports");
        // magic 8, version 4, body_len 4, body, crc 4 (docs/SNAPSHOT.md section 3).
        let body_len = u32::from_le_bytes(file[12..16].try_into().unwrap()) as usize;
        file[..20 + body_len].to_vec()
    })
}

/// A snapshot holding `stream` as its tree stream in one block, every checksum valid; the
/// trailer's counts are zeros (only checked once the stream has been read).
fn wrap(stream: &[u8]) -> Vec<u8> {
    let mut file = header().to_vec();
    let packed = zstd::bulk::compress(stream, 1).expect("zstd compresses");
    let start = file.len();
    file.push(b'B');
    file.extend_from_slice(&(stream.len() as u32).to_le_bytes());
    file.extend_from_slice(&(packed.len() as u32).to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&file[start..start + 9]), &packed);
    file.extend_from_slice(&crc.to_le_bytes());
    file.extend_from_slice(&packed);
    file.push(b'E');
    file.extend_from_slice(&[0; 40]);
    let crc = crc32c::crc32c(&file);
    file.extend_from_slice(&crc.to_le_bytes());
    file
}

fn import(file: &[u8]) {
    let s = store();
    if snapshot::import(&s, file).is_err() {
        assert!(s.commits().is_empty(), "a refused import commits nothing");
    }
}

fuzz_target!(|data: &[u8]| {
    import(data);
    if !data.is_empty() {
        import(&wrap(data));
    }
});
