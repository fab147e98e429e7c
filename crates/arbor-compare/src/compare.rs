//! The comparison: resolve the trace, translate it for the peers, run every backend in its
//! own process on a fresh directory, one after another, and report.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use arbor_trace::{generate, GeneratorParams, TraceReader};
use serde::{Deserialize, Serialize};

use crate::cli::{Args, BACKENDS};
use crate::error::{CompareError, IoContext, Result};
use crate::flatten::{flatten, FlattenStats};
use crate::geth::{self, GethBinary};
use crate::measure::{apparent_bytes, disk_bytes};
use crate::result::{BackendRun, Figures, Status};

/// The whole comparison, as written with `--json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Comparison {
    /// The trace replayed.
    pub trace: String,
    /// Blocks replayed (at most).
    pub blocks: Option<u64>,
    /// Values of the initial state (from the trace header).
    pub initial_values: u64,
    /// Machine: processors and kernel.
    pub machine: String,
    /// How the trace was translated for the peers (absent when only arbor ran).
    pub flatten: Option<FlattenStats>,
    /// Seconds the translation took (not charged to any backend).
    pub flatten_seconds: f64,
    /// Every backend's run, in order.
    pub runs: Vec<BackendRun>,
    /// Their summary figures, in the same order.
    pub figures: Vec<Figures>,
}

impl Comparison {
    /// The run of arbor, if it ran.
    pub fn arbor(&self) -> Option<(&BackendRun, &Figures)> {
        self.runs.iter().zip(&self.figures).find(|(r, _)| r.backend == "arbor" && r.status == Status::Ok)
    }
}

fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = arbor_bench::procfs::kernel_release().unwrap_or_default();
    format!("{cpus} CPUs, Linux {kernel}")
}

/// The trace to replay: the one given, or a generated one (cached in `dir/traces`).
fn resolve_trace(args: &Args, out: &mut dyn Write) -> Result<PathBuf> {
    if let Some(t) = &args.trace {
        return Ok(t.clone());
    }
    let blocks = args.blocks.unwrap_or(1_000);
    let dir = args.dir.join("traces");
    std::fs::create_dir_all(&dir).ctx(|| format!("creating {}", dir.display()))?;
    let name =
        format!("{}-b{}-v{}-s{}-c{}.trace", args.profile.name(), blocks, args.values, args.seed, args.cycle_length);
    let trace = dir.join(name);
    if trace.exists() {
        let _ = writeln!(out, "trace      {} (cached)", trace.display());
        return Ok(trace);
    }
    let _ = writeln!(out, "trace      generating {} ...", trace.display());
    let params = GeneratorParams {
        profile: args.profile,
        blocks,
        values: args.values,
        seed: args.seed,
        cycle_length: args.cycle_length,
        ..GeneratorParams::default()
    };
    let tmp = trace.with_extension("partial");
    let file = BufWriter::new(File::create(&tmp).ctx(|| format!("creating {}", tmp.display()))?);
    generate(params, file)?;
    std::fs::rename(&tmp, &trace).ctx(|| format!("renaming {}", tmp.display()))?;
    Ok(trace)
}

fn open_trace(path: &Path) -> Result<TraceReader<BufReader<File>>> {
    let file = File::open(path).ctx(|| format!("opening {}", path.display()))?;
    Ok(TraceReader::new(BufReader::with_capacity(1 << 20, file))?)
}

/// What identifies a flat stream: the trace it came from and the blocks it holds.
#[derive(Serialize, Deserialize, PartialEq)]
struct FlatSource {
    trace: String,
    trace_len: u64,
    trace_modified_ns: u128,
    blocks: Option<u64>,
}

fn flat_source(trace: &Path, blocks: Option<u64>) -> Result<FlatSource> {
    let meta = std::fs::metadata(trace).ctx(|| format!("reading {}", trace.display()))?;
    let modified = meta.modified().ctx(|| format!("reading {}", trace.display()))?;
    Ok(FlatSource {
        trace: trace.display().to_string(),
        trace_len: meta.len(),
        trace_modified_ns: modified.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()),
        blocks,
    })
}

/// Translates the trace into `flat` for the peers, or reuses the stream a previous run left
/// there for the same trace and block count (recorded in `flat.json` beside it). Returns the
/// translation's figures and the seconds it took (0 when reused).
fn flat_stream(trace: &Path, flat: &Path, blocks: Option<u64>, out: &mut dyn Write) -> Result<(FlattenStats, f64)> {
    let source = flat_source(trace, blocks)?;
    let sidecar = flat.with_extension("json");
    if let Ok(text) = std::fs::read(&sidecar) {
        if let Ok((s, stats)) = serde_json::from_slice::<(FlatSource, FlattenStats)>(&text) {
            if s == source && flat.is_file() {
                let _ = writeln!(out, "flatten    reusing {} (same trace, same blocks)", flat.display());
                return Ok((stats, 0.0));
            }
        }
    }
    let _ = std::fs::remove_file(&sidecar);
    let _ = writeln!(out, "flatten    translating the trace for the peers into {} ...", flat.display());
    let _ = out.flush();
    let start = Instant::now();
    let sink = BufWriter::with_capacity(1 << 20, File::create(flat).ctx(|| format!("creating {}", flat.display()))?);
    let stats = flatten(open_trace(trace)?, sink, blocks)?;
    let seconds = start.elapsed().as_secs_f64();
    let _ = writeln!(out, "flatten    {} blocks, {:.1} s", stats.blocks, seconds);
    let text = serde_json::to_vec(&(source, &stats)).map_err(|e| CompareError::Json("encoding flat.json".into(), e))?;
    std::fs::write(&sidecar, text).ctx(|| format!("writing {}", sidecar.display()))?;
    Ok((stats, seconds))
}

/// Runs one backend's process and reads its result.
fn run_one(mut cmd: Command, name: &str, store: &Path, result: &Path, keep: bool) -> Result<BackendRun> {
    if store.exists() {
        std::fs::remove_dir_all(store).ctx(|| format!("removing {}", store.display()))?;
    }
    std::fs::create_dir_all(store).ctx(|| format!("creating {}", store.display()))?;
    let _ = std::fs::remove_file(result);
    let status = cmd.status().ctx(|| format!("starting the {name} worker"))?;
    let mut run = match BackendRun::read(result) {
        Ok(r) => r,
        Err(e) => BackendRun::not_run(name, Status::Failed, format!("worker exited with {status} and no result ({e})")),
    };
    run.disk_end = disk_bytes(store);
    run.disk_end_apparent = apparent_bytes(store);
    if !keep {
        let _ = std::fs::remove_dir_all(store);
    }
    Ok(run)
}

/// Runs the comparison the arguments describe, printing progress and the table to `out`.
pub fn run(args: &Args, out: &mut dyn Write) -> Result<()> {
    for b in &args.backends {
        if !BACKENDS.contains(&b.as_str()) {
            return Err(CompareError::Usage(format!("unknown backend '{b}' (known: {})", BACKENDS.join(", "))));
        }
    }
    std::fs::create_dir_all(&args.dir).ctx(|| format!("creating {}", args.dir.display()))?;
    let dir = std::path::absolute(&args.dir).ctx(|| "resolving the work directory".into())?;
    let trace = std::path::absolute(resolve_trace(args, out)?).ctx(|| "resolving the trace path".into())?;
    if args.generate_only {
        let _ = writeln!(out, "{}", trace.display());
        return Ok(());
    }
    let header = open_trace(&trace)?.header().clone();
    let initial_values = match &header.initial_state {
        arbor_trace::InitialState::Generated { values, .. } => *values,
        arbor_trace::InitialState::None => 0,
    };
    let mut cmp = Comparison {
        trace: trace.display().to_string(),
        blocks: args.blocks,
        initial_values,
        machine: machine(),
        flatten: None,
        flatten_seconds: 0.0,
        runs: Vec::new(),
        figures: Vec::new(),
    };
    let flat = dir.join("flat.bin");
    if args.backends.iter().any(|b| !b.starts_with("arbor")) {
        let (stats, seconds) = flat_stream(&trace, &flat, args.blocks, out)?;
        cmp.flatten = Some(stats);
        cmp.flatten_seconds = seconds;
    }
    let buckets =
        args.nomt_buckets.unwrap_or_else(|| crate::backend::nomt::NomtSettings::for_values(initial_values).buckets);
    let exe = std::env::current_exe().ctx(|| "locating this program".into())?;
    let mut geth_bin: Option<GethBinary> = None;
    let mut order: Vec<&str> = Vec::new();
    for b in &args.backends {
        if !order.contains(&b.as_str()) {
            order.push(b);
        }
    }
    for name in &order {
        let store = dir.join("stores").join(name);
        let result = dir.join("results").join(format!("{name}.json"));
        std::fs::create_dir_all(dir.join("results")).ctx(|| "creating the results directory".into())?;
        let _ = writeln!(out, "run        {name} ...");
        let _ = out.flush();
        let cmd = match *name {
            "geth" | "geth-deferred" => {
                if geth_bin.is_none() {
                    geth_bin = Some(geth::prepare(args.geth_bin.as_deref(), &dir.join("bin"))?);
                }
                match geth_bin.as_ref().expect("prepared above") {
                    GethBinary::Ready(bin) => geth::command(bin, &flat, &store, &result, *name == "geth-deferred"),
                    GethBinary::Unavailable(reason) => {
                        cmp.runs.push(BackendRun::not_run(name, Status::Skipped, reason.clone()));
                        continue;
                    }
                }
            }
            _ => {
                let mut c = Command::new(&exe);
                c.arg("worker").arg("--backend").arg(name).arg("--dir").arg(&store).arg("--out").arg(&result);
                c.arg("--nomt-buckets").arg(buckets.to_string());
                if name.starts_with("arbor") {
                    c.arg("--input").arg(&trace);
                    if let Some(n) = args.blocks {
                        c.arg("--blocks").arg(n.to_string());
                    }
                } else {
                    c.arg("--input").arg(&flat);
                }
                c
            }
        };
        let run = run_one(cmd, name, &store, &result, args.keep)?;
        let _ = writeln!(out, "run        {name}: {}", crate::table::status_line(&run));
        cmp.runs.push(run);
    }
    cmp.figures = cmp.runs.iter().map(BackendRun::figures).collect();
    let _ = writeln!(out);
    crate::table::print(&cmp, out).ctx(|| "printing the table".into())?;
    if let Some(path) = &args.json {
        let text =
            serde_json::to_vec_pretty(&cmp).map_err(|e| CompareError::Json("encoding the comparison".into(), e))?;
        std::fs::write(path, text).ctx(|| format!("writing {}", path.display()))?;
        let _ = writeln!(out, "json       {}", path.display());
    }
    if let Some(path) = &args.report {
        crate::report::write(&cmp, path)?;
        let _ = writeln!(out, "report     {}", path.display());
    }
    let bad: Vec<String> =
        cmp.runs.iter().filter(|r| r.status == Status::Failed || r.mismatches > 0).map(|r| r.backend.clone()).collect();
    if !bad.is_empty() {
        return Err(CompareError::Worker(format!("failed or returned wrong values: {}", bad.join(", "))));
    }
    Ok(())
}
