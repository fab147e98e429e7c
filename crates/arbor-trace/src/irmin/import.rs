//! Converting an irmin-bench replayable trace into an arbor trace.
//!
//! Irmin's rows name the trees they read and make by context id; an arbor
//! block is one line of work: a parent commit, operations in order, a commit.
//! The importer follows the one context a block is building and refuses a
//! trace that works on two at once (Irmin's replayer supports that; the
//! Octez recordings it was made for almost never do it), naming the row.

use std::io::{Read, Write};

use arbor_core::Hash;

use super::file::IrminReader;
use super::rows::{ContextId, Row};
use crate::error::{Result, TraceError};
use crate::format::{BlockEncoder, TraceWriter};
use crate::types::{CommitRecord, InitialState, Parent, Source, TraceHeader};

/// What an import wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Rows read.
    pub rows: u64,
    /// Blocks (commits) written.
    pub blocks: u64,
    /// Operations written, commits excluded.
    pub ops: u64,
    /// Commits that carry the hash the recording saw.
    pub hashes: u64,
    /// Operations after the last commit, not written: a recording cut short
    /// ends inside a block, and a block without its commit cannot be
    /// checked (irmin-bench's own replayer drops them too).
    pub unfinished_ops: u64,
    /// Whether the file ends inside a row (a recording cut at a byte count): the rows before
    /// it are imported, the partial one is not.
    pub cut_row: bool,
}

/// The author Octez gives every commit; irmin-bench traces do not record it.
pub const OCTEZ_AUTHOR: &[u8] = b"Tezos";

/// The context id irmin-bench gives the empty tree a recording starts from.
const GENESIS_CONTEXT: ContextId = 0;

fn refuse(row: u64, reason: impl Into<String>) -> TraceError {
    TraceError::Irmin { row, reason: reason.into() }
}

/// A recorded commit hash as 32 bytes: Octez prints them `Co…` (base58check);
/// 32 raw bytes are taken as they are.
fn commit_hash(row: u64, recorded: &[u8]) -> Result<[u8; 32]> {
    if let Ok(raw) = <[u8; 32]>::try_from(recorded) {
        return Ok(raw);
    }
    let text = std::str::from_utf8(recorded).map_err(|_| refuse(row, "a commit hash is neither text nor 32 bytes"))?;
    Hash::from_base58(text)
        .map(|h| h.0)
        .map_err(|e| refuse(row, format!("commit hash {text:?} is not a Co… context hash: {e}")))
}

/// The block being assembled.
struct Open {
    parent: Parent,
    /// The commit checked out, if any (`None`: started from the empty tree).
    base: Option<[u8; 32]>,
    /// The context the next operation must read.
    head: ContextId,
}

/// Reads an irmin-bench replayable trace from `input` and writes it to
/// `output` as an arbor trace whose blocks carry the recorded commit hashes,
/// so that a replay checks them. `description` goes into the header.
///
/// Mapping: `Find` becomes `mem` (Irmin's `find` records only whether a value
/// was found, and arbor's `mem` is true exactly when `find` returns a value),
/// `Mem`/`Mem_tree` stay, `Add`/`Remove` stay, `Copy` becomes arbor's `copy`,
/// and each `Commit` closes a block whose author is `Tezos` and whose level
/// is its index in the trace.
pub fn import_irmin<R: Read, W: Write>(input: R, output: W, description: &str) -> Result<(W, ImportSummary)> {
    let mut reader = IrminReader::new(input)?;
    let header = TraceHeader::new(Source::Recorded { description: description.to_string() }, InitialState::None);
    let mut writer = TraceWriter::new(output, &header)?;
    let mut enc = BlockEncoder::new();
    let mut summary = ImportSummary::default();
    let mut last_commit: Option<[u8; 32]> = None;
    // Before the first checkout, operations build on the empty tree.
    let mut open = Some(Open { parent: Parent::Genesis, base: None, head: GENESIS_CONTEXT });
    while let Some(row) = reader.next_row_or_cut()? {
        let at = reader.rows_read() - 1;
        summary.rows += 1;
        if let Row::Checkout { hash, out } = &row {
            if let Some(o) = &open {
                if enc.op_count() > 0 {
                    return Err(refuse(
                        at,
                        format!(
                            "a checkout while context {} has {} operations and no commit: arbor traces cannot express abandoned contexts",
                            o.head,
                            enc.op_count()
                        ),
                    ));
                }
            }
            let h = commit_hash(at, hash.value())?;
            let parent = if last_commit == Some(h) { Parent::Previous } else { Parent::Hash(h) };
            open = Some(Open { parent, base: Some(h), head: *out.value() });
            continue;
        }
        let Some(o) = open.as_mut() else {
            return Err(refuse(at, "an operation after a commit and before the next checkout"));
        };
        let input = match &row {
            Row::Add { input, .. }
            | Row::Remove { input, .. }
            | Row::Copy { input, .. }
            | Row::Find { input, .. }
            | Row::Mem { input, .. }
            | Row::MemTree { input, .. }
            | Row::Commit { input, .. } => *input.value(),
            // Handled above; its output context is what it would read.
            Row::Checkout { out, .. } => *out.value(),
        };
        if input != o.head {
            return Err(refuse(
                at,
                format!(
                    "the row reads context {input}, but the block is building context {}: arbor traces cannot express forked contexts",
                    o.head
                ),
            ));
        }
        match row {
            Row::Checkout { .. } => {} // handled above
            Row::Add { key, value, out, .. } => {
                enc.add(&key, &value)?;
                o.head = *out.value();
            }
            Row::Remove { key, out, .. } => {
                enc.remove(&key)?;
                o.head = *out.value();
            }
            Row::Copy { from, to, out, .. } => {
                enc.copy(&from, &to)?;
                o.head = *out.value();
            }
            Row::Find { key, found, .. } => enc.mem(&key, found)?,
            Row::Mem { key, result, .. } => enc.mem(&key, result)?,
            Row::MemTree { key, result, .. } => enc.mem_tree(&key, result)?,
            Row::Commit { hash, date, message, parents, .. } => {
                let parents = parents.iter().map(|p| commit_hash(at, p.value())).collect::<Result<Vec<_>>>()?;
                if parents != o.base.as_slice() {
                    return Err(refuse(
                        at,
                        format!(
                            "the commit has {} parent(s) other than the commit its block checked out: arbor traces commit with that one as the only parent",
                            parents.len()
                        ),
                    ));
                }
                let h = commit_hash(at, hash.value())?;
                let commit = CommitRecord { date, message, author: OCTEZ_AUTHOR.to_vec(), hash: Some(h) };
                writer.write_encoded(summary.blocks, 0, o.parent, &commit, &enc)?;
                summary.blocks += 1;
                summary.hashes += 1;
                summary.ops += enc.op_count();
                enc.clear();
                last_commit = Some(h);
                open = None;
            }
        }
    }
    summary.unfinished_ops = enc.op_count();
    summary.cut_row = reader.ended_inside_a_row();
    Ok((writer.finish()?, summary))
}
