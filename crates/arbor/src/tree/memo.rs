//! The directory a tree's last lookup ended in, so that the next lookup below it starts there.
//!
//! A transaction reads, checks and writes a handful of values of one account
//! (`contracts/index/<id>/balance`, `.../counter`, ...): in a mainnet block, 84% of writes
//! follow a `mem` and a read of the same path, and a lookup shares on average more than half
//! of its steps with the one before it. Every walk from the root repeats the descent through
//! `contracts/index`, a large directory whose inode levels each cost a step hash and a
//! search. The memo keeps the directory holding the last path's final step and the steps that
//! lead to it; a lookup whose path starts with those steps walks only the rest.
//!
//! The memo holds a reference to a node of the tree, which would make a change copy that
//! node instead of changing it in place: a tree forgets its memo before every change.

use arbor_core::toolbox::bytes;

use super::node::Ptr;
use super::trail::Trails;

/// The directory at a path of a tree, and that path.
#[derive(Debug, Default)]
pub(super) struct Memo {
    /// The path's steps, end to end.
    bytes: Vec<u8>,
    /// Where each step ends in `bytes`.
    ends: Vec<usize>,
    /// The directory at the path (a `Ptr::Dir`); None: nothing remembered.
    dir: Option<Ptr>,
    /// The ways the tree's last writes went (kept when the directory is forgotten); boxed
    /// and made on the tree's second change ([`Memo::trails`]).
    pub trails: Option<Box<Trails>>,
    /// Whether the tree changed already.
    changed: bool,
}

impl Memo {
    /// The directory remembered and its path's length in steps, if that path is a proper
    /// prefix of `path` (so that the lookup of `path` can start there); and how many of
    /// `path`'s first steps the path remembered shares, for [`Memo::remember_known`].
    pub fn start<S: AsRef<[u8]>>(&self, path: &[S]) -> (Option<(&Ptr, usize)>, usize) {
        let shared = self.shared(path);
        let k = self.ends.len();
        let start = self.dir.as_ref().filter(|_| shared == k && k < path.len()).map(|dir| (dir, k));
        (start, shared)
    }

    /// Remembers `dir`, the directory at `path`.
    pub fn remember<S: AsRef<[u8]>>(&mut self, path: &[S], dir: Ptr) {
        let shared = self.shared(path);
        self.remember_known(path, dir, shared);
    }

    /// [`Memo::remember`], knowing that the path remembered and `path` share their first
    /// `shared` steps and no more ([`Memo::start`] said so of a path `path` begins): the
    /// steps are compared once a lookup, not once to start it and again to remember.
    pub fn remember_known<S: AsRef<[u8]>>(&mut self, path: &[S], dir: Ptr, shared: usize) {
        debug_assert_eq!(shared, self.shared(path), "the steps shared");
        self.dir = Some(dir);
        if shared == self.ends.len() && shared == path.len() {
            // The path of the lookup just before (a change most often follows a read of its
            // path): kept as it is.
            return;
        }
        // The steps shared stay (most often `data`, `contracts`, `index`); the rest is
        // replaced.
        self.bytes.truncate(shared.checked_sub(1).map_or(0, |i| self.ends[i]));
        self.ends.truncate(shared);
        for step in &path[shared..] {
            self.bytes.extend_from_slice(step.as_ref());
            self.ends.push(self.bytes.len());
        }
    }

    /// How many first steps the path remembered (or last remembered, when forgotten
    /// since) and `path` share.
    fn shared<S: AsRef<[u8]>>(&self, path: &[S]) -> usize {
        let mut from = 0;
        for (i, (&end, step)) in self.ends.iter().zip(path).enumerate() {
            if !bytes::eq(&self.bytes[from..end], step.as_ref()) {
                return i;
            }
            from = end;
        }
        self.ends.len().min(path.len())
    }

    /// The tree's trails, for a change about to be made: None for its first change, as most
    /// trees changed once are changed only once (the copy a persistent `add` makes and
    /// changes, then left for the next copy); the trails are made for the second.
    pub fn trails(&mut self) -> Option<&mut Trails> {
        if self.trails.is_none() {
            if !self.changed {
                self.changed = true;
                return None;
            }
            self.trails = Some(Box::default());
        }
        self.trails.as_deref_mut()
    }

    /// Forgets the directory (the tree is about to change).
    pub fn forget(&mut self) {
        self.dir = None;
    }
}

#[cfg(test)]
mod tests {
    use crate::tree::Tree;

    fn add(t: &mut Tree, path: &[&str], value: &str) {
        let path: Vec<&[u8]> = path.iter().map(|s| s.as_bytes()).collect();
        t.add_mut(&path, value.as_bytes()).unwrap();
    }

    fn find(t: &Tree, path: &[&str]) -> Option<String> {
        let path: Vec<&[u8]> = path.iter().map(|s| s.as_bytes()).collect();
        t.find(&path).unwrap().map(|v| String::from_utf8(v).unwrap())
    }

    /// A path remembered over another keeps the steps they share and takes the rest from the
    /// new one: a lookup starts at the new path alone, and the steps shared are counted as
    /// many as they are (fails with the old path's last step kept, or a shorter or longer
    /// path's steps mixed in).
    #[test]
    fn a_new_path_replaces_the_steps_past_those_shared() {
        use super::Memo;
        use crate::tree::node::Ptr;
        let mut memo = Memo::default();
        let dir = || Ptr::value(b"d");
        memo.remember(&["data", "contracts", "index", "tz1a"], dir());
        memo.remember(&["data", "contracts", "index", "tz1bb"], dir());
        assert_eq!(memo.start(&["data", "contracts", "index", "tz1a", "balance"]).1, 3);
        let (start, shared) = memo.start(&["data", "contracts", "index", "tz1bb", "balance"]);
        assert_eq!((start.map(|(_, k)| k), shared), (Some(4), 4));
        memo.remember(&["data", "big_maps"], dir());
        assert_eq!(memo.start(&["data", "big_maps", "index"]).0.map(|(_, k)| k), Some(2));
        assert!(memo.start(&["data", "contracts", "index"]).0.is_none());
        memo.remember(&["data", "big_maps", "index", "7"], dir());
        let (start, shared) = memo.start(&["data", "big_maps", "index", "7", "total_bytes"]);
        assert_eq!((start.map(|(_, k)| k), shared), (Some(4), 4));
        assert_eq!(memo.start(&["data", "big_maps", "index", "70", "x"]).1, 3);
        assert_eq!(memo.start(&["data"]).1, 1);
    }

    /// After every kind of change to the directory a lookup ended in, or to the directories
    /// above it, lookups below it see the change.
    #[test]
    fn lookups_see_every_change_below_the_remembered_directory() {
        let mut t = Tree::empty();
        add(&mut t, &["a", "b", "c"], "1");
        add(&mut t, &["a", "b", "d"], "2");
        assert_eq!(find(&t, &["a", "b", "c"]).as_deref(), Some("1"));
        // A value changed in the remembered directory, then read through it.
        add(&mut t, &["a", "b", "c"], "3");
        assert_eq!(find(&t, &["a", "b", "c"]).as_deref(), Some("3"));
        // The remembered directory emptied and dropped, then made again.
        let mut gone = t.clone();
        gone.remove_mut(&[b"a".as_slice(), b"b", b"c"]).unwrap();
        assert_eq!(find(&gone, &["a", "b", "d"]).as_deref(), Some("2"));
        gone.remove_mut(&[b"a".as_slice(), b"b", b"d"]).unwrap();
        assert_eq!(find(&gone, &["a", "b", "d"]), None);
        assert!(!gone.mem_tree(&[b"a".as_slice()]).unwrap());
        add(&mut gone, &["a", "b", "e"], "4");
        assert_eq!(find(&gone, &["a", "b", "d"]), None);
        assert_eq!(find(&gone, &["a", "b", "e"]).as_deref(), Some("4"));
        // A value put where a directory above the remembered one was.
        assert_eq!(find(&t, &["a", "b", "d"]).as_deref(), Some("2"));
        add(&mut t, &["a"], "5");
        assert_eq!(find(&t, &["a", "b", "d"]), None);
        assert_eq!(find(&t, &["a"]).as_deref(), Some("5"));
        // A subtree grafted over an ancestor of the remembered directory.
        let mut other = Tree::empty();
        add(&mut other, &["b", "d"], "6");
        add(&mut t, &["x", "b", "d"], "7");
        assert_eq!(find(&t, &["x", "b", "d"]).as_deref(), Some("7"));
        t.add_tree_mut(&[b"x".as_slice()], &other).unwrap();
        assert_eq!(find(&t, &["x", "b", "d"]).as_deref(), Some("6"));
    }

    /// A tree's memo shares a directory with its copies; changing a copy (in place or as a
    /// new tree) leaves the original, and what it remembers, as it was.
    #[test]
    fn copies_change_apart_from_the_tree_that_remembers() {
        let mut t = Tree::empty();
        add(&mut t, &["a", "b", "c"], "1");
        assert_eq!(find(&t, &["a", "b", "c"]).as_deref(), Some("1"));
        let mut copy = t.clone();
        add(&mut copy, &["a", "b", "c"], "2");
        let changed = t.add(&[b"a".as_slice(), b"b", b"c"], b"3").unwrap();
        assert_eq!(find(&t, &["a", "b", "c"]).as_deref(), Some("1"));
        assert_eq!(find(&copy, &["a", "b", "c"]).as_deref(), Some("2"));
        assert_eq!(find(&changed, &["a", "b", "c"]).as_deref(), Some("3"));
        assert_eq!(t.length(&[b"a".as_slice(), b"b"]).unwrap(), 1);
    }
}
