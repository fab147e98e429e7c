//! The writer process: runs a plan on the main store (and the import store) through a
//! [`FaultFs`] that kills this process at a chosen I/O operation and may inject `ENOSPC` or
//! `EIO` before that, reporting on stdout what it has done.
//!
//! Protocol (one line each, flushed before the next step, so that the swarm knows exactly
//! what was acknowledged before the kill):
//! * `OPENED` once the main store opened (recovery done);
//! * `BEGIN i` before action `i`, `ACK i` once it returned successfully;
//! * `ERR i <error>` when action `i` failed after an injected fault (the child then closes
//!   the stores, frees the "disk", reopens the main store to prove it recovers, and ends);
//! * `UNEXPECTED i <error>` when an action failed with no fault injected (a harness failure);
//! * `KILL <op> <call> <path> <style>` just before the child SIGKILLs itself;
//! * `ABSORBED <i> <call> <file> <fault>` for an injected failure during action `i` (or
//!   `open`) that the action did not report: it succeeded all the same;
//! * `DONE <operations> <mutations>` at a clean end.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbor::io::{CrashCounter, CrashStyle, FaultFs, InjectedFault, KillPoint, OsFs};
use arbor::{snapshot, Store};

use crate::plan::Action;
use crate::store_config;

/// What the swarm tells a writer process.
#[derive(Debug, Clone)]
pub struct ChildArgs {
    /// Main store directory.
    pub store: PathBuf,
    /// Import store directory.
    pub import_store: PathBuf,
    /// Directory of the snapshot files.
    pub work: PathBuf,
    /// The plan file.
    pub plan: PathBuf,
    /// Operation at which to die, if any, and how operations are counted.
    pub crash_at: Option<(CrashCounter, u64)>,
    /// Operation at which to inject a fault, and which.
    pub fault_at: Option<(u64, InjectedFault)>,
    /// Seed of the fault layer's own choices (crash style, torn lengths).
    pub io_seed: u64,
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    // If the swarm is gone there is nobody to tell; the kill or the end comes anyway.
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn style_text(s: CrashStyle) -> String {
    match s {
        CrashStyle::Before => "before".into(),
        CrashStyle::After => "after".into(),
        CrashStyle::Torn(n) => format!("torn:{n}"),
        CrashStyle::PowerLoss { kept, lost } => format!("power:{kept}/{lost}"),
    }
}

/// Reports the kill point, then dies as a power cut or `kill -9` would: no destructors, no
/// flushing of anything the engine holds.
fn die(k: &KillPoint) {
    let name = k.path.file_name().map_or_else(|| k.path.display().to_string(), |n| n.to_string_lossy().into_owned());
    say(&format!("KILL {} {} {} {}", k.op, k.call, name, style_text(k.style)));
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    // Not reached; should the signal fail, abort rather than carry on past the crash point.
    std::process::abort();
}

struct Stores {
    fs: FaultFs,
    main: Option<Store>,
    import: Option<Store>,
}

impl Stores {
    fn main(&mut self, dir: &Path) -> arbor::Result<&Store> {
        if self.main.is_none() {
            self.main = Some(Store::open_with(dir, store_config(Arc::new(self.fs.clone()), false))?);
        }
        Ok(self.main.as_ref().expect("opened above"))
    }

    fn import(&mut self, dir: &Path) -> arbor::Result<&Store> {
        if self.import.is_none() {
            self.import = Some(Store::open_with(dir, store_config(Arc::new(self.fs.clone()), false))?);
        }
        Ok(self.import.as_ref().expect("opened above"))
    }
}

fn run_action(stores: &mut Stores, args: &ChildArgs, action: &Action) -> arbor::Result<()> {
    match action {
        Action::Commit { parent, date, message, ops } => {
            let store = stores.main(&args.store)?;
            let mut tree = match parent {
                Some(p) => store.checkout(p)?,
                None => store.empty(),
            };
            for op in ops {
                match op {
                    crate::model::Op::Add(k, v) => tree.add_mut(k, v)?,
                    crate::model::Op::Remove(k) => tree.remove_mut(k)?,
                    crate::model::Op::Copy(from, to) => {
                        let sub = tree.find_tree(from)?.ok_or_else(|| {
                            arbor::Error::InvalidArgument(format!("planned copy from a missing {from:?}"))
                        })?;
                        tree.add_tree_mut(to, &sub)?;
                    }
                }
            }
            let parents: Vec<_> = parent.iter().copied().collect();
            // Half the commits hand their tree over (`commit_owned`: the sync runs on a
            // thread of its own while the working tree is evicted), chosen by the plan's date
            // so that a seed replays the same choices.
            if date % 2 == 0 {
                store.commit_owned(tree, &parents, *date, b"Tezos", message.as_bytes())?;
            } else {
                store.commit(&tree, &parents, *date, "Tezos", message)?;
            }
        }
        Action::Gc { keep_from, mode } => {
            stores.main(&args.store)?.gc_blocking(keep_from, *mode)?;
        }
        Action::Export { commit, file } => {
            snapshot::export_file(stores.main(&args.store)?, commit, args.work.join(file))?;
        }
        Action::Import { file } => {
            let path = args.work.join(file);
            snapshot::import_file(stores.import(&args.import_store)?, path)?;
        }
        Action::Reopen => {
            if let Some(s) = stores.main.take() {
                s.close()?;
            }
            stores.main(&args.store)?;
        }
    }
    Ok(())
}

/// Runs a writer process; returns its exit code.
pub fn run(args: &ChildArgs) -> i32 {
    let plan =
        match std::fs::read_to_string(&args.plan).map_err(|e| e.to_string()).and_then(|t| crate::plan::decode(&t)) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("arbor-torture child: {}: {e}", args.plan.display());
                return 2;
            }
        };
    let fs = FaultFs::new(Arc::new(OsFs), args.io_seed);
    // A third of the kills are power losses: unsynced file data undone first.
    fs.track_unsynced();
    if let Some((counter, n)) = args.crash_at {
        fs.crash_at(counter, n, Arc::new(die));
    }
    if let Some((n, fault)) = args.fault_at {
        fs.fail_at(n, fault);
    }
    let mut stores = Stores { fs: fs.clone(), main: None, import: None };
    let mut failed = None;
    let mut seen_faults = 0;
    let mut absorbed = |at: &str, fs: &FaultFs| {
        let log = fs.fault_log();
        for r in &log[seen_faults..] {
            let name = r.path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let fault = if r.fault == InjectedFault::Io { "eio" } else { "nospace" };
            say(&format!("ABSORBED {at} {} {name} {fault}", r.call));
        }
        seen_faults = log.len();
    };
    match stores.main(&args.store) {
        Ok(_) => {
            absorbed("open", &fs);
            say("OPENED");
        }
        Err(e) => failed = Some(("open".to_string(), e)),
    }
    if failed.is_none() {
        for (i, action) in plan.iter().enumerate() {
            say(&format!("BEGIN {i}"));
            match run_action(&mut stores, args, action) {
                Ok(()) => {
                    absorbed(&i.to_string(), &fs);
                    say(&format!("ACK {i}"));
                }
                Err(e) => {
                    failed = Some((i.to_string(), e));
                    break;
                }
            }
        }
    }
    if let Some((at, e)) = failed {
        if fs.faults_fired() == 0 {
            say(&format!("UNEXPECTED {at} {}", one_line(&e)));
            return 3;
        }
        say(&format!("ERR {at} {}", one_line(&e)));
        // The operator frees space and restarts: the stores must open again. The kill may
        // still come during this recovery, which is one more crash point.
        drop(stores.main.take());
        drop(stores.import.take());
        fs.clear_faults();
        if let Err(e) = stores.main(&args.store) {
            say(&format!("UNEXPECTED reopen {}", one_line(&e)));
            return 3;
        }
        say("REOPENED");
    }
    say(&format!("DONE {} {}", fs.ops(), fs.mutations()));
    0
}

fn one_line(e: &dyn std::fmt::Display) -> String {
    e.to_string().replace('\n', " ")
}
