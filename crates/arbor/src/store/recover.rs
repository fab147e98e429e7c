//! Recovery: scanning the log past the control file's `durable_end` for complete commits.

use arbor_core::{commit_hash, Hash};

use crate::error::{io_err, Corruption, Error, Result};
use crate::pack::frames::{ChunkFrames, Next};
use crate::pack::log::{Log, CHUNK_HEADER_LEN};
use crate::pack::record::{kind, parse_frame, CommitBody, HeadBody, COMMIT_SYNCED_ALONE};

/// What the scan found after the starting offset, in log order.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub commits: Vec<(Hash, u64)>,
    pub heads: Vec<(u64, HeadBody)>,
    /// End of the last complete commit or head record: the new valid end of the log.
    pub valid_end: u64,
    /// Where the scan met a record that is cut short or damaged, and what was wrong: a torn
    /// tail (or bit rot, which `open` tells apart with the commit index).
    pub stopped: Option<(u64, Corruption)>,
    /// Where the zeros the writer prepares past its records begin, when the last chunk's
    /// file ends in them (FORMAT.md 3.2): the end of its records, not damage.
    pub zeros_from: Option<u64>,
}

/// Scans every record from `start` to the end of the chunk files, stopping at the first
/// record that is torn, fails its checksum or does not decode. Objects after the last commit
/// or head record belong to a commit that never completed and are not part of `valid_end`.
///
/// With `detect_rot` (a writable open, which holds the lock and is about to truncate), damage
/// that provably was durable once is reported as corruption instead (see
/// `synced_commit_beyond`). A read-only scan beside a live writer must not do this: it may see
/// a write in progress, torn in its view, that completes a moment later.
pub(crate) fn scan(log: &Log, start: u64, detect_rot: bool) -> Result<Scan> {
    let mut out = Scan { valid_end: start, ..Scan::default() };
    let chunks = log.chunks();
    let mut pos = start;
    for (i, chunk) in chunks.iter().enumerate() {
        let len = chunk.file.len().map_err(io_err("reading the length of", &chunk.path))?;
        let chunk_end = chunk.start + len;
        if chunk_end <= pos {
            continue;
        }
        if pos < chunk.start + CHUNK_HEADER_LEN {
            if i > 0 && pos != chunk.start {
                // The previous chunk ended in a torn tail: nothing later is valid.
                break;
            }
            pos = chunk.start + CHUNK_HEADER_LEN;
            if out.valid_end < pos && out.valid_end == chunk.start {
                out.valid_end = pos;
            }
        }
        let mut frames = ChunkFrames::new(chunk, pos, chunk_end);
        let failure = loop {
            let frame = match frames.next_frame()? {
                Next::Frame(frame) => frame,
                Next::End => break None,
                Next::Damaged(kind) => break Some(kind),
            };
            match frame.kind {
                kind::COMMIT => match CommitBody::decode(frame.body) {
                    Ok(c) => {
                        let parents: Vec<Hash> = c.parents.iter().map(|p| p.0).collect();
                        let h = commit_hash(&c.tree_hash, &parents, c.date, &c.author, &c.message);
                        out.commits.push((h, frame.offset));
                        out.valid_end = frame.next;
                    }
                    Err(e) => break Some(e.into()),
                },
                kind::HEAD => match HeadBody::decode(frame.body) {
                    Ok(h) => {
                        out.heads.push((frame.offset, h));
                        out.valid_end = frame.next;
                    }
                    Err(e) => break Some(e.into()),
                },
                kind::CONTENTS
                | kind::FLAT_DIR
                | kind::INODE_VALUES
                | kind::INODE_TREE
                | kind::FLAT_DIR_DELTA
                | kind::INODE_VALUES_DELTA
                | kind::INODE_TREE_DELTA => {}
                k => break Some(Corruption::UnknownRecordKind(k)),
            }
        };
        if let Some(kind) = failure {
            let pos = frames.pos();
            if i + 1 == chunks.len() && zeros_to_end(chunk, pos, chunk_end)? {
                out.zeros_from = Some(pos);
                break;
            }
            if detect_rot {
                // A later chunk with records proves this one was complete and synced when the
                // writer moved on (it syncs before rolling): the damage is not a torn tail.
                for later in &chunks[i + 1..] {
                    let later_len = later.file.len().map_err(io_err("reading the length of", &later.path))?;
                    if later_len > CHUNK_HEADER_LEN {
                        return Err(Error::Corrupt { file: chunk.path.clone(), offset: pos - chunk.start, kind });
                    }
                }
                if synced_commit_beyond(chunk, pos, chunk_end)? {
                    return Err(Error::Corrupt { file: chunk.path.clone(), offset: pos - chunk.start, kind });
                }
            }
            out.stopped = Some((pos, kind));
            break;
        }
        pos = chunk_end;
    }
    Ok(out)
}

/// Whether the chunk's file holds only zero bytes from global offset `pos` to `chunk_end`:
/// the zeros the writer prepares past its records (FORMAT.md 3.2). A record never starts
/// with a zero byte (no record kind is 0), so a torn or damaged record is never taken for
/// them; zeros with anything after them are damage as before.
///
/// The file may end before `chunk_end`: beside a read-only scan, a writer opening the store
/// cuts the prepared zeros after the scan took the chunk's length. The zeros then end where
/// the file ends now, and what was cut was zeros or nothing.
fn zeros_to_end(chunk: &crate::pack::log::Chunk, pos: u64, chunk_end: u64) -> Result<bool> {
    const PIECE: u64 = 64 << 10;
    let mut buf = vec![0u8; PIECE.min(chunk_end.saturating_sub(pos)) as usize];
    let mut at = pos;
    while at < chunk_end {
        let want = PIECE.min(chunk_end - at) as usize;
        let n = match chunk.file.read_at(&mut buf[..want], at - chunk.start) {
            Ok(0) => return Ok(true),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err("reading", &chunk.path)(e)),
        };
        if buf[..n].iter().any(|&b| b != 0) {
            return Ok(false);
        }
        at += n as u64;
    }
    Ok(true)
}

/// Largest stretch searched past a damaged record for evidence of bit rot.
const RESYNC_LIMIT: u64 = 1 << 30;

/// True if, somewhere after the damaged record at `pos`, a COMMIT written under
/// `EveryCommit` is followed by another record. Such a commit was synced before that record
/// was written, so everything before it, the damaged record included, had been durable: the
/// damage is bit rot, not a torn tail, and truncating would drop acknowledged commits.
/// Frames are found again by trying every offset (checksums make false matches negligible).
fn synced_commit_beyond(chunk: &crate::pack::log::Chunk, pos: u64, chunk_end: u64) -> Result<bool> {
    let from = pos + 1;
    let len = chunk_end.saturating_sub(from).min(RESYNC_LIMIT) as usize;
    let mut buf = vec![0u8; len];
    chunk.file.read_exact_at(&mut buf, from - chunk.start).map_err(io_err("reading", &chunk.path))?;
    let mut at = 0usize;
    let mut synced_commit_seen = false;
    while at < buf.len() {
        match parse_frame(&buf[at..]) {
            Ok(f) => {
                if synced_commit_seen {
                    return Ok(true);
                }
                if f.kind == kind::COMMIT {
                    let body = &buf[at + f.body_start..at + f.body_start + f.body_len];
                    if CommitBody::decode(body).is_ok_and(|c| c.flags & COMMIT_SYNCED_ALONE != 0) {
                        synced_commit_seen = true;
                    }
                }
                at += f.total;
            }
            Err(_) => {
                synced_commit_seen = false;
                at += 1;
            }
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::zeros_to_end;
    use crate::io::{FileSystem, MemFs, OpenOptions};
    use crate::pack::log::Chunk;

    #[test]
    fn zeros_cut_after_the_chunk_length_was_read_are_still_the_end_of_the_records() {
        let start = 4096;
        let fs = MemFs::new();
        let path = PathBuf::from("/z.chunk");
        let file = fs.open(&path, OpenOptions { create: true, write: true, truncate: false }).unwrap();
        let c = Chunk::new(start, Arc::clone(&file), path);
        let records = 1000u64;
        let mut bytes = vec![7u8; records as usize];
        bytes.resize(records as usize + 300_000, 0);
        file.write_all_at(&bytes, 0).unwrap();
        let stale_end = start + bytes.len() as u64;
        let pos = start + records;
        assert!(zeros_to_end(&c, pos, stale_end).unwrap());
        // Something past the zeros: damage, not the end.
        file.write_all_at(&[1], bytes.len() as u64 - 1).unwrap();
        assert!(!zeros_to_end(&c, pos, stale_end).unwrap());
        // A writer's open cut the zeros part-way (past a whole piece read) or all of them
        // after the scan took the length: still the end of the records, no error.
        for cut_at in [records + 100_000, records + 5, records, records - 10] {
            file.set_len(cut_at).unwrap();
            assert!(zeros_to_end(&c, pos.min(start + cut_at), stale_end).unwrap(), "cut at {cut_at}");
        }
    }
}
