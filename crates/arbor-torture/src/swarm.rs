//! The swarm: for one seed, a sequence of short-lived writer processes (each with a reader
//! process beside it half of the time), each given a plan and a crash operation, each
//! followed by a check of both stores against the model.
//!
//! Everything a run does is drawn from one generator seeded with the run's seed, and the
//! children's I/O is numbered deterministically, so `--seed N` replays a run exactly (the
//! readers' timing aside: they run concurrently and only ever check, never change, the store).

use std::collections::{BTreeMap, HashSet};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, PoisonError, RwLock};

use arbor::io::SplitMix64;
use arbor::{GcMode, Hash, InodeConfig};

use crate::model::Model;
use crate::plan::{encode, Action};
use crate::verify::{Planned, StoreState};
use crate::workload::commit_ops;

/// The knobs of a run.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    /// Writer processes per seed.
    pub children: u64,
    /// Crash operations are drawn from `1..=op_budget`: about the I/O operations a plan takes,
    /// so that most children die part-way and some finish.
    pub op_budget: u64,
    /// The same for crash operations counted among disk-changing operations only.
    pub mutation_budget: u64,
    /// Largest number of actions in a plan.
    pub max_actions: u64,
    /// Largest number of changes in a commit.
    pub max_ops: u64,
    /// Fail on a reader's error during a collection too. Without it, such an error (the
    /// known defect of issue 14 item 5: a reader meeting a collection's switch reports
    /// corruption that is not there) is counted and printed, and the run goes on.
    pub strict_readers: bool,
}

/// What a run did, for the report.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Writer processes run.
    pub children: u64,
    /// Writers killed at their crash operation (each one a crash point survived).
    pub kills: u64,
    /// Of those, kills part-way through a write (torn writes).
    pub torn: u64,
    /// Of those, power losses: the file data not yet synced was undone first.
    pub power: u64,
    /// Unsynced writes those power losses undid.
    pub writes_undone: u64,
    /// Writers whose action failed on an injected ENOSPC or EIO (then reopened the store).
    pub faulted: u64,
    /// Writers that ran their whole plan.
    pub completed: u64,
    /// Actions acknowledged.
    pub acked: u64,
    /// Commits compared value by value in checks.
    pub commits_checked: u64,
    /// Reader processes run.
    pub readers: u64,
    /// Reader errors while the writer ran a collection (issue 14 item 5), each with its seed
    /// and writer process, when not strict.
    pub reader_gc_errors: Vec<String>,
    /// Distinct kill points: call, file kind and crash style.
    pub points: BTreeMap<String, u64>,
    /// Injected failures an action did not report (it succeeded all the same), by call, kind
    /// of file and fault.
    pub absorbed: BTreeMap<String, u64>,
}

impl Stats {
    /// Adds another run's figures.
    pub fn add(&mut self, o: &Stats) {
        self.children += o.children;
        self.kills += o.kills;
        self.torn += o.torn;
        self.power += o.power;
        self.writes_undone += o.writes_undone;
        self.faulted += o.faulted;
        self.completed += o.completed;
        self.acked += o.acked;
        self.commits_checked += o.commits_checked;
        self.readers += o.readers;
        self.reader_gc_errors.extend(o.reader_gc_errors.iter().cloned());
        for (k, n) in &o.points {
            *self.points.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &o.absorbed {
            *self.absorbed.entry(k.clone()).or_default() += n;
        }
    }
}

/// A failure: which child of the run found it, and what.
#[derive(Debug)]
pub struct Failure {
    /// Index of the writer process (from 0) after which the check failed.
    pub child: u64,
    /// What went wrong.
    pub what: String,
}

/// What the swarm expects of one planned action once it is acknowledged.
enum Expect {
    Commit(Hash),
    Gc { dropped: Vec<Hash> },
    Export { file: String, commit: Hash },
    Import(Hash),
    Reopen,
}

struct World {
    work: PathBuf,
    inode: InodeConfig,
    gc_mode: GcMode,
    main: StoreState,
    import: StoreState,
    /// Acknowledged snapshots: file name and commit.
    exports: Vec<(String, Hash)>,
    next_date: i64,
    next_file: u64,
    /// The `keep_from` of every collection planned (acknowledged or not): the next one must
    /// not keep from a commit older than any of them that is still there, as that one may
    /// be the floor now (the engine refuses to move the floor back, with `CommitDropped`,
    /// even in archive mode where the older commit is still readable).
    keeps: Vec<Hash>,
}

impl World {
    /// Draws a plan from the current state.
    fn plan(&mut self, rng: &mut SplitMix64, p: &Params) -> (Vec<Action>, Vec<Expect>) {
        let mut order = self.main.present.clone();
        let mut plan = Vec::new();
        let mut expect = Vec::new();
        let mut exported_here: Vec<(String, Hash)> = Vec::new();
        for _ in 0..1 + rng.below(p.max_actions) {
            let roll = rng.below(20);
            if roll < 13 || order.is_empty() {
                let parent = match (order.last(), rng.below(20)) {
                    (None, _) | (Some(_), 0) => None,
                    (Some(_), 1..=3) => Some(order[rng.below(order.len() as u64) as usize]),
                    (Some(last), _) => Some(*last),
                };
                let base = parent.map_or_else(Model::default, |h| self.main.known[&h].model.clone());
                let date = self.next_date;
                self.next_date += 1;
                let count = 1 + rng.below(p.max_ops) as usize;
                let (ops, model) = commit_ops(rng, &base, date, count);
                let planned =
                    Planned { tree: model.hash(self.inode), model, parent, date, message: format!("c{date}") };
                let h = planned.hash();
                self.main.known.insert(h, Arc::new(planned));
                plan.push(Action::Commit { parent, date, message: format!("c{date}"), ops });
                expect.push(Expect::Commit(h));
                order.push(h);
            } else if roll < 15 && order.len() >= 3 {
                let lo = self.keeps.iter().filter_map(|k| order.iter().position(|h| h == k)).max().unwrap_or(0);
                let i = order.len() - 1 - rng.below((order.len() - lo).min(3) as u64) as usize;
                let keep_from = order[i];
                self.keeps.push(keep_from);
                // Log order: what precedes the kept commit goes (in drop mode).
                let dropped: Vec<Hash> =
                    if self.gc_mode == GcMode::Drop { order.drain(..i).collect() } else { Vec::new() };
                plan.push(Action::Gc { keep_from, mode: self.gc_mode });
                expect.push(Expect::Gc { dropped });
            } else if roll < 17 {
                let commit = order[rng.below(order.len() as u64) as usize];
                let file = format!("snap-{}", self.next_file);
                self.next_file += 1;
                plan.push(Action::Export { commit, file: file.clone() });
                expect.push(Expect::Export { file: file.clone(), commit });
                exported_here.push((file, commit));
            } else if roll < 19 && !(self.exports.is_empty() && exported_here.is_empty()) {
                let all: Vec<&(String, Hash)> = self.exports.iter().chain(&exported_here).collect();
                let (file, commit) = all[rng.below(all.len() as u64) as usize].clone();
                let planned = self.main.known[&commit].clone();
                self.import.known.insert(commit, planned);
                plan.push(Action::Import { file });
                expect.push(Expect::Import(commit));
            } else {
                plan.push(Action::Reopen);
                expect.push(Expect::Reopen);
            }
        }
        (plan, expect)
    }
}

/// One line of the writer's report, parsed.
#[derive(Default)]
struct Report {
    acked: Vec<usize>,
    begun: Option<usize>,
    kill: Option<String>,
    torn: bool,
    /// Unsynced writes undone, for a power loss.
    power: Option<u64>,
    err: Option<String>,
    unexpected: Option<String>,
    done: bool,
    /// Absorbed failures: call, kind of file, fault.
    absorbed: Vec<String>,
    /// Operations and mutations of a writer that finished.
    done_ops: String,
}

fn parse_report(out: &str) -> Report {
    let mut r = Report::default();
    for line in out.lines() {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "BEGIN" => r.begun = rest.parse().ok(),
            "ACK" => r.acked.extend(rest.parse::<usize>().ok()),
            "KILL" => {
                // `KILL <op> <call> <file> <style>`: the point is the call, the kind of file
                // (digits dropped) and the style (lengths dropped).
                let w: Vec<&str> = rest.split(' ').collect();
                if let [_, call, file, style] = w.as_slice() {
                    let file: String = file.chars().filter(|c| !c.is_ascii_digit()).collect();
                    let (style, detail) = style.split_once(':').unwrap_or((style, ""));
                    r.torn = style == "torn";
                    if style == "power" {
                        r.power = detail.split_once('/').and_then(|(_, lost)| lost.parse().ok());
                    }
                    r.kill = Some(format!("{call} {file} {style}"));
                } else {
                    r.kill = Some(rest.to_string());
                }
            }
            "ERR" => r.err = Some(rest.to_string()),
            "ABSORBED" => {
                let w: Vec<&str> = rest.split(' ').collect();
                if let [_, call, file, fault] = w.as_slice() {
                    let file: String = file.chars().filter(|c| !c.is_ascii_digit()).collect();
                    r.absorbed.push(format!("{call} {file} {fault}"));
                }
            }
            "UNEXPECTED" => r.unexpected = Some(rest.to_string()),
            "DONE" => {
                r.done = true;
                r.done_ops = rest.to_string();
            }
            _ => {}
        }
    }
    r
}

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
        if let Some(Ok(r)) = reader_out {
            stats.readers += 1;
            let text = String::from_utf8_lossy(&r.stdout);
            if let Some(line) = text.lines().find(|l| l.starts_with("READ-ERR")) {
                let gc_ran = expect
                    .iter()
                    .enumerate()
                    .any(|(i, e)| matches!(e, Expect::Gc { .. }) && report.begun.is_some_and(|b| b >= i));
                if gc_ran && !p.strict_readers {
                    stats.reader_gc_errors.push(format!("seed {seed} writer {k}: {line}"));
                } else {
                    let during = if gc_ran { " (during a collection)" } else { "" };
                    return Err(fail(&stats, format!("reader{during}: {line}")));
                }
            }
            if !r.status.success() && r.status.signal() != Some(9) {
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
