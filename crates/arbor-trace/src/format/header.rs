//! The file header: magic, version, and the header body (source and initial
//! state), protected by a CRC-32C.

use std::io::{Read, Write};

use super::{read_full, MAGIC, MAX_HEADER_LEN};
use crate::error::{Result, TraceError};
use crate::format::DecodeResult;
use crate::types::{InitialState, Source, TraceHeader};
use crate::FORMAT_VERSION;
use arbor_core::leb128;
use arbor_core::toolbox::Cursor;

const SOURCE_RECORDED: u8 = 0;
const SOURCE_GENERATED: u8 = 1;
const INITIAL_NONE: u8 = 0;
const INITIAL_GENERATED: u8 = 1;

fn encode_body(h: &TraceHeader) -> Vec<u8> {
    let mut b = Vec::new();
    match &h.source {
        Source::Recorded { description } => {
            b.push(SOURCE_RECORDED);
            leb128::write_bytes(&mut b, description.as_bytes());
        }
        Source::Generated { profile, seed, params } => {
            b.push(SOURCE_GENERATED);
            leb128::write_bytes(&mut b, profile.as_bytes());
            leb128::write_u64(&mut b, *seed);
            leb128::write_u64(&mut b, params.len() as u64);
            for (k, v) in params {
                leb128::write_bytes(&mut b, k.as_bytes());
                leb128::write_bytes(&mut b, v.as_bytes());
            }
        }
    }
    match &h.initial_state {
        InitialState::None => b.push(INITIAL_NONE),
        InitialState::Generated { profile, seed, values } => {
            b.push(INITIAL_GENERATED);
            leb128::write_bytes(&mut b, profile.as_bytes());
            leb128::write_u64(&mut b, *seed);
            leb128::write_u64(&mut b, *values);
        }
    }
    b
}

fn decode_body(version: u16, body: &[u8]) -> DecodeResult<TraceHeader> {
    let mut c = Cursor::new(body);
    let source = match c.u8()? {
        SOURCE_RECORDED => Source::Recorded { description: c.string()? },
        SOURCE_GENERATED => {
            let profile = c.string()?;
            let seed = c.leb128()?;
            let n = c.count()?;
            let mut params = Vec::with_capacity(n);
            for _ in 0..n {
                let k = c.string()?;
                let v = c.string()?;
                params.push((k, v));
            }
            Source::Generated { profile, seed, params }
        }
        _ => return Err("unknown source tag"),
    };
    let initial_state = match c.u8()? {
        INITIAL_NONE => InitialState::None,
        INITIAL_GENERATED => InitialState::Generated { profile: c.string()?, seed: c.leb128()?, values: c.leb128()? },
        _ => return Err("unknown initial-state tag"),
    };
    if !c.is_empty() {
        return Err("trailing bytes in header");
    }
    Ok(TraceHeader { version, source, initial_state })
}

/// Writes the header; returns the number of bytes written.
pub(crate) fn write_header<W: Write>(w: &mut W, h: &TraceHeader) -> Result<u64> {
    if h.version != FORMAT_VERSION {
        return Err(TraceError::InvalidInput(format!(
            "this crate writes format version {FORMAT_VERSION}, header says {}",
            h.version
        )));
    }
    let body = encode_body(h);
    let mut out = Vec::with_capacity(body.len() + 18);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32c::crc32c(&body).to_le_bytes());
    w.write_all(&out)?;
    Ok(out.len() as u64)
}

fn truncated(detail: &str) -> TraceError {
    TraceError::Truncated { blocks_read: 0, detail: detail.to_string() }
}

/// Reads and checks the header.
pub(crate) fn read_header<R: Read>(r: &mut R) -> Result<TraceHeader> {
    let mut fixed = [0u8; 14];
    let n = read_full(r, &mut fixed)?;
    if n < MAGIC.len() {
        if fixed[..n] != MAGIC[..n] {
            return Err(TraceError::BadMagic);
        }
        return Err(truncated("inside the magic bytes"));
    }
    if &fixed[..8] != MAGIC {
        return Err(TraceError::BadMagic);
    }
    if n < fixed.len() {
        return Err(truncated("inside the header"));
    }
    let version = u16::from_le_bytes([fixed[8], fixed[9]]);
    if version != FORMAT_VERSION {
        return Err(TraceError::UnsupportedVersion(version));
    }
    let len = u32::from_le_bytes([fixed[10], fixed[11], fixed[12], fixed[13]]) as usize;
    if len > MAX_HEADER_LEN {
        return Err(TraceError::CorruptHeader(format!("header length {len} exceeds the limit of {MAX_HEADER_LEN}")));
    }
    let mut body = vec![0u8; len + 4];
    if read_full(r, &mut body)? < body.len() {
        return Err(truncated("inside the header"));
    }
    let (body, crc) = body.split_at(len);
    let crc = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
    if crc32c::crc32c(body) != crc {
        return Err(TraceError::CorruptHeader("checksum mismatch".to_string()));
    }
    decode_body(version, body).map_err(|e| TraceError::CorruptHeader(e.to_string()))
}
