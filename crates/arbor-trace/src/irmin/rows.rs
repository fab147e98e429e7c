//! The rows of an irmin-bench replayable trace, and their binary form.
//!
//! Each row is one value of irmin-bench's `row` variant, serialised the way
//! Irmin's `Repr` library serialises values (`docs/TRACE.md`, "Importing
//! Irmin traces", has the byte layout):
//!
//! - a variant: its case number as a varint (cases counted from 0 in
//!   declaration order), then the case's argument; a case with several
//!   arguments has them one after another;
//! - a record or tuple: its fields in order, nothing between them;
//! - a string or a list: a varint count, then the bytes or the elements;
//! - an `int64`: 8 bytes big-endian; a `bool`: one byte, `00` for false
//!   (any other byte reads as true; writers use `ff`).

use crate::format::DecodeResult;
use crate::repr::{boolean, case, int64, key, put_bool, put_case, put_int64, put_key, put_str, str};
use arbor_core::leb128;
use arbor_core::toolbox::Cursor;

/// A value tagged with whether this is its last occurrence in the trace
/// (`Forget`) or it is used again later (`Keep`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scope<T> {
    /// The last occurrence: a replayer may drop what it associates with it.
    Forget(T),
    /// Used again later in the trace.
    Keep(T),
}

impl<T> Scope<T> {
    /// The value, whatever its scope.
    pub fn value(&self) -> &T {
        match self {
            Scope::Forget(v) | Scope::Keep(v) => v,
        }
    }
}

/// A context id: names one immutable tree produced during the recording
/// (id 0 is the empty tree the recording starts from).
pub type ContextId = i64;

/// A path in Irmin's form: a list of steps.
pub type Key = Vec<Vec<u8>>;

/// One recorded operation of an irmin-bench replayable trace (format
/// version 0, magic `IrmRepBT`).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Row {
    /// Check out the commit `hash` as the context `out`.
    Checkout {
        /// The commit, as the recording printed it (a `Co…` string for
        /// Octez).
        hash: Scope<Vec<u8>>,
        /// The context created.
        out: Scope<ContextId>,
    },
    /// `add key value` on context `input`, giving context `out`.
    Add {
        /// Path written.
        key: Key,
        /// The value.
        value: Vec<u8>,
        /// Context read.
        input: Scope<ContextId>,
        /// Context created.
        out: Scope<ContextId>,
    },
    /// `remove key` on `input`, giving `out`.
    Remove {
        /// Path removed.
        key: Key,
        /// Context read.
        input: Scope<ContextId>,
        /// Context created.
        out: Scope<ContextId>,
    },
    /// Copy the tree at `from` to `to` on `input`, giving `out`.
    Copy {
        /// Source path (it existed when recorded).
        from: Key,
        /// Destination path.
        to: Key,
        /// Context read.
        input: Scope<ContextId>,
        /// Context created.
        out: Scope<ContextId>,
    },
    /// `find key`: whether a value was found.
    Find {
        /// Path read.
        key: Key,
        /// Whether the read returned a value.
        found: bool,
        /// Context read.
        input: Scope<ContextId>,
    },
    /// `mem key`: whether `key` holds a value.
    Mem {
        /// Path tested.
        key: Key,
        /// The recorded answer.
        result: bool,
        /// Context read.
        input: Scope<ContextId>,
    },
    /// `mem_tree key`: whether `key` exists.
    MemTree {
        /// Path tested.
        key: Key,
        /// The recorded answer.
        result: bool,
        /// Context read.
        input: Scope<ContextId>,
    },
    /// Commit context `input`; the recorded commit is `hash`.
    Commit {
        /// The commit's hash as the recording printed it.
        hash: Scope<Vec<u8>>,
        /// Commit date, seconds since the epoch.
        date: i64,
        /// Commit message.
        message: Vec<u8>,
        /// The parent commits, as recorded.
        parents: Vec<Scope<Vec<u8>>>,
        /// Context committed.
        input: Scope<ContextId>,
    },
}

// Case numbers of the row variant and of the scope variant.
const CHECKOUT: u64 = 0;
const ADD: u64 = 1;
const REMOVE: u64 = 2;
const COPY: u64 = 3;
const FIND: u64 = 4;
const MEM: u64 = 5;
const MEM_TREE: u64 = 6;
const COMMIT: u64 = 7;
const FORGET: u64 = 0;
const KEEP: u64 = 1;

fn put_scope<T>(buf: &mut Vec<u8>, s: &Scope<T>, put: impl Fn(&mut Vec<u8>, &T)) {
    let (case, v) = match s {
        Scope::Forget(v) => (FORGET, v),
        Scope::Keep(v) => (KEEP, v),
    };
    put_case(buf, case);
    put(buf, v);
}

fn put_ctx(buf: &mut Vec<u8>, s: &Scope<ContextId>) {
    put_scope(buf, s, |b, v| put_int64(b, *v));
}

fn put_hash(buf: &mut Vec<u8>, s: &Scope<Vec<u8>>) {
    put_scope(buf, s, |b, v| put_str(b, v));
}

impl Row {
    /// Appends the row's binary form (without its length prefix).
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            Row::Checkout { hash, out } => {
                put_case(buf, CHECKOUT);
                put_hash(buf, hash);
                put_ctx(buf, out);
            }
            Row::Add { key, value, input, out } => {
                put_case(buf, ADD);
                put_key(buf, key);
                put_str(buf, value);
                put_ctx(buf, input);
                put_ctx(buf, out);
            }
            Row::Remove { key, input, out } => {
                put_case(buf, REMOVE);
                put_key(buf, key);
                put_ctx(buf, input);
                put_ctx(buf, out);
            }
            Row::Copy { from, to, input, out } => {
                put_case(buf, COPY);
                put_key(buf, from);
                put_key(buf, to);
                put_ctx(buf, input);
                put_ctx(buf, out);
            }
            Row::Find { key, found: result, input }
            | Row::Mem { key, result, input }
            | Row::MemTree { key, result, input } => {
                let case = match self {
                    Row::Find { .. } => FIND,
                    Row::Mem { .. } => MEM,
                    _ => MEM_TREE,
                };
                put_case(buf, case);
                put_key(buf, key);
                put_bool(buf, *result);
                put_ctx(buf, input);
            }
            Row::Commit { hash, date, message, parents, input } => {
                put_case(buf, COMMIT);
                put_hash(buf, hash);
                put_int64(buf, *date);
                put_str(buf, message);
                leb128::write_u64(buf, parents.len() as u64);
                for p in parents {
                    put_hash(buf, p);
                }
                put_ctx(buf, input);
            }
        }
    }

    /// Decodes one row, which must take exactly the whole of `bytes`.
    pub fn decode(bytes: &[u8]) -> DecodeResult<Row> {
        let mut c = Cursor::new(bytes);
        let row = match case(&mut c)? {
            CHECKOUT => Row::Checkout { hash: hash(&mut c)?, out: ctx(&mut c)? },
            ADD => Row::Add { key: key(&mut c)?, value: str(&mut c)?, input: ctx(&mut c)?, out: ctx(&mut c)? },
            REMOVE => Row::Remove { key: key(&mut c)?, input: ctx(&mut c)?, out: ctx(&mut c)? },
            COPY => Row::Copy { from: key(&mut c)?, to: key(&mut c)?, input: ctx(&mut c)?, out: ctx(&mut c)? },
            FIND => Row::Find { key: key(&mut c)?, found: boolean(&mut c)?, input: ctx(&mut c)? },
            MEM => Row::Mem { key: key(&mut c)?, result: boolean(&mut c)?, input: ctx(&mut c)? },
            MEM_TREE => Row::MemTree { key: key(&mut c)?, result: boolean(&mut c)?, input: ctx(&mut c)? },
            COMMIT => {
                let hash = hash(&mut c)?;
                let date = int64(&mut c)?;
                let message = str(&mut c)?;
                let n = c.count()?;
                let mut parents = Vec::with_capacity(n.min(16));
                for _ in 0..n {
                    parents.push(self::hash(&mut c)?);
                }
                Row::Commit { hash, date, message, parents, input: ctx(&mut c)? }
            }
            _ => return Err("unknown row case (expected 0-7)"),
        };
        if !c.is_empty() {
            return Err("the row is shorter than its length prefix says");
        }
        Ok(row)
    }
}

fn scope<T>(c: &mut Cursor<'_>, read: impl Fn(&mut Cursor<'_>) -> DecodeResult<T>) -> DecodeResult<Scope<T>> {
    match case(c)? {
        FORGET => Ok(Scope::Forget(read(c)?)),
        KEEP => Ok(Scope::Keep(read(c)?)),
        _ => Err("unknown scope case (expected 0 Forget or 1 Keep)"),
    }
}

fn ctx(c: &mut Cursor<'_>) -> DecodeResult<Scope<ContextId>> {
    scope(c, int64)
}

fn hash(c: &mut Cursor<'_>) -> DecodeResult<Scope<Vec<u8>>> {
    scope(c, str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mem_row_is_laid_out_as_repr_does() {
        let row = Row::Mem { key: vec![b"a".to_vec(), b"bc".to_vec()], result: true, input: Scope::Keep(3) };
        let mut buf = Vec::new();
        row.encode(&mut buf);
        // case 5; 2 steps: "a", "bc"; true = ff; Keep (1) of int64 3.
        let expected = [5, 2, 1, b'a', 2, b'b', b'c', 0xff, 1, 0, 0, 0, 0, 0, 0, 0, 3];
        assert_eq!(buf, expected);
        assert_eq!(Row::decode(&buf), Ok(row));
    }

    #[test]
    fn bad_rows_are_refused() {
        assert!(Row::decode(&[8]).is_err(), "unknown case");
        assert!(Row::decode(&[5, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]).is_err(), "unknown scope");
        assert!(Row::decode(&[5, 0, 0, 1, 0, 0, 0]).is_err(), "truncated int64");
        assert!(Row::decode(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 9]).is_err(), "trailing byte");
    }
}
