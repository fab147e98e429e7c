//! The `arbor` command-line tool: commit changes to an arbor store and inspect it.
//!
//! Each subcommand is one variant of [`Command`] whose arguments struct lives in its own
//! module and has a `run(self, out)` method; adding a subcommand means adding both.
//!
//! Exit codes: 0 success, 1 not found or check failed, 2 usage or input error.

mod audit;
mod bench;
mod check;
mod commit;
mod common;
mod date;
mod error;
mod gc;
mod hex;
mod inspect;
mod iobench;
mod json;
mod ops;
mod prove;
mod read;
mod repair;
mod rev;
mod snapshot;
mod trace;
mod units;

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use error::CliResult;

/// glibc's allocator spent half of a replay's time in `malloc_consolidate` and friends on the
/// engine's many small, short-lived nodes; mimalloc's size-class pages do not.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its position in `mi_option_e`, mimalloc.h; libmimalloc-sys
/// names no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Memory mimalloc frees is handed back to the kernel after this many milliseconds (default
/// 10); -1: never. With the default, a 300-block replay gave back and faulted in again 4,714
/// transparent huge pages (2 MiB each, zeroed by the kernel every time): 15% of its CPU time.
/// A delay of 1 s still left 3,400 faults; never purging leaves 607, and a process whose memory
/// the store's budget bounds loses nothing by keeping what it freed (peak RSS +3%).
const PURGE_DELAY_MS: std::ffi::c_long = -1;

fn tune_allocator() {
    // SAFETY: `mi_option_set` only stores an integer option; it is called before any other
    // thread exists, and mimalloc reads the option when it next purges.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    // Transparent huge pages: every fresh 2 MiB page is zeroed whole by the kernel when first
    // touched, although the engine's nodes fill memory a little at a time. A 150-block replay
    // spent 1.06 s in the kernel with them and 0.54 s without (CPU per block 24.8 → 21.6 ms).
    // mimalloc has mapped its first arena before `main`, so its own option comes too late:
    // the process-wide flag covers mappings made already. Failing to set it costs only time.
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}

/// The blocks [`reserve_memory`] takes the memory in: large objects of mimalloc's, each a
/// few huge pages' worth or less.
const RESERVE_BLOCK: usize = 1 << 20;

/// Faults in `budget` bytes of heap (the store's cache budget), in transparent huge pages, and
/// gives them back to the allocator, which keeps them (it never purges: [`PURGE_DELAY_MS`]),
/// before a replay's first block. The cache and the working tree then fill memory the kernel
/// zeroed before the replay, not inside its blocks (at 30M values the heap grows by a
/// gigabyte over 1,000 blocks, a fresh page at a time, each zeroed by the kernel as it is
/// first touched), and the nodes are read through fewer TLB misses; huge pages faulted in
/// inside the blocks instead made them slower (ARCHITECTURE.md, "Performance today").
///
/// At most half of the memory the kernel reports available is taken, so that a budget larger
/// than the machine is not made to fit. The process's resident memory is then about the
/// budget from the start, which the budget allows. Returns the bytes faulted in.
pub(crate) fn reserve_memory(budget: u64) -> u64 {
    let blocks = reserve_blocks(budget, arbor_bench::procfs::meminfo_bytes("MemAvailable").unwrap_or(0));
    if blocks == 0 {
        return 0;
    }
    let _ = rustix::thread::disable_transparent_huge_pages(false);
    let mut held = Vec::with_capacity(blocks);
    for _ in 0..blocks {
        let mut block = vec![0u8; RESERVE_BLOCK];
        // A fresh allocation may be zeroed pages not yet touched: a write to each page
        // faults it in.
        for page in block.chunks_mut(4096) {
            page[0] = 1;
        }
        held.push(std::hint::black_box(block));
    }
    drop(std::hint::black_box(held));
    (blocks * RESERVE_BLOCK) as u64
}

/// How many [`RESERVE_BLOCK`]s [`reserve_memory`] takes for a budget of `budget` bytes when
/// the kernel reports `available` bytes available: the budget, but at most half of that.
fn reserve_blocks(budget: u64, available: u64) -> usize {
    usize::try_from(budget.min(available / 2) / RESERVE_BLOCK as u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::{reserve_blocks, reserve_memory, RESERVE_BLOCK};

    /// The reservation is the budget in whole blocks, never more than half of what the
    /// kernel reports available (nothing when it reports nothing), and a small one is made.
    #[test]
    fn the_reservation_is_the_budget_within_half_of_the_available_memory() {
        let mib = 1u64 << 20;
        assert_eq!(reserve_blocks(1024 * mib, 24 * 1024 * mib), 1024);
        assert_eq!(reserve_blocks(1024 * mib + 5, 24 * 1024 * mib), 1024);
        assert_eq!(reserve_blocks(1024 * mib, 1000 * mib), 500);
        assert_eq!(reserve_blocks(1024 * mib, 0), 0);
        assert_eq!(reserve_blocks(mib - 1, 24 * 1024 * mib), 0);
        let available = arbor_bench::procfs::meminfo_bytes("MemAvailable").unwrap_or(0);
        if available >= 64 * mib {
            assert_eq!(reserve_memory(8 * mib), 8 * RESERVE_BLOCK as u64);
        }
    }
}

/// arbor: a Tezos-context-compatible storage engine for blockchain state.
#[derive(Parser, Debug)]
#[command(name = "arbor", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
enum Command {
    /// Apply `add`/`remove` operations read from stdin and commit; prints the new hash alone.
    Commit(commit::CommitArgs),
    /// Print the value at a path, in hex (or as text with --text).
    Get(read::GetArgs),
    /// List a directory's children: `NAME/` or `NAME<TAB>SIZE`.
    Ls(read::LsArgs),
    /// Show the history through first parents, newest first.
    Log(inspect::LogArgs),
    /// Show a commit's parents, date, author, message and tree.
    Show(inspect::ShowArgs),
    /// Check every object of every commit.
    Fsck(check::FsckArgs),
    /// Print statistics of the stored objects.
    Stats(check::StatsArgs),
    /// List the named heads.
    Heads(inspect::HeadsArgs),
    /// Replay a trace into a store, checking every result, and report the costs.
    Replay(bench::ReplayArgs),
    /// Generate (or reuse) a workload trace, replay it into a fresh store, and report.
    Bench(bench::BenchArgs),
    /// Audit a commit's state: content sizes, fan-out, inlining, bytes per kind, zstd ratio.
    Audit(audit::AuditArgs),
    /// Generate a workload trace, or print a trace's statistics.
    Trace(trace::TraceArgs),
    /// Write a Merkle proof of paths in a commit's tree (binary, to standard output).
    Prove(prove::ProveArgs),
    /// Verify a proof read from standard input against a root tree hash; print what it proves.
    Verify(prove::VerifyArgs),
    /// The storage-gas benchmark of DaiLambda's "New IO benchmarks" (2023): time random reads and writes + commit, fit the cost model.
    Iobench(iobench::IobenchArgs),
    /// Garbage-collect: keep the last N commits of the head's chain, drop (or archive) older ones.
    Gc(gc::GcArgs),
    /// Export one commit's state to a self-checking snapshot file, or import one into a store.
    Snapshot(snapshot::SnapshotArgs),
    /// Repair a damaged store (a cut log, a lost index or control file): keep its longest
    /// intact history. Prints the plan; changes nothing without --yes.
    Repair(repair::RepairArgs),
}

impl Command {
    fn run(self, out: &mut dyn Write) -> CliResult {
        match self {
            Command::Commit(a) => a.run(out),
            Command::Get(a) => a.run(out),
            Command::Ls(a) => a.run(out),
            Command::Log(a) => a.run(out),
            Command::Show(a) => a.run(out),
            Command::Fsck(a) => a.run(out),
            Command::Stats(a) => a.run(out),
            Command::Heads(a) => a.run(out),
            Command::Audit(a) => a.run(out),
            Command::Trace(a) => a.run(out),
            Command::Replay(a) => a.run(out),
            Command::Bench(a) => a.run(out),
            Command::Prove(a) => a.run(out),
            Command::Verify(a) => a.run(out),
            Command::Iobench(a) => a.run(out),
            Command::Snapshot(a) => a.run(out),
            Command::Gc(a) => a.run(out),
            Command::Repair(a) => a.run(out),
        }
    }
}

fn main() -> ExitCode {
    tune_allocator();
    // Clap prints its own usage errors and exits with code 2.
    let cli = Cli::parse();
    // One buffered, locked stdout for the whole command: `ls` and `log` can print many lines.
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = cli.command.run(&mut out);
    // Flush even after a failure, so what was printed before it (fsck's counts) is kept.
    let flushed = out.flush().map_err(error::CliError::from);
    match result.and(flushed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(),
    }
}
