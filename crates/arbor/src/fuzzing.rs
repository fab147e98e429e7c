//! Entry points for the fuzz targets in `fuzz/` (cargo-fuzz): **not part of arbor's API**.
//!
//! The log's record decoders are crate-internal; the fuzz crate reaches them through these few
//! functions, which only call them. Hidden from the documentation, free to change with any
//! release; no program other than the fuzz targets should use them.

use crate::pack::record::{self, kind, parse_frame, CommitBody, HeadBody, Reader};
use crate::pack::refs;

/// Appends `body` to `out` framed as a log record of `record_kind`: kind, length, body and a
/// valid CRC-32C, so that a fuzz target can write records that pass the checksum and reach the
/// body decoders.
pub fn frame(out: &mut Vec<u8>, record_kind: u8, body: &[u8]) {
    record::frame(out, record_kind, body);
}

/// Reads `log` as a run of framed records from its first byte, and decodes each body with the
/// decoders that need no store: commit and head bodies, bindings and changes, and the child
/// pointers garbage collection follows. Returns how many frames had a valid checksum.
///
/// Panics only if a decoder breaks its own contract: a decoded commit or head body must encode
/// back to bytes that decode to the same value.
pub fn decode_records(log: &[u8]) -> usize {
    let mut at = 0;
    let mut frames = 0;
    while at < log.len() {
        let Ok(f) = parse_frame(&log[at..]) else { break };
        frames += 1;
        let body = &log[at + f.body_start..at + f.body_start + f.body_len];
        decode_body(f.kind, body, at as u64);
        at += f.total;
    }
    frames
}

/// Decodes one record body of kind `record_kind` found at global offset `at`.
fn decode_body(record_kind: u8, body: &[u8], at: u64) {
    let mut children = Vec::new();
    // Either outcome is fine; only a panic is a defect.
    let _ = refs::children(record_kind, body, at, &mut children);
    let _ = refs::delta_base(record_kind, body, at);
    match record_kind {
        kind::COMMIT => {
            if let Ok(c) = CommitBody::decode(body) {
                let mut again = Vec::new();
                c.encode(&mut again);
                assert_eq!(CommitBody::decode(&again).as_ref(), Ok(&c), "a commit body round-trips");
            }
        }
        kind::HEAD => {
            if let Ok(h) = HeadBody::decode(body) {
                let mut again = Vec::new();
                h.encode(&mut again);
                assert_eq!(HeadBody::decode(&again).as_ref(), Ok(&h), "a head body round-trips");
            }
        }
        _ => {
            // Bindings and delta changes until the first error, whatever the kind.
            let mut r = Reader::new(body);
            while !r.is_done() && r.change_ref().is_ok() {}
            let mut r = Reader::new(body);
            while !r.is_done() && r.entry().is_ok() {}
        }
    }
}
