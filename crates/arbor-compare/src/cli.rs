//! Command-line arguments.

use std::path::PathBuf;

use arbor_trace::Profile;
use clap::Parser;

/// Backends the harness knows.
pub const BACKENDS: [&str; 6] = ["arbor", "arbor-gc", "nomt", "firewood", "geth", "geth-deferred"];

/// Replays the same trace on arbor and on peer stores and compares block times, memory, disk
/// space and bytes written, each as a ratio to arbor's.
#[derive(Parser, Debug, Clone)]
#[command(name = "arbor-compare", version)]
pub struct Args {
    /// Trace to replay. Without it, one is generated (and cached under DIR/traces) from
    /// --profile, --blocks, --values, --seed and --cycle-length.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Backends to run, comma-separated, in this order: arbor, arbor-gc, nomt, firewood, geth, geth-deferred.
    #[arg(long, default_value = "arbor,nomt,firewood,geth", value_delimiter = ',')]
    pub backends: Vec<String>,
    /// Replay at most this many blocks (and generate this many without --trace).
    #[arg(long)]
    pub blocks: Option<u64>,
    /// Workload profile of a generated trace.
    #[arg(long, default_value = "tezos-mainnet")]
    pub profile: Profile,
    /// Values in the initial state of a generated trace.
    #[arg(long, default_value_t = 1_000_000)]
    pub values: u64,
    /// Seed of a generated trace.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Blocks per cycle of a generated trace.
    #[arg(long, default_value_t = 1_000)]
    pub cycle_length: u64,
    /// Work directory: traces, the flat stream, the stores (one after another), results.
    #[arg(long, default_value = "target/arbor-compare")]
    pub dir: PathBuf,
    /// Write the whole comparison as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write an HTML report here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Keep each backend's store after its run.
    #[arg(long)]
    pub keep: bool,
    /// A prebuilt geth program (default: build crates/arbor-compare/geth with `go build`).
    #[arg(long)]
    pub geth_bin: Option<PathBuf>,
    /// Only generate (or find in the cache) the trace, print its path and stop.
    #[arg(long)]
    pub generate_only: bool,
    /// NOMT hash-table buckets (default: one per 25 values of the initial state, at least 64,000).
    #[arg(long)]
    pub nomt_buckets: Option<u32>,
}

/// Arguments of the hidden `worker` subcommand: one backend in its own process.
#[derive(Parser, Debug, Clone)]
#[command(name = "arbor-compare worker")]
pub struct WorkerArgs {
    /// Backend: arbor or arbor-gc (read the trace), nomt or firewood (read the flat stream).
    #[arg(long)]
    pub backend: String,
    /// The trace (arbor) or the flat stream (peers).
    #[arg(long)]
    pub input: PathBuf,
    /// The store's directory (fresh).
    #[arg(long)]
    pub dir: PathBuf,
    /// Where to write the result JSON.
    #[arg(long)]
    pub out: PathBuf,
    /// Blocks to replay (arbor; the flat stream holds only the blocks to replay).
    #[arg(long)]
    pub blocks: Option<u64>,
    /// NOMT hash-table buckets.
    #[arg(long, default_value_t = 64_000)]
    pub nomt_buckets: u32,
}
