//! Proof sizes and verification speed, tree proofs and stream proofs, for 1, 10, 100 and
//! 1,000 random paths in trees of 1,000,000 values, in two shapes:
//!
//! - `one big directory`: all values in one directory (an inode tree four to five levels deep);
//! - `tezos-like index`: `data/index/XX/YY/REST/balance`, two levels of 256-way flat
//!   directories keyed by hex digits, as Octez's contract index is laid out.
//!
//! Run with `cargo run --release -p arbor --example proof_sizes`; prints a Markdown table.

use std::time::{Duration, Instant};

use arbor::proof::{verify_paths, verify_stream_paths, Proof};
use arbor::{InodeConfig, Tree};
use arbor_core::proof::encode_stream;
use rand::{Rng, SeedableRng};

const VALUES: usize = 1_000_000;

fn hex(n: u64) -> String {
    format!("{n:016x}")
}

/// The path of the `i`-th value in each shape.
fn path_of(shape: usize, key: u64) -> Vec<String> {
    let h = hex(key);
    match shape {
        0 => vec!["big".into(), h],
        _ => vec!["data".into(), "index".into(), h[..2].into(), h[2..4].into(), h[4..].into(), "balance".into()],
    }
}

fn build(shape: usize, keys: &[u64]) -> Tree {
    let mut t = Tree::empty();
    for (i, k) in keys.iter().enumerate() {
        t.add_mut(&path_of(shape, *k), &(i as u64).to_le_bytes()).unwrap();
    }
    t
}

/// The fastest of a few runs (the least disturbed by the rest of the machine).
fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(2024);
    let keys: Vec<u64> = (0..VALUES).map(|_| rng.gen()).collect();
    println!(
        "| shape | paths | tree bytes | bytes/path | stream bytes | bytes/path | prove | verify tree | verify stream |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (shape, name) in ["one big directory", "tezos-like index"].iter().enumerate() {
        let t0 = Instant::now();
        let tree = build(shape, &keys);
        let root = tree.hash();
        eprintln!("{name}: built and hashed {VALUES} values in {:.1?}", t0.elapsed());
        for n in [1usize, 10, 100, 1000] {
            // Distinct paths: a proof's reads are a set.
            let mut picked = std::collections::BTreeSet::new();
            while picked.len() < n {
                picked.insert(rng.gen_range(0..VALUES));
            }
            let paths: Vec<Vec<String>> = picked.iter().map(|&i| path_of(shape, keys[i])).collect();
            let mut proof: Option<Proof> = None;
            let prove = best_of(3, || proof = Some(tree.prove(&paths).unwrap()));
            let proof = proof.unwrap();
            let bytes = proof.encode();
            let stream = encode_stream(&proof).unwrap();
            let verify = best_of(5, || {
                let v = verify_paths(&bytes, &root, InodeConfig::TEZOS, &paths).unwrap();
                assert_eq!(v.reads().len(), n);
            });
            let verify_s = best_of(5, || {
                let v = verify_stream_paths(&stream, &root, InodeConfig::TEZOS, &paths).unwrap();
                assert_eq!(v.reads().len(), n);
            });
            println!(
                "| {name} | {n} | {} | {} | {} | {} | {:.2?} | {:.2?} | {:.2?} |",
                bytes.len(),
                bytes.len() / n,
                stream.len(),
                stream.len() / n,
                prove,
                verify,
                verify_s,
            );
        }
    }
}
