//! The way a tree's recent changes went, so that a change into a directory changed already
//! goes straight there instead of through every directory and inode above it again.
//!
//! A transaction changes several values of one account in turn (`.../balance`, then
//! `.../counter`), between changes elsewhere. In a tezos-mainnet block, two thirds of the
//! writes go into a directory that an earlier write of the block changed already. Such a
//! write changes nothing above that directory: every node on the way there is held by this
//! tree alone, its hash and log offset are forgotten already, and its change (the step or
//! slot on the way) is noted already. Walking there anyway costs, at each of some eight
//! levels, a search of the bindings or a step hash for the slot, a copy-on-write check, and
//! the bookkeeping of a change: about half of a write's time.
//!
//! A trail is the turns a write took on its way down: the binding's index in each binding
//! list, the slot in each Tree inode. A later write into the same directory follows
//! the turns, checks at each node that nothing would change there, and does the slow walk's
//! work only at the directory. Each turn is checked, not trusted: a binding's step must be
//! the path's, so a trail made stale by other changes is noticed and the write walks from
//! the root as before, with nothing changed by the attempt.

use std::sync::Arc;

use arbor_core::toolbox::bytes;
use rustc_hash::{FxHashMap, FxHasher};
use smallvec::SmallVec;

use super::mutate::{Outcome, Reached};
use super::node::{Dir, DirBody, IPtr, Inode, InodeBody, Ptr};
use super::ops::Ctx;
use super::order::changes_already_noted;
use crate::error::Result;

/// One turn on the way down from a directory: the binding at an index of a binding list
/// (a flat directory or a Values inode), or a slot of a Tree inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    Binding(u32),
    Slot(u8),
}

/// How many trails a tree keeps at most: a tezos-mainnet block writes into about a thousand
/// directories, and one transaction's writes into the same directory come between writes
/// into a dozen others. When full, the trails are dropped and kept again from the next write.
/// A trail takes 112 bytes of the map (its key and [`Turns`]): about 1 MiB when full.
const TRAILS: usize = 4096;

/// The turns of one trail, in place up to the depth of a big map's value (a longer one
/// takes an allocation).
type Turns = SmallVec<[Turn; 12]>;

/// The turns from a tree's root to the directories at the paths its recent writes went into,
/// by a hash of the path ([`path_key`]). Two paths with the same hash share a trail: it is
/// checked turn by turn anyway (a binding's step must be the path's), so it leads to the
/// right directory or nowhere.
#[derive(Debug, Default)]
pub(crate) struct Trails {
    kept: FxHashMap<u64, Turns>,
    /// Whether writes follow trails (tests turn it off to compare with walks).
    off: bool,
    /// A list to note a write's turns in, kept between writes ([`Trails::reached`]).
    pub spare: Vec<Turn>,
    /// Writes that went along a trail (tests check that some did).
    #[cfg(test)]
    pub followed: usize,
}

/// The hash a trail to the directory at `path` is kept under.
pub(crate) fn path_key<S: AsRef<[u8]>>(path: &[S]) -> u64 {
    use std::hash::Hasher;
    let mut h = FxHasher::default();
    for step in path {
        h.write(step.as_ref());
        h.write_usize(step.as_ref().len());
    }
    h.finish()
}

impl Trails {
    /// The turns kept under `key`, the way a recent write went to the directory at a path
    /// of that hash.
    pub fn to(&self, key: u64) -> Option<&[Turn]> {
        self.kept.get(&key).map(|t| t.as_slice())
    }

    /// Where a change about to be made goes, its turns noted in the list kept from the last.
    pub fn reached(&mut self) -> Reached {
        let mut turns = std::mem::take(&mut self.spare);
        turns.clear();
        Reached { parent: None, turns, noting: true }
    }

    /// Keeps `turns`, the way a write just took to the directory at a path hashed to `key`.
    pub fn keep(&mut self, key: u64, turns: &[Turn]) {
        if self.off {
            return;
        }
        if self.kept.len() >= TRAILS {
            self.kept.clear();
        }
        let kept = self.kept.entry(key).or_default();
        kept.clear();
        kept.extend_from_slice(turns);
    }

    /// Trails that are never followed: writes walk from the root (tests compare both ways).
    #[cfg(test)]
    pub fn off() -> Trails {
        Trails { off: true, ..Trails::default() }
    }
}

impl Ctx {
    /// Puts the value `new` at `path` below `root` by following `turns` to the directory
    /// holding the path's last step, when every node on the way is this tree's alone and
    /// changed already (so that the walk from the root would change nothing there either).
    /// None, with nothing changed, when a turn does not lead where `path` goes or a node on
    /// the way would change.
    pub fn set_along<S: AsRef<[u8]>>(
        &self,
        root: &mut Ptr,
        turns: &[Turn],
        path: &[S],
        new: Ptr,
        reached: &mut Reached,
    ) -> Result<Option<Outcome>> {
        debug_assert!(matches!(new, Ptr::Value(_) | Ptr::Small(_)), "only values are put along a trail");
        let Some((last, dirs)) = path.split_last() else { return Ok(None) };
        let mut turns = turns.iter().copied();
        let mut node = root;
        for step in dirs {
            let Some(dir) = quiet_dir(node) else { return Ok(None) };
            let step = step.as_ref();
            node = match &mut dir.body {
                DirBody::Flat(entries) => match bound_dir(entries, turns.next(), step) {
                    Some(child) => child,
                    None => return Ok(None),
                },
                DirBody::Large(top) => {
                    let Some(mut inode) = Arc::get_mut(top).filter(|i| quiet_inode(i)) else { return Ok(None) };
                    loop {
                        match &mut inode.body {
                            InodeBody::Values(entries) => match bound_dir(entries, turns.next(), step) {
                                Some(child) => break child,
                                None => return Ok(None),
                            },
                            InodeBody::Tree(slots) => {
                                let Some(Turn::Slot(i)) = turns.next() else { return Ok(None) };
                                // The slot's change noted since the base (and the mid) already.
                                let noted = |slots: u64| slots >> i & 1 == 1;
                                let lineage = &inode.lineage;
                                if !noted(lineage.slots) || lineage.mid.as_ref().is_some_and(|m| !noted(m.slots)) {
                                    return Ok(None);
                                }
                                let Some(IPtr::Mem(sub)) = slots.get_mut(usize::from(i)) else { return Ok(None) };
                                if sub.hash_copied() {
                                    return Ok(None);
                                }
                                match Arc::get_mut(sub.node_mut_keeping_hash()).filter(|i| quiet_inode(i)) {
                                    Some(below) => inode = below,
                                    None => return Ok(None),
                                }
                            }
                        }
                    }
                }
            };
        }
        // The directory itself changes as on the walk from the root; its parent notes
        // nothing more when a change below it is noted already.
        if turns.next().is_some() || !matches!(node, Ptr::Dir(d) if changes_already_noted(d)) {
            return Ok(None);
        }
        let outcome = self.set_mut(node, std::slice::from_ref(last), Some(new), reached)?;
        debug_assert_ne!(outcome, Outcome::Emptied, "a directory given a value is not empty");
        Ok(Some(outcome))
    }
}

/// The directory `node` points to, to change, when it would not change on the way to a
/// directory below it: held by this tree alone, its hash and log offset forgotten, its
/// change noted in its parent, and not listed since (see `Dir::start_updates`).
fn quiet_dir(node: &mut Ptr) -> Option<&mut Dir> {
    let Ptr::Dir(link) = node else { return None };
    if link.hash_copied() {
        return None;
    }
    let dir = Arc::get_mut(link.node_mut_keeping_hash())?;
    (dir.cached_hash().is_none() && dir.disk.get().is_none() && changes_already_noted(dir)).then_some(dir)
}

/// Whether an inode would not change on the way to a binding below it: its hash and log
/// offset forgotten (`Inode::reset` has nothing to do).
fn quiet_inode(inode: &Inode) -> bool {
    inode.cached_hash().is_none() && inode.disk.get().is_none()
}

/// The child at `turn` of `entries`, when it is the binding of `step` and a directory in memory.
fn bound_dir<'a>(entries: &'a mut super::Bindings, turn: Option<Turn>, step: &[u8]) -> Option<&'a mut Ptr> {
    let Some(Turn::Binding(j)) = turn else { return None };
    let j = j as usize;
    if j >= entries.len() || !bytes::eq(entries.step(j), step) {
        return None;
    }
    let child = entries.child_mut(j);
    matches!(child, Ptr::Dir(_)).then_some(child)
}

#[cfg(test)]
mod tests {
    use arbor_core::toolbox::SplitMix64;

    use super::Trails;
    use crate::{Config, Hash, InodeConfig, Order, Store, Tree};

    /// One step of the random walk both trees take.
    fn account_path(rng: &mut SplitMix64, accounts: u64) -> Vec<Vec<u8>> {
        // A few hot accounts take most changes, as in a block.
        let a = if rng.below(4) > 0 { rng.below(6) } else { rng.below(accounts) };
        vec![b"c".to_vec(), b"i".to_vec(), format!("{a:040x}").into_bytes()]
    }

    fn field(rng: &mut SplitMix64) -> Vec<u8> {
        [b"balance".as_slice(), b"counter", b"used_bytes_of_the_contract", b"d", b"n"][rng.below(5) as usize].to_vec()
    }

    /// The debug form of a tree's nodes, but for the numbers that differ between two stores
    /// given the same commits: the store's id, and log offsets (the helper thread hashing a
    /// commit's parts decides in which order they are written).
    fn form(root: &crate::tree::Ptr) -> String {
        let mut form = format!("{root:?}");
        for field in ["store: ", "offset: ", "full: "] {
            let mut out = String::with_capacity(form.len());
            let mut rest = form.as_str();
            while let Some(at) = rest.find(field) {
                out.push_str(&rest[..at + field.len()]);
                rest = rest[at + field.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
                out.push('_');
            }
            out.push_str(rest);
            form = out;
        }
        form
    }

    /// Makes the same random changes, reads, hashes, lists and commits to two copies of a
    /// store's state, one tree following trails and one walking from the root every time;
    /// after every operation both trees must be the same, node for node (their debug
    /// forms, which show every binding, cached hash, log offset, lineage and order note).
    fn same_as_walking(inode: InodeConfig, accounts: u64, seed: u64) {
        let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
        let stores: Vec<Store> =
            dirs.iter().map(|d| Store::open_with(d.path(), Config::default().with_inode(inode)).unwrap()).collect();
        let mut commits: Vec<Hash> = Vec::new();
        for store in &stores {
            let mut t = store.empty();
            for a in 0..accounts {
                for f in [b"balance".as_slice(), b"counter"] {
                    t.add_mut(&[b"c".as_slice(), b"i", format!("{a:040x}").as_bytes(), f], &a.to_be_bytes()).unwrap();
                }
            }
            t.add_mut(&[b"c".as_slice(), b"global_counter"], b"0").unwrap();
            commits.push(store.commit(&t, &[], 0, "test", "base").unwrap());
        }
        assert_eq!(commits[0], commits[1]);
        let checkout = |stores: &[Store], h: &Hash| -> [Tree; 2] {
            let along = stores[0].checkout(h).unwrap();
            let mut walking = stores[1].checkout(h).unwrap();
            walking.memo.get_mut().trails = Some(Box::new(Trails::off()));
            [along, walking]
        };
        let mut trees = checkout(&stores, &commits[0]);
        let mut followed = 0;
        let mut rng = SplitMix64::new(seed);
        for op in 0..2_000 {
            let r = rng.below(100);
            let dir = account_path(&mut rng, accounts);
            let value = rng.next_u64().to_be_bytes()[..1 + rng.below(8) as usize].to_vec();
            let with = |step: &[u8]| {
                let mut p = dir.clone();
                p.push(step.to_vec());
                p
            };
            let leaf = if r.is_multiple_of(5) {
                vec![b"c".to_vec(), b"global_counter".to_vec()]
            } else {
                with(&field(&mut rng))
            };
            for t in trees.iter_mut() {
                match r {
                    // Values changed (the global counter's directory too, between an
                    // account's changes).
                    0..=59 => {
                        t.add_mut(&leaf, &value).unwrap();
                    }
                    60..=64 => t.remove_mut(&leaf).unwrap(),
                    // An account removed, or made a value, or a value made a directory.
                    65 => t.remove_mut(&dir).unwrap(),
                    66 => t.add_mut(&dir, &value).unwrap(),
                    67 => t.add_mut(&[with(b"balance"), vec![b"deeper".to_vec()]].concat(), &value).unwrap(),
                    // Reads: a value, a subtree held for a while, a listing, a hash.
                    68..=79 => {
                        let _ = t.find(&leaf).unwrap();
                    }
                    80..=83 => {
                        let held = t.find_tree(&dir).unwrap();
                        t.add_mut(&with(b"balance"), &value).unwrap();
                        drop(held);
                    }
                    84..=86 => {
                        let _ = t.list(&dir, None, None).unwrap();
                    }
                    87..=89 => {
                        let _ = t.hash();
                    }
                    // A copy changed and dropped, then the tree changed again.
                    90..=94 => {
                        let mut copy = t.clone();
                        copy.add_mut(&with(b"counter"), b"copy").unwrap();
                        t.add_mut(&with(b"counter"), &value).unwrap();
                        let _ = copy.hash();
                    }
                    _ => {}
                }
            }
            let forms = trees.each_ref().map(|t| form(&t.root));
            if forms[0] != forms[1] {
                let at = forms[0].bytes().zip(forms[1].bytes()).position(|(a, b)| a != b).unwrap_or(0);
                let around = |f: &str| f.get(at.saturating_sub(200)..(at + 100).min(f.len())).unwrap_or(f).to_owned();
                panic!(
                    "seed {seed}, operation {op} ({r}): the trees differ at byte {at}:\n{}\n{}",
                    around(&forms[0]),
                    around(&forms[1])
                );
            }
            if r >= 95 {
                // A commit of both, and the next block on the trees checked out of it.
                let hashes: Vec<Hash> =
                    (0..2).map(|i| stores[i].commit(&trees[i], &[], op, "test", "block").unwrap()).collect();
                assert_eq!(hashes[0], hashes[1], "seed {seed}, operation {op}");
                let listed = trees.each_ref().map(|t| t.list(&[b"c".as_slice(), b"i"], None, None).unwrap().len());
                assert_eq!(listed[0], listed[1]);
                if r.is_multiple_of(2) {
                    // The same trees go on: their nodes are written now, their trails kept.
                    continue;
                }
                followed += trees[0].memo.get_mut().trails.as_ref().map_or(0, |t| t.followed);
                trees = checkout(&stores, &hashes[0]);
            }
        }
        // Enough writes went along a trail for the comparison to mean something.
        followed += trees[0].memo.get_mut().trails.as_ref().map_or(0, |t| t.followed);
        assert!(followed > 300, "only {followed} writes followed a trail");
        let fold = |t: &Tree| {
            let mut seen = Vec::new();
            t.fold(&[b"c".as_slice()], None, Order::Undefined, |p, _| {
                seen.push(p.to_vec());
                Ok(true)
            })
            .unwrap();
            seen
        };
        assert_eq!(fold(&trees[0]), fold(&trees[1]));
    }

    #[test]
    fn following_trails_changes_trees_as_walking_does() {
        same_as_walking(InodeConfig::TEZOS, 300, 1);
        same_as_walking(InodeConfig::SMALL_TEST, 60, 2);
        same_as_walking(InodeConfig::TEZOS, 20, 3);
    }
}
