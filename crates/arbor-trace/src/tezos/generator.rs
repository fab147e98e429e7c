//! The `generate` entry point: parameters, the block loop, the summary.

use std::io::Write;

use serde::Serialize;

use super::ctx::Ctx;
use super::cycle_end::{cycle_end, BIG_BOUNDARY_WRITES, BOUNDARY_WRITES};
use super::layout::Layout;
use super::script::{block_end, block_start, Workload, MEAN_TRANSACTIONS};
use super::state::State;
use crate::error::{Result, TraceError};
use crate::format::{BlockEncoder, Compression, TraceWriter};
use crate::profile::Profile;
use crate::rng::{hash4, Rng};
use crate::types::{CommitRecord, InitialState, OpKind, Parent, Source, TraceHeader};

/// Smallest initial state the generator accepts.
pub const MIN_VALUES: u64 = 10_000;

/// Parameters of [`generate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratorParams {
    /// Workload profile.
    pub profile: Profile,
    /// Number of blocks.
    pub blocks: u64,
    /// Size of the initial state, in values (at least [`MIN_VALUES`]).
    pub values: u64,
    /// Seed of the initial state and of the blocks.
    pub seed: u64,
    /// Blocks per cycle. Mainnet has 16,384 (the Lima audit); the default, 1,000,
    /// is scaled down so that a 10,000-block trace crosses ten cycle
    /// boundaries, two of them big ones.
    pub cycle_length: u64,
    /// Level of the first block.
    pub start_level: u64,
    /// Commit date of the first block, seconds since the Unix epoch.
    pub start_date: i64,
    /// Seconds between blocks (30, as on mainnet under Lima).
    pub block_interval: i64,
    /// Compression of block frames.
    pub compression: Compression,
}

impl Default for GeneratorParams {
    fn default() -> Self {
        GeneratorParams {
            profile: Profile::TezosMainnet,
            blocks: 10_000,
            values: 1_000_000,
            seed: 0,
            cycle_length: 1_000,
            start_level: 1,
            start_date: 1_672_531_200,
            block_interval: 30,
            compression: Compression::default(),
        }
    }
}

/// What [`generate`] produced.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GenerateSummary {
    /// Blocks written.
    pub blocks: u64,
    /// Manager operations (the blocks' `transactions`), summed.
    pub transactions: u64,
    /// Context operations written.
    pub ops: u64,
    /// Context operations by kind.
    pub ops_by_kind: Vec<(OpKind, u64)>,
    /// Blocks that end a cycle.
    pub boundary_blocks: u64,
    /// Size of the trace.
    pub bytes_written: u64,
    /// Size the trace would have without compression.
    pub raw_bytes: u64,
    /// Entities (accounts, entries, …) the generator tracks at the end: a
    /// measure of its memory use.
    pub tracked_entities: u64,
}

fn check(p: &GeneratorParams) -> Result<()> {
    let bad = |m: String| Err(TraceError::InvalidParams(m));
    if p.values < MIN_VALUES {
        return bad(format!("values must be at least {MIN_VALUES}, got {}", p.values));
    }
    if p.cycle_length == 0 {
        return bad("cycle_length must be at least 1".into());
    }
    if p.start_level.checked_add(p.blocks).is_none() {
        return bad("start_level + blocks overflows".into());
    }
    Ok(())
}

/// The header [`generate`] writes for `p`.
pub fn header_for(p: &GeneratorParams) -> TraceHeader {
    let params = vec![
        ("generator".into(), format!("arbor-trace {}", env!("CARGO_PKG_VERSION"))),
        ("blocks".into(), p.blocks.to_string()),
        ("values".into(), p.values.to_string()),
        ("cycle_length".into(), p.cycle_length.to_string()),
        ("start_level".into(), p.start_level.to_string()),
        ("start_date".into(), p.start_date.to_string()),
        ("block_interval".into(), p.block_interval.to_string()),
        ("mean_transactions".into(), MEAN_TRANSACTIONS.to_string()),
        ("boundary_writes".into(), BOUNDARY_WRITES.to_string()),
        ("big_boundary_writes".into(), BIG_BOUNDARY_WRITES.to_string()),
    ];
    TraceHeader::new(
        Source::Generated { profile: p.profile.name().into(), seed: p.seed, params },
        InitialState::Generated { profile: p.profile.name().into(), seed: p.seed, values: p.values },
    )
}

/// Writes a synthetic trace of `params.blocks` blocks to `out`.
///
/// The trace's initial state is `initial_state(profile, seed, values)`;
/// every read result in it is what a store holding that state and the
/// trace's earlier writes returns. Same parameters, same bytes.
pub fn generate(params: GeneratorParams, out: impl Write) -> Result<GenerateSummary> {
    check(&params)?;
    let layout = Layout::new(params.seed, params.values);
    let mut writer = TraceWriter::with_compression(out, &header_for(&params), params.compression)?;
    let mut state = State::new();
    let mut workload = Workload::new(&layout);
    let mut rng = Rng::new(hash4(params.seed, 0x0067_656e, 0, 0));
    let mut enc = BlockEncoder::new();
    let mut counts = [0u64; OpKind::ALL.len()];
    let mut summary = GenerateSummary::default();

    for i in 0..params.blocks {
        let level = params.start_level + i;
        let cycle = i / params.cycle_length;
        let boundary = (i + 1) % params.cycle_length == 0;
        enc.clear();
        workload.start_block();
        let mut cx = Ctx::new(&layout, &mut state, &mut enc, &mut rng, &mut counts);
        let transactions = (MEAN_TRANSACTIONS * (0.6 + 0.8 * cx.rng.unit())).round() as u64;

        block_start(&mut cx, cycle)?;
        let batch = workload.batch(&layout, cx.rng, transactions);
        let mut batch_left = batch.map_or(0, |(_, _, n)| n);
        for k in 0..transactions {
            let ops_left = transactions - k;
            let in_batch = batch_left > 0 && cx.rng.below(ops_left) < batch_left;
            if in_batch {
                batch_left -= 1;
            }
            let forced = batch.filter(|_| in_batch).map(|(s, d, _)| (s, d));
            workload.operation(&mut cx, forced)?;
        }
        if boundary {
            cycle_end(&mut cx, cycle)?;
            summary.boundary_blocks += 1;
        }
        let listed = cx.rng.below(layout.originated.max(1));
        block_end(&mut cx, cycle, listed)?;

        let commit = CommitRecord {
            date: params.start_date + i as i64 * params.block_interval,
            message: format!("lvl {level}, {transactions} ops").into_bytes(),
            author: b"Tezos".to_vec(),
            hash: None,
        };
        let parent = if i == 0 { Parent::Genesis } else { Parent::Previous };
        writer.write_encoded(level, transactions as u32, parent, &commit, &enc)?;
        summary.transactions += transactions;
    }

    summary.blocks = writer.blocks_written();
    summary.ops = counts.iter().sum();
    summary.ops_by_kind = OpKind::ALL.iter().copied().zip(counts).collect();
    summary.tracked_entities = state.written_entities() as u64;
    summary.raw_bytes = writer.raw_bytes();
    let bytes = writer.bytes_written();
    writer.finish()?;
    // The end frame: 14-byte header, the block count, 4-byte CRC.
    summary.bytes_written = bytes + 18 + arbor_core::leb128::len_u64(summary.blocks) as u64;
    Ok(summary)
}
