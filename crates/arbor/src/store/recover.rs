//! Recovery: scanning the log past the control file's `durable_end` for complete commits.

use arbor_core::{commit_hash, Hash};

use crate::error::{io_err, Result};
use crate::pack::log::{Log, CHUNK_HEADER_LEN};
use crate::pack::record::{kind, parse_frame, CommitBody, FrameError, HeadBody};

/// What the scan found after the starting offset, in log order.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub commits: Vec<(Hash, u64)>,
    pub heads: Vec<(u64, HeadBody)>,
    /// End of the last complete commit or head record: the new valid end of the log.
    pub valid_end: u64,
}

/// Bytes read at a time while scanning.
const BLOCK: usize = 1 << 20;

/// Scans every record from `start` to the end of the chunk files, stopping at the first
/// record that is torn, fails its checksum or does not decode. Objects after the last commit
/// or head record belong to a commit that never completed and are not part of `valid_end`.
pub(crate) fn scan(log: &Log, start: u64) -> Result<Scan> {
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
        let mut buf: Vec<u8> = Vec::new();
        let mut buf_at = pos;
        let mut complete = true;
        loop {
            let rel = (pos - buf_at) as usize;
            if pos >= chunk_end {
                break;
            }
            let frame = match parse_frame(&buf[rel..]) {
                Ok(f) => f,
                Err(FrameError::NeedMore(n)) => {
                    let have = buf.len() - rel;
                    let avail = (chunk_end - pos) as usize;
                    if have >= avail || n > avail {
                        complete = false;
                        break;
                    }
                    let want = n.max(BLOCK).min(avail) - have;
                    buf.drain(..rel);
                    buf_at = pos;
                    let old = buf.len();
                    buf.resize(old + want, 0);
                    let at = pos - chunk.start + old as u64;
                    chunk.file.read_exact_at(&mut buf[old..], at).map_err(io_err("reading", &chunk.path))?;
                    continue;
                }
                Err(_) => {
                    complete = false;
                    break;
                }
            };
            let body = &buf[rel + frame.body_start..rel + frame.body_start + frame.body_len];
            let next = pos + frame.total as u64;
            match frame.kind {
                kind::COMMIT => match CommitBody::decode(body) {
                    Ok(c) => {
                        let parents: Vec<Hash> = c.parents.iter().map(|p| p.0).collect();
                        let h = commit_hash(&c.tree_hash, &parents, c.date, &c.author, &c.message);
                        out.commits.push((h, pos));
                        out.valid_end = next;
                    }
                    Err(_) => {
                        complete = false;
                        break;
                    }
                },
                kind::HEAD => match HeadBody::decode(body) {
                    Ok(h) => {
                        out.heads.push((pos, h));
                        out.valid_end = next;
                    }
                    Err(_) => {
                        complete = false;
                        break;
                    }
                },
                kind::CONTENTS | kind::FLAT_DIR | kind::INODE_VALUES | kind::INODE_TREE => {}
                _ => {
                    complete = false;
                    break;
                }
            }
            pos = next;
        }
        if !complete {
            break;
        }
        pos = chunk_end;
    }
    Ok(out)
}
