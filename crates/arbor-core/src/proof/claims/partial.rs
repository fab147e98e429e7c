//! Applying a proof's writes to its partial tree and hashing the result: the after-root.
//!
//! Changes are applied as the engine applies them (directories created on the way, values in
//! the way replaced, emptied directories dropped), but the shape is only made canonical when
//! hashing: a flat directory may grow past `stable_hash` and a Values inode past `entries` in
//! between, and Tree inodes keep their slots while they shrink. The context hash depends only
//! on the final bindings, so this gives the same root as the engine while needing fewer nodes
//! shown: only where the *final* bindings of an inode (or a whole large directory) are so few
//! that it hashes in another form must all of it be shown. Those places are the proof's
//! *regions* (see [`super::walk::Regions`]).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::walk::Regions;
use crate::hash::Hash;
use crate::proof::types::{Path, ProofError, ProofInode, ProofTree, Write, MAX_INODE_DEPTH};
use crate::tezos::{contents_hash, flat_node_hash, inode_tree_hash, inode_values_hash, ChildKind, InodeConfig};

/// A mutable copy of a proof's tree.
#[derive(Debug)]
enum Part {
    Blinded(ChildKind, Hash),
    Value(Vec<u8>),
    /// A directory held as a sorted map (hashed flat if small enough, else as inodes).
    Flat(BTreeMap<Vec<u8>, Part>),
    /// A directory that was large in the proof, with its inode tree as it stood.
    Large(PInode),
}

#[derive(Debug)]
enum PInode {
    Blinded(Hash),
    Values(BTreeMap<Vec<u8>, Part>),
    Tree(u64, BTreeMap<u32, PInode>),
}

/// What a change did to the node it was applied to, as in the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Unchanged,
    Changed,
    /// The node is now empty: its parent drops the binding.
    Emptied,
}

/// The result of applying writes to a proof's tree.
pub(crate) struct After {
    /// The after-root; meaningful only when `missing` is None.
    pub hash: Hash,
    /// Inodes and large directories the writes leave to be rebuilt.
    pub regions: Regions,
    /// The first blinded node found in a region, if any: the proof does not cover it.
    pub missing: Option<Path>,
}

/// Applies `writes` to `tree` and hashes the result.
pub(crate) fn apply(cfg: InodeConfig, tree: &ProofTree, writes: &[Write]) -> Result<After, ProofError> {
    let mut root = Part::from_tree(tree);
    let mut at = Path::new();
    for w in writes {
        let (path, new) = match w {
            Write::Add(p, v) => (p, Some(&v[..])),
            Write::Remove(p) => (p, None),
        };
        at.clear();
        if set(cfg, &mut root, path, new, &mut at)? == Outcome::Emptied {
            root = Part::Flat(BTreeMap::new());
        }
    }
    let mut h = Hasher { cfg, regions: Regions::new(), missing: None, path: Path::new() };
    let hash = h.part(&root)?;
    Ok(After { hash, regions: h.regions, missing: h.missing })
}

impl Part {
    fn from_tree(t: &ProofTree) -> Part {
        match t {
            ProofTree::Value(v) => Part::Value(v.clone()),
            ProofTree::BlindedValue(h) => Part::Blinded(ChildKind::Contents, *h),
            ProofTree::BlindedNode(h) => Part::Blinded(ChildKind::Node, *h),
            ProofTree::Node(e) => Part::Flat(map_of(e)),
            ProofTree::Inode(i) => Part::Large(PInode::from_inode(i)),
        }
    }

    fn kind(&self) -> ChildKind {
        match self {
            Part::Blinded(k, _) => *k,
            Part::Value(_) => ChildKind::Contents,
            Part::Flat(_) | Part::Large(_) => ChildKind::Node,
        }
    }
}

impl PInode {
    fn from_inode(i: &ProofInode) -> PInode {
        match i {
            ProofInode::Blinded(h) => PInode::Blinded(*h),
            ProofInode::Values(e) => PInode::Values(map_of(e)),
            ProofInode::Tree { count, slots } => {
                PInode::Tree(*count, slots.iter().map(|(s, c)| (*s, PInode::from_inode(c))).collect())
            }
        }
    }

    fn count(&self) -> u64 {
        match self {
            PInode::Blinded(_) => 0,
            PInode::Values(e) => e.len() as u64,
            PInode::Tree(c, _) => *c,
        }
    }
}

fn map_of(entries: &[(Vec<u8>, ProofTree)]) -> BTreeMap<Vec<u8>, Part> {
    entries.iter().map(|(s, c)| (s.clone(), Part::from_tree(c))).collect()
}

/// Sets (or with None removes) what is at `path` below `node`; `at` is `node`'s path.
fn set(
    cfg: InodeConfig,
    node: &mut Part,
    path: &[Vec<u8>],
    new: Option<&[u8]>,
    at: &mut Path,
) -> Result<Outcome, ProofError> {
    let Some((first, rest)) = path.split_first() else {
        return Ok(match new {
            None => Outcome::Emptied,
            Some(v) => {
                *node = Part::Value(v.to_vec());
                Outcome::Changed
            }
        });
    };
    match node {
        Part::Blinded(ChildKind::Node, _) => return Err(ProofError::NotProvable { path: at.clone() }),
        Part::Blinded(ChildKind::Contents, _) | Part::Value(_) => {
            if new.is_none() {
                return Ok(Outcome::Unchanged);
            }
            *node = Part::Flat(BTreeMap::new());
        }
        Part::Flat(_) | Part::Large(_) => {}
    }
    at.push(first.clone());
    let (outcome, len) = match node {
        Part::Flat(entries) => {
            let (o, _) = set_in_entries(cfg, entries, first, rest, new, at)?;
            (o, entries.len() as u64)
        }
        Part::Large(root) => {
            let (o, _) = set_in_inode(cfg, root, 0, first, rest, new, at)?;
            (o, root.count())
        }
        Part::Blinded(..) | Part::Value(_) => unreachable!("made a directory above"),
    };
    at.pop();
    Ok(match outcome {
        Outcome::Unchanged => Outcome::Unchanged,
        _ if len == 0 => Outcome::Emptied,
        _ => Outcome::Changed,
    })
}

/// Applies the change to a binding list; returns the list's outcome (never Emptied) and the
/// change in its number of bindings.
fn set_in_entries(
    cfg: InodeConfig,
    entries: &mut BTreeMap<Vec<u8>, Part>,
    step: &[u8],
    rest: &[Vec<u8>],
    new: Option<&[u8]>,
    at: &mut Path,
) -> Result<(Outcome, i64), ProofError> {
    match entries.get_mut(step) {
        Some(child) => match set(cfg, child, rest, new, at)? {
            Outcome::Emptied => {
                entries.remove(step);
                Ok((Outcome::Changed, -1))
            }
            o => Ok((o, 0)),
        },
        None if new.is_none() => Ok((Outcome::Unchanged, 0)),
        None => {
            let mut child = Part::Flat(BTreeMap::new());
            match set(cfg, &mut child, rest, new, at)? {
                Outcome::Changed => {
                    entries.insert(step.to_vec(), child);
                    Ok((Outcome::Changed, 1))
                }
                _ => Ok((Outcome::Unchanged, 0)),
            }
        }
    }
}

/// Applies the change inside an inode at `depth`, keeping its count; the inode reports
/// Emptied when no binding is left below it.
fn set_in_inode(
    cfg: InodeConfig,
    node: &mut PInode,
    depth: u32,
    step: &[u8],
    rest: &[Vec<u8>],
    new: Option<&[u8]>,
    at: &mut Path,
) -> Result<(Outcome, i64), ProofError> {
    match node {
        PInode::Blinded(_) => {
            // Report the directory's path, as the checker does for inodes.
            let mut dir = at.clone();
            dir.pop();
            Err(ProofError::NotProvable { path: dir })
        }
        PInode::Values(entries) => {
            let (o, d) = set_in_entries(cfg, entries, step, rest, new, at)?;
            Ok((if entries.is_empty() { Outcome::Emptied } else { o }, d))
        }
        PInode::Tree(count, slots) => {
            let slot = cfg.slot(depth, step);
            let (o, d) = match slots.get_mut(&slot) {
                Some(child) => {
                    let (o, d) = set_in_inode(cfg, child, depth + 1, step, rest, new, at)?;
                    if o == Outcome::Emptied {
                        slots.remove(&slot);
                    }
                    (o, d)
                }
                None if new.is_none() => (Outcome::Unchanged, 0),
                None => {
                    let mut child = PInode::Values(BTreeMap::new());
                    let (o, d) = set_in_inode(cfg, &mut child, depth + 1, step, rest, new, at)?;
                    if d != 0 {
                        slots.insert(slot, child);
                    }
                    (o, d)
                }
            };
            *count = count.wrapping_add_signed(d);
            Ok(match o {
                _ if *count == 0 => (Outcome::Emptied, d),
                Outcome::Emptied => (Outcome::Changed, d),
                o => (o, d),
            })
        }
    }
}

/// A binding ready to hash.
type Binding<'a> = (&'a [u8], ChildKind, Hash);

/// Hashes the changed tree, canonicalising shapes and noting the regions rebuilt.
struct Hasher {
    cfg: InodeConfig,
    regions: Regions,
    missing: Option<Path>,
    /// Path of the directory being hashed.
    path: Path,
}

impl Hasher {
    fn part(&mut self, p: &Part) -> Result<Hash, ProofError> {
        Ok(match p {
            Part::Blinded(_, h) => *h,
            Part::Value(v) => contents_hash(v),
            Part::Flat(entries) => {
                let b = self.bindings(entries.iter())?;
                self.dir(b)?
            }
            Part::Large(root) => {
                if root.count() <= u64::from(self.cfg.stable_hash) {
                    // Small enough to be flat again: rebuilt from all its bindings.
                    self.regions.insert((self.path.clone(), Vec::new()));
                    let b = self.collect(root)?;
                    self.dir(b)?
                } else {
                    self.inode(root, 0, &mut Vec::new())?
                }
            }
        })
    }

    /// Hashes the children of `entries` (with the steps as path).
    fn bindings<'a>(
        &mut self,
        entries: impl Iterator<Item = (&'a Vec<u8>, &'a Part)>,
    ) -> Result<Vec<Binding<'a>>, ProofError> {
        let mut out = Vec::new();
        for (s, c) in entries {
            self.path.push(s.clone());
            let h = self.part(c);
            self.path.pop();
            out.push((&s[..], c.kind(), h?));
        }
        Ok(out)
    }

    /// Every binding below `node`, sorted by step; notes a blinded inode as missing.
    fn collect<'a>(&mut self, node: &'a PInode) -> Result<Vec<Binding<'a>>, ProofError> {
        let mut maps = Vec::new();
        self.gather(node, &mut maps);
        let mut all = Vec::new();
        for m in maps {
            all.extend(self.bindings(m.iter())?);
        }
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        Ok(all)
    }

    fn gather<'a>(&mut self, node: &'a PInode, out: &mut Vec<&'a BTreeMap<Vec<u8>, Part>>) {
        match node {
            PInode::Blinded(_) => {
                if self.missing.is_none() {
                    self.missing = Some(self.path.clone());
                }
            }
            PInode::Values(e) => out.push(e),
            PInode::Tree(_, slots) => slots.values().for_each(|c| self.gather(c, out)),
        }
    }

    /// The hash of a directory with these (sorted) bindings.
    fn dir(&self, b: Vec<Binding<'_>>) -> Result<Hash, ProofError> {
        if b.len() as u64 <= u64::from(self.cfg.stable_hash) {
            Ok(flat_node_hash(b.iter().map(|(s, k, h)| (*s, *k, h))))
        } else {
            build(self.cfg, 0, &b)
        }
    }

    fn inode(&mut self, node: &PInode, depth: u32, slots: &mut Vec<u32>) -> Result<Hash, ProofError> {
        if depth > MAX_INODE_DEPTH {
            return Err(ProofError::TooDeep);
        }
        match node {
            PInode::Blinded(h) => Ok(*h),
            PInode::Values(entries) => {
                let b = self.bindings(entries.iter())?;
                build(self.cfg, depth, &b)
            }
            PInode::Tree(count, children) => {
                if *count <= u64::from(self.cfg.entries) {
                    // Too few bindings left for a Tree inode: rebuilt as a Values inode.
                    self.regions.insert((self.path.clone(), slots.clone()));
                    let b = self.collect(node)?;
                    return build(self.cfg, depth, &b);
                }
                let mut hashes = Vec::with_capacity(children.len());
                for (s, c) in children {
                    slots.push(*s);
                    let h = self.inode(c, depth + 1, slots);
                    slots.pop();
                    hashes.push((*s, h?));
                }
                Ok(inode_tree_hash(depth, *count, hashes.iter().map(|(s, h)| (*s, h))))
            }
        }
    }
}

/// The hash of the inode at `depth` holding `bindings` (sorted), built from scratch.
fn build(cfg: InodeConfig, depth: u32, bindings: &[Binding<'_>]) -> Result<Hash, ProofError> {
    if bindings.len() as u64 <= u64::from(cfg.entries) {
        return Ok(inode_values_hash(bindings.iter().map(|(s, k, h)| (*s, *k, h))));
    }
    if depth >= MAX_INODE_DEPTH {
        return Err(ProofError::TooDeep);
    }
    let mut buckets: BTreeMap<u32, Vec<Binding<'_>>> = BTreeMap::new();
    for b in bindings {
        buckets.entry(cfg.slot(depth, b.0)).or_default().push(*b);
    }
    let mut slots = Vec::with_capacity(buckets.len());
    for (s, b) in &buckets {
        slots.push((*s, build(cfg, depth + 1, b)?));
    }
    Ok(inode_tree_hash(depth, bindings.len() as u64, slots.iter().map(|(s, h)| (*s, h))))
}
