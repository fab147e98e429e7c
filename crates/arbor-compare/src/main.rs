//! The `arbor-compare` command: see `arbor-compare --help` and `docs/COMPARE.md`.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let result = if args.get(1).map(String::as_str) == Some("worker") {
        let w = arbor_compare::cli::WorkerArgs::parse_from(args.iter().skip(1));
        arbor_compare::worker::run(&w)
    } else {
        let a = arbor_compare::cli::Args::parse_from(&args);
        arbor_compare::compare::run(&a, &mut std::io::stdout())
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("arbor-compare: {e}");
            ExitCode::FAILURE
        }
    }
}
