//! arbor: a storage engine for blockchain state.
