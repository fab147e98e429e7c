//! `arbor iobench`: the storage-gas benchmark of DaiLambda's "New IO benchmarks" (September
//! 2023): grow a context, limit the page cache,
//! time random reads and writes + commit, fit `a·path_length + b·nbytes + c`. See
//! docs/IOBENCH.md.

use std::io::Write;
use std::path::{Path, PathBuf};

use arbor_bench::iobench::{self, LimitMethod, Options};
use arbor_bench::metrics::dir_bytes;
use clap::Args;

use crate::error::{CliError, CliResult};
use crate::units;

/// The least memory or store size the benchmark's size options accept: less cannot hold a
/// context worth measuring (and is most likely a unit forgotten, `64` meant as 64 MiB).
const MIN_SIZE: u64 = 1 << 20;

/// Clap value parser for the size options: a number with its unit (K, M, G or T, powers of
/// 1024; `KiB`, `MB`… accepted), at least 1 MiB. A bare number is refused: `64` read as 64
/// bytes measured nonsense.
pub fn parse_mem_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(format!("{text:?} has no unit: write it as {t}MiB, {t}GiB…"));
    }
    let n = parse_size(t)?;
    if n < MIN_SIZE {
        return Err(format!("{text:?} is {n} bytes: at least 1MiB is needed"));
    }
    Ok(n)
}

/// Parses a size: bytes, or a number with K/M/G/T (powers of 1024; `KiB`, `MB`… accepted).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: f64 = n.parse().map_err(|_| format!("not a size: {text:?} (try 512MiB, 4GiB)"))?;
    let shift = match unit.trim().trim_end_matches(['B', 'b']).trim_end_matches('i').to_ascii_uppercase().as_str() {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("unknown unit in {text:?}: use K, M, G or T")),
    };
    let bytes = n * (1u64 << shift) as f64;
    // `as u64` would saturate silently: 99999999999999999999TiB became 16 EiB and iobench
    // set out to grow a store that size (and a doubled cache size wrapped around).
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(format!("{text:?} is too large"));
    }
    Ok(bytes as u64)
}

/// Refuses, before anything is created or deleted, sizes this machine cannot honour: a page
/// cache as large as its memory cannot be limited, and a store grown past the free space of
/// `--dir`'s file system would fill it before failing.
fn check_fits_machine(opts: &Options) -> CliResult {
    if let Some(total) = arbor_bench::procfs::meminfo_bytes("MemTotal") {
        if opts.cache_bytes >= total {
            return Err(CliError::usage(format!(
                "--cache-size {} is not below this machine's memory ({}): the page cache cannot be limited to it",
                units::bytes(opts.cache_bytes),
                units::bytes(total)
            )));
        }
    }
    // The store a previous run grew is reused: only the rest of the growth needs space.
    let store = iobench::grow::store_dir(&opts.dir);
    let grown = if store.exists() { dir_bytes(&store) } else { 0 };
    let needed = opts.target_bytes.saturating_sub(grown);
    let mut probe = opts.dir.as_path();
    while !probe.exists() {
        probe = match probe.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
    }
    let fs = rustix::fs::statvfs(probe)
        .map_err(|e| CliError::failed(format!("cannot read the free space of {}: {e}", probe.display())))?;
    let free = fs.f_bavail.saturating_mul(fs.f_frsize);
    if needed > free {
        return Err(CliError::failed(format!(
            "the store would grow to {} ({} more) but {} has {} free: choose a smaller --target-size or --cache-size, or another --dir",
            units::bytes(opts.target_bytes),
            units::bytes(needed),
            probe.display(),
            units::bytes(free)
        )));
    }
    Ok(())
}

/// Arguments of `arbor iobench`.
#[derive(Args, Debug)]
pub struct IobenchArgs {
    /// Quick preset for CI (under a minute): 200,000 values grown to 128 MiB, 64 MiB of page
    /// cache, 300 reads, 100 writes. Without it, the full preset: 4,000,000 values grown to
    /// 4 GiB, 512 MiB of page cache, 3,000 reads, 1,000 writes (see docs/IOBENCH.md).
    #[arg(long)]
    quick: bool,
    /// Benchmark directory: the grown store is kept in DIR/store and reused by later runs.
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
    /// Write everything (samples included) as JSON here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write an HTML report with scatter plots here.
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// Grow the store's log to this size, with its unit (default: 8x --cache-size; quick: 2x).
    #[arg(long, value_name = "SIZE", value_parser = parse_mem_size)]
    target_size: Option<u64>,
    /// Memory to leave to the OS page cache, with its unit (`64MiB`, `4GiB`; at least 1MiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_mem_size)]
    cache_size: Option<u64>,
    /// How to limit the page cache: auto (cgroup, else ballast), cgroup, ballast, none.
    #[arg(long)]
    limit: Option<LimitMethod>,
    /// Values of the generated initial state.
    #[arg(long)]
    values: Option<u64>,
    /// Generator seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Timed reads.
    #[arg(long)]
    reads: Option<usize>,
    /// Timed writes (each with a fsynced commit).
    #[arg(long)]
    writes: Option<usize>,
    /// The engine's object cache during the measurements, with its unit (default 16MiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_mem_size)]
    engine_cache: Option<u64>,
    /// Longest warm-up, in seconds.
    #[arg(long)]
    warmup_seconds: Option<f64>,
    /// Discard DIR/store and its state file first and grow a new context.
    #[arg(long)]
    fresh: bool,
    /// Print only the summary.
    #[arg(long)]
    quiet: bool,
}

impl IobenchArgs {
    fn options(&self) -> Options {
        let mut o = if self.quick { Options::quick(self.dir.clone()) } else { Options::full(self.dir.clone()) };
        let ratio = if self.quick { 2 } else { 8 };
        let custom = self.cache_size.is_some() || self.target_size.is_some() || self.values.is_some();
        if let Some(c) = self.cache_size {
            o.cache_bytes = c;
            o.target_bytes = c.saturating_mul(ratio);
        }
        o.target_bytes = self.target_size.unwrap_or(o.target_bytes);
        o.limit = self.limit.unwrap_or(o.limit);
        o.values = self.values.unwrap_or(o.values);
        o.seed = self.seed.unwrap_or(o.seed);
        o.reads = self.reads.unwrap_or(o.reads);
        o.writes = self.writes.unwrap_or(o.writes);
        o.engine_cache_bytes = self.engine_cache.unwrap_or(o.engine_cache_bytes);
        o.warmup_max_seconds = self.warmup_seconds.unwrap_or(o.warmup_max_seconds);
        if custom {
            o.mode = format!("{} (customised)", o.mode);
        }
        o
    }

    /// Runs the benchmark, prints the summary and writes the files asked for.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let opts = self.options();
        check_fits_machine(&opts)?;
        if opts.values < arbor_trace::MIN_VALUES {
            return Err(CliError::usage(format!("--values must be at least {}", arbor_trace::MIN_VALUES)));
        }
        if self.fresh {
            let store = iobench::grow::store_dir(&opts.dir);
            if store.exists() {
                std::fs::remove_dir_all(&store)?;
            }
            let _ = std::fs::remove_file(opts.dir.join(iobench::grow::STATE_FILE));
        }
        let quiet = self.quiet;
        let mut log = |line: &str| {
            if !quiet {
                eprintln!("iobench: {line}");
            }
        };
        let report = iobench::run(&opts, &mut log).map_err(|e| CliError::failed(e.to_string()))?;
        write!(out, "{}", iobench::report::summary(&report))?;
        if let Some(path) = &self.json {
            iobench::write_json(&report, path)?;
            writeln!(out, "json      {}", path.display())?;
        }
        if let Some(path) = &self.report {
            iobench::write_html(&report, path)?;
            writeln!(out, "report    {}", path.display())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_mem_size, parse_size};

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("2kb"), Ok(2048));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("16777215TiB").is_ok());
        assert!(parse_size("16777216TiB").unwrap_err().contains("too large"));
        assert!(parse_size("99999999999999999999TiB").unwrap_err().contains("too large"));
    }

    #[test]
    fn size_options_need_a_unit_and_a_sensible_size() {
        assert_eq!(parse_mem_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_mem_size("1.5GiB"), Ok(3 << 29));
        assert!(parse_mem_size("64").unwrap_err().contains("no unit"));
        assert!(parse_mem_size("64KiB").unwrap_err().contains("at least 1MiB"));
        assert!(parse_mem_size("0MiB").is_err());
        assert!(parse_mem_size("lots").is_err());
    }
}
