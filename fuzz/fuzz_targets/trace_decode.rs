//! Fuzzes the trace reader (crates/arbor-trace): the input read as a whole trace file
//! (header, frames, checksums), then as the payload of one block framed with valid checksums
//! behind a valid header, which puts the block decoder (operations, paths, digests, commit
//! record) within the fuzzer's reach. Nothing may panic; a payload the decoder accepts must
//! read the same through the owned and the borrowing interface.
#![no_main]

use std::sync::OnceLock;

use arbor_trace::{header_for, Compression, GeneratorParams, TraceError, TraceReader, TraceWriter};
use libfuzzer_sys::fuzz_target;

/// The bytes of a valid trace header (that of a small generated trace, uncompressed).
fn header() -> &'static [u8] {
    static HEADER: OnceLock<Vec<u8>> = OnceLock::new();
    HEADER.get_or_init(|| {
        let head = header_for(&GeneratorParams::default());
        let empty = TraceWriter::with_compression(Vec::new(), &head, Compression::None)
            .and_then(|w| w.finish())
            .expect("an empty trace writes");
        // The end-of-trace frame of an empty trace: a 14-byte frame header, the block count
        // (one LEB128 byte, 0) and the payload's 4-byte checksum.
        empty[..empty.len() - 19].to_vec()
    })
}

/// Appends a frame of `kind` (`B` block, `E` end) holding `payload` uncompressed, as block
/// number `index`, with valid checksums (docs/TRACE.md).
fn frame(out: &mut Vec<u8>, kind: u8, index: u64, payload: &[u8]) {
    let mut head = [0u8; 14];
    head[0] = kind;
    head[2..6].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    head[6..10].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    let crc = crc32c::crc32c(&head[..10]);
    head[10..14].copy_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
    let crc = crc32c::crc32c_append(crc32c::crc32c(&index.to_le_bytes()), payload);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// Reads every block of `trace` twice (owned blocks, borrowed operations); the two must agree.
fn read_all(trace: &[u8]) {
    let Ok(mut owned) = TraceReader::new(trace) else { return };
    let mut borrowed = TraceReader::new(trace).expect("the header read once");
    loop {
        let a = owned.next_block();
        let mut ops = Vec::new();
        let b = borrowed.next_block_with(|op| {
            ops.push(op.to_op());
            Ok::<(), TraceError>(())
        });
        match (a, b) {
            (Ok(Some(a)), Ok(Some(b))) => {
                assert_eq!((a.level, a.transactions, &a.commit), (b.level, b.transactions, &b.commit));
                assert_eq!(a.ops, ops, "both interfaces decode the same operations");
            }
            (Ok(None), Ok(None)) => break,
            (Err(_), Err(_)) => break,
            (a, b) => panic!("the two interfaces disagree: {a:?} / {b:?}"),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    read_all(data);
    let mut trace = header().to_vec();
    frame(&mut trace, b'B', 0, data);
    frame(&mut trace, b'E', 1, &[1]);
    read_all(&trace);
});
