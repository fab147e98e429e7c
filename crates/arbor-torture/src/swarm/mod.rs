//! The swarm: for one seed, a sequence of short-lived writer processes (each with a reader
//! process beside it half of the time), each given a plan and a crash operation, each
//! followed by a check of both stores against the model.
//!
//! Everything a run does is drawn from one generator seeded with the run's seed, and the
//! children's I/O is numbered deterministically, so `--seed N` replays a run exactly (the
//! readers' timing aside: they run concurrently and only ever check, never change, the store).

mod report;
mod stats;
mod world;

use std::collections::HashSet;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{PoisonError, RwLock};

use arbor::io::SplitMix64;
use arbor::GcMode;

use crate::plan::encode;
use crate::verify::StoreState;
use report::parse_report;
pub use stats::{Failure, Params, Stats};
use world::{Expect, World};

/// Taken for reading while the swarm has a store open (its check), for writing while it
/// starts a process. A process started by one seed's thread holds copies of the swarm's file
/// descriptors until it executes the binary, the `flock` of a store another thread is
/// checking among them; the writer that thread starts next would then find its store locked.
static SPAWN_GUARD: RwLock<()> = RwLock::new(());

fn spawn(cmd: &mut Command) -> std::io::Result<Child> {
    let _g = SPAWN_GUARD.write().unwrap_or_else(PoisonError::into_inner);
    cmd.spawn()
}

fn spawn_reader(exe: &Path, store: &Path, seed: u64) -> std::io::Result<Child> {
    spawn(
        Command::new(exe)
            .arg("reader")
            .arg("--store")
            .arg(store)
            .arg("--seed")
            .arg(seed.to_string())
            .arg("--millis")
            .arg("60000")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
}

/// Runs the swarm for `seed` in `work` (which must be empty); `log` receives one line per
/// writer process.
pub fn run(seed: u64, p: &Params, work: &Path, log: &mut dyn FnMut(&str)) -> Result<Stats, Box<(Stats, Failure)>> {
    let exe = std::env::current_exe()
        .map_err(|e| Box::new((Stats::default(), Failure { child: 0, what: format!("own path: {e}") })))?;
    let mut rng = SplitMix64::new(seed);
    let gc_mode = if rng.chance(1, 3) { GcMode::Archive } else { GcMode::Drop };
    let mut w = World {
        work: work.to_path_buf(),
        inode: arbor::Config::default().inode,
        gc_mode,
        main: StoreState::new(work.join("main")),
        import: StoreState::new(work.join("import")),
        exports: Vec::new(),
        next_date: 1,
        next_file: 0,
        keeps: Vec::new(),
    };
    let mut stats = Stats::default();
    for k in 0..p.children {
        let fail = |stats: &Stats, what: String| Box::new((stats.clone(), Failure { child: k, what }));
        let (plan, expect) = w.plan(&mut rng, p);
        let plan_file = w.work.join(format!("plan-{k}"));
        std::fs::write(&plan_file, encode(&plan)).map_err(|e| fail(&stats, format!("writing the plan: {e}")))?;
        // Half the crashes are counted among all operations, half among those that change
        // the disk (where torn writes and lost syncs happen).
        let crash_at = rng.chance(9, 10).then(|| {
            if rng.chance(1, 2) {
                (false, 1 + rng.below(p.op_budget))
            } else {
                (true, 1 + rng.below(p.mutation_budget))
            }
        });
        let fault = rng.chance(1, 4).then(|| {
            let kind = if rng.chance(1, 2) { "nospace" } else { "eio" };
            (1 + rng.below(p.op_budget), kind)
        });
        let io_seed = rng.next_u64();
        let reader_seed = rng.chance(1, 2).then(|| rng.next_u64());

        let reader = match reader_seed {
            Some(s) => {
                Some(spawn_reader(&exe, &w.main.dir, s).map_err(|e| fail(&stats, format!("spawning a reader: {e}")))?)
            }
            None => None,
        };
        let mut cmd = Command::new(&exe);
        cmd.arg("child")
            .arg("--store")
            .arg(&w.main.dir)
            .arg("--import-store")
            .arg(&w.import.dir)
            .arg("--work")
            .arg(&w.work)
            .arg("--plan")
            .arg(&plan_file)
            .arg("--io-seed")
            .arg(io_seed.to_string());
        if let Some((mutations, n)) = crash_at {
            cmd.arg("--crash-at").arg(n.to_string());
            if mutations {
                cmd.arg("--crash-mutations");
            }
        }
        if let Some((n, kind)) = fault {
            cmd.arg("--fault-at").arg(n.to_string()).arg("--fault").arg(kind);
        }
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let out = spawn(&mut cmd)
            .and_then(|c| c.wait_with_output())
            .map_err(|e| fail(&stats, format!("running the writer: {e}")))?;
        let reader_out = reader.map(|mut r| {
            let _ = r.kill();
            r.wait_with_output()
        });
        stats.children += 1;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let report = parse_report(&stdout);
        let tail =
            |s: &str| s.lines().rev().take(12).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");

        // How the writer ended must be one of the three planned ways.
        if let Some(u) = &report.unexpected {
            return Err(fail(&stats, format!("writer failed with no fault injected: {u}\n{}", tail(&stderr))));
        }
        match (&report.kill, out.status.signal(), out.status.code()) {
            (Some(point), Some(9), _) => {
                stats.kills += 1;
                stats.torn += u64::from(report.torn);
                if let Some(lost) = report.power {
                    stats.power += 1;
                    stats.writes_undone += lost;
                }
                *stats.points.entry(point.clone()).or_default() += 1;
            }
            (None, None, Some(0)) if report.done => stats.completed += 1,
            _ => {
                return Err(fail(
                    &stats,
                    format!(
                        "writer ended unexpectedly ({}):\nstdout:\n{}\nstderr:\n{}",
                        out.status,
                        tail(&stdout),
                        tail(&stderr)
                    ),
                ))
            }
        }
        if report.err.is_some() {
            stats.faulted += 1;
        }
        for a in &report.absorbed {
            *stats.absorbed.entry(a.clone()).or_default() += 1;
        }
        // A reader's error fails the run after the stores' check, so that the report says
        // whether the disk was sound too.
        let mut reader_failure = None;
        if let Some(Ok(r)) = reader_out {
            stats.readers += 1;
            let text = String::from_utf8_lossy(&r.stdout);
            // A simulated power loss shortens the files it undoes writes in, under a reader
            // that may have them mapped (`Config::mapped_reads`): its next read of a page past
            // the new end raises SIGBUS, where a `pread` would have failed.
            let bus_error = r.status.signal() == Some(rustix::process::Signal::BUS.as_raw());
            if report.power.is_some() && (bus_error || text.lines().any(|l| l.starts_with("READ-ERR"))) {
                // The writer's power loss undid file data the reader had already read: a real
                // power loss stops the reader too, so what it saw afterwards proves nothing.
                stats.readers_cut_by_power += 1;
            } else if let Some(line) = text.lines().find(|l| l.starts_with("READ-ERR")) {
                let gc_ran = expect
                    .iter()
                    .enumerate()
                    .any(|(i, e)| matches!(e, Expect::Gc { .. }) && report.begun.is_some_and(|b| b >= i));
                if gc_ran && !p.strict_readers {
                    stats.reader_gc_errors.push(format!("seed {seed} writer {k}: {line}"));
                } else {
                    let during = if gc_ran { " (during a collection)" } else { "" };
                    reader_failure = Some(format!("reader{during}: {line}"));
                }
            } else if !r.status.success() && r.status.signal() != Some(9) {
                // No error reported, yet not killed by the swarm nor ended cleanly: a panic
                // or a crash of the reader itself.
                return Err(fail(
                    &stats,
                    format!("reader ended with {}:\n{}", r.status, tail(&String::from_utf8_lossy(&r.stderr))),
                ));
            }
        }

        // What was acknowledged must now hold.
        let mut may_vanish = HashSet::new();
        for (i, e) in expect.iter().enumerate() {
            let acked = report.acked.contains(&i);
            match e {
                Expect::Commit(h) if acked => {
                    w.main.must.insert(*h);
                }
                Expect::Gc { dropped } if acked => {
                    for h in dropped {
                        w.main.must.remove(h);
                        w.main.gone.insert(*h);
                    }
                }
                Expect::Gc { dropped } if report.begun == Some(i) => may_vanish.extend(dropped.iter().copied()),
                Expect::Export { file, commit } if acked => w.exports.push((file.clone(), *commit)),
                Expect::Import(h) if acked => {
                    w.import.must.insert(*h);
                }
                _ => {}
            }
        }
        stats.acked += report.acked.len() as u64;
        {
            let _g = SPAWN_GUARD.read().unwrap_or_else(PoisonError::into_inner);
            w.main.check(w.inode, &may_vanish).map_err(|e| fail(&stats, e))?;
            w.import.check(w.inode, &HashSet::new()).map_err(|e| fail(&stats, e))?;
        }
        if let Some(f) = reader_failure {
            return Err(fail(&stats, format!("{f}; the stores' check after this writer passed")));
        }
        // A snapshot an interrupted export left behind is never read.
        for (i, e) in expect.iter().enumerate() {
            if let Expect::Export { file, .. } = e {
                let _ = std::fs::remove_file(w.work.join(format!("{file}.tmp")));
                if !report.acked.contains(&i) {
                    let _ = std::fs::remove_file(w.work.join(file));
                }
            }
        }
        let _ = std::fs::remove_file(&plan_file);
        let ended = match (&report.kill, &report.err) {
            (Some(p), _) => format!("killed at {p}"),
            (None, Some(e)) => format!("fault: {e}"),
            (None, None) => format!("completed (operations, mutations: {})", report.done_ops),
        };
        log(&format!(
            "seed {seed} child {k}: {} actions, {} acked, {ended}; main has {} commits, import {}",
            expect.len(),
            report.acked.len(),
            w.main.present.len(),
            w.import.present.len()
        ));
    }
    stats.commits_checked = w.main.commits_checked + w.import.commits_checked;
    Ok(stats)
}
