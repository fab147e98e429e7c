//! Log records: framing, checksums, and the body encodings of each object kind.
//!
//! ```text
//! record := kind:u8 | body_len:leb128 | body | crc32c(kind | body_len | body):u32 LE
//! ```
//! Children are always written before their parents, so a parent refers to a child by the
//! distance back from its own offset (`back`, a LEB128 varint), which is small and never
//! changes. See docs/FORMAT.md for every body.

use std::cmp::Ordering;

use arbor_core::leb128;
use arbor_core::toolbox::{hex, Cursor, CursorError};

use crate::error::Corruption;
use crate::path::Step;
use arbor_core::{ChildKind, Hash};

/// Record kind bytes.
pub(crate) mod kind {
    /// A value too large to be inlined.
    pub const CONTENTS: u8 = 0x01;
    /// A directory of at most `stable_hash` entries.
    pub const FLAT_DIR: u8 = 0x02;
    /// An inode holding bindings.
    pub const INODE_VALUES: u8 = 0x03;
    /// An inode holding child inodes by slot (the root of a large directory is one, at depth 0).
    pub const INODE_TREE: u8 = 0x04;
    /// A commit.
    pub const COMMIT: u8 = 0x05;
    /// A named head set or removed.
    pub const HEAD: u8 = 0x06;
    /// A FLAT_DIR given as the bindings that differ from its base: a FLAT_DIR record, or a
    /// FLAT_DIR_DELTA whose own base is one.
    pub const FLAT_DIR_DELTA: u8 = 0x07;
    /// An INODE_VALUES given as the bindings that differ from its base (as for FLAT_DIR_DELTA).
    pub const INODE_VALUES_DELTA: u8 = 0x08;
    /// An INODE_TREE given as the slots that differ from its base (as for FLAT_DIR_DELTA).
    pub const INODE_TREE_DELTA: u8 = 0x09;

    /// The delta kind of a full kind (FLAT_DIR, INODE_VALUES, INODE_TREE); 0 for others.
    pub const fn delta_of(full: u8) -> u8 {
        match full {
            FLAT_DIR => FLAT_DIR_DELTA,
            INODE_VALUES => INODE_VALUES_DELTA,
            INODE_TREE => INODE_TREE_DELTA,
            _ => 0,
        }
    }
}

/// Entry tags inside FLAT_DIR and INODE_VALUES bodies.
pub(crate) mod tag {
    /// Value bytes follow inline.
    pub const INLINE: u8 = 0x00;
    /// A CONTENTS record: back distance and hash follow.
    pub const CONTENTS: u8 = 0x01;
    /// A directory record (FLAT_DIR or INODE_TREE, or a delta of one): back distance and
    /// hash follow.
    pub const DIR: u8 = 0x02;
    /// In a delta only: the binding of the base is removed; nothing follows.
    pub const REMOVED: u8 = 0x03;
}

/// Appends a framed record to `out`.
pub(crate) fn frame(out: &mut Vec<u8>, kind: u8, body: &[u8]) {
    let start = out.len();
    out.push(kind);
    leb128::write_u64(out, body.len() as u64);
    out.extend_from_slice(body);
    let crc = crc32c::crc32c(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// Why a frame could not be read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FrameError {
    /// More bytes are needed: at least this many in total from the record start.
    NeedMore(usize),
    /// The length prefix is malformed.
    BadLength,
    /// The checksum does not match.
    Checksum { stored: u32, computed: u32 },
}

/// A decoded frame: kind, body range within the buffer, total length.
#[derive(Debug)]
pub(crate) struct Frame {
    pub kind: u8,
    pub body_start: usize,
    pub body_len: usize,
    pub total: usize,
}

/// Parses the frame at the start of `buf`, checking its checksum.
pub(crate) fn parse_frame(buf: &[u8]) -> Result<Frame, FrameError> {
    if buf.is_empty() {
        return Err(FrameError::NeedMore(1 + 1 + 4));
    }
    let kind = buf[0];
    let (len, n) = match leb128::read_u64(&buf[1..]) {
        Some(x) => x,
        None if buf.len() > leb128::MAX_LEN => return Err(FrameError::BadLength),
        None => return Err(FrameError::NeedMore(1 + leb128::MAX_LEN)),
    };
    let body_len = usize::try_from(len).map_err(|_| FrameError::BadLength)?;
    let body_start = 1 + n;
    let total = body_start.checked_add(body_len).and_then(|x| x.checked_add(4)).ok_or(FrameError::BadLength)?;
    if buf.len() < total {
        return Err(FrameError::NeedMore(total));
    }
    let stored = u32::from_le_bytes(buf[total - 4..total].try_into().expect("4 bytes"));
    let computed = crc32c::crc32c(&buf[..total - 4]);
    if stored != computed {
        return Err(FrameError::Checksum { stored, computed });
    }
    Ok(Frame { kind, body_start, body_len, total })
}

/// A child reference inside a body, before it becomes a tree pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChildRef<'a> {
    Inline(&'a [u8]),
    Ref { back: u64, hash: Hash, kind: ChildKind },
}

/// Encodes a step: `leb128(n << 1) | n raw bytes`, or for a packed hex step of `2n`
/// characters `leb128(n << 1 | 1) | n bytes`.
///
/// A step of an even number (at least two) of lower-case hex digits is packed (the shape of
/// the hashes and ids that dominate Tezos paths, which packing halves): the header is written
/// for the packed form, the digits are checked and packed in one pass ([`hex::pack_lower`]),
/// and a step that turns out not to be hex is written raw over them.
pub(crate) fn put_step(out: &mut Vec<u8>, step: &[u8]) {
    let mark = out.len();
    if step.len() >= 2 && step.len().is_multiple_of(2) {
        let half = step.len() / 2;
        leb128::write_u64(out, ((half as u64) << 1) | 1);
        let start = out.len();
        out.resize(start + half, 0);
        if hex::pack_lower(step, &mut out[start..]) {
            return;
        }
        out.truncate(mark);
    }
    leb128::write_u64(out, (step.len() as u64) << 1);
    out.extend_from_slice(step);
}

/// How a change of a delta names the binding it changes (FORMAT.md 5.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Name<S> {
    /// By its step: a binding its base may lack.
    Step(S),
    /// As the binding at this position (from 0) of the node the delta applies to: a step
    /// the base holds is not written again.
    Base(usize),
}

/// The step head that says a change names its base's binding by position (a step is never
/// empty, so no step's head is 0).
const BASE_NAMED: u64 = 0;

/// Encodes one change of a FLAT_DIR_DELTA or INODE_VALUES_DELTA body: the binding's new
/// child, or its removal.
pub(crate) fn put_change(out: &mut Vec<u8>, name: Name<&[u8]>, child: Option<&ChildRef<'_>>) {
    match name {
        Name::Step(step) => put_step(out, step),
        Name::Base(index) => {
            leb128::write_u64(out, BASE_NAMED);
            leb128::write_u64(out, index as u64);
        }
    }
    match child {
        Some(c) => put_child(out, c),
        None => out.push(tag::REMOVED),
    }
}

/// Encodes one binding of a FLAT_DIR or INODE_VALUES body.
pub(crate) fn put_entry(out: &mut Vec<u8>, step: &[u8], child: &ChildRef<'_>) {
    put_step(out, step);
    put_child(out, child);
}

/// Encodes a binding's tag and child.
fn put_child(out: &mut Vec<u8>, child: &ChildRef<'_>) {
    match child {
        ChildRef::Inline(v) => {
            out.push(tag::INLINE);
            leb128::write_u64(out, v.len() as u64);
            out.extend_from_slice(v);
        }
        ChildRef::Ref { back, hash, kind } => {
            out.push(match kind {
                ChildKind::Contents => tag::CONTENTS,
                ChildKind::Node => tag::DIR,
            });
            leb128::write_u64(out, *back);
            out.extend_from_slice(hash.as_bytes());
        }
    }
}

/// A record body being read, through the workspace's byte cursor; every read fails cleanly
/// on truncated input.
pub(crate) struct Reader<'a> {
    cur: Cursor<'a>,
}

/// Why a body failed to decode: the decoder's own error, small so that each field read
/// returns a small `Result`; it becomes a [`Corruption`] through `From` where the file and
/// offset are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// A field runs past the end of the body, or a varint is malformed.
    Short,
    /// This many bytes follow the last field.
    Trailing(usize),
    /// A field holds a value the format does not allow.
    Invalid { field: &'static str, value: u64 },
    /// A back distance points outside the log: at this (wrapped) global offset.
    Dangling(u64),
    /// A record kind the reader of pointers does not know.
    UnknownKind(u8),
}

/// The corruption a frame error means once no more bytes can come.
impl From<FrameError> for Corruption {
    fn from(e: FrameError) -> Corruption {
        match e {
            FrameError::NeedMore(_) => Corruption::Truncated,
            FrameError::BadLength => Corruption::RecordLength,
            FrameError::Checksum { stored, computed } => Corruption::Checksum { stored, computed },
        }
    }
}

impl From<DecodeError> for Corruption {
    fn from(e: DecodeError) -> Corruption {
        match e {
            DecodeError::Short => Corruption::ShortBody,
            DecodeError::Trailing(extra) => Corruption::TrailingBytes { extra },
            DecodeError::Invalid { field, value } => Corruption::InvalidField { field, value },
            DecodeError::Dangling(o) => Corruption::DanglingOffset(o),
            DecodeError::UnknownKind(k) => Corruption::UnknownRecordKind(k),
        }
    }
}

/// The error for a field holding `value`, which the format does not allow there.
pub(crate) fn invalid(field: &'static str, value: impl Into<u64>) -> DecodeError {
    DecodeError::Invalid { field, value: value.into() }
}

/// The cursor's reasons (cut short, a varint too long) are all a body too short for its fields.
impl From<CursorError> for DecodeError {
    fn from(_: CursorError) -> DecodeError {
        DecodeError::Short
    }
}

/// A step as a record holds it: its bytes, or the bytes that its lower-case hex digits spell
/// (`put_step` packs a step of hex digits). Decoding spells a packed step out straight into
/// the binding list it builds, rather than into a step of its own first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StepRef<'a> {
    /// The step's bytes.
    Plain(&'a [u8]),
    /// Half as many bytes as the step's digits: the step is their hex spelling.
    Packed(&'a [u8]),
}

impl StepRef<'_> {
    /// The step's length in bytes (digits, for a packed step).
    pub fn len(self) -> usize {
        match self {
            StepRef::Plain(b) => b.len(),
            StepRef::Packed(b) => 2 * b.len(),
        }
    }

    /// Writes the step to the first [`StepRef::len`] bytes of `out`.
    ///
    /// # Panics
    ///
    /// If `out` is shorter than the step.
    pub fn write_to(self, out: &mut [u8]) {
        match self {
            StepRef::Plain(b) => out[..b.len()].copy_from_slice(b),
            StepRef::Packed(b) => hex::encode_to_slice(b, out),
        }
    }

    /// How the step compares with `other`, both spelled out, without spelling either: two
    /// packed steps compare as their packed bytes (each byte spells two digits, in the same
    /// order), a packed one with a plain one digit by digit.
    pub fn cmp_spelled(self, other: StepRef<'_>) -> Ordering {
        match (self, other) {
            (StepRef::Plain(a), StepRef::Plain(b)) | (StepRef::Packed(a), StepRef::Packed(b)) => a.cmp(b),
            (StepRef::Plain(a), StepRef::Packed(b)) => plain_with_packed(a, b),
            (StepRef::Packed(a), StepRef::Plain(b)) => plain_with_packed(b, a).reverse(),
        }
    }

    /// The step, spelled out.
    pub fn to_step(self) -> Step {
        let mut step = Step::from_elem(0, self.len());
        self.write_to(&mut step);
        step
    }
}

/// How the plain step `plain` compares with the step the packed bytes `packed` spell.
fn plain_with_packed(plain: &[u8], packed: &[u8]) -> Ordering {
    plain.iter().copied().cmp(packed.iter().flat_map(|&b| hex::byte_digits(b)))
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { cur: Cursor::new(buf) }
    }

    pub fn is_done(&self) -> bool {
        self.cur.is_empty()
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.cur.remaining()
    }

    /// Ok if every byte was read, else how many were left.
    pub fn finish(&self) -> Result<(), DecodeError> {
        match self.cur.remaining() {
            0 => Ok(()),
            extra => Err(DecodeError::Trailing(extra)),
        }
    }

    pub fn leb(&mut self) -> Result<u64, DecodeError> {
        Ok(self.cur.leb128()?)
    }

    /// A length that the rest of the body can hold.
    pub fn len(&mut self) -> Result<usize, DecodeError> {
        let v = self.leb()?;
        match usize::try_from(v) {
            Ok(v) if v <= self.cur.remaining() => Ok(v),
            _ => Err(DecodeError::Short),
        }
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        Ok(self.cur.take(n)?)
    }

    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.cur.u8()?)
    }

    pub fn hash(&mut self) -> Result<Hash, DecodeError> {
        Ok(Hash(self.cur.array::<32>()?))
    }

    pub fn u64_le(&mut self) -> Result<u64, DecodeError> {
        Ok(self.cur.u64_le()?)
    }

    /// A step written by [`put_step`], as the record holds it (not spelled out yet).
    pub fn step_ref(&mut self) -> Result<StepRef<'a>, DecodeError> {
        let head = self.leb()?;
        self.step_after(head)
    }

    /// The step whose head (its length and form) was `head`.
    fn step_after(&mut self, head: u64) -> Result<StepRef<'a>, DecodeError> {
        let n = usize::try_from(head >> 1).map_err(|_| DecodeError::Short)?;
        if n == 0 {
            return Err(invalid("step length", 0u64));
        }
        let bytes = self.bytes(n)?;
        Ok(if head & 1 == 0 { StepRef::Plain(bytes) } else { StepRef::Packed(bytes) })
    }

    /// One binding: step and child reference.
    pub fn entry(&mut self) -> Result<(Step, ChildRef<'a>), DecodeError> {
        let (step, child) = self.entry_ref()?;
        Ok((step.to_step(), child))
    }

    /// One binding, its step as the record holds it ([`Reader::step_ref`]).
    pub fn entry_ref(&mut self) -> Result<(StepRef<'a>, ChildRef<'a>), DecodeError> {
        let step = self.step_ref()?;
        match self.child()? {
            Some(child) => Ok((step, child)),
            None => Err(invalid("entry tag (a removal outside a delta)", tag::REMOVED)),
        }
    }

    /// One change of a delta: how it names its binding (the step as the record holds it,
    /// [`Reader::step_ref`], or a position in the base) and the new child reference, None
    /// if the binding is removed.
    pub fn change_ref(&mut self) -> Result<(Name<StepRef<'a>>, Option<ChildRef<'a>>), DecodeError> {
        let head = self.leb()?;
        let name = if head == BASE_NAMED {
            let index = self.leb()?;
            Name::Base(usize::try_from(index).map_err(|_| invalid("position of a base binding", index))?)
        } else {
            Name::Step(self.step_after(head)?)
        };
        Ok((name, self.child()?))
    }

    /// A binding's tag and child reference, None for a removal.
    fn child(&mut self) -> Result<Option<ChildRef<'a>>, DecodeError> {
        let child = match self.u8()? {
            tag::REMOVED => return Ok(None),
            tag::INLINE => {
                let n = self.len()?;
                ChildRef::Inline(self.bytes(n)?)
            }
            t @ (tag::CONTENTS | tag::DIR) => {
                let back = self.leb()?;
                let hash = self.hash()?;
                let kind = if t == tag::CONTENTS { ChildKind::Contents } else { ChildKind::Node };
                ChildRef::Ref { back, hash, kind }
            }
            t => return Err(invalid("entry tag", t)),
        };
        Ok(Some(child))
    }
}

/// `bytes` as UTF-8; otherwise the `field` is invalid, reported with its first bad byte.
pub(crate) fn utf8<'a>(field: &'static str, bytes: &'a [u8]) -> Result<&'a str, DecodeError> {
    std::str::from_utf8(bytes).map_err(|e| invalid(field, bytes[e.valid_up_to()]))
}

/// A decoded COMMIT body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommitBody {
    pub tree_hash: Hash,
    pub tree_back: u64,
    /// Parent hashes with their log offsets when known to this store.
    pub parents: Vec<(Hash, Option<u64>)>,
    pub date: i64,
    pub author: Vec<u8>,
    pub message: Vec<u8>,
    /// `COMMIT_SYNCED_ALONE` when the writer synced this commit before writing anything after
    /// it (`Durability::EveryCommit`): recovery uses it to tell bit rot from a torn tail.
    pub flags: u8,
}

/// Flag of a COMMIT record: nothing was written after it before it was synced.
pub(crate) const COMMIT_SYNCED_ALONE: u8 = 0x01;

impl CommitBody {
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.tree_hash.as_bytes());
        leb128::write_u64(out, self.tree_back);
        leb128::write_u64(out, self.parents.len() as u64);
        for (h, off) in &self.parents {
            out.extend_from_slice(h.as_bytes());
            leb128::write_u64(out, off.map_or(0, |o| o + 1));
        }
        out.extend_from_slice(&self.date.to_le_bytes());
        leb128::write_u64(out, self.author.len() as u64);
        out.extend_from_slice(&self.author);
        leb128::write_u64(out, self.message.len() as u64);
        out.extend_from_slice(&self.message);
        out.push(self.flags);
    }

    pub fn decode(body: &[u8]) -> Result<CommitBody, DecodeError> {
        let mut r = Reader::new(body);
        let tree_hash = r.hash()?;
        let tree_back = r.leb()?;
        let np = r.len()?;
        let mut parents = Vec::with_capacity(np);
        for _ in 0..np {
            let h = r.hash()?;
            let off = r.leb()?;
            parents.push((h, off.checked_sub(1)));
        }
        let date = r.u64_le()? as i64;
        let n = r.len()?;
        let author = r.bytes(n)?.to_vec();
        let n = r.len()?;
        let message = r.bytes(n)?.to_vec();
        let flags = r.u8()?;
        if flags & !COMMIT_SYNCED_ALONE != 0 {
            return Err(invalid("commit flags", flags));
        }
        r.finish()?;
        Ok(CommitBody { tree_hash, tree_back, parents, date, author, message, flags })
    }
}

/// A decoded HEAD body: a named head set to a commit, or removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeadBody {
    pub name: String,
    pub target: Option<(Hash, u64)>,
}

impl HeadBody {
    pub fn encode(&self, out: &mut Vec<u8>) {
        leb128::write_u64(out, self.name.len() as u64);
        out.extend_from_slice(self.name.as_bytes());
        match &self.target {
            None => out.push(0),
            Some((h, off)) => {
                out.push(1);
                out.extend_from_slice(h.as_bytes());
                leb128::write_u64(out, *off);
            }
        }
    }

    pub fn decode(body: &[u8]) -> Result<HeadBody, DecodeError> {
        let mut r = Reader::new(body);
        let n = r.len()?;
        let name = utf8("head name", r.bytes(n)?)?.to_string();
        let target = match r.u8()? {
            0 => None,
            1 => Some((r.hash()?, r.leb()?)),
            f => return Err(invalid("head flag", f)),
        };
        r.finish()?;
        Ok(HeadBody { name, target })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_round_trip_and_checksum() {
        let mut out = Vec::new();
        frame(&mut out, kind::CONTENTS, b"hello");
        let f = parse_frame(&out).unwrap();
        assert_eq!((f.kind, &out[f.body_start..f.body_start + f.body_len]), (kind::CONTENTS, &b"hello"[..]));
        assert_eq!(f.total, out.len());
        assert!(matches!(parse_frame(&out[..out.len() - 1]), Err(FrameError::NeedMore(_))));
        out[3] ^= 1;
        assert!(matches!(parse_frame(&out), Err(FrameError::Checksum { .. })));
    }

    #[test]
    fn steps_round_trip_packed_or_raw() {
        // (step, packed): even-length lower-case hex is packed; anything else is raw,
        // including even-length steps that fail part-way and upper-case hex.
        let steps: [(&[u8], bool); 12] = [
            (b"0001f46d63a0", true),
            (b"ab", true),
            (b"abc", false),
            (b"0A", false),
            (b"x", false),
            (b"balance", false),
            (b"data", false),
            (b"00ff00g0", false),
            (b"0000000000000000000000000000000000000000000f", true),
            (b"000000000000000000000000000000000000000000F0", false),
            (b"ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00", true),
            (b"\xff\xfe", false),
        ];
        for (step, packed) in steps {
            // After bytes already in the buffer, which a step written raw keeps.
            let mut b = b"head".to_vec();
            put_step(&mut b, step);
            assert_eq!(&b[..4], b"head");
            let body = &b[4..];
            assert_eq!(body[0] & 1 == 1, packed, "{step:?}");
            let header = 1 + usize::from(step.len() >= 64);
            let stored = if packed { step.len() / 2 } else { step.len() };
            assert_eq!(body.len(), header + stored, "{step:?}");
            let mut r = Reader::new(body);
            assert_eq!(&r.step_ref().unwrap().to_step()[..], step);
            assert!(r.is_done());
        }
    }

    /// Steps compared as a record holds them (packed or not) order as their spellings do:
    /// delta chains are merged in that order.
    #[test]
    fn steps_compare_as_they_are_spelled_packed_or_not() {
        let steps: [&[u8]; 13] =
            [b"0", b"00", b"0000", b"000a", b"00a", b"09", b"0a", b"9", b"a0", b"ab", b"abcd", b"b", b"balance"];
        let stored = |step: &[u8]| {
            let mut b = Vec::new();
            put_step(&mut b, step);
            b
        };
        let spellings: Vec<(Vec<u8>, Vec<u8>)> = steps.iter().map(|s| (s.to_vec(), stored(s))).collect();
        for (a, a_bytes) in &spellings {
            let a_ref = Reader::new(a_bytes).step_ref().unwrap();
            // Each step against every other, packed or plain, and against its plain self.
            for (b, b_bytes) in &spellings {
                let b_ref = Reader::new(b_bytes).step_ref().unwrap();
                assert_eq!(a_ref.cmp_spelled(b_ref), a.cmp(b), "{a:?} against {b:?}");
                assert_eq!(a_ref.cmp_spelled(StepRef::Plain(b)), a.cmp(b), "{a:?} against plain {b:?}");
                assert_eq!(StepRef::Plain(a).cmp_spelled(b_ref), a.cmp(b), "plain {a:?} against {b:?}");
            }
        }
        assert!(
            matches!(Reader::new(&stored(b"00a0")).step_ref().unwrap(), StepRef::Packed(_)),
            "packed ones compared"
        );
    }

    #[test]
    fn commit_round_trip() {
        let c = CommitBody {
            tree_hash: Hash([7; 32]),
            tree_back: 99,
            parents: vec![(Hash([1; 32]), Some(0)), (Hash([2; 32]), None)],
            date: -5,
            author: b"Tezos".to_vec(),
            message: b"m".to_vec(),
            flags: COMMIT_SYNCED_ALONE,
        };
        let mut b = Vec::new();
        c.encode(&mut b);
        assert_eq!(CommitBody::decode(&b).unwrap(), c);
        assert!(CommitBody::decode(&b[..b.len() - 1]).is_err());
    }

    #[test]
    fn entries_reject_truncation() {
        let mut b = Vec::new();
        put_entry(&mut b, b"step", &ChildRef::Ref { back: 5, hash: Hash([3; 32]), kind: ChildKind::Node });
        put_entry(&mut b, b"v", &ChildRef::Inline(b"xyz"));
        let mut r = Reader::new(&b);
        assert_eq!(&r.entry().unwrap().0[..], b"step");
        assert_eq!(r.entry().unwrap().1, ChildRef::Inline(b"xyz"));
        assert!(r.is_done());
        for cut in 0..b.len() {
            let mut r = Reader::new(&b[..cut]);
            let ok = r.entry().is_ok() && r.entry().is_ok();
            assert!(!ok, "truncated at {cut} decoded");
        }
    }

    #[test]
    fn decode_errors_name_what_is_wrong() {
        let c = CommitBody {
            tree_hash: Hash([7; 32]),
            tree_back: 1,
            parents: Vec::new(),
            date: 0,
            author: Vec::new(),
            message: Vec::new(),
            flags: 0,
        };
        let mut b = Vec::new();
        c.encode(&mut b);
        assert_eq!(CommitBody::decode(&b[..b.len() - 1]), Err(DecodeError::Short));
        b.extend_from_slice(&[0, 0]);
        assert_eq!(CommitBody::decode(&b), Err(DecodeError::Trailing(2)));
        b.truncate(b.len() - 2);
        *b.last_mut().unwrap() = 0x80;
        assert_eq!(CommitBody::decode(&b), Err(invalid("commit flags", 0x80u8)));
        let head = [2u8, b'a', 0xff, 0];
        assert_eq!(HeadBody::decode(&head), Err(invalid("head name", 0xffu8)));
        assert_eq!(HeadBody::decode(&[1, b'a', 2]), Err(invalid("head flag", 2u8)));
        // An entry: empty step, unknown tag, a removal where only bindings may be.
        assert_eq!(Reader::new(&[0, 0]).entry(), Err(invalid("step length", 0u64)));
        assert_eq!(Reader::new(&[2, b'a', 9]).entry(), Err(invalid("entry tag", 9u8)));
        let removal = Err(invalid("entry tag (a removal outside a delta)", tag::REMOVED));
        assert_eq!(Reader::new(&[2, b'a', tag::REMOVED]).entry(), removal);
        // A change named by its base's position is a delta's only: a full record's entry
        // with that head is an empty step.
        let mut named = Vec::new();
        put_change(&mut named, Name::Base(300), None);
        assert_eq!(Reader::new(&named).entry(), Err(invalid("step length", 0u64)));
        // Each maps to the corruption of the same name.
        assert_eq!(Corruption::from(DecodeError::Trailing(2)), Corruption::TrailingBytes { extra: 2 });
        assert_eq!(
            Corruption::from(invalid("entry tag", 9u8)),
            Corruption::InvalidField { field: "entry tag", value: 9 }
        );
    }

    /// A delta's changes round-trip in both forms, each with each kind of child: by step,
    /// and by the position of the base's binding (a head of 0, then the position).
    #[test]
    fn changes_round_trip_named_by_step_or_position() {
        let hash = Hash([7; 32]);
        let children = [
            None,
            Some(ChildRef::Inline(&b"12"[..])),
            Some(ChildRef::Ref { back: 300, hash, kind: ChildKind::Contents }),
            Some(ChildRef::Ref { back: 1, hash, kind: ChildKind::Node }),
        ];
        for child in &children {
            for name in [Name::Step(&b"balance"[..]), Name::Step(&b"00a1"[..]), Name::Base(0), Name::Base(255)] {
                let mut body = Vec::new();
                put_change(&mut body, name, child.as_ref());
                let mut r = Reader::new(&body);
                let (read, read_child) = r.change_ref().unwrap();
                let read = match read {
                    Name::Step(s) => Name::Step(s.to_step().to_vec()),
                    Name::Base(i) => Name::Base(i),
                };
                let name = match name {
                    Name::Step(s) => Name::Step(s.to_vec()),
                    Name::Base(i) => Name::Base(i),
                };
                assert_eq!((read, read_child.as_ref()), (name, child.as_ref()));
                assert_eq!(r.finish(), Ok(()));
            }
        }
        // A position of two bytes costs three with its head, whatever the step it stands for.
        let mut body = Vec::new();
        put_change(&mut body, Name::Base(200), None);
        assert_eq!(body, [0, 0xc8, 0x01, tag::REMOVED]);
    }
}
