//! Snapshot throughput on a Tezos-like state: loads arbor-trace's `tezos-mainnet` initial state
//! (the one `arbor bench` replays on), exports its commit to a snapshot file, imports the file
//! into a fresh store, checks the commit hash, and prints each phase's time, throughput and
//! peak RSS.
//!
//! Usage: `cargo run --release -p arbor-bench --example snapshot_bench -- [values] [seed] [dir]`
//! (defaults: 1,000,000 values, seed 0, `target/snapshot-bench`; the directory is emptied
//! first and removed at the end). Each phase runs in its own process (this program again,
//! with the phase's name first), so each peak RSS is that phase's alone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use arbor::{snapshot, Config, Hash, Store};
use arbor_bench::{metrics, procfs};
use arbor_trace::{initial_state, Profile};

/// Values committed per commit while loading, as `arbor bench` does, so the loading tree is
/// dropped for the stored one now and then.
const LOAD_BATCH: u64 = 500_000;

/// Object cache while exporting and importing, as `arbor snapshot` uses: both touch each
/// record about once, so the default 1 GiB would only raise the peak RSS.
const CACHE_BYTES: u64 = 64 << 20;

/// Peak resident memory of this process (Linux `VmHWM`).
fn rss() -> String {
    procfs::status_bytes("VmHWM").map_or_else(|| "n/a".to_string(), |b| format!("{} MiB", b >> 20))
}

/// CPU time (user + system, every thread) this process has used so far, in seconds: on a
/// shared machine it tells more than the wall time.
fn cpu_secs() -> f64 {
    let (user, system) = metrics::cpu_times();
    (user + system).as_secs_f64()
}

fn rate(n: u64, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64()
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            _ => e.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}

/// Where a run keeps its stores and file.
struct Run {
    values: u64,
    seed: u64,
    src: PathBuf,
    dst: PathBuf,
    file: PathBuf,
    commit_file: PathBuf,
}

fn main() -> Result<(), arbor::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let phase = args.first().filter(|a| PHASES.contains(&a.as_str())).cloned();
    let rest = &args[usize::from(phase.is_some())..];
    let values: u64 = rest.first().and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let seed: u64 = rest.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let root = PathBuf::from(rest.get(2).map_or("target/snapshot-bench", String::as_str));
    let run = Run {
        values,
        seed,
        src: root.join("source"),
        dst: root.join("imported"),
        file: root.join("state.snapshot"),
        commit_file: root.join("commit"),
    };
    match phase.as_deref() {
        Some("load") => load(&run),
        Some("export") => export(&run),
        Some("import") => import(&run),
        Some("check") => check(&run),
        _ => {
            let _ = std::fs::remove_dir_all(&root);
            let exe = std::env::current_exe().expect("own path");
            for p in PHASES {
                let status = Command::new(&exe).arg(p).args(rest).status().expect("run a phase");
                assert!(status.success(), "phase {p} failed");
            }
            let _ = std::fs::remove_dir_all(&root);
            Ok(())
        }
    }
}

const PHASES: [&str; 4] = ["load", "export", "import", "check"];

fn commit_of(run: &Run) -> Hash {
    Hash::parse(std::fs::read_to_string(&run.commit_file).expect("the load phase ran").trim()).expect("a hash")
}

/// Loads the initial state as `arbor bench` does, committing every `LOAD_BATCH` values.
fn load(run: &Run) -> Result<(), arbor::Error> {
    let t = Instant::now();
    let store = Store::open(&run.src)?;
    let mut tree = store.empty();
    let (mut parent, mut n) = (None, 0u64);
    for (path, value) in initial_state(Profile::TezosMainnet, run.seed, run.values) {
        tree.add_mut(&path, &value)?;
        n += 1;
        if n.is_multiple_of(LOAD_BATCH) || n == run.values {
            let h = store.commit(&tree, parent.as_slice(), 0, "Tezos", "initial state")?;
            tree = store.checkout(&h)?;
            parent = Some(h);
        }
    }
    let commit = parent.expect("at least one value");
    drop((tree, store));
    std::fs::write(&run.commit_file, commit.to_string()).expect("write the commit");
    println!(
        "load:   {n} values of tezos-mainnet seed {} in {:.2} s; store {:.1} MB; peak RSS {}",
        run.seed,
        t.elapsed().as_secs_f64(),
        mb(dir_bytes(&run.src)),
        rss()
    );
    println!("commit: {commit}");
    Ok(())
}

fn export(run: &Run) -> Result<(), arbor::Error> {
    let commit = commit_of(run);
    let store = Store::open_with(&run.src, Config::default().with_read_only(true).with_cache_bytes(CACHE_BYTES))?;
    let (t, cpu) = (Instant::now(), cpu_secs());
    let e = snapshot::export_file(&store, &commit, &run.file)?;
    let (d, cpu) = (t.elapsed(), cpu_secs() - cpu);
    let c = e.counts;
    println!(
        "export: {:.2} s ({cpu:.2} s CPU); {} values, {} dirs, {:.1} MB of values, \
         stream {:.1} MB in {} blocks; \
         file {} bytes ({:.1} MB, {:.2}x smaller than the stream)",
        d.as_secs_f64(),
        c.values,
        c.dirs,
        mb(c.value_bytes),
        mb(c.stream_bytes),
        c.blocks,
        e.file_bytes,
        mb(e.file_bytes),
        c.stream_bytes as f64 / e.file_bytes as f64
    );
    println!(
        "        {:.0} values/s, {:.1} MB/s of file, {:.1} MB/s of stream; peak RSS {}",
        rate(c.values, d),
        mb(e.file_bytes) / d.as_secs_f64(),
        mb(c.stream_bytes) / d.as_secs_f64(),
        rss()
    );
    Ok(())
}

fn import(run: &Run) -> Result<(), arbor::Error> {
    let commit = commit_of(run);
    let fresh = Store::open_with(&run.dst, Config::default().with_cache_bytes(CACHE_BYTES))?;
    let (t, cpu) = (Instant::now(), cpu_secs());
    let i = snapshot::import_file(&fresh, &run.file)?;
    let (d, cpu) = (t.elapsed(), cpu_secs() - cpu);
    fresh.close()?;
    let d_closed = t.elapsed();
    assert_eq!(i.commit, commit, "the imported commit has the exported hash");
    println!(
        "import: {:.2} s ({cpu:.2} s CPU), commit synced ({:.2} s with close); commit hash verified; \
         store {:.1} MB",
        d.as_secs_f64(),
        d_closed.as_secs_f64(),
        mb(dir_bytes(&run.dst))
    );
    println!(
        "        {:.0} values/s, {:.1} MB/s of file, {:.1} MB/s of stream; peak RSS {}",
        rate(i.counts.values, d),
        mb(i.file_bytes) / d.as_secs_f64(),
        mb(i.counts.stream_bytes) / d.as_secs_f64(),
        rss()
    );
    Ok(())
}

/// The hash check already proves the state; reading every value back shows it too.
fn check(run: &Run) -> Result<(), arbor::Error> {
    let commit = commit_of(run);
    let store = Store::open_with(&run.dst, Config::default().with_read_only(true))?;
    let t = Instant::now();
    let tree = store.checkout(&commit)?;
    let mut differ = 0u64;
    for (path, value) in initial_state(Profile::TezosMainnet, run.seed, run.values) {
        differ += u64::from(tree.find(&path)?.as_deref() != Some(&value[..]));
    }
    println!(
        "check:  {} values read back from the reopened import in {:.2} s, {differ} differ",
        run.values,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
