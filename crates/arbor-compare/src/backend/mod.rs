//! The backends, and the replay of a flat operation stream that the Rust peers share.
//!
//! A peer implements [`FlatStore`]: reads of the last committed state, and a commit of one
//! block's writes that returns only once they are durable. [`replay_flat`] does the rest the
//! same way for every peer: it loads the initial-state frames (timed apart), then for each
//! block keeps the block's writes in an overlay (so later reads in the block see them, as a
//! node's in-memory state would), checks every read the trace can vouch for, and commits.

pub mod arbor;
pub mod firewood;
pub mod nomt;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::time::Instant;

use crate::error::{IoContext, Result};
use crate::flat::{Expect, FlatOp, FlatReader, Frame, Key};
use crate::measure::{cpu_seconds, disk_bytes, peak_rss_bytes, reset_peak_rss, rss_bytes, ProcIo};
use crate::result::{BackendRun, BlockTime};

/// A store without directories, driven one block at a time.
pub trait FlatStore {
    /// Starts a block (a read session on the last committed state).
    fn begin_block(&mut self) -> Result<()>;
    /// Reads a key of the last committed state.
    fn get(&mut self, key: &Key) -> Result<Option<Vec<u8>>>;
    /// Commits the block's writes (sorted by key, one per key; `None` deletes) and returns
    /// once they are durable.
    fn commit(&mut self, level: u64, writes: Vec<(Key, Option<Vec<u8>>)>) -> Result<()>;
    /// The current root, hex.
    fn root(&self) -> String;
    /// Flushes and closes the store; returns remarks for the report.
    fn close(self: Box<Self>) -> Result<Vec<String>>;
}

/// What a block does to the counters of checked reads.
#[derive(Default)]
struct Checks {
    checked: u64,
    mismatches: u64,
    unchecked: u64,
}

impl Checks {
    fn note(&mut self, expect: &Expect, got: Option<&[u8]>) {
        match expect.check(got) {
            None => self.unchecked += 1,
            Some(true) => self.checked += 1,
            Some(false) => {
                self.checked += 1;
                self.mismatches += 1;
            }
        }
    }
}

fn apply_block(store: &mut dyn FlatStore, level: u64, ops: Vec<FlatOp>, checks: &mut Checks) -> Result<()> {
    store.begin_block()?;
    let mut overlay: BTreeMap<Key, Option<Vec<u8>>> = BTreeMap::new();
    for op in ops {
        match op {
            FlatOp::Get(key, expect) | FlatOp::Has(key, expect) => {
                let got = match overlay.get(&key) {
                    Some(v) => v.clone(),
                    None => store.get(&key)?,
                };
                checks.note(&expect, got.as_deref());
            }
            FlatOp::Put(key, value) => {
                overlay.insert(key, Some(value));
            }
            FlatOp::Del(key) => {
                overlay.insert(key, None);
            }
        }
    }
    store.commit(level, overlay.into_iter().collect())
}

/// Replays the flat stream at `input` into `store`, whose files are under `dir`, and fills
/// `run` with the measurements. Frames are decoded on another thread, a few ahead, so that
/// decoding is not timed.
pub fn replay_flat(store: Box<dyn FlatStore>, dir: &Path, input: &Path, run: &mut BackendRun) -> Result<()> {
    let file = File::open(input).ctx(|| format!("opening {}", input.display()))?;
    let mut reader = FlatReader::new(BufReader::with_capacity(1 << 20, file))?;
    let mut store = store;
    let mut checks = Checks::default();
    std::thread::scope(|scope| -> Result<()> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Frame>>(4);
        scope.spawn(move || loop {
            let next = reader.next_frame().transpose();
            let Some(next) = next else { break };
            let stop = next.is_err();
            if tx.send(next).is_err() || stop {
                break;
            }
        });
        let load_start = Instant::now();
        let mut loading = true;
        let (mut io0, mut cpu0) = (ProcIo::now(), cpu_seconds());
        for frame in rx.iter() {
            match frame? {
                Frame::Initial(ops) => {
                    run.load_values += ops.iter().filter(|o| matches!(o, FlatOp::Put(..))).count() as u64;
                    apply_block(store.as_mut(), 0, ops, &mut checks)?;
                }
                Frame::Block(block) => {
                    if loading {
                        loading = false;
                        run.load_seconds = load_start.elapsed().as_secs_f64();
                        run.disk_after_load = disk_bytes(dir);
                        run.peak_rss_reset = reset_peak_rss();
                        io0 = ProcIo::now();
                        cpu0 = cpu_seconds();
                    }
                    let start = Instant::now();
                    apply_block(store.as_mut(), block.level, block.ops, &mut checks)?;
                    let time_ns = start.elapsed().as_nanos() as u64;
                    run.blocks.push(BlockTime {
                        level: block.level,
                        ops: block.trace_ops as u64,
                        time_ns,
                        rss: rss_bytes(),
                    });
                }
            }
        }
        run.io = ProcIo::now().since(io0);
        let cpu1 = cpu_seconds();
        run.cpu_user = cpu1.0 - cpu0.0;
        run.cpu_sys = cpu1.1 - cpu0.1;
        run.peak_rss = peak_rss_bytes().max(run.blocks.iter().map(|b| b.rss).max().unwrap_or(0));
        Ok(())
    })?;
    run.checked_reads = checks.checked;
    run.mismatches = checks.mismatches;
    run.unchecked_reads = checks.unchecked;
    run.root = store.root();
    run.notes.extend(store.close()?);
    Ok(())
}
