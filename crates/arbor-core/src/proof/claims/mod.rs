//! The claims of a proof (its reads and writes) walked down a partial tree: which nodes each
//! claim needs shown, and what the writes make of the tree. Shared by the prover, the
//! verifier and the stream traversal.

pub(crate) mod partial;
pub(crate) mod walk;
