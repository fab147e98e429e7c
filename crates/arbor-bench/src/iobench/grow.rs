//! Growing a context: the generated `tezos-mainnet` workload is replayed into the store (its
//! initial state first, then block after block, each block committed on the previous one)
//! until the store's log reaches the target size. Only the writes of the blocks are applied —
//! reads do not change the state — so growing costs the commits and little else.
//!
//! The trace is generated on another thread and streamed through a pipe, never stored. The
//! store directory keeps a small `grown.json` beside it (parameters, blocks applied, head
//! commit), so a later run reuses a context that is big enough and grows a smaller one further
//! by regenerating the same trace and skipping the blocks already applied.

use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arbor::{Config, Durability, Hash, Store, Tree};
use arbor_trace::{generate, header_for, GeneratorParams, Op, Parent, Profile, TraceReader};
use serde::{Deserialize, Serialize};

use super::IobenchError;
use crate::replay::load_initial_state;

/// The named head marking the grown context.
pub const GROWN_HEAD: &str = "iobench-grown";

/// Name of the state file kept in the benchmark directory.
pub const STATE_FILE: &str = "grown.json";

/// Blocks the generator is asked for: an upper bound, growing stops long before.
const BLOCK_BOUND: u64 = 100_000_000;

/// Blocks between two saves of the state file (and of the head).
const SAVE_EVERY: u64 = 64;

/// What to grow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrowParams {
    /// Values of the generated initial state.
    pub values: u64,
    /// Generator seed.
    pub seed: u64,
    /// Blocks per cycle of the generated workload.
    pub cycle_length: u64,
    /// Stop once the store's log has this many bytes.
    pub target_bytes: u64,
    /// Engine cache while growing (the measurements reopen the store with a small one).
    pub cache_bytes: u64,
}

/// The state file: which workload the context was grown from and how far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrowState {
    /// Values of the initial state.
    pub values: u64,
    /// Generator seed.
    pub seed: u64,
    /// Blocks per cycle.
    pub cycle_length: u64,
    /// Blocks applied so far.
    pub blocks: u64,
    /// The commit of the last block applied, in hex.
    pub head: String,
    /// The store's log size then.
    pub log_bytes: u64,
}

/// What [`grow`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GrowSummary {
    /// The context was big enough already and used as it was.
    pub reused: bool,
    /// Values of the initial state.
    pub values: u64,
    /// Generator seed.
    pub seed: u64,
    /// Blocks applied in all (this run and earlier ones).
    pub blocks: u64,
    /// Blocks applied by this run.
    pub blocks_added: u64,
    /// Seconds this run spent growing (initial state included).
    pub seconds: f64,
    /// Bytes of the store's log at the end.
    pub log_bytes: u64,
    /// Bytes of all the store's files at the end.
    pub disk_bytes: u64,
    /// The grown commit, in hex.
    pub head: String,
}

fn state_path(dir: &Path) -> PathBuf {
    dir.join(STATE_FILE)
}

/// The directory of the store inside the benchmark directory.
pub fn store_dir(dir: &Path) -> PathBuf {
    dir.join("store")
}

/// Reads the state file of `dir`, if any.
pub fn read_state(dir: &Path) -> Result<Option<GrowState>, IobenchError> {
    match std::fs::read(state_path(dir)) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| IobenchError::Invalid(format!("{}: {e}", state_path(dir).display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn save_state(dir: &Path, state: &GrowState) -> Result<(), IobenchError> {
    let tmp = dir.join(format!("{STATE_FILE}.tmp"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(state).map_err(std::io::Error::other)?)?;
    std::fs::rename(&tmp, state_path(dir))?;
    Ok(())
}

fn generator_params(p: &GrowParams) -> GeneratorParams {
    GeneratorParams {
        profile: Profile::TezosMainnet,
        blocks: BLOCK_BOUND,
        values: p.values,
        seed: p.seed,
        cycle_length: p.cycle_length,
        ..GeneratorParams::default()
    }
}

/// Grows (or reuses) the context in `dir` (store in `dir/store`) to `p.target_bytes`;
/// returns what was done and the grown commit. `log` receives progress lines.
pub fn grow(dir: &Path, p: &GrowParams, log: &mut dyn FnMut(&str)) -> Result<(GrowSummary, Hash), IobenchError> {
    std::fs::create_dir_all(dir)?;
    let start = Instant::now();
    let state = read_state(dir)?;
    if let Some(s) = &state {
        if (s.values, s.seed, s.cycle_length) != (p.values, p.seed, p.cycle_length) {
            return Err(IobenchError::Invalid(format!(
                "{} holds a context grown from values={} seed={} cycle_length={}, not values={} seed={} \
                 cycle_length={}: use another --dir, the same parameters, or --fresh",
                dir.display(),
                s.values,
                s.seed,
                s.cycle_length,
                p.values,
                p.seed,
                p.cycle_length
            )));
        }
    }
    let config =
        Config::default().with_cache_bytes(p.cache_bytes).with_durability(Durability::Interval(Duration::from_secs(1)));
    let store = Store::open_with(store_dir(dir), config)?;
    let mut summary = GrowSummary { values: p.values, seed: p.seed, ..GrowSummary::default() };
    if let Some(s) = &state {
        if store.log_bytes() >= p.target_bytes {
            let head = parse_head(&s.head)?;
            summary.reused = true;
            summary.blocks = s.blocks;
            return finish(dir, store, summary, head, start);
        }
    }
    let gp = generator_params(p);
    log(&format!("grow: loading the initial state ({} values)", p.values));
    let (base, _) = load_initial_state(&store, &header_for(&gp), 500_000)?;
    let base = base.ok_or_else(|| IobenchError::Invalid("the generated initial state is empty".into()))?;
    let (done, mut previous) = match &state {
        Some(s) => (s.blocks, parse_head(&s.head)?),
        None => (0, base),
    };
    let (reader, writer) = std::io::pipe()?;
    let generator = std::thread::spawn(move || generate(gp, BufWriter::with_capacity(1 << 20, writer)));
    let result = (|| -> Result<u64, IobenchError> {
        let mut trace = TraceReader::new(BufReader::with_capacity(1 << 20, reader))?;
        for _ in 0..done {
            trace.next_block_with(|_| Ok::<(), arbor_trace::TraceError>(()))?;
        }
        let mut blocks = done;
        while store.log_bytes() < p.target_bytes {
            let Some(block) = trace.next_block()? else { break };
            let parent = match block.parent {
                Parent::Genesis => base,
                Parent::Previous => previous,
                Parent::Hash(h) => Hash(h),
            };
            let mut tree = store.checkout(&parent)?;
            for op in &block.ops {
                apply_write(&store, &mut tree, op)?;
            }
            let c = &block.commit;
            previous = store.commit_with_stats(&tree, &[parent], c.date, &c.author, &c.message)?.0;
            blocks += 1;
            if (blocks - done).is_multiple_of(SAVE_EVERY) {
                checkpoint(dir, &store, p, blocks, previous)?;
                log(&format!("grow: {blocks} blocks, {} of {} MiB", store.log_bytes() >> 20, p.target_bytes >> 20));
            }
        }
        Ok(blocks)
    })();
    // Dropping the reader ends the generator with a broken pipe, which is expected.
    let _ = generator.join();
    let blocks = result?;
    checkpoint(dir, &store, p, blocks, previous)?;
    summary.blocks = blocks;
    summary.blocks_added = blocks - done;
    finish(dir, store, summary, previous, start)
}

fn parse_head(text: &str) -> Result<Hash, IobenchError> {
    Hash::parse(text).map_err(|e| IobenchError::Invalid(format!("bad head in {STATE_FILE}: {e}")))
}

fn checkout_ok(store: &Store, head: &Hash) -> Result<(), IobenchError> {
    if store.contains(head) {
        Ok(())
    } else {
        Err(IobenchError::Invalid(format!("{STATE_FILE} names commit {head}, which the store lacks: use --fresh")))
    }
}

fn checkpoint(dir: &Path, store: &Store, p: &GrowParams, blocks: u64, head: Hash) -> Result<(), IobenchError> {
    store.flush()?;
    store.set_head(GROWN_HEAD, &head)?;
    let state = GrowState {
        values: p.values,
        seed: p.seed,
        cycle_length: p.cycle_length,
        blocks,
        head: head.to_hex(),
        log_bytes: store.log_bytes(),
    };
    save_state(dir, &state)
}

fn finish(
    dir: &Path,
    store: Store,
    mut summary: GrowSummary,
    head: Hash,
    start: Instant,
) -> Result<(GrowSummary, Hash), IobenchError> {
    checkout_ok(&store, &head)?;
    summary.log_bytes = store.log_bytes();
    store.close()?;
    summary.disk_bytes = crate::metrics::dir_bytes(&store_dir(dir));
    summary.seconds = start.elapsed().as_secs_f64();
    summary.head = head.to_hex();
    Ok((summary, head))
}

/// Applies the state-changing operations of a block; reads are skipped.
fn apply_write(store: &Store, tree: &mut Tree, op: &Op) -> arbor::Result<()> {
    match op {
        Op::Add { path, value } => tree.add_mut(path, value),
        Op::AddTree { path, tree: leaves } => {
            let mut sub = store.empty();
            for (p, v) in leaves {
                sub.add_mut(p, v)?;
            }
            tree.add_tree_mut(path, &sub)
        }
        Op::Remove { path } => tree.remove_mut(path),
        _ => Ok(()),
    }
}
