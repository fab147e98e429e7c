//! Paths: sequences of non-empty byte-string steps.

use smallvec::SmallVec;

use crate::error::{Error, Result};

/// One step of a path, owned: a non-empty byte string (Tezos `Context.key` element).
///
/// Stored inline up to 64 bytes, which covers the hex contract ids (42-44 characters), the hex
/// key hashes of big-map entries (64) and the decimal segments that dominate Tezos paths, so
/// that holding one rarely allocates: a step decoded from a record on its way into a node's
/// bindings, the steps a node's lineage notes as changed, a listing's steps. (Bindings held
/// their steps as these until the twenty-third increment of Engine v2: 22 bytes inline spilled
/// most ids and cost ~7% of replay time; 46 spilled every big-map entry's step.) A node's
/// bindings keep their steps packed instead (`tree::Bindings`).
pub type Step = SmallVec<[u8; 64]>;

/// The most steps a path may have, and the most steps from the root of any tree to any of its
/// nodes.
///
/// Tezos keys are short (`data/contracts/index/<id>/<field>` has 5 steps, big-map entries 7;
/// the paths a mainnet block reads average under 7), so this is far above any real key. It
/// bounds the depth of a tree, hence of every walk over one (hashing, writing, folding,
/// export, fsck, eviction, dropping): a commit of a path of 8,000 steps used to overflow the
/// stack. At the maximum every walk fits in a 2 MiB thread stack (measured: writing a commit,
/// the deepest, takes 1.2 MiB; hashing 0.3 MiB).
///
/// The rule, and where it is enforced, all with [`Error::PathTooDeep`] and nothing changed:
/// - every path given to a [`crate::Tree`] operation is checked;
/// - [`crate::Tree::add_tree`] refuses a graft whose result would be deeper: it adds the
///   path's steps to a bound on the grafted tree's height that each tree carries (kept
///   without walking: exact for a tree built in memory, this maximum for one read from a
///   store, that less `k` for a subtree found `k` steps down), and walks the grafted tree
///   only when the bound is not enough, stopping at the first path found too long;
/// - snapshot import refuses a stream deeper than this while reading it, before building
///   the part that is too deep;
/// - a store written by another program (or damaged) may still hold a deeper tree: fold,
///   export, fsck and statistics report it instead of following it.
///
/// Proofs nest at most [`arbor_core::proof::MAX_NESTING`] (512) levels, checked by their
/// decoders, verifiers and prover: a proof of a deeper path is refused.
pub const MAX_PATH_STEPS: usize = 1024;

/// Splits a `/`-separated path into steps.
///
/// `""` and `"/"` are the empty path (the root). Any other empty step is an error: doubled
/// (`a//b`), leading (`/a`) or trailing (`a/`), as Tezos keys never have one and a path that
/// silently loses a step may name another key than meant. More than [`MAX_PATH_STEPS`] steps
/// is an error too.
pub fn parse_path(text: &str) -> Result<Vec<Step>> {
    if text.is_empty() || text == "/" {
        return Ok(Vec::new());
    }
    // Counted before splitting, so a huge path is refused without building its steps.
    let steps = text.bytes().filter(|&b| b == b'/').count() + 1;
    check_depth(steps)?;
    text.split('/')
        .enumerate()
        .map(
            |(index, s)| {
                if s.is_empty() {
                    Err(Error::EmptyStep { index })
                } else {
                    Ok(Step::from_slice(s.as_bytes()))
                }
            },
        )
        .collect()
}

/// Checks that a path has at most [`MAX_PATH_STEPS`] steps and every step is non-empty.
pub(crate) fn check_path<S: AsRef<[u8]>>(path: &[S]) -> Result<()> {
    check_depth(path.len())?;
    match path.iter().position(|s| s.as_ref().is_empty()) {
        Some(index) => Err(Error::EmptyStep { index }),
        None => Ok(()),
    }
}

/// Refuses a path of more than [`MAX_PATH_STEPS`] steps.
fn check_depth(steps: usize) -> Result<()> {
    if steps > MAX_PATH_STEPS {
        return Err(Error::PathTooDeep { steps, max: MAX_PATH_STEPS });
    }
    Ok(())
}

/// Renders steps as a `/`-separated path, escaping non-UTF-8 steps as hex.
pub fn display_path<S: AsRef<[u8]>>(path: &[S]) -> String {
    let mut out = String::new();
    for (i, s) in path.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        match std::str::from_utf8(s.as_ref()) {
            Ok(text) => out.push_str(text),
            Err(_) => {
                out.push_str("0x");
                arbor_core::toolbox::hex::push_str(s.as_ref(), &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_empty_steps() {
        assert!(parse_path("").unwrap().is_empty());
        assert!(parse_path("/").unwrap().is_empty());
        let p = parse_path("data/contracts/global_counter").unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(&p[2][..], b"global_counter");
        assert!(matches!(parse_path("a//b"), Err(Error::EmptyStep { index: 1 })));
        assert!(matches!(parse_path("/a"), Err(Error::EmptyStep { index: 0 })));
        assert!(matches!(parse_path("a/"), Err(Error::EmptyStep { index: 1 })));
        assert!(matches!(parse_path("//"), Err(Error::EmptyStep { index: 0 })));
        assert!(matches!(check_path(&[b"a".as_slice(), b""]), Err(Error::EmptyStep { index: 1 })));
    }

    #[test]
    fn refuses_paths_deeper_than_the_maximum() {
        let at_max = vec!["s"; MAX_PATH_STEPS];
        assert_eq!(parse_path(&at_max.join("/")).unwrap().len(), MAX_PATH_STEPS);
        assert!(check_path(&at_max).is_ok());
        let over = vec!["s"; MAX_PATH_STEPS + 1];
        let max = MAX_PATH_STEPS;
        assert!(
            matches!(parse_path(&over.join("/")), Err(Error::PathTooDeep { steps, max: m }) if steps == max + 1 && m == max)
        );
        assert!(matches!(check_path(&over), Err(Error::PathTooDeep { .. })));
        // The library refuses it too, before any recursion.
        assert!(matches!(crate::Tree::empty().add(&over, b"x"), Err(Error::PathTooDeep { .. })));
    }
}
