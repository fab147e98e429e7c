//! Pieces every command shares: the `--store` argument, hash and path parsing, and the
//! choice of the default commit.

use std::path::{Path, PathBuf};

use arbor::{Config, Hash, Step, Store};
use clap::Args;

use crate::error::{CliError, CliResult};
use crate::rev::Rev;

/// The head `commit` moves and read commands start from by default.
pub const MAIN_HEAD: &str = "main";

/// The `--store DIR` argument, flattened into every subcommand.
#[derive(Args, Debug, Clone)]
pub struct StoreArg {
    /// Directory of the store (default: the ARBOR_STORE environment variable).
    #[arg(long, value_name = "DIR", env = "ARBOR_STORE")]
    pub store: PathBuf,
}

impl StoreArg {
    /// Opens an existing store for writing; fails, creating nothing, if there is none.
    pub fn open_existing(&self) -> CliResult<Store> {
        self.require_store()?;
        Ok(Store::open(&self.store)?)
    }

    /// Opens the store for writing, creating it if the directory is missing or empty, and
    /// says what was created so a refused command can take it back ([`Created::undo`]).
    /// A regular file, or a directory holding other things, is refused untouched.
    pub fn open_or_create(&self, config: Config) -> CliResult<(Store, Created)> {
        let dir = &self.store;
        let created = match presence(dir)? {
            Presence::Store => Created::Nothing,
            Presence::Missing => {
                // The topmost missing ancestor: everything from there down is this command's.
                let mut top = dir.clone();
                while let Some(parent) = top.parent().filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
                    top = parent.to_path_buf();
                }
                Created::Dir(top)
            }
            Presence::Empty => Created::ContentsOf(dir.clone()),
            Presence::File => {
                return Err(CliError::failed(format!("{} is a file, not a store directory", dir.display())))
            }
            Presence::Foreign => {
                return Err(CliError::failed(format!(
                    "{} is not empty and holds no store: give a new or empty directory",
                    dir.display()
                )))
            }
        };
        match Store::open_with(dir, config) {
            Ok(store) => Ok((store, created)),
            Err(e) => {
                created.undo();
                Err(e.into())
            }
        }
    }

    /// Opens the store read-only: no lock is taken, so this works beside a running writer,
    /// and a missing store is reported instead of created.
    pub fn open_read_only(&self) -> CliResult<Store> {
        self.open_read_only_with(Config::default())
    }

    /// [`StoreArg::open_read_only`] with other settings (`read_only` is forced on).
    pub fn open_read_only_with(&self, config: Config) -> CliResult<Store> {
        self.require_store()?;
        Ok(Store::open_with(&self.store, config.with_read_only(true))?)
    }

    /// Fails with "no store at DIR" unless DIR holds a store: the engine would read an empty
    /// directory (or even a regular file) as an empty store, which a read command must not.
    pub(crate) fn require_store(&self) -> CliResult {
        match presence(&self.store)? {
            Presence::Store => Ok(()),
            _ => Err(CliError::failed(format!("no store at {}", self.store.display()))),
        }
    }
}

/// What `--store` names, seen before opening it.
enum Presence {
    /// A directory with a store's control file or log folder (docs/FORMAT.md, section 1).
    Store,
    /// Nothing there.
    Missing,
    /// An empty directory.
    Empty,
    /// Something other than a directory.
    File,
    /// A directory holding other things than a store.
    Foreign,
}

fn presence(dir: &Path) -> CliResult<Presence> {
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Presence::Missing),
        Err(e) => return Err(CliError::failed(format!("cannot read {}: {e}", dir.display()))),
    };
    if !meta.is_dir() {
        return Ok(Presence::File);
    }
    // A store whose control file was lost still has its log, which recovery reads.
    if dir.join("control").is_file() || dir.join("pack").is_dir() {
        return Ok(Presence::Store);
    }
    let mut entries =
        std::fs::read_dir(dir).map_err(|e| CliError::failed(format!("cannot read {}: {e}", dir.display())))?;
    Ok(if entries.next().is_none() { Presence::Empty } else { Presence::Foreign })
}

/// What [`StoreArg::open_or_create`] created, to remove if the command is refused later.
#[derive(Debug)]
#[must_use = "a refused command must undo what it created"]
pub enum Created {
    /// The store was there already: nothing to undo.
    Nothing,
    /// This directory (the store or its topmost new ancestor) did not exist.
    Dir(PathBuf),
    /// This directory existed and was empty: what is in it now is ours.
    ContentsOf(PathBuf),
}

impl Created {
    /// Removes what the command created (the store must be closed first). Best effort: the
    /// command's own error is what gets reported, so a failure here is only warned about.
    pub fn undo(self) {
        let result = match &self {
            Created::Nothing => Ok(()),
            Created::Dir(d) => std::fs::remove_dir_all(d),
            Created::ContentsOf(d) => std::fs::read_dir(d).and_then(|entries| {
                for e in entries {
                    let path = e?.path();
                    if path.is_dir() {
                        std::fs::remove_dir_all(&path)?;
                    } else {
                        std::fs::remove_file(&path)?;
                    }
                }
                Ok(())
            }),
        };
        if let Err(e) = result {
            eprintln!("arbor: could not remove what the refused command created ({self:?}): {e}");
        }
    }

    /// Runs `work` on the store; if it fails, closes the store and undoes the creation.
    pub fn guard<T>(self, store: Store, work: impl FnOnce(&Store) -> CliResult<T>) -> CliResult<T> {
        match work(&store) {
            Ok(v) => {
                // Durable before it is reported.
                store.close()?;
                Ok(v)
            }
            Err(e) => {
                drop(store);
                self.undo();
                Err(e)
            }
        }
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
        // A path too deep to take is too long to echo whole.
        other => match text.char_indices().nth(60) {
            Some((cut, _)) => format!("bad path '{}…': {other}", &text[..cut]),
            None => format!("bad path '{text}': {other}"),
        },
    }
}

/// The commit a read command looks at: the revision given, which must name one, else head
/// `main`, else the last commit written.
pub fn resolve_commit(store: &Store, given: Option<&Rev>) -> CliResult<Hash> {
    match given {
        Some(rev) => rev.resolve(store),
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
