//! The figures of the IO benchmarks (DaiLambda, "New IO benchmarks", September 2023): fitted coefficients in
//! milligas on a grown 40 GB mainnet context, and block 4,043,830's storage accesses.

use serde::Serialize;

use super::fit::Fit;

/// One model as the IO benchmarks fitted it (milligas; 1 milligas = 1 ns).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SeedModel {
    /// `read` or `write`.
    pub model: &'static str,
    /// Memory left to the page cache (and the machine it emulates).
    pub cache: &'static str,
    /// Milligas per unit of path length.
    pub a: f64,
    /// Milligas per byte.
    pub b: f64,
    /// Intercept, milligas.
    pub c: f64,
}

const fn m(model: &'static str, cache: &'static str, a: f64, b: f64) -> SeedModel {
    SeedModel { model, cache, a, b, c: 0.0 }
}

/// The IO benchmarks' results, emulating 8, 16 and 32 GB machines.
pub const IO_BENCHMARKS: [SeedModel; 6] = [
    m("read", "6 GB (8 GB machine)", 57_000.0, 1.5),
    m("read", "14 GB (16 GB machine)", 41_000.0, 2.0),
    m("read", "30 GB (32 GB machine)", 40_000.0, 2.0),
    m("write", "6 GB (8 GB machine)", 930_000.0, 1.0),
    m("write", "14 GB (16 GB machine)", 600_000.0, 1.5),
    m("write", "30 GB (32 GB machine)", 510_000.0, 1.8),
];

/// Block 4,043,830's storage accesses: (model, count, total path length, total bytes,
/// Nairobi's gas, the IO benchmarks' newly inferred gas).
pub const BLOCK_4043830: [(&str, u64, u64, u64, f64, f64); 2] =
    [("read", 624, 3_656, 183_133, 125_000.0, 173_000.0), ("write", 428, 2_376, 18_456, 85_000.0, 1_812_000.0)];

/// Block 4,043,830's reads or writes priced by a fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockEstimate {
    /// `read` or `write`.
    pub model: String,
    /// Accesses in the block.
    pub count: u64,
    /// Their total path length.
    pub path_length: u64,
    /// Their total bytes.
    pub nbytes: u64,
    /// Gas by this run's fit (intercept counted once per access); None without a fit.
    pub gas_this_run: Option<f64>,
    /// Gas by the IO benchmarks' 8 GB-machine coefficients.
    pub gas_io_benchmarks_coefficients: f64,
    /// What the IO benchmarks reports as newly inferred.
    pub gas_io_benchmarks_reported: f64,
    /// What the Nairobi protocol charged.
    pub gas_nairobi: f64,
}

/// Prices the block's accesses with the fits (milligas → gas: / 1000).
pub fn estimates(read: Option<&Fit>, write: Option<&Fit>) -> Vec<BlockEstimate> {
    BLOCK_4043830
        .iter()
        .map(|&(model, count, len, bytes, nairobi, reported)| {
            let fit = if model == "read" { read } else { write };
            let seed = IO_BENCHMARKS.iter().find(|s| s.model == model).expect("both models listed");
            let price = |a: f64, b: f64, c: f64| (a * len as f64 + b * bytes as f64 + c * count as f64) / 1000.0;
            BlockEstimate {
                model: model.into(),
                count,
                path_length: len,
                nbytes: bytes,
                gas_this_run: fit.map(|f| price(f.a, f.b, f.c)),
                gas_io_benchmarks_coefficients: price(seed.a, seed.b, seed.c),
                gas_io_benchmarks_reported: reported,
                gas_nairobi: nairobi,
            }
        })
        .collect()
}
