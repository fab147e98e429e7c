//! A generated `tezos-mainnet` trace replays into arbor with every result matching.

mod common;

use arbor_trace::{generate, GeneratorParams, MIN_VALUES};
use common::replay_into;

#[test]
fn generated_trace_replays_without_mismatch() {
    let params = GeneratorParams { blocks: 20, values: MIN_VALUES, cycle_length: 7, ..GeneratorParams::default() };
    let mut trace = Vec::new();
    let generated = generate(params, &mut trace).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (_, report) = replay_into(&trace, dir.path()).unwrap();
    let s = &report.summary;
    assert_eq!(s.blocks, 20);
    assert_eq!(s.ops, generated.ops);
    assert_eq!(s.transactions, generated.transactions);
    assert_eq!(s.load_values, MIN_VALUES);
    assert!(s.checked_results > 20 * 1_000, "{} results checked", s.checked_results);
    // Generated traces record no commit hashes.
    assert_eq!(s.checked_hashes, 0);
    assert_eq!(report.blocks.len(), 20);
    // Every record a healthy replay reads is found: the kinds add up to the records read
    // (every field of the breakdown, as the report's JSON holds it, so that a kind added later
    // is counted too).
    let k = &s.records_read_by_kind;
    let kinds = serde_json::to_value(k).unwrap();
    let total: f64 = kinds.as_object().unwrap().values().map(|v| v.as_f64().unwrap()).sum();
    assert!((total - s.records_read_per_block).abs() < 1e-9, "{k:?} against {}", s.records_read_per_block);
}
