//! The generated workload reproduces the seed figures (docs/WORKLOAD.md),
//! within the tolerances stated here, and is deterministic.
//!
//! Tolerances:
//! - operations per ordinary block: mem, read and write means within ±25% of
//!   the Lima block of the Lima audit (Tarides, July 2023) (2,363 / 3,892 / 3,180);
//! - transactions per block within ±10% of 212;
//! - writes preceded by a mem and a read of their path, in blocks not ending
//!   a cycle: at least 0.8;
//! - the most read path is `contracts/global_counter`, read 212 ± 15% times
//!   per block; each DEX big map's `total_bytes` 61.5 ± 25%; `v1/constants`
//!   exactly 4 per block;
//! - initial-state value sizes: every log2 bucket within 1.5 percentage
//!   points of the Lima audit's table;
//! - cycle-end blocks write at least 5x an ordinary block, and every fifth
//!   one more than 30,000.

use arbor_trace::stats::figures;
use arbor_trace::{generate, stats, GeneratorParams, TraceReader, TraceStats};

fn params(seed: u64) -> GeneratorParams {
    GeneratorParams { blocks: 300, values: 100_000, seed, cycle_length: 50, ..GeneratorParams::default() }
}

fn run(seed: u64) -> (Vec<u8>, TraceStats) {
    let mut bytes = Vec::new();
    generate(params(seed), &mut bytes).unwrap();
    let s = stats(TraceReader::new(bytes.as_slice()).unwrap()).unwrap();
    (bytes, s)
}

fn within(measured: f64, target: f64, tolerance: f64) -> bool {
    (measured - target).abs() <= tolerance * target
}

fn reads_of(s: &TraceStats, path: &str) -> f64 {
    s.top_reads.iter().find(|(p, _)| p == path).map_or(0.0, |(_, n)| *n as f64 / s.blocks as f64)
}

#[test]
fn generated_workload_matches_the_seed_figures() {
    let (bytes, s) = run(1);
    println!("{s}");
    assert_eq!(s.blocks, 300);

    let per_block = s.transactions as f64 / s.blocks as f64;
    assert!(within(per_block, 212.0, 0.10), "transactions {per_block}");

    let targets = [figures::LIMA_BLOCK_MEM, figures::LIMA_BLOCK_READ, figures::LIMA_BLOCK_WRITE];
    for (c, target) in s.ordinary_classes.iter().zip(targets) {
        assert!(within(c.mean, target, 0.25), "{}: {} vs {target}", c.name, c.mean);
    }

    assert!(s.symmetry_ordinary >= 0.8, "symmetry {}", s.symmetry_ordinary);

    assert_eq!(s.top_reads[0].0, "data/contracts/global_counter");
    let gc = reads_of(&s, "data/contracts/global_counter");
    assert!(within(gc, 212.1, 0.15), "global counter {gc}");
    for id in [347_453, 347_455, 347_456] {
        let r = reads_of(&s, &format!("data/big_maps/index/{id}/total_bytes"));
        assert!(within(r, 61.46, 0.25), "big map {id}: {r}");
    }
    let mut constants = 0;
    let mut reader = TraceReader::new(bytes.as_slice()).unwrap();
    while let Some(b) = reader.next_block().unwrap() {
        let n = b
            .ops
            .iter()
            .filter(|op| {
                matches!(op, arbor_trace::Op::Find { path, .. }
                    if path.len() == 3 && path[1] == b"v1" && path[2] == b"constants")
            })
            .count();
        assert_eq!(n, 4, "v1/constants reads at level {}", b.level);
        constants += n;
    }
    assert_eq!(constants, 1_200);

    let initial = s.initial_sizes.as_ref().expect("initial state histogram");
    assert_eq!(initial.total, 100_000);
    for (b, (got, want)) in initial.percent().iter().zip(figures::SIZE_SHARES).enumerate() {
        assert!((got - want).abs() <= 1.5, "bucket {b}: {got:.2}% vs {want}%");
    }

    assert_eq!(s.boundaries.len(), 6);
    let ordinary = s.ordinary_classes[2].mean;
    for b in &s.boundaries {
        assert!(b.writes as f64 >= 5.0 * ordinary, "level {}: {} writes", b.level, b.writes);
    }
    let big: Vec<_> = s.boundaries.iter().filter(|b| b.level % 250 == 0).collect();
    assert_eq!(big.len(), 1);
    assert!(big[0].writes > 30_000, "big boundary: {}", big[0].writes);
}

#[test]
fn generation_is_deterministic() {
    let small =
        |seed| GeneratorParams { blocks: 40, values: 20_000, seed, cycle_length: 15, ..GeneratorParams::default() };
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut c = Vec::new();
    let sa = generate(small(7), &mut a).unwrap();
    let sb = generate(small(7), &mut b).unwrap();
    generate(small(8), &mut c).unwrap();
    assert_eq!(a, b, "same seed, same bytes");
    assert_eq!(sa, sb);
    assert_ne!(a, c, "another seed, another trace");
    assert_eq!(sa.bytes_written, a.len() as u64);
}

#[test]
fn bad_parameters_are_rejected() {
    let p = GeneratorParams { values: 100, ..GeneratorParams::default() };
    assert!(generate(p, Vec::new()).is_err());
    let p = GeneratorParams { cycle_length: 0, ..GeneratorParams::default() };
    assert!(generate(p, Vec::new()).is_err());
}
