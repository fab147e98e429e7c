//! Where a replay ran: the machine, the kernel, the build. Recorded in every report so that
//! two reports can be compared knowingly (and a baseline from another machine is noticed).

use serde::{Deserialize, Serialize};

use crate::procfs;

/// The git revision the benchmark was built from (set by the build script from `git
/// rev-parse`; `unknown` when not built from a git checkout).
pub const GIT_REVISION: &str = env!("ARBOR_GIT_REVISION");

/// The machine and build of a run. Figures that could not be read are `unknown` or 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    /// CPU model name.
    pub cpu_model: String,
    /// Logical CPUs this process may use.
    pub cores: u64,
    /// Physical memory of the machine, bytes.
    pub memory_bytes: u64,
    /// Operating system kernel and its release.
    pub kernel: String,
    /// Git revision of the build (see [`GIT_REVISION`]).
    pub git_revision: String,
    /// Version of arbor-bench.
    pub version: String,
}

impl Environment {
    /// The environment of this process.
    pub fn current() -> Environment {
        let unknown = || "unknown".to_string();
        Environment {
            cpu_model: procfs::cpu_model().unwrap_or_else(unknown),
            cores: std::thread::available_parallelism().map_or(0, |n| n.get() as u64),
            memory_bytes: procfs::meminfo_bytes("MemTotal").unwrap_or(0),
            kernel: procfs::kernel_release().map_or_else(unknown, |r| format!("{} {r}", std::env::consts::OS)),
            git_revision: GIT_REVISION.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// One line: CPU, cores, memory, kernel, revision.
    pub fn describe(&self) -> String {
        format!(
            "{}, {} cores, {:.1} GiB, {}, revision {}",
            self.cpu_model,
            self.cores,
            self.memory_bytes as f64 / (1u64 << 30) as f64,
            self.kernel,
            self.git_revision
        )
    }
}
