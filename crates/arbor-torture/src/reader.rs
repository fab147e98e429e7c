//! A reader process: opens the main store read-only while a writer works (and dies) on it,
//! and checks every commit it can see by itself, with no model: the values it folds out of a
//! commit's tree must hash (by the reference oracle) to the tree hash the commit records, and
//! the commit's metadata must hash to the commit's own hash.
//!
//! A commit that disappears under it (dropped by a collection) or a store that does not exist
//! yet is not a failure; anything else the engine reports is. Prints `READ <commits checked>`
//! lines as it goes, and `READ-ERR <commit> <error>` for a failure (then exits 4).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor::io::{OsFs, SplitMix64};
use arbor::{Error, Hash, Order, Store};

use crate::model::Model;
use crate::store_config;

/// A failure seen by a reader: the commit and the error.
type Failure = (Hash, String);

fn check_commit(store: &Store, h: &Hash) -> Result<bool, Failure> {
    let fail = |e: &dyn std::fmt::Display| (*h, e.to_string().replace('\n', " "));
    let benign =
        |e: &Error| matches!(e, Error::CommitDropped { .. } | Error::UnknownCommit(_) | Error::ObjectDropped { .. });
    let info = match store.commit_info(h) {
        Ok(i) => i,
        Err(e) if benign(&e) => return Ok(false),
        Err(e) => return Err(fail(&e)),
    };
    let named = arbor_core::commit_hash(&info.tree, &info.parents, info.date, &info.author, &info.message);
    if named != *h {
        return Err(fail(&format!("commit metadata hashes to {named}")));
    }
    let tree = match store.checkout(h) {
        Ok(t) => t,
        Err(e) if benign(&e) => return Ok(false),
        Err(e) => return Err(fail(&e)),
    };
    let mut model = Model::default();
    let folded = tree.fold::<&[u8], _>(&[], None, Order::Sorted, |path, t| {
        if let Some(v) = t.to_value()? {
            let k = path.iter().map(|s| s.to_vec()).collect();
            model.apply(&crate::model::Op::Add(k, v));
        }
        Ok(true)
    });
    match folded {
        Ok(()) => {}
        Err(e) if benign(&e) => return Ok(false),
        Err(e) => return Err(fail(&e)),
    }
    let actual = model.hash(store.config().inode);
    if actual != info.tree {
        return Err(fail(&format!("the values read hash to {actual}, the commit records tree {}", info.tree)));
    }
    Ok(true)
}

/// Runs a reader for at most `millis` milliseconds; returns its exit code.
pub fn run(store_dir: &Path, seed: u64, millis: u64) -> i32 {
    let deadline = Instant::now() + Duration::from_millis(millis);
    let mut rng = SplitMix64::new(seed);
    let mut store = None;
    let mut checked = 0u64;
    let mut seen_commit = false;
    let mut rounds = 0u64;
    while Instant::now() < deadline {
        let s = match &store {
            Some(s) => s,
            None => match Store::open_with(store_dir, store_config(Arc::new(OsFs), true)) {
                Ok(s) => store.insert(s),
                Err(e) if seen_commit => {
                    println!("READ-ERR - read-only open: {}", e.to_string().replace('\n', " "));
                    return 4;
                }
                // Not created yet, or created but without its first control file: wait.
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                }
            },
        };
        if let Err(e) = s.refresh() {
            if seen_commit {
                println!("READ-ERR - refresh: {}", e.to_string().replace('\n', " "));
                return 4;
            }
            // A read-only open of a directory the writer is still creating succeeds, and its
            // refresh then fails (files not made yet): start again. Once a commit was seen
            // the store exists, and every error counts.
            store = None;
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        let commits = s.commits();
        if commits.is_empty() {
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        seen_commit = true;
        // The newest commit and one at random.
        let pick = [commits[commits.len() - 1], commits[rng.below(commits.len() as u64) as usize]];
        for h in pick {
            match check_commit(s, &h) {
                Ok(true) => checked += 1,
                Ok(false) => {}
                Err((h, e)) => {
                    println!("READ-ERR {} {e}", h.to_hex());
                    return 4;
                }
            }
        }
        rounds += 1;
        if rounds.is_multiple_of(16) {
            // A fresh read-only open now and then: it must cope with whatever the writer's
            // last kill left (a torn tail, an interrupted collection).
            store = None;
        }
        if checked.is_multiple_of(64) {
            println!("READ {checked}");
            let _ = std::io::stdout().flush();
        }
    }
    0
}
