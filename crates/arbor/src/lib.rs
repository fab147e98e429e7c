//! arbor: a storage engine for blockchain state, compatible with the Tezos context.
//!
//! A [`Tree`] is an immutable tree of paths to byte values; a [`Store`] keeps trees as
//! commits in an append-only log, each named by its Tezos context hash.
//!
//! ```
//! use arbor::Store;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let store = Store::open(dir.path())?;
//! let mut tree = store.empty();
//! tree.add_mut(&["data", "contracts", "global_counter"], &[42])?;
//! let commit = store.commit(&tree, &[], 0, "Tezos", "genesis")?;
//! assert_eq!(store.checkout(&commit)?.find(&["data", "contracts", "global_counter"])?, Some(vec![42]));
//! # Ok::<(), arbor::Error>(())
//! ```
#![deny(unsafe_code)]

pub mod config;
pub mod error;
/// Entry points for the fuzz targets in `fuzz/`: not part of the API (hidden, unstable).
#[doc(hidden)]
pub mod fuzzing;
pub mod io;
pub mod path;
pub mod proof;
pub mod snapshot;
pub mod tree;

pub use arbor_core::{Hash, InodeConfig};
pub use config::{Config, Durability};
pub use error::{Corruption, Error, Result};
pub use path::{parse_path, Step};
pub use tree::{Depth, Kind, Order, SharedValue, Tree};
pub(crate) mod pack;
pub mod store;

pub use store::{CommitInfo, CommitOptions, GcHandle, GcMode, GcReport, RepairReport, Store};
