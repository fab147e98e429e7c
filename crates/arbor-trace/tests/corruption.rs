//! Damaged traces are rejected with an error naming what and where.

use arbor_trace::{
    Block, CommitRecord, Compression, InitialState, Op, Parent, Source, TraceError, TraceHeader, TraceReader,
    TraceWriter, FORMAT_VERSION, MAGIC,
};

fn block(level: u64) -> Block {
    let ops = (0..50u64)
        .map(|i| Op::Add {
            path: vec![b"data".to_vec(), b"contracts".to_vec(), format!("{:08x}", i * 7919 + level).into_bytes()],
            value: (i * level).to_le_bytes().to_vec(),
        })
        .collect();
    Block {
        level,
        transactions: 3,
        parent: Parent::Previous,
        ops,
        commit: CommitRecord { date: 30 * level as i64, message: b"m".to_vec(), author: b"a".to_vec(), hash: None },
    }
}

fn trace(compression: Compression) -> Vec<u8> {
    let h = TraceHeader::new(Source::Recorded { description: "test".into() }, InitialState::None);
    let mut w = TraceWriter::with_compression(Vec::new(), &h, compression).unwrap();
    for level in 1..=5 {
        w.write_block(&block(level)).unwrap();
    }
    w.finish().unwrap()
}

/// Byte ranges `(frame start, payload start, frame end)` of every frame,
/// found by walking the documented layout.
fn frames(bytes: &[u8]) -> Vec<(usize, usize, usize)> {
    let body = u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
    let mut at = 14 + body + 4;
    let mut out = Vec::new();
    while at < bytes.len() {
        let stored = u32::from_le_bytes(bytes[at + 2..at + 6].try_into().unwrap()) as usize;
        out.push((at, at + 14, at + 14 + stored + 4));
        at += 14 + stored + 4;
    }
    out
}

/// Reads all blocks; returns how many were read and the error that stopped
/// the reader, if any.
fn read_all(bytes: &[u8]) -> (usize, Option<TraceError>) {
    let mut r = match TraceReader::new(bytes) {
        Ok(r) => r,
        Err(e) => return (0, Some(e)),
    };
    let mut n = 0;
    loop {
        match r.next_block() {
            Ok(Some(_)) => n += 1,
            Ok(None) => return (n, None),
            Err(e) => return (n, Some(e)),
        }
    }
}

#[test]
fn intact_trace_reads_fully() {
    for c in [Compression::None, Compression::default()] {
        let bytes = trace(c);
        assert_eq!(frames(&bytes).len(), 6, "5 blocks and the end frame");
        let (n, err) = read_all(&bytes);
        assert_eq!(n, 5);
        assert!(err.is_none(), "{err:?}");
    }
}

#[test]
fn flipped_payload_byte_names_the_block() {
    for c in [Compression::None, Compression::default()] {
        let bytes = trace(c);
        let f = frames(&bytes);
        for (target, &(_, payload, end)) in f.iter().enumerate().take(5) {
            for pos in [payload, (payload + end) / 2, end - 5, end - 1] {
                let mut bad = bytes.clone();
                bad[pos] ^= 0x10;
                let (n, err) = read_all(&bad);
                assert_eq!(n, target);
                match err {
                    Some(TraceError::CorruptBlock { block, .. }) => {
                        assert_eq!(block, target as u64)
                    }
                    other => panic!("byte {pos} of block {target}: {other:?}"),
                }
                let msg = read_all(&bad).1.unwrap().to_string();
                assert!(msg.contains(&format!("block {target}")), "{msg}");
            }
        }
    }
}

#[test]
fn flipped_frame_header_byte_names_the_block() {
    let bytes = trace(Compression::None);
    let f = frames(&bytes);
    for pos in f[3].0..f[3].1 {
        let mut bad = bytes.clone();
        bad[pos] ^= 0x01;
        let (n, err) = read_all(&bad);
        assert_eq!(n, 3);
        assert!(matches!(err, Some(TraceError::CorruptBlock { block: 3, .. })), "byte {pos}: {err:?}");
    }
}

#[test]
fn dropped_or_swapped_frames_are_detected() {
    let bytes = trace(Compression::None);
    let f = frames(&bytes);
    // Block 2 removed: the next frame does not check out as block 2.
    let mut dropped = bytes[..f[2].0].to_vec();
    dropped.extend_from_slice(&bytes[f[2].2..]);
    let (n, err) = read_all(&dropped);
    assert_eq!(n, 2);
    assert!(matches!(err, Some(TraceError::CorruptBlock { block: 2, .. })));
    // Blocks 1 and 2 swapped.
    let mut swapped = bytes[..f[1].0].to_vec();
    swapped.extend_from_slice(&bytes[f[2].0..f[2].2]);
    swapped.extend_from_slice(&bytes[f[1].0..f[1].2]);
    swapped.extend_from_slice(&bytes[f[3].0..]);
    let (n, err) = read_all(&swapped);
    assert_eq!(n, 1);
    assert!(matches!(err, Some(TraceError::CorruptBlock { block: 1, .. })));
}

#[test]
fn truncation_is_reported() {
    let bytes = trace(Compression::default());
    let f = frames(&bytes);
    // Cut between frames, inside a frame header, inside a payload, and just
    // before the end.
    let cuts = [(f[2].0, 2), (f[2].0 + 5, 2), (f[4].1 + 3, 4), (f[5].0, 5), (bytes.len() - 1, 5)];
    for (cut, complete) in cuts {
        let (n, err) = read_all(&bytes[..cut]);
        assert_eq!(n, complete, "cut at {cut}");
        match err {
            Some(TraceError::Truncated { blocks_read, .. }) => {
                assert_eq!(blocks_read, complete as u64)
            }
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
    // Inside the header.
    for cut in [0, 4, 9, 13, 20] {
        let err = TraceReader::new(&bytes[..cut]).err();
        assert!(matches!(err, Some(TraceError::Truncated { blocks_read: 0, .. })), "cut at {cut}: {err:?}");
    }
}

#[test]
fn unknown_version_and_bad_magic_are_rejected() {
    let bytes = trace(Compression::None);
    assert_eq!(&bytes[..8], MAGIC);
    let mut newer = bytes.clone();
    newer[8..10].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    assert!(matches!(
        TraceReader::new(newer.as_slice()).err(),
        Some(TraceError::UnsupportedVersion(v)) if v == FORMAT_VERSION + 1
    ));
    let mut magic = bytes.clone();
    magic[0] = b'X';
    assert!(matches!(TraceReader::new(magic.as_slice()).err(), Some(TraceError::BadMagic)));
    let mut header = bytes.clone();
    header[16] ^= 0xff;
    assert!(matches!(TraceReader::new(header.as_slice()).err(), Some(TraceError::CorruptHeader(_))));
    // A writer refuses to claim another version.
    let mut h = TraceHeader::new(Source::Recorded { description: String::new() }, InitialState::None);
    h.version = FORMAT_VERSION + 1;
    assert!(matches!(TraceWriter::new(Vec::new(), &h).err(), Some(TraceError::InvalidInput(_))));
}
