//! arbor-bench: replaying context traces into an arbor store, measuring every block, and
//! reporting the results (the workload is calibrated against published Tezos context
//! measurements: see docs/WORKLOAD.md).

pub mod environment;
pub mod iobench;
pub mod latency;
pub mod metrics;
pub mod packed;
pub mod procfs;
pub mod record;
pub mod replay;
pub mod report;
pub mod summary;

pub use environment::Environment;
pub use latency::{LatencyHistogram, OpKind, OpLatencies};
pub use record::{RecordError, RecordingStore, RecordingTree};
pub use replay::{load_initial_state, replay, ReplayError, ReplayOptions};
pub use report::{write_html, write_json};
pub use summary::{BlockSample, GcRun, ReplayReport, ReplaySummary};
