//! Pieces every command shares: the `--store` argument, hash and path parsing, and the
//! choice of the default commit.

use std::path::PathBuf;

use arbor::{Config, Hash, Step, Store};
use clap::Args;

use crate::error::{CliError, CliResult};

/// The head `commit` moves and read commands start from by default.
pub const MAIN_HEAD: &str = "main";

/// The `--store DIR` argument, flattened into every subcommand.
#[derive(Args, Debug, Clone)]
pub struct StoreArg {
    /// Directory of the store.
    #[arg(long, value_name = "DIR")]
    pub store: PathBuf,
}

impl StoreArg {
    /// Opens the store for writing (creating it if missing); fails if another writer holds it.
    pub fn open_writable(&self) -> CliResult<Store> {
        Ok(Store::open(&self.store)?)
    }

    /// Opens the store read-only: no lock is taken, so this works beside a running writer,
    /// and a missing store is reported instead of created.
    pub fn open_read_only(&self) -> CliResult<Store> {
        Ok(Store::open_with(&self.store, Config { read_only: true, ..Default::default() })?)
    }
}

/// Clap value parser for commit hashes: 64 hex digits or a "Co…" base58check hash.
/// A malformed hash is a usage error (exit 2), unlike a well-formed unknown one.
pub fn parse_hash(text: &str) -> Result<Hash, String> {
    Hash::parse(text.trim()).map_err(|e| format!("not a context hash (64 hex digits or Co…): {e}"))
}

/// Parses a `/`-separated path given on the command line; an empty step is a usage error.
pub fn parse_path(text: &str) -> CliResult<Vec<Step>> {
    arbor::parse_path(text).map_err(|e| CliError::usage(path_error(text, &e)))
}

/// Why `text` is not a path, for messages: the step at fault and the likely slip.
pub fn path_error(text: &str, e: &arbor::Error) -> String {
    match e {
        arbor::Error::EmptyStep { index } => {
            format!("empty step {index} in path '{text}' (a leading, trailing or doubled '/')")
        }
        other => format!("bad path '{text}': {other}"),
    }
}

/// The commit a read command looks at: the one given, which must exist, else head `main`,
/// else the last commit written.
pub fn resolve_commit(store: &Store, given: Option<Hash>) -> CliResult<Hash> {
    match given {
        Some(h) if store.contains(&h) => Ok(h),
        // The store says why: unknown, or dropped by a garbage collection.
        Some(h) => {
            Err(CliError::failed(store.commit_info(&h).err().map_or(format!("unknown commit {h}"), |e| e.to_string())))
        }
        None => default_commit(store)
            .ok_or_else(|| CliError::failed(format!("store {} has no commits", store.dir().display()))),
    }
}

/// Head `main` if set, else the last commit written, else none (an empty store).
pub fn default_commit(store: &Store) -> Option<Hash> {
    store.head(MAIN_HEAD).or_else(|| store.last_commit())
}

/// A path for messages: `/` for the root, else the steps joined by `/`.
pub fn show_path(path: &[Step]) -> String {
    if path.is_empty() {
        "/".to_string()
    } else {
        arbor::path::display_path(path)
    }
}
