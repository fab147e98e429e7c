//! Cold-read probe: what reading an account no block has touched yet costs, in a process
//! that has just opened the store, read-only (the log in the page cache, nothing decoded yet).
//!
//! At 30M values most of a block's extra time over 1M is such first reads: about 740 accounts
//! a block, each its directory and its Values inode read from the log. A replay's block time
//! moves with the host by 10-30% between runs; this probe times only those reads, in a loop
//! of a second or two, so that two builds can be compared in alternating runs. Compare the
//! fastest of several: a run that meets log pages the kernel reclaimed reads them from disk.
//!
//! Usage: `cargo run --release -p arbor --example coldread -- STORE NAMES [ACCOUNTS] [SEED]`,
//! where NAMES lists the account directories of `data/contracts/index`, one a line, as
//! `arbor ls --store STORE data/contracts/index` prints them. Each account is read as a
//! transaction starts: `mem` of its balance, then `find` of its balance and counter.

use std::time::Instant;

use arbor::Store;
use arbor_core::toolbox::SplitMix64;

/// The allocator the CLI's replays run with (glibc's spends its time elsewhere).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(store_dir), Some(names_file)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: coldread STORE NAMES [ACCOUNTS] [SEED]");
        std::process::exit(2);
    };
    let accounts: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let seed: u64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1);
    let text = std::fs::read_to_string(names_file).expect("reading the account names");
    let names: Vec<&str> = text.lines().map(|l| l.trim_end_matches('/')).filter(|l| !l.is_empty()).collect();
    assert!(!names.is_empty(), "no account names in {names_file}");

    let store = Store::open_with(store_dir, arbor::Config::default().with_read_only(true)).expect("opening the store");
    let head = store.last_commit().expect("a store with a commit");
    let tree = store.checkout(&head).expect("checking out the last commit");
    let mut rng = SplitMix64::new(seed);
    let picked: Vec<&str> = (0..accounts).map(|_| names[rng.below(names.len() as u64) as usize]).collect();

    let records_before = store.records_read();
    let started = Instant::now();
    let mut found = 0usize;
    for name in &picked {
        let balance = ["data", "contracts", "index", name, "balance"];
        let counter = ["data", "contracts", "index", name, "counter"];
        if tree.mem(&balance).expect("mem") {
            found += usize::from(tree.find(&balance).expect("find").is_some());
            found += usize::from(tree.find(&counter).expect("find").is_some());
        }
    }
    let elapsed = started.elapsed();
    let records = store.records_read() - records_before;
    println!(
        "{accounts} accounts: {:.0} ns an account, {:.2} records read an account, {found} values found, {:.3} s",
        elapsed.as_nanos() as f64 / accounts as f64,
        records as f64 / accounts as f64,
        elapsed.as_secs_f64()
    );
}
