//! What the bytes of records are, field by field (FORMAT.md 4-5): how many of the bytes a
//! stretch of the log holds are child hashes, steps, values, pointers or framing. The format's
//! next changes are judged by it (which field to stop repeating, which to make shorter).

use arbor_core::toolbox::leb128;

use super::record::{kind, ChildRef, DecodeError, Name, Reader, StepRef};

/// Bytes of records, by the field of the format they belong to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FieldBytes {
    /// Each frame's kind byte, body length and checksum (FORMAT.md 4).
    pub framing: u64,
    /// Depths, binding and changed-binding counts, a tree inode's subtree count and bitmaps.
    pub counts: u64,
    /// The length-and-form number before each step.
    pub step_heads: u64,
    /// Steps stored as their bytes.
    pub plain_steps: u64,
    /// Steps stored as the bytes their hex digits spell (half their length).
    pub packed_steps: u64,
    /// A delta's changes named by the position of their base's binding instead of a step:
    /// the head that says so, and the position.
    pub base_positions: u64,
    /// The tag of each binding (inline, contents, directory, removed).
    pub tags: u64,
    /// The length before each inline value.
    pub inline_lengths: u64,
    /// Values inside their parent's record.
    pub inline_values: u64,
    /// Values in records of their own (CONTENTS bodies).
    pub value_records: u64,
    /// Back distances to children: a binding's record, a tree inode's slot.
    pub child_pointers: u64,
    /// Back distances from a delta to its base.
    pub base_pointers: u64,
    /// Hashes of a binding's child (a directory or a value in a record of its own).
    pub binding_hashes: u64,
    /// Hashes of a tree inode's child inodes.
    pub slot_hashes: u64,
    /// Commit and head bodies.
    pub commits_and_heads: u64,
}

impl FieldBytes {
    /// All the bytes counted.
    pub fn total(&self) -> u64 {
        self.named().iter().map(|(_, n)| n).sum()
    }

    /// Each field with a name for reports, in the order of the struct.
    pub fn named(&self) -> [(&'static str, u64); 15] {
        [
            ("framing", self.framing),
            ("counts", self.counts),
            ("step heads", self.step_heads),
            ("plain steps", self.plain_steps),
            ("packed steps", self.packed_steps),
            ("base positions", self.base_positions),
            ("tags", self.tags),
            ("inline lengths", self.inline_lengths),
            ("inline values", self.inline_values),
            ("value records", self.value_records),
            ("child pointers", self.child_pointers),
            ("base pointers", self.base_pointers),
            ("binding hashes", self.binding_hashes),
            ("slot hashes", self.slot_hashes),
            ("commits and heads", self.commits_and_heads),
        ]
    }

    /// Counts the bytes of the framed record of `kind` with `body` (FORMAT.md 4: a kind
    /// byte, the body's length, the body and a 4-byte checksum). Fails, having counted part
    /// of it, on a body that does not decode; a kind this build does not know counts as
    /// framing alone.
    pub(crate) fn add_record(&mut self, kind: u8, body: &[u8]) -> Result<(), DecodeError> {
        self.framing += framed_len(body.len()) - body.len() as u64;
        let mut r = Reader::new(body);
        match kind {
            kind::CONTENTS => {
                self.value_records += body.len() as u64;
                return Ok(());
            }
            kind::COMMIT | kind::HEAD => {
                self.commits_and_heads += body.len() as u64;
                return Ok(());
            }
            kind::FLAT_DIR | kind::INODE_VALUES | kind::FLAT_DIR_DELTA | kind::INODE_VALUES_DELTA => {
                let delta = kind == kind::FLAT_DIR_DELTA || kind == kind::INODE_VALUES_DELTA;
                if kind == kind::INODE_VALUES || kind == kind::INODE_VALUES_DELTA {
                    self.count(&mut r)?;
                }
                if delta {
                    self.base_pointers += number(&mut r)?;
                    self.count(&mut r)?;
                }
                let bindings = self.count(&mut r)?;
                for _ in 0..bindings {
                    self.binding(&mut r)?;
                }
            }
            kind::INODE_TREE | kind::INODE_TREE_DELTA => {
                self.count(&mut r)?;
                if kind == kind::INODE_TREE_DELTA {
                    self.base_pointers += number(&mut r)?;
                }
                self.count(&mut r)?;
                let slots = self.count(&mut r)?;
                for _ in 0..slots.count_ones() {
                    let back = r.leb()?;
                    self.child_pointers += leb128::len_u64(back) as u64;
                    // A delta's emptied slot is a back distance of 0 and nothing more.
                    if back != 0 || kind == kind::INODE_TREE {
                        r.hash()?;
                        self.slot_hashes += 32;
                    }
                }
            }
            _ => {
                self.framing += body.len() as u64;
                return Ok(());
            }
        }
        // Bytes past the fields a body holds would be counted nowhere: an error, as for its
        // decoders (a record with a valid checksum never has them).
        r.finish()
    }

    /// Reads a number counted as a count; returns it.
    fn count(&mut self, r: &mut Reader<'_>) -> Result<u64, DecodeError> {
        let n = r.leb()?;
        self.counts += leb128::len_u64(n) as u64;
        Ok(n)
    }

    /// Reads one binding or change (FORMAT.md 5.1, 5.8), counting each of its fields.
    fn binding(&mut self, r: &mut Reader<'_>) -> Result<(), DecodeError> {
        let before = r.remaining();
        let (step, child) = r.change_ref()?;
        let read = (before - r.remaining()) as u64;
        let (step_len, packed) = match step {
            Name::Step(StepRef::Plain(b)) => (b.len() as u64, false),
            Name::Step(StepRef::Packed(b)) => (b.len() as u64, true),
            Name::Base(_) => (0, false),
        };
        let payload = match child {
            None => 0,
            Some(ChildRef::Inline(v)) => {
                self.inline_values += v.len() as u64;
                self.inline_lengths += leb128::len_u64(v.len() as u64) as u64;
                v.len() as u64 + leb128::len_u64(v.len() as u64) as u64
            }
            Some(ChildRef::Ref { back, .. }) => {
                self.child_pointers += leb128::len_u64(back) as u64;
                self.binding_hashes += 32;
                32 + leb128::len_u64(back) as u64
            }
        };
        if packed {
            self.packed_steps += step_len;
        } else {
            self.plain_steps += step_len;
        }
        self.tags += 1;
        let head = read - step_len - 1 - payload;
        if matches!(step, Name::Base(_)) {
            self.base_positions += head;
        } else {
            self.step_heads += head;
        }
        Ok(())
    }
}

/// How many bytes a record whose body is `body_len` bytes takes, framed.
pub(crate) fn framed_len(body_len: usize) -> u64 {
    (1 + leb128::len_u64(body_len as u64) + body_len + 4) as u64
}

/// Reads a number; returns how many bytes it took.
fn number(r: &mut Reader<'_>) -> Result<u64, DecodeError> {
    Ok(leb128::len_u64(r.leb()?) as u64)
}

#[cfg(test)]
mod tests {
    use arbor_core::Hash;

    use super::FieldBytes;
    use crate::pack::record::{frame, kind, put_change, put_entry, ChildRef, Name};
    use arbor_core::toolbox::leb128;
    use arbor_core::ChildKind;

    /// Counts the record framed around `body`.
    fn counted(k: u8, body: &[u8]) -> FieldBytes {
        let mut framed = Vec::new();
        frame(&mut framed, k, body);
        let mut f = FieldBytes::default();
        f.add_record(k, body).unwrap();
        assert_eq!(f.total(), framed.len() as u64, "every byte of the frame is counted once");
        f
    }

    /// A flat directory of an inline value under a plain step and a directory under a hex
    /// step: each field gets its bytes.
    #[test]
    fn a_flat_directory_is_counted_field_by_field() {
        let mut body = Vec::new();
        leb128::write_u64(&mut body, 2);
        put_entry(&mut body, b"ab12", &ChildRef::Ref { back: 300, hash: Hash([7; 32]), kind: ChildKind::Node });
        put_entry(&mut body, b"balance", &ChildRef::Inline(b"xyz"));
        let f = counted(kind::FLAT_DIR, &body);
        assert_eq!((f.packed_steps, f.plain_steps, f.step_heads), (2, 7, 2));
        assert_eq!((f.binding_hashes, f.child_pointers, f.tags), (32, 2, 2));
        assert_eq!((f.inline_values, f.inline_lengths, f.counts), (3, 1, 1));
    }

    /// A delta's base pointer and its removal are counted; a tree inode delta's emptied slot
    /// has no hash.
    #[test]
    fn deltas_and_tree_inodes_are_counted() {
        let mut body = Vec::new();
        for n in [5, 1000, 4, 3] {
            leb128::write_u64(&mut body, n);
        }
        put_change(&mut body, Name::Step(b"gone"), None);
        put_change(&mut body, Name::Step(b"new"), Some(&ChildRef::Inline(b"1")));
        put_change(&mut body, Name::Base(200), Some(&ChildRef::Inline(b"2")));
        let f = counted(kind::INODE_VALUES_DELTA, &body);
        assert_eq!((f.base_pointers, f.counts, f.tags), (2, 3, 3));
        assert_eq!((f.plain_steps, f.inline_values, f.step_heads, f.base_positions), (7, 2, 2, 3));

        let mut body = Vec::new();
        for n in [1, 70, 40, 0b101] {
            leb128::write_u64(&mut body, n);
        }
        leb128::write_u64(&mut body, 9);
        body.extend_from_slice(&[3; 32]);
        leb128::write_u64(&mut body, 0);
        let f = counted(kind::INODE_TREE_DELTA, &body);
        assert_eq!((f.slot_hashes, f.child_pointers, f.base_pointers, f.counts), (32, 2, 1, 3));
    }

    /// A body cut short, or with bytes past its fields, is an error, not a panic.
    #[test]
    fn a_short_or_long_body_is_an_error() {
        let mut body = Vec::new();
        leb128::write_u64(&mut body, 3);
        put_entry(&mut body, b"a", &ChildRef::Inline(b"1"));
        assert!(FieldBytes::default().add_record(kind::FLAT_DIR, &body).is_err());
        body[0] = 1;
        body.push(0);
        assert!(FieldBytes::default().add_record(kind::FLAT_DIR, &body).is_err());
    }
}
