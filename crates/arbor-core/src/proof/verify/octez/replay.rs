//! Replaying reads over an Octez stream proof: each path is walked from the root; wherever the
//! walk needs a node it has not seen, the next element is taken and must hash to what the
//! node's parent announced. The same walk drives the producer (which hands out the elements of
//! a tree proof in the order the walk asks for them), so the order of a stream is fixed by its
//! paths and their order.
//!
//! A node is asked for once: a second walk through it reuses it. A directory given as a root
//! inode with at most `stable_hash` bindings hashes flat, so all its inodes are taken at once,
//! depth-first in slot order.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::hash::chain_hash;
use crate::hash::Hash;
use crate::proof::encoding::octez::{Elt, KindedHash, Shape};
use crate::proof::types::{Path, ProofError, Proved};
use crate::tezos::{contents_hash, flat_node_hash, inode_tree_hash, inode_values_hash, ChildKind};

type Res<T> = Result<T, ProofError>;

/// What a node is to the walk that asks for it; it decides how its element hashes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Ctx {
    /// A value.
    Value,
    /// A directory (its flat node or root inode).
    Dir,
    /// An inode below a directory's root, at this depth.
    Inode(u32),
}

/// Where elements come from: a stream being verified, or a tree proof being streamed.
pub(crate) trait Elements {
    /// The element for the node announced as `hash` (`index` is its place in the stream).
    fn fetch(&mut self, hash: &Hash, ctx: Ctx, index: usize) -> Res<Elt>;
}

/// The replay's state.
pub(crate) struct Replay<E> {
    pub shape: Shape,
    pub source: E,
    /// Elements taken so far.
    pub taken: usize,
    seen: BTreeMap<(Hash, Ctx), Elt>,
    /// The bindings of directories hashed flat but given as inodes.
    stable: BTreeMap<Hash, Vec<(Vec<u8>, KindedHash)>>,
}

fn ckind(k: &KindedHash) -> ChildKind {
    match k {
        KindedHash::Value(_) => ChildKind::Contents,
        KindedHash::Node(_) => ChildKind::Node,
    }
}

fn wrong(what: &'static str) -> ProofError {
    ProofError::BadShape(what)
}

impl<E: Elements> Replay<E> {
    /// A replay drawing from `source`.
    pub fn new(shape: Shape, source: E) -> Self {
        Replay { shape, source, taken: 0, seen: BTreeMap::new(), stable: BTreeMap::new() }
    }

    /// The element of the node announced as `h`, taken from the source the first time.
    fn need(&mut self, h: &Hash, ctx: Ctx) -> Res<Elt> {
        if let Some(e) = self.seen.get(&(*h, ctx)) {
            return Ok(e.clone());
        }
        let index = self.taken;
        let e = self.source.fetch(h, ctx, index)?;
        self.taken += 1;
        let computed = self.hash(&e, ctx)?;
        if computed != *h {
            return Err(ProofError::ElementMismatch { index, expected: *h, computed });
        }
        self.seen.insert((*h, ctx), e.clone());
        Ok(e)
    }

    /// The hash of element `e` standing for a node of context `ctx`.
    fn hash(&mut self, e: &Elt, ctx: Ctx) -> Res<Hash> {
        let stable = u64::from(self.shape.stable_hash());
        Ok(match (e, ctx) {
            (Elt::Value(v), Ctx::Value) => contents_hash(v),
            (Elt::Node(b), Ctx::Dir) => flat_node_hash(b.iter().map(|(s, k)| (&s[..], ckind(k), k.hash()))),
            (Elt::Node(b), Ctx::Inode(_)) => {
                if b.is_empty() || b.len() > self.shape.entries() as usize {
                    return Err(wrong("leaf inode with no binding or more than `entries`"));
                }
                inode_values_hash(b.iter().map(|(s, k)| (&s[..], ckind(k), k.hash())))
            }
            (Elt::Inode(i), Ctx::Dir) if i.length <= stable => self.stable_dir(e, i.length)?,
            (Elt::Extender(x), Ctx::Dir) if x.length <= stable => self.stable_dir(e, x.length)?,
            (Elt::Inode(i), Ctx::Dir | Ctx::Inode(_)) => {
                let depth = if let Ctx::Inode(d) = ctx { d } else { 0 };
                inode_tree_hash(depth, i.length, i.proofs.iter().map(|(s, h)| (u32::from(*s), h)))
            }
            (Elt::Extender(x), Ctx::Dir | Ctx::Inode(_)) => {
                let depth = if let Ctx::Inode(d) = ctx { d } else { 0 };
                chain_hash(x.length, &x.segments, depth, x.proof)
            }
            _ => return Err(wrong("stream element of the wrong kind for its place")),
        })
    }

    /// The flat hash of a directory of `length` bindings given as the root inode `root`:
    /// takes all its inodes, depth-first in slot order.
    fn stable_dir(&mut self, root: &Elt, length: u64) -> Res<Hash> {
        let mut all: Vec<(Vec<u8>, KindedHash)> = Vec::new();
        let mut todo: Vec<(Elt, u32)> = alloc::vec![(root.clone(), 0)];
        while let Some((e, depth)) = todo.pop() {
            let children: Vec<(Hash, u32)> = match &e {
                Elt::Node(b) => {
                    all.extend(b.iter().cloned());
                    Vec::new()
                }
                Elt::Inode(i) => i.proofs.iter().map(|(_, h)| (*h, depth + 1)).collect(),
                Elt::Extender(x) => alloc::vec![(x.proof, depth + x.segments.len() as u32)],
                Elt::Value(_) => return Err(wrong("value in a directory's inodes")),
            };
            if depth > self.shape.max_depth() {
                return Err(ProofError::TooDeep);
            }
            // Taken in slot order: the first child must be taken first.
            let mut got = Vec::with_capacity(children.len());
            for (h, d) in children {
                got.push((self.need(&h, Ctx::Inode(d))?, d));
            }
            todo.extend(got.into_iter().rev());
        }
        all.sort_by(|a, b| a.0.cmp(&b.0));
        if all.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(wrong("binding repeated in a directory"));
        }
        if all.len() as u64 != length {
            return Err(wrong("directory count does not match its bindings"));
        }
        let h = flat_node_hash(all.iter().map(|(s, k)| (&s[..], ckind(k), k.hash())));
        self.stable.insert(h, all);
        Ok(h)
    }

    /// Replays the read of `path` from `root` and returns what it proves.
    pub fn read(&mut self, root: &KindedHash, path: &[Vec<u8>]) -> Res<Proved> {
        let mut cur = *root;
        for step in path {
            let h = match cur {
                KindedHash::Value(_) => return Ok(Proved::Absent),
                KindedHash::Node(h) => h,
            };
            match self.lookup(&h, step)? {
                Some(k) => cur = k,
                None => return Ok(Proved::Absent),
            }
        }
        match cur {
            KindedHash::Node(h) => Ok(Proved::Dir(h)),
            KindedHash::Value(h) => match self.need(&h, Ctx::Value)? {
                Elt::Value(v) => Ok(Proved::Value(v)),
                _ => Err(wrong("stream element of the wrong kind for its place")),
            },
        }
    }

    /// The child `step` of the directory `dir`.
    fn lookup(&mut self, dir: &Hash, step: &[u8]) -> Res<Option<KindedHash>> {
        let mut e = self.need(dir, Ctx::Dir)?;
        if let Some(all) = self.stable.get(dir) {
            return Ok(find(all, step));
        }
        let mut depth = 0u32;
        loop {
            match e {
                Elt::Node(b) => return Ok(find(&b, step)),
                Elt::Value(_) => return Err(wrong("value in a directory's inodes")),
                Elt::Inode(i) => {
                    let slot = self.shape.slot(depth, step);
                    let Some((_, h)) = i.proofs.iter().find(|(s, _)| u32::from(*s) == slot) else {
                        return Ok(None);
                    };
                    depth += 1;
                    e = self.need(h, Ctx::Inode(depth))?;
                }
                Elt::Extender(x) => {
                    for &seg in &x.segments {
                        if self.shape.slot(depth, step) != u32::from(seg) {
                            return Ok(None);
                        }
                        depth += 1;
                    }
                    if depth > self.shape.max_depth() {
                        return Err(ProofError::TooDeep);
                    }
                    e = self.need(&x.proof, Ctx::Inode(depth))?;
                }
            }
        }
    }
}

fn find(b: &[(Vec<u8>, KindedHash)], step: &[u8]) -> Option<KindedHash> {
    b.binary_search_by(|(s, _)| s[..].cmp(step)).ok().map(|j| b[j].1)
}

/// Replays `paths` in order and returns what each proves.
pub(crate) fn replay_all<E: Elements>(
    r: &mut Replay<E>,
    root: &KindedHash,
    paths: &[Path],
) -> Res<Vec<(Path, Proved)>> {
    paths.iter().map(|p| Ok((p.clone(), r.read(root, p)?))).collect()
}
