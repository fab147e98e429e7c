//! What Tarides' trace files share: values in the binary form of the OCaml `Repr` library,
//! and the framing around them (magic, version, header, length-prefixed rows).
//!
//! Both irmin-bench's replayable traces ([`crate::irmin`]) and the Octez context traces of
//! `tezos-context-trace` ([`crate::context_trace`]) are written by the same OCaml helper
//! ("auto file format"), so their framing is read here once; each format decodes its own
//! header and rows from the bytes this module hands over.

mod bin;
mod file;

pub(crate) use bin::*;
pub(crate) use file::{AtCut, ReprReader, ReprWriter};
