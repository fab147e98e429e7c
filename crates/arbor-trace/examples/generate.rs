//! Generates a `tezos-mainnet` trace, times it, and prints its statistics.
//!
//! ```text
//! cargo run --release -p arbor-trace --example generate -- \
//!     [blocks=1000] [values=1000000] [seed=0] [cycle_length=1000] [out=/tmp/arbor.trace] [nostats]
//! ```

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::time::Instant;

use arbor_trace::{generate, initial_state, stats, GeneratorParams, Profile, TraceReader};

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> T {
    args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let params = GeneratorParams {
        blocks: arg(&args, 0, 1_000),
        values: arg(&args, 1, 1_000_000),
        seed: arg(&args, 2, 0),
        cycle_length: arg(&args, 3, 1_000),
        ..GeneratorParams::default()
    };
    let out: String = arg(&args, 4, "/tmp/arbor.trace".to_string());

    let t = Instant::now();
    let (mut n, mut bytes) = (0u64, 0u64);
    for (path, value) in initial_state(Profile::TezosMainnet, params.seed, params.values) {
        n += 1;
        bytes += value.len() as u64 + path.iter().map(|s| s.len() as u64).sum::<u64>();
    }
    println!(
        "initial state: {n} values ({:.1} MB of paths and values) streamed in {:.2} s",
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );

    let t = Instant::now();
    let summary = generate(params.clone(), BufWriter::new(File::create(&out)?))?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "generated {} blocks, {} operations in {:.2} s ({:.0} blocks/s, {:.1} M ops/s); {:.1} MB written ({:.1} MB raw), {} tracked entities",
        summary.blocks,
        summary.ops,
        secs,
        summary.blocks as f64 / secs,
        summary.ops as f64 / secs / 1e6,
        summary.bytes_written as f64 / 1e6,
        summary.raw_bytes as f64 / 1e6,
        summary.tracked_entities
    );

    if args.get(5).map(String::as_str) == Some("nostats") {
        return Ok(());
    }
    let t = Instant::now();
    let s = stats(TraceReader::new(BufReader::new(File::open(&out)?))?)?;
    println!("stats in {:.2} s\n", t.elapsed().as_secs_f64());
    println!("{s}");
    Ok(())
}
