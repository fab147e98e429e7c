//! The published figures a trace is compared with (from
//! the publications `docs/WORKLOAD.md` lists).

/// Operations in the Lima block at level 2,981,990 (the Lima audit, 3.3.2):
/// `mem`, reads, writes.
pub const LIMA_BLOCK_MEM: f64 = 2_363.0;
/// Reads in that block.
pub const LIMA_BLOCK_READ: f64 = 3_892.0;
/// Writes in that block.
pub const LIMA_BLOCK_WRITE: f64 = 3_180.0;

/// Blocks covered by the read counts of the Lima audit's 10,000-block table.
pub const READ_TABLE_BLOCKS: f64 = 10_000.0;

/// Read counts over 10,000 blocks from level 2,981,990 (the Lima audit, 3.3.2),
/// by path as printed there (without Octez's `data/` prefix).
pub const READ_TABLE: [(&str, f64); 19] = [
    ("contracts/global_counter", 2_121_152.0),
    ("big_maps/index/347453/total_bytes", 614_589.0),
    ("big_maps/index/347455/total_bytes", 614_589.0),
    ("big_maps/index/347456/total_bytes", 614_589.0),
    ("big_maps/index/103258/total_bytes", 79_037.0),
    ("big_maps/index/149768/total_bytes", 46_549.0),
    ("endorsement_branch", 40_004.0),
    ("grand_parent_branch", 40_004.0),
    ("v1/constants", 40_004.0),
    ("v1/cycle_eras", 40_004.0),
    ("version", 40_004.0),
    ("big_maps/index/149787/total_bytes", 32_835.0),
    ("big_maps/index/149771/total_bytes", 29_009.0),
    ("big_maps/index/149772/total_bytes", 29_009.0),
    ("first_level_of_protocol", 20_002.0),
    ("votes/current_period", 20_000.0),
    ("big_maps/index/103260/total_bytes", 19_991.0),
    ("cycle/558/random_seed", 16_183.0),
    ("cycle/558/selected_stake_distribution", 16_183.0),
];

/// Content size distribution of the context at level 3,081,990, percent by
/// log2 bucket 0..=11 and 12+ (the Lima audit, 3.3.1).
pub const SIZE_SHARES: [f64; 13] = [0.75, 29.72, 48.48, 1.41, 3.92, 5.25, 9.37, 0.67, 0.24, 0.044, 0.045, 0.090, 0.009];

/// Writes of the big cycle-boundary peaks, which exceed this every 5 cycles
/// (the Plebeia benchmark).
pub const BIG_BOUNDARY_WRITES: f64 = 30_000.0;

/// Mean path length (steps after the first) of the reads of block
/// 4,043,830: 3,656 over 624 reads (the IO benchmarks).
pub const READ_PATH_LENGTH: f64 = 3_656.0 / 624.0;
/// Mean path length of its writes: 2,376 over 428 writes (the IO benchmarks).
pub const WRITE_PATH_LENGTH: f64 = 2_376.0 / 428.0;

/// Share of the writes of the Lima audit's top-15 table (one block) whose path
/// also had a `mem` and a read in that block: 1,894 of 1,899.
pub const TABLE_SYMMETRY: f64 = 1_894.0 / 1_899.0;

/// The seed's per-block read rate of a path, if the 10,000-block table lists
/// it. `data/` prefixes are ignored, and any `cycle/<n>/x` matches the
/// table's `cycle/558/x`.
pub fn read_rate(path: &str) -> Option<f64> {
    let p = path.strip_prefix("data/").unwrap_or(path);
    let normalised = match p.strip_prefix("cycle/") {
        Some(rest) => match rest.split_once('/') {
            Some((n, field)) if n.bytes().all(|c| c.is_ascii_digit()) => {
                format!("cycle/558/{field}")
            }
            _ => p.to_string(),
        },
        None => p.to_string(),
    };
    READ_TABLE.iter().find(|(q, _)| *q == normalised).map(|(_, n)| n / READ_TABLE_BLOCKS)
}
