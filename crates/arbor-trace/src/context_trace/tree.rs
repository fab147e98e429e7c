//! What the importer knows of a tree the recorded node held in memory.
//!
//! A tree is a *base* plus the edits made to it since, newest last. The base is a subtree of
//! a context version (`Ctx`: the tree `find_tree` returned), an empty tree, a value, or
//! something the trace does not say (`Unknown`: a tree a fold visited, whose step is not
//! recorded). Edits are kept as a shared list, so deriving a tree from another costs one
//! node whatever their number.

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::types::Path;

/// A context version: an index into the block's versions.
pub(super) type VersionId = u32;

/// Where a tree's content comes from.
#[derive(Clone, Debug)]
pub(super) enum Base {
    /// The subtree at `path` of version `at` of block `epoch`'s contexts.
    Ctx {
        /// The block (row) whose versions `at` counts in.
        epoch: u64,
        /// The version.
        at: VersionId,
        /// Absolute path in the context.
        path: Path,
    },
    /// The empty tree.
    Empty,
    /// A value.
    Value(Rc<[u8]>),
    /// Content the trace does not give, and why.
    Unknown(&'static str),
}

/// One change made to a tree.
#[derive(Clone, Debug)]
pub(super) enum Edit {
    /// `add`: the path becomes this value.
    Set(Rc<[u8]>),
    /// `remove`.
    Remove,
    /// `add_tree`: the path becomes this tree.
    Graft(TreeVal),
}

#[derive(Debug)]
pub(super) struct EditNode {
    prev: Option<Rc<EditNode>>,
    path: Path,
    edit: Edit,
}

impl Drop for EditNode {
    /// Unlinks the chain of older edits one by one: dropping it recursively would take stack
    /// in proportion to its length, which a trace chooses.
    fn drop(&mut self) {
        let mut prev = self.prev.take();
        while let Some(rc) = prev {
            match Rc::try_unwrap(rc) {
                Ok(mut node) => prev = node.prev.take(),
                // Still shared: whoever holds it drops it later.
                Err(_) => break,
            }
        }
    }
}

/// A tree: its base, then its edits.
#[derive(Clone, Debug)]
pub(super) struct TreeVal {
    pub(super) base: Base,
    edits: Option<Rc<EditNode>>,
    /// How deeply grafts nest in it (0: none).
    nest: u32,
}

/// Deepest nesting of grafts followed: far beyond what a node builds, and a bound on the
/// stack a hostile trace can make the importer use (walks recurse into grafts).
const MAX_NEST: u32 = 256;

/// The final content of a tree built in memory.
pub(super) enum Concrete {
    /// A value.
    Value(Rc<[u8]>),
    /// A directory: every value below it by relative path (empty: the empty tree).
    Dir(BTreeMap<Path, Rc<[u8]>>),
}

/// Whether `a` is `b` or one of its ancestors.
pub(super) fn is_prefix(a: &[Vec<u8>], b: &[Vec<u8>]) -> bool {
    a.len() <= b.len() && b[..a.len()] == *a
}

/// Whether a change at one path can change what is at the other (one is a prefix of the
/// other).
pub(super) fn overlaps(a: &[Vec<u8>], b: &[Vec<u8>]) -> bool {
    is_prefix(a, b) || is_prefix(b, a)
}

pub(super) fn join(a: &[Vec<u8>], b: &[Vec<u8>]) -> Path {
    let mut p = Vec::with_capacity(a.len() + b.len());
    p.extend_from_slice(a);
    p.extend_from_slice(b);
    p
}

impl TreeVal {
    /// A tree with no edits.
    pub(super) fn of(base: Base) -> TreeVal {
        TreeVal { base, edits: None, nest: 0 }
    }

    /// This tree with one more edit.
    pub(super) fn with(&self, path: Path, edit: Edit) -> TreeVal {
        let nest = match &edit {
            Edit::Graft(g) => self.nest.max(g.nest + 1),
            _ => self.nest,
        };
        if nest > MAX_NEST {
            return TreeVal::of(Base::Unknown("a tree whose grafts nest too deeply to follow"));
        }
        let edits = Some(Rc::new(EditNode { prev: self.edits.clone(), path, edit }));
        TreeVal { base: self.base.clone(), edits, nest }
    }

    /// The edits, oldest first.
    pub(super) fn edits(&self) -> Vec<(&Path, &Edit)> {
        let mut out = Vec::new();
        let mut node = self.edits.as_deref();
        while let Some(n) = node {
            out.push((&n.path, &n.edit));
            node = n.prev.as_deref();
        }
        out.reverse();
        out
    }

    /// When the tree is an unedited subtree of a context version: the version and the path.
    pub(super) fn plain(&self) -> Option<(u64, VersionId, &Path)> {
        match (&self.base, &self.edits) {
            (Base::Ctx { epoch, at, path }, None) => Some((*epoch, *at, path)),
            _ => None,
        }
    }

    /// The subtree at `key` (`find_tree`), as far as it is known.
    pub(super) fn subtree(&self, key: &[Vec<u8>]) -> TreeVal {
        // Walk the edits newest first: the newest edit at `key` or above decides what `key`
        // started from; the edits below `key` made after it are kept, re-rooted.
        let mut below = Vec::new();
        let mut node = self.edits.as_deref();
        while let Some(n) = node {
            if is_prefix(&n.path, key) {
                let rest = &key[n.path.len()..];
                let start = match &n.edit {
                    Edit::Set(v) if rest.is_empty() => TreeVal::of(Base::Value(v.clone())),
                    Edit::Set(_) | Edit::Remove => TreeVal::of(Base::Empty),
                    Edit::Graft(g) => g.subtree(rest),
                };
                return start.with_all(below);
            }
            if is_prefix(key, &n.path) {
                below.push((n.path[key.len()..].to_vec(), n.edit.clone()));
            }
            node = n.prev.as_deref();
        }
        let base = match &self.base {
            Base::Ctx { epoch, at, path } => Base::Ctx { epoch: *epoch, at: *at, path: join(path, key) },
            Base::Value(v) if key.is_empty() => Base::Value(v.clone()),
            Base::Empty | Base::Value(_) => Base::Empty,
            Base::Unknown(why) => Base::Unknown(why),
        };
        TreeVal::of(base).with_all(below)
    }

    /// This tree with `newest_first` edits added, oldest first.
    fn with_all(self, newest_first: Vec<(Path, Edit)>) -> TreeVal {
        newest_first.into_iter().rev().fold(self, |t, (p, e)| t.with(p, e))
    }

    /// The tree's whole content, when it was built in memory from known parts.
    pub(super) fn concrete(&self) -> Option<Concrete> {
        let mut c = match &self.base {
            Base::Empty => Concrete::Dir(BTreeMap::new()),
            Base::Value(v) => Concrete::Value(v.clone()),
            Base::Ctx { .. } | Base::Unknown(_) => return None,
        };
        for (path, edit) in self.edits() {
            match edit {
                Edit::Set(v) => c.put(path, Concrete::Value(v.clone())),
                Edit::Remove if path.is_empty() => c = Concrete::Dir(BTreeMap::new()),
                Edit::Remove => {
                    if let Concrete::Dir(m) = &mut c {
                        remove_under(m, path);
                    }
                }
                Edit::Graft(g) => c.put(path, g.concrete()?),
            }
        }
        Some(c)
    }
}

/// Removes `key` and everything below it.
fn remove_under(m: &mut BTreeMap<Path, Rc<[u8]>>, key: &[Vec<u8>]) {
    // Paths order step by step, so `key` and its descendants are contiguous from `key` on.
    let doomed: Vec<Path> =
        m.range(key.to_vec()..).take_while(|(p, _)| is_prefix(key, p)).map(|(p, _)| p.clone()).collect();
    for p in doomed {
        m.remove(&p);
    }
}

impl Concrete {
    /// `key` becomes `sub`, as `add_tree` does: values on the way become directories.
    fn put(&mut self, key: &[Vec<u8>], sub: Concrete) {
        if key.is_empty() {
            *self = sub;
            return;
        }
        if let Concrete::Value(_) = self {
            *self = Concrete::Dir(BTreeMap::new());
        }
        let Concrete::Dir(m) = self else { unreachable!("made a directory above") };
        for i in 1..key.len() {
            m.remove(&key[..i]);
        }
        remove_under(m, key);
        match sub {
            Concrete::Value(v) => {
                m.insert(key.to_vec(), v);
            }
            Concrete::Dir(sm) => {
                for (p, v) in sm {
                    m.insert(join(key, &p), v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Path {
        s.split('/').filter(|x| !x.is_empty()).map(|x| x.as_bytes().to_vec()).collect()
    }

    fn v(s: &str) -> Rc<[u8]> {
        s.as_bytes().into()
    }

    fn leaves(t: &TreeVal) -> Vec<(String, String)> {
        match t.concrete() {
            Some(Concrete::Dir(m)) => m
                .iter()
                .map(|(k, v)| {
                    let k: Vec<String> = k.iter().map(|s| String::from_utf8_lossy(s).into_owned()).collect();
                    (k.join("/"), String::from_utf8_lossy(v).into_owned())
                })
                .collect(),
            Some(Concrete::Value(v)) => vec![(String::new(), String::from_utf8_lossy(&v).into_owned())],
            None => panic!("not concrete"),
        }
    }

    #[test]
    fn trees_built_in_memory_are_known_whole() {
        let t = TreeVal::of(Base::Empty)
            .with(p("a/b"), Edit::Set(v("1")))
            .with(p("a/c"), Edit::Set(v("2")))
            .with(p("d"), Edit::Set(v("3")));
        // A value on the way becomes a directory; a removal takes the whole subtree.
        let t2 = t.with(p("d/e"), Edit::Set(v("4"))).with(p("a"), Edit::Remove);
        assert_eq!(leaves(&t2), [("d/e".into(), "4".into())]);
        // A graft replaces what was there.
        let g = TreeVal::of(Base::Value(v("x")));
        let t3 = t.with(p("a"), Edit::Graft(g));
        assert_eq!(leaves(&t3), [("a".into(), "x".into()), ("d".into(), "3".into())]);
        // A tree with a context as its base is not known whole.
        let c = TreeVal::of(Base::Ctx { epoch: 0, at: 0, path: p("data") });
        assert!(c.with(p("k"), Edit::Set(v("1"))).concrete().is_none());
        // Grafts nested beyond the limit are not followed (nor recursed into).
        let mut deep = TreeVal::of(Base::Empty);
        for _ in 0..=MAX_NEST {
            deep = TreeVal::of(Base::Empty).with(p("a"), Edit::Graft(deep));
        }
        assert!(matches!(deep.base, Base::Unknown(_)));
    }

    #[test]
    fn subtrees_follow_the_edits() {
        let c = TreeVal::of(Base::Ctx { epoch: 0, at: 3, path: p("data/x") });
        // Untouched: a subtree of the same version.
        let s = c.with(p("other"), Edit::Remove).subtree(&p("k/l"));
        assert_eq!(s.plain().map(|(_, at, path)| (at, path.clone())), Some((3, p("data/x/k/l"))));
        // An edit below the key stays, re-rooted; one at or above it decides the base.
        let s = c.with(p("k/l/m"), Edit::Set(v("1"))).subtree(&p("k"));
        assert!(s.plain().is_none());
        assert_eq!(s.edits().len(), 1);
        assert_eq!(s.edits()[0].0, &p("l/m"));
        let s = c.with(p("k"), Edit::Set(v("9"))).subtree(&p("k"));
        assert_eq!(leaves(&s), [(String::new(), "9".into())]);
        let s = c.with(p("k"), Edit::Remove).with(p("k/z"), Edit::Set(v("2"))).subtree(&p("k"));
        assert_eq!(leaves(&s), [("z".into(), "2".into())]);
        assert!(overlaps(&p("a/b"), &p("a")) && overlaps(&p("a"), &p("a/b")) && !overlaps(&p("a/b"), &p("a/c")));
    }
}
