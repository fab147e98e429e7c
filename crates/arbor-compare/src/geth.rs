//! The go-ethereum backend: a Go program (`crates/arbor-compare/geth`, pinned to
//! go-ethereum v1.17.10 by its go.mod and go.sum) that replays the flat stream and writes the
//! same result JSON as the Rust workers. The harness builds it with `go build` into the work
//! directory (Go caches the build, so later runs take a second).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{CompareError, IoContext, Result};

/// Where the Go program's sources are.
pub fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("geth")
}

/// The `go` command: on PATH, or where the official installer puts it.
fn go_command() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("go")).find(|g| g.is_file()))
        .unwrap_or(None);
    on_path.or_else(|| Some(PathBuf::from("/usr/local/go/bin/go")).filter(|g| g.is_file()))
}

/// Outcome of preparing the program.
pub enum GethBinary {
    /// Ready at this path.
    Ready(PathBuf),
    /// Cannot be run here; the reason.
    Unavailable(String),
}

/// Builds the program into `bin_dir` (or takes `prebuilt`). A missing Go toolchain or
/// source directory makes geth unavailable (skipped, with the reason); a failing build is an
/// error.
pub fn prepare(prebuilt: Option<&Path>, bin_dir: &Path) -> Result<GethBinary> {
    if let Some(p) = prebuilt {
        return Ok(GethBinary::Ready(p.to_path_buf()));
    }
    let src = source_dir();
    if !src.join("go.mod").is_file() {
        return Ok(GethBinary::Unavailable(format!("no Go sources at {}", src.display())));
    }
    let Some(go) = go_command() else {
        return Ok(GethBinary::Unavailable("the Go toolchain (`go`) is not installed".into()));
    };
    std::fs::create_dir_all(bin_dir).ctx(|| format!("creating {}", bin_dir.display()))?;
    let bin =
        std::path::absolute(bin_dir.join("arbor-compare-geth")).ctx(|| "resolving the geth binary path".into())?;
    let output = Command::new(&go)
        .args(["build", "-mod=readonly", "-trimpath", "-buildvcs=false", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(&src)
        .output()
        .ctx(|| format!("running {} build", go.display()))?;
    if !output.status.success() {
        return Err(CompareError::Worker(format!(
            "go build in {} failed: {}",
            src.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(GethBinary::Ready(bin))
}

/// The command that runs the program on `flat` into `dir`, writing `out`.
pub fn command(bin: &Path, flat: &Path, dir: &Path, out: &Path, deferred: bool) -> Command {
    let mut c = Command::new(bin);
    c.arg("-flat").arg(flat).arg("-dir").arg(dir).arg("-out").arg(out);
    if deferred {
        c.arg("-deferred");
    }
    c
}
