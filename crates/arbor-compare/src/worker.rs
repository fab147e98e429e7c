//! One backend's run in its own process, so that its memory, I/O counters and CPU time are
//! its own. The harness starts `arbor-compare worker …` and reads the JSON it writes.

use crate::backend::{self, FlatStore};
use crate::cli::WorkerArgs;
use crate::error::{CompareError, Result};
use crate::result::{BackendRun, Status};

fn run_backend(args: &WorkerArgs, run: &mut BackendRun) -> Result<()> {
    match args.backend.as_str() {
        "arbor" | "arbor-gc" => {
            run.version = format!("arbor {} (this repository)", env!("CARGO_PKG_VERSION"));
            backend::arbor::run(&args.input, &args.dir, args.blocks, args.backend == "arbor-gc", run)
        }
        "nomt" => {
            run.version = "nomt 1.0.5".into();
            run.durability = "every block: session finish + commit, which writes and syncs before returning".into();
            if let Some(reason) = backend::nomt::unavailable() {
                run.status = Status::Skipped;
                run.reason = Some(reason);
                return Ok(());
            }
            let settings = backend::nomt::NomtSettings {
                buckets: args.nomt_buckets,
                ..backend::nomt::NomtSettings::for_values(0)
            };
            run.settings = settings.describe();
            let store: Box<dyn FlatStore> = Box::new(backend::nomt::NomtStore::create(&args.dir, &settings)?);
            backend::replay_flat(store, &args.dir, &args.input, run)
        }
        "firewood" => {
            run.version = "firewood 0.3.1, firewood-storage 0.3.1".into();
            run.durability = "every block: propose + commit, then wait until the background worker has persisted the revision, then fdatasync of firewood.db (Firewood itself never syncs)".into();
            run.settings = backend::firewood::describe();
            let store: Box<dyn FlatStore> = Box::new(backend::firewood::FirewoodStore::create(&args.dir)?);
            backend::replay_flat(store, &args.dir, &args.input, run)
        }
        other => Err(CompareError::Usage(format!("unknown worker backend '{other}'"))),
    }
}

/// Runs the worker and writes its JSON (also when the backend fails, with the reason).
pub fn run(args: &WorkerArgs) -> Result<()> {
    let mut run = BackendRun { backend: args.backend.clone(), ..BackendRun::default() };
    let outcome = run_backend(args, &mut run);
    if let Err(e) = &outcome {
        run.status = Status::Failed;
        run.reason = Some(e.to_string());
    }
    run.write(&args.out)?;
    outcome
}
