//! Trees: immutable, cheaply cloned snapshots of a context (Tezos `Context.tree`).

mod batched;
mod bindings;
mod evict;
mod height;
mod lineage;
mod linked;
mod memo;
mod mutate;
mod node;
mod ops;
mod order;
mod parts;
mod trail;
mod walk;

use std::sync::{Arc, OnceLock};

use arbor_core::{ChildKind, Hash, InodeConfig};

pub(crate) use bindings::{Bindings, Builder};
pub(crate) use evict::{evict, let_go, Share};
pub(crate) use lineage::{Lineage, Spelling};
#[cfg(test)]
pub(crate) use linked::Linked;
use mutate::{Outcome, Reached};
pub(crate) use node::{
    hashing_alone, warm, Dir, DirBody, DiskPtr, Evicted, Held, IPtr, Inode, InodeBody, Persisted, Ptr, Reading, Source,
    Value,
};
pub(crate) use ops::Ctx;
pub(crate) use parts::{hash_units, Parts};
pub use walk::{Depth, Order};

use crate::error::{Error, Result};
use crate::path::{check_path, Step, MAX_PATH_STEPS};

/// The bytes of a value, shared with the tree it was read from ([`Tree::find_shared`]).
#[derive(Clone, Debug)]
pub struct SharedValue(Arc<Value>);

impl std::ops::Deref for SharedValue {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0.bytes
    }
}

impl AsRef<[u8]> for SharedValue {
    fn as_ref(&self) -> &[u8] {
        &self.0.bytes
    }
}

/// What a tree is at its root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Contents: a value (Tezos `` `Value ``).
    Value,
    /// A directory (Tezos `` `Tree ``).
    Dir,
}

/// An immutable tree of paths to values, with structural sharing: every change returns a
/// new tree that shares all unchanged parts. Cloning is O(1).
///
/// Trees checked out of a store load their nodes lazily through the store's cache.
///
/// No tree has a path of more than [`MAX_PATH_STEPS`] steps to any of its nodes: every walk
/// over one then fits on a thread's stack (see [`Tree::add_tree`]).
#[derive(Debug)]
pub struct Tree {
    pub(crate) root: Ptr,
    pub(crate) ctx: Arc<Ctx>,
    /// At least the height of the tree (the steps of its longest path to a node; 0 for a value
    /// or the empty directory), at most [`MAX_PATH_STEPS`]. A bound, not a measure, so that
    /// no change has to walk the tree: exact for a tree built by adds, `MAX_PATH_STEPS`
    /// for a tree read from a store (no tree ever committed is deeper), that less the depth
    /// for a subtree found in one; a removal leaves it as it was.
    pub(crate) height: u32,
    /// Where the last lookup or change ended (`memo`); taken with `try_lock`, so that threads reading
    /// one tree side by side never wait for each other (one of them walks from the root).
    memo: parking_lot::Mutex<memo::Memo>,
}

impl Clone for Tree {
    /// A copy that starts with nothing remembered: copies are mostly made to be changed.
    fn clone(&self) -> Tree {
        Tree::at(self.root.clone(), self.ctx.clone(), self.height)
    }
}

/// [`MAX_PATH_STEPS`] as a [`Tree::height`].
pub(crate) const MAX_HEIGHT: u32 = MAX_PATH_STEPS as u32;

fn memory_ctx(cfg: InodeConfig) -> Arc<Ctx> {
    Arc::new(Ctx { cfg, source: None, uid: 0, max_value_len: usize::MAX })
}

impl Tree {
    /// The tree's root, the tree given up: nothing else of it holds a node (the lookup memo
    /// goes with it), so a root held nowhere else can be changed in place.
    pub(crate) fn into_root(self) -> Ptr {
        self.root
    }

    /// The tree at `root`, whose nodes load through `ctx`, of height at most `height`.
    pub(crate) fn at(root: Ptr, ctx: Arc<Ctx>, height: u32) -> Tree {
        Tree { root, ctx, height, memo: parking_lot::Mutex::default() }
    }

    /// Calls `f` with the node at the end of `path` (None when nothing is there), starting
    /// from the directory the last lookup ended in when `path` goes through it.
    fn lookup<S, R>(&self, path: &[S], f: impl FnOnce(Option<&Ptr>) -> Result<R>) -> Result<R>
    where
        S: AsRef<[u8]>,
    {
        // A path of one step starts at the root anyway; a tree another thread is reading
        // right now is walked from the root.
        let memo = if path.len() >= 2 { self.memo.try_lock() } else { None };
        let Some(mut memo) = memo else { return self.ctx.lookup(&self.root, path, f) };
        let (start, shared) = memo.start(path);
        let (start, skipped) = start.unwrap_or((&self.root, 0));
        // Only a deeper directory than the one remembered is worth remembering instead.
        if skipped + 1 == path.len() {
            return self.ctx.lookup(start, &path[skipped..], f);
        }
        let mut parent = None;
        let found = self.ctx.lookup_noting(start, &path[skipped..], &mut parent, f);
        if let Some(dir) = parent {
            // The directory holding the last step: `path` but for it, which shares with the
            // path remembered what `path` does, up to its own length.
            memo.remember_known(&path[..path.len() - 1], dir, shared.min(path.len() - 1));
        }
        found
    }

    /// The node at the end of `path`.
    fn find_ptr<S: AsRef<[u8]>>(&self, path: &[S]) -> Result<Option<Ptr>> {
        self.lookup(path, |p| Ok(p.cloned()))
    }

    /// The empty directory, not tied to any store, with Tezos's inode shape
    /// (Tezos `Context.Tree.empty`).
    pub fn empty() -> Tree {
        static TEZOS: OnceLock<Arc<Ctx>> = OnceLock::new();
        let ctx = TEZOS.get_or_init(|| memory_ctx(InodeConfig::TEZOS)).clone();
        Tree::at(Ptr::dir(Arc::new(Dir::empty())), ctx, 0)
    }

    /// The empty directory with another inode shape (used to test hashing in small shapes).
    pub fn empty_with(cfg: InodeConfig) -> Tree {
        Tree::at(Ptr::dir(Arc::new(Dir::empty())), memory_ctx(cfg), 0)
    }

    /// A tree that is a single value (Tezos `Context.Tree.of_value`).
    pub fn of_value(&self, value: &[u8]) -> Result<Tree> {
        self.check_value(value)?;
        Ok(Tree::at(Ptr::value(value), self.ctx.clone(), 0))
    }

    /// The subtree `root`, found `depth` steps below this tree's root.
    pub(crate) fn below(&self, root: Ptr, depth: usize) -> Tree {
        let depth = u32::try_from(depth).unwrap_or(u32::MAX);
        Tree::at(root, self.ctx.clone(), self.height.saturating_sub(depth))
    }

    fn check_value(&self, value: &[u8]) -> Result<()> {
        if value.len() > self.ctx.max_value_len {
            return Err(Error::ValueTooLarge { len: value.len(), max: self.ctx.max_value_len });
        }
        Ok(())
    }

    /// Whether the root is a value or a directory (Tezos `Context.Tree.kind`).
    pub fn kind(&self) -> Kind {
        match self.root.kind() {
            ChildKind::Contents => Kind::Value,
            ChildKind::Node => Kind::Dir,
        }
    }

    /// True for the empty directory (Tezos `Context.Tree.is_empty`).
    pub fn is_empty(&self) -> Result<bool> {
        Ok(match self.ctx.dir_of(&self.root)? {
            Some(d) => d.len() == 0,
            None => false,
        })
    }

    /// The Tezos context hash of this tree (Tezos `Context.Tree.hash`).
    pub fn hash(&self) -> Hash {
        // The parts below the large directories are hashed on the pool side by side, the rest
        // (a few directories above them) on this thread; with fewer than two parts, from the
        // root down, each directory's changed subdirectories side by side.
        let units = hash_units(&self.root);
        if units.len() >= 2 {
            use rayon::prelude::*;
            units.par_iter().for_each(|u| {
                u.hash();
            });
        }
        *self.root.hash()
    }

    /// The value if this tree is a value (Tezos `Context.Tree.to_value`).
    pub fn to_value(&self) -> Result<Option<Vec<u8>>> {
        Ok(self.ctx.value_of(&self.root)?.map(|v| v.bytes.to_vec()))
    }

    /// The value at `path`, if it holds one (Tezos `Context.find`).
    pub fn find<S: AsRef<[u8]>>(&self, path: &[S]) -> Result<Option<Vec<u8>>> {
        self.find_with(path, |value| value.map(<[u8]>::to_vec))
    }

    /// [`Tree::find`] without a copy: `f` is given the value's bytes where the tree holds
    /// them (or a copy loaded from the store), and its answer returned. A caller that only
    /// looks at the value, or copies it into a buffer of its own, allocates nothing.
    pub fn find_with<S: AsRef<[u8]>, R>(&self, path: &[S], f: impl FnOnce(Option<&[u8]>) -> R) -> Result<R> {
        check_path(path)?;
        self.lookup(path, |p| match p {
            Some(p) => match p.value_bytes() {
                Some(bytes) => Ok(f(Some(bytes))),
                None => Ok(f(self.ctx.value_of(p)?.as_ref().map(|v| &v.bytes[..]))),
            },
            None => Ok(f(None)),
        })
    }

    /// The value at `path`, shared with the tree rather than copied: reading it costs a
    /// reference count, whatever its size. It stays valid (and unchanged) after the tree
    /// changes or is dropped.
    pub fn find_shared<S: AsRef<[u8]>>(&self, path: &[S]) -> Result<Option<SharedValue>> {
        check_path(path)?;
        self.lookup(path, |p| match p {
            Some(Ptr::Value(v)) => Ok(Some(SharedValue(v.node().clone()))),
            Some(p) => Ok(self.ctx.value_of(p)?.map(SharedValue)),
            None => Ok(None),
        })
    }

    /// True if a value is at `path` (Tezos `Context.mem`).
    pub fn mem<S: AsRef<[u8]>>(&self, path: &[S]) -> Result<bool> {
        check_path(path)?;
        self.lookup(path, |p| Ok(p.is_some_and(|p| p.kind() == ChildKind::Contents)))
    }

    /// True if a value or a directory is at `path` (Tezos `Context.mem_tree`).
    pub fn mem_tree<S: AsRef<[u8]>>(&self, path: &[S]) -> Result<bool> {
        check_path(path)?;
        self.lookup(path, |p| Ok(p.is_some()))
    }

    /// The subtree at `path` (Tezos `Context.find_tree`).
    pub fn find_tree<S: AsRef<[u8]>>(&self, path: &[S]) -> Result<Option<Tree>> {
        check_path(path)?;
        Ok(self.find_ptr(path)?.map(|p| self.below(p, path.len())))
    }

    /// This tree with `value` at `path`, creating directories on the way and replacing
    /// whatever was there (Tezos `Context.add`).
    pub fn add<S: AsRef<[u8]>>(&self, path: &[S], value: &[u8]) -> Result<Tree> {
        check_path(path)?;
        self.check_value(value)?;
        self.set(path, Some(Ptr::value(value)), path.len())
    }

    /// This tree with `tree` grafted at `path`; an empty `tree` removes the path
    /// (Tezos `Context.add_tree`).
    ///
    /// Refused with [`Error::PathTooDeep`] (and nothing changed) if the result would have a
    /// path of more than [`MAX_PATH_STEPS`] steps: `path`'s steps plus the height of `tree`.
    /// That height is known without a walk for most trees (see the cost below); only when the
    /// bound `tree` carries is not enough is `tree` walked, loading its directories (never
    /// its values) and stopping at the first path found too long.
    ///
    /// Cost: a tree built in memory carries its height; a tree found `k` steps down a tree
    /// read from a store is at most `MAX_PATH_STEPS - k` high, so copying it at most `k`
    /// steps down (Tezos copies big maps and contracts at the same depth) walks nothing, and
    /// grafting it deeper walks it once.
    pub fn add_tree<S: AsRef<[u8]>>(&self, path: &[S], tree: &Tree) -> Result<Tree> {
        let mut t = self.clone();
        t.add_tree_mut(path, tree)?;
        Ok(t)
    }

    /// This tree without whatever is at `path`; directories left empty are removed
    /// (Tezos `Context.remove`).
    pub fn remove<S: AsRef<[u8]>>(&self, path: &[S]) -> Result<Tree> {
        check_path(path)?;
        self.set(path, None, 0)
    }

    fn set<S: AsRef<[u8]>>(&self, path: &[S], new: Option<Ptr>, height: usize) -> Result<Tree> {
        let mut t = self.clone();
        t.set_mut(path, new, height)?;
        Ok(t)
    }

    /// Puts `new` at `path`; `height` bounds the steps from the root to any node of `new` and
    /// is at most [`MAX_PATH_STEPS`] (the callers check).
    fn set_mut<S: AsRef<[u8]>>(&mut self, path: &[S], new: Option<Ptr>, height: usize) -> Result<()> {
        if new.is_none() && !self.lookup(path, |p| Ok(p.is_some()))? {
            // Removing nothing changes nothing (and copies nothing).
            return Ok(());
        }
        debug_assert!(height <= MAX_PATH_STEPS, "the callers check the height");
        let memo = self.memo.get_mut();
        // The memo's reference to a node would make the change copy that node.
        memo.forget();
        // Raised before the change, so that it bounds whatever a change that fails part-way
        // leaves.
        self.height = self.height.max(height as u32);
        let mut trails = memo.trails();
        // (A tree's first change notes no turns: it keeps none.)
        let mut reached = trails.as_mut().map_or_else(Reached::default, |t| t.reached());
        // The trail to the directory holding the last step (the root's needs none).
        let key = (trails.is_some() && path.len() >= 2).then(|| trail::path_key(&path[..path.len() - 1]));
        // A value put into a directory a recent write changed already goes straight there.
        let along = match (&new, key.and_then(|k| trails.as_ref()?.to(k))) {
            (Some(value @ (Ptr::Value(_) | Ptr::Small(_))), Some(turns)) => {
                self.ctx.set_along(&mut self.root, turns, path, value.clone(), &mut reached)?
            }
            _ => None,
        };
        #[cfg(test)]
        if let Some(t) = trails.as_mut() {
            t.followed += usize::from(along.is_some());
        }
        let outcome = match along {
            Some(outcome) => outcome,
            None => self.ctx.set_mut(&mut self.root, path, new, &mut reached)?,
        };
        if outcome == Outcome::Emptied {
            self.root = Ptr::dir(Arc::new(Dir::empty()));
        } else if let (Some(dir), 2..) = (reached.parent, path.len()) {
            if let (Some(t), Some(key)) = (trails, key) {
                if along.is_none() {
                    t.keep(key, &reached.turns);
                }
                t.spare = reached.turns;
            }
            // A transaction's next read is most often of the same account.
            memo.remember(&path[..path.len() - 1], dir);
        }
        Ok(())
    }

    /// [`Tree::add`] in place: nodes only this tree holds are changed where they are instead
    /// of copied, so building a block's tree costs one copy per touched directory. Other
    /// clones of the tree are unaffected. After an error (I/O or corruption while loading)
    /// the tree's content is unspecified.
    pub fn add_mut<S: AsRef<[u8]>>(&mut self, path: &[S], value: &[u8]) -> Result<()> {
        check_path(path)?;
        self.check_value(value)?;
        self.set_mut(path, Some(Ptr::value(value)), path.len())
    }

    /// [`Tree::remove`] in place (see [`Tree::add_mut`]).
    pub fn remove_mut<S: AsRef<[u8]>>(&mut self, path: &[S]) -> Result<()> {
        check_path(path)?;
        self.set_mut(path, None, 0)
    }

    /// [`Tree::add_tree`] in place (see [`Tree::add_mut`]); a graft refused as too deep
    /// changes nothing.
    pub fn add_tree_mut<S: AsRef<[u8]>>(&mut self, path: &[S], tree: &Tree) -> Result<()> {
        check_path(path)?;
        if !Arc::ptr_eq(&self.ctx, &tree.ctx) {
            let foreign_store = tree.ctx.source.is_some() && tree.ctx.uid != self.ctx.uid;
            if foreign_store || tree.ctx.cfg != self.ctx.cfg {
                return Err(Error::ForeignTree);
            }
        }
        if tree.is_empty()? {
            return self.set_mut(path, None, 0);
        }
        let height = tree.height_at(path.len())?;
        self.set_mut(path, Some(tree.root.clone()), height)
    }

    /// Number of children of the directory at `path`, in O(1); 0 for a value or nothing
    /// (Tezos `Context.length`).
    pub fn length<S: AsRef<[u8]>>(&self, path: &[S]) -> Result<u64> {
        check_path(path)?;
        self.lookup(path, |p| match p {
            Some(Ptr::Dir(d)) => Ok(d.len()),
            Some(p) => Ok(self.ctx.dir_of(p)?.map_or(0, |d| d.len())),
            None => Ok(0),
        })
    }

    /// Children of the directory at `path`, skipping `offset` and returning at most `length`
    /// (Tezos `Context.list`), in Octez's order (`docs/ORDER.md`): a directory written or read
    /// and unchanged since comes in irmin-pack's stored order (sorted up to 32 entries, inode
    /// by inode above); any other comes sorted by step. Listing a directory changed since it
    /// was written or read makes later unordered folds of it sorted too, as in Octez.
    pub fn list<S: AsRef<[u8]>>(
        &self,
        path: &[S],
        offset: Option<usize>,
        length: Option<usize>,
    ) -> Result<Vec<(Step, Tree)>> {
        check_path(path)?;
        let Some(p) = self.find_ptr(path)? else { return Ok(Vec::new()) };
        let Some(dir) = self.ctx.dir_of(&p)? else { return Ok(Vec::new()) };
        let mut skip = offset.unwrap_or(0);
        let limit = length.unwrap_or(usize::MAX);
        let mut out = Vec::new();
        if limit == 0 {
            return Ok(out);
        }
        self.ctx.each_in_octez_order(&dir, true, &mut |s, c| {
            if skip > 0 {
                skip -= 1;
                return Ok(true);
            }
            out.push((Step::from_slice(s), self.below(c.clone(), path.len() + 1)));
            Ok(out.len() < limit)
        })?;
        Ok(out)
    }

    /// The inode shape this tree hashes with.
    pub fn inode_config(&self) -> InodeConfig {
        self.ctx.cfg
    }
}
