//! A block's operations decoded into a few flat buffers, for the replay.
//!
//! The trace reader's owned [`arbor_trace::Op`] holds each path as a vector of vectors: about
//! 30,000 allocations per tezos-mainnet block, made on the decoding thread and freed on the
//! replaying one. That cost is the trace's, not the store's, yet it took a tenth of a replay's
//! CPU and competed with the store's hashing threads for the cores. A packed block holds every
//! step and value of a block in one byte buffer, addressed by ranges.

use std::io::Read;
use std::ops::Range;

use arbor_trace::{BlockMeta, Digest, OpRef, Path, TraceError, TraceReader, TreeSummary};

/// Steps of a path handed to the store without allocating (longer paths use a vector).
const INLINE_STEPS: usize = 16;

/// One decoded block: its metadata and its operations, with steps and values in one buffer.
#[derive(Debug)]
pub struct PackedBlock {
    /// Level, transactions, parent and the commit ending the block.
    pub meta: BlockMeta,
    bytes: Vec<u8>,
    /// Byte ranges of the steps of every path, path after path.
    steps: Vec<Range<u32>>,
    /// The operations, in order.
    pub ops: Vec<PackedOp>,
    /// Leaves of the `add_tree` operations (rare: kept as decoded).
    trees: Vec<Vec<(Path, Vec<u8>)>>,
}

/// An operation of a [`PackedBlock`]: its path (a run of the block's steps) and what it does.
#[derive(Debug, Clone)]
pub struct PackedOp {
    path: Range<u32>,
    /// The operation, with its recorded result.
    pub body: Body,
}

/// What an operation does, as [`arbor_trace::Op`] says, with values as ranges of the block's
/// buffer.
#[derive(Debug, Clone)]
pub enum Body {
    /// `find`, and the digest of the value read.
    Find(Option<Digest>),
    /// `mem`, and whether a value was there.
    Mem(bool),
    /// `mem_tree`, and whether anything was there.
    MemTree(bool),
    /// `find_tree`, and the shape found.
    FindTree(Option<TreeSummary>),
    /// `add` of the value at this range of the block's buffer.
    Add(Range<u32>),
    /// `add_tree` of the leaves at this index of the block's trees.
    AddTree(usize),
    /// `remove`.
    Remove,
    /// `list` with its offset and length, and the count returned.
    List {
        /// Children skipped first.
        offset: Option<u32>,
        /// Most children returned.
        length: Option<u32>,
        /// Children returned.
        result: u32,
    },
    /// `length`, and the count.
    Length(u64),
    /// `fold` to this depth, and the count of entries visited.
    Fold {
        /// Deepest relative depth visited.
        depth: Option<u32>,
        /// Entries visited.
        result: u64,
    },
    /// `copy` of the subtree at the path to the path at this run of the block's steps.
    Copy(Range<u32>),
}

/// Converts a buffer position to the `u32` ranges use; a block over 4 GiB is refused.
fn pos(n: usize) -> Result<u32, TraceError> {
    u32::try_from(n).map_err(|_| TraceError::InvalidInput("a block of over 4 GiB of steps and values".into()))
}

impl PackedBlock {
    /// Decodes the next block of `reader`, or None after the last, into the buffers of
    /// `spare` (a block replayed already) when there is one.
    ///
    /// A block's buffers hold about a megabyte. Grown from empty for every block, they were
    /// copied at each doubling into pages fresh from the kernel, which it zeroed first: half
    /// of the decoding thread's time, on the core the store's hashing thread shares.
    pub fn next<R: Read>(
        reader: &mut TraceReader<R>,
        spare: Option<PackedBlock>,
    ) -> Result<Option<PackedBlock>, TraceError> {
        let (mut bytes, mut steps, mut ops, mut trees) = match spare {
            Some(b) => (b.bytes, b.steps, b.ops, b.trees),
            None => Default::default(),
        };
        bytes.clear();
        steps.clear();
        ops.clear();
        trees.clear();
        let meta = reader.next_block_with(|op: OpRef<'_>| -> Result<(), TraceError> {
            let mut push_path = |path: &[Vec<u8>]| -> Result<Range<u32>, TraceError> {
                let first = pos(steps.len())?;
                for step in path {
                    let start = pos(bytes.len())?;
                    bytes.extend_from_slice(step);
                    steps.push(start..pos(bytes.len())?);
                }
                Ok(first..pos(steps.len())?)
            };
            let path = push_path(op.path())?;
            let body = match op {
                OpRef::Find { result, .. } => Body::Find(result),
                OpRef::Mem { result, .. } => Body::Mem(result),
                OpRef::MemTree { result, .. } => Body::MemTree(result),
                OpRef::FindTree { result, .. } => Body::FindTree(result),
                OpRef::Add { value, .. } => {
                    let start = pos(bytes.len())?;
                    bytes.extend_from_slice(value);
                    Body::Add(start..pos(bytes.len())?)
                }
                OpRef::AddTree { tree, .. } => {
                    trees.push(tree.to_vec());
                    Body::AddTree(trees.len() - 1)
                }
                OpRef::Remove { .. } => Body::Remove,
                OpRef::List { offset, length, result, .. } => Body::List { offset, length, result },
                OpRef::Length { result, .. } => Body::Length(result),
                OpRef::Fold { depth, result, .. } => Body::Fold { depth, result },
                OpRef::Copy { to, .. } => Body::Copy(push_path(to)?),
            };
            ops.push(PackedOp { path, body });
            Ok(())
        })?;
        Ok(meta.map(|meta| PackedBlock { meta, bytes, steps, ops, trees }))
    }

    /// Bytes of the block's buffer in `range`.
    pub fn bytes(&self, range: &Range<u32>) -> &[u8] {
        &self.bytes[range.start as usize..range.end as usize]
    }

    /// The leaves of an `add_tree` operation.
    pub fn tree(&self, index: usize) -> &[(Path, Vec<u8>)] {
        &self.trees[index]
    }

    /// Calls `f` with the path of `op` as a slice of steps.
    pub fn with_path<R>(&self, op: &PackedOp, f: impl FnOnce(&[&[u8]]) -> R) -> R {
        self.with_steps(&op.path, f)
    }

    /// Calls `f` with a run of the block's steps (a path) as a slice of steps.
    pub fn with_steps<R>(&self, run: &Range<u32>, f: impl FnOnce(&[&[u8]]) -> R) -> R {
        let spans = &self.steps[run.start as usize..run.end as usize];
        if spans.len() <= INLINE_STEPS {
            let mut path: [&[u8]; INLINE_STEPS] = [&[]; INLINE_STEPS];
            for (slot, span) in path.iter_mut().zip(spans) {
                *slot = self.bytes(span);
            }
            f(&path[..spans.len()])
        } else {
            let path: Vec<&[u8]> = spans.iter().map(|s| self.bytes(s)).collect();
            f(&path)
        }
    }

    /// Values the block writes: one per `add`, one per leaf of an `add_tree`.
    pub fn writes(&self) -> u64 {
        self.ops
            .iter()
            .map(|op| match op.body {
                Body::Add(_) => 1,
                Body::AddTree(i) => self.trees[i].len() as u64,
                _ => 0,
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_trace::{Block, CommitRecord, InitialState, Op, Parent, Source, TraceHeader, TraceWriter};

    /// Every operation kind, a path longer than the inline limit, and a block after the first:
    /// the packed form must give back each path, value and result the owned form holds.
    #[test]
    fn packed_blocks_hold_what_owned_blocks_hold() {
        let long: Path = (0..INLINE_STEPS as u8 + 4).map(|i| vec![b'a' + i]).collect();
        let ops = vec![
            Op::Add { path: vec![b"a".to_vec(), b"b".to_vec()], value: vec![1, 2] },
            Op::Find { path: vec![b"a".to_vec(), b"b".to_vec()], result: Some(Digest::of(&[1, 2])) },
            Op::Mem { path: vec![b"x".to_vec()], result: false },
            Op::MemTree { path: vec![b"a".to_vec()], result: true },
            Op::FindTree { path: vec![b"a".to_vec()], result: Some(TreeSummary { is_value: false, children: 1 }) },
            Op::AddTree { path: vec![b"t".to_vec()], tree: vec![(vec![b"l".to_vec()], vec![9])] },
            Op::Add { path: long.clone(), value: Vec::new() },
            Op::Remove { path: long },
            Op::List { path: vec![b"a".to_vec()], offset: Some(1), length: None, result: 0 },
            Op::Length { path: Vec::new(), result: 2 },
            Op::Fold { path: vec![b"a".to_vec()], depth: Some(3), result: 1 },
            Op::Copy { path: vec![b"a".to_vec()], to: vec![b"c".to_vec(), b"d".to_vec()] },
        ];
        let commit = CommitRecord { date: 7, message: b"m".to_vec(), author: b"a".to_vec(), hash: None };
        let blocks: Vec<Block> = (0..2)
            .map(|level| Block {
                level,
                transactions: 3,
                parent: Parent::Previous,
                ops: ops.clone(),
                commit: commit.clone(),
            })
            .collect();
        let mut writer = TraceWriter::new(
            Vec::new(),
            &TraceHeader::new(Source::Recorded { description: "test".into() }, InitialState::None),
        )
        .unwrap();
        for b in &blocks {
            writer.write_block(b).unwrap();
        }
        let bytes = writer.finish().unwrap();
        let mut reader = TraceReader::new(&bytes[..]).unwrap();
        // The second block is decoded into the first one's buffers.
        let mut spare = None;
        for block in &blocks {
            let packed = PackedBlock::next(&mut reader, spare.take()).unwrap().expect("a block");
            assert_eq!(packed.meta.level, block.level);
            assert_eq!(packed.meta.commit, block.commit);
            assert_eq!(packed.ops.len(), block.ops.len());
            assert_eq!(packed.writes(), 3);
            for (p, op) in packed.ops.iter().zip(&block.ops) {
                let path: Path = packed.with_path(p, |s| s.iter().map(|s| s.to_vec()).collect());
                assert_eq!(&path, op.path());
                let same = match (&p.body, op) {
                    (Body::Find(r), Op::Find { result, .. }) => r == result,
                    (Body::Mem(r), Op::Mem { result, .. }) | (Body::MemTree(r), Op::MemTree { result, .. }) => {
                        r == result
                    }
                    (Body::FindTree(r), Op::FindTree { result, .. }) => r == result,
                    (Body::Add(v), Op::Add { value, .. }) => packed.bytes(v) == &value[..],
                    (Body::AddTree(i), Op::AddTree { tree, .. }) => packed.tree(*i) == &tree[..],
                    (Body::Remove, Op::Remove { .. }) => true,
                    (Body::List { offset, length, result }, Op::List { offset: o, length: l, result: r, .. }) => {
                        (offset, length, result) == (o, l, r)
                    }
                    (Body::Length(r), Op::Length { result, .. }) => r == result,
                    (Body::Fold { depth, result }, Op::Fold { depth: d, result: r, .. }) => (depth, result) == (d, r),
                    (Body::Copy(run), Op::Copy { to, .. }) => {
                        packed.with_steps(run, |s| s.iter().map(|s| s.to_vec()).collect::<Path>()) == *to
                    }
                    _ => false,
                };
                assert!(same, "{p:?} packs {op:?}");
            }
            spare = Some(packed);
        }
        assert!(PackedBlock::next(&mut reader, spare).unwrap().is_none());
    }
}
