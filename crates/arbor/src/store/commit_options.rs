//! What a commit records besides its tree, built with setters.

use arbor_core::Hash;

use super::{Store, WriteStats};
use crate::error::Result;
use crate::tree::Tree;

/// The metadata of a commit: parents, date, author and message (Tezos `Context.commit ~time
/// ~message`, whose author is always "Tezos", the default here). Fields may be added in later
/// versions; build it with [`CommitOptions::new`] and the setters.
///
/// ```
/// # use arbor::{store::CommitOptions, Store};
/// # let dir = tempfile::tempdir().unwrap();
/// let store = Store::open(dir.path())?;
/// let tree = store.empty().add(&["version"], b"01")?;
/// let first = store.commit_with(&tree, &CommitOptions::new().date(1_530_374_912).message("genesis"))?.0;
/// let tree = tree.add(&["version"], b"02")?;
/// let second = store.commit_with(&tree, &CommitOptions::new().parent(first).date(1_530_374_942))?.0;
/// assert_eq!(store.commit_info(&second)?.parents, vec![first]);
/// # Ok::<(), arbor::Error>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CommitOptions {
    /// Parent commits, in the order given (the commit hash sorts them, as Irmin does).
    pub parents: Vec<Hash>,
    /// Seconds since the Unix epoch.
    pub date: i64,
    /// Author bytes ("Tezos" unless set).
    pub author: Vec<u8>,
    /// Message bytes (empty unless set).
    pub message: Vec<u8>,
}

impl Default for CommitOptions {
    fn default() -> CommitOptions {
        CommitOptions { parents: Vec::new(), date: 0, author: b"Tezos".to_vec(), message: Vec::new() }
    }
}

impl CommitOptions {
    /// No parents, date 0, author "Tezos", empty message.
    pub fn new() -> CommitOptions {
        CommitOptions::default()
    }

    /// Adds a parent.
    pub fn parent(mut self, parent: Hash) -> CommitOptions {
        self.parents.push(parent);
        self
    }

    /// Sets the parents.
    pub fn parents(mut self, parents: &[Hash]) -> CommitOptions {
        self.parents = parents.to_vec();
        self
    }

    /// Sets the date, in seconds since the Unix epoch.
    pub fn date(mut self, date: i64) -> CommitOptions {
        self.date = date;
        self
    }

    /// Sets the author.
    pub fn author(mut self, author: impl AsRef<[u8]>) -> CommitOptions {
        self.author = author.as_ref().to_vec();
        self
    }

    /// Sets the message.
    pub fn message(mut self, message: impl AsRef<[u8]>) -> CommitOptions {
        self.message = message.as_ref().to_vec();
        self
    }
}

impl Store {
    /// Commits `tree` with the metadata in `options` (see [`Store::commit`]); returns the
    /// commit hash and what was written.
    pub fn commit_with(&self, tree: &Tree, options: &CommitOptions) -> Result<(Hash, WriteStats)> {
        self.commit_with_stats(tree, &options.parents, options.date, &options.author, &options.message)
    }
}
