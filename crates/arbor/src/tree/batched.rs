//! Hashing a changed subtree four nodes at a time.
//!
//! A node's hash waits for its children's, so hashing node by node, children first, hands
//! Blake2b one input at a time, and Blake2b's 64-bit words then fill a quarter of an AVX2
//! register. Here the changed nodes of a subtree are sorted into ranks first: values, then
//! nodes with no changed node below them, then nodes whose changed children are all in lower
//! ranks, and so on. The nodes of a rank do not wait on one another, so each rank is hashed
//! as one [`HashBatch`], several inputs at once (`blake2b_simd::many`), at about twice the
//! bytes per second.
//!
//! A commit's parts (`tree::Parts`) are hashed this way; everything else (a tree's hash
//! outside a commit, the few directories above the parts) node by node.

use std::sync::Arc;

use arbor_core::{Hash, HashBatch};
use rustc_hash::FxHashMap;

use super::bindings::Bindings;
use super::node::{entry_hashes, filled_slots, Dir, DirBody, IPtr, Inode, InodeBody, Ptr, Small, Value};

/// Computes the hash of `unit` (a commit's part), hashing the changed nodes below it in
/// ranks first, their inputs in `batch`. Another thread asking for `unit`'s hash meanwhile
/// waits for it.
pub(crate) fn hash<'a>(unit: &'a Inode, batch: &mut HashBatch) -> &'a Hash {
    unit.hash_below_first(|| {
        let mut ranks = Ranks::with_room();
        // The changed nodes below the unit; the unit's own hash is computed after them.
        let _ = ranks.inode_body(unit);
        ranks.hash(batch);
    })
}

/// [`hash`] of several parts at once: the changed nodes below all of them ranked together,
/// so that each rank's batch holds the nodes of every part. A part has a node or two in each
/// of its upper ranks, and a batch of fewer than four inputs leaves lanes of the four-way
/// hashing empty: hashed part by part, 15% of a tezos-mainnet commit's Blake2b blocks went
/// one or two at a time. Another thread asking for one of the parts' hashes meanwhile waits
/// for it; a part hashed already (or by another thread first) is left as it is.
pub(crate) fn hash_together(units: &[&Inode], batch: &mut HashBatch) {
    /// Holds each part's hash (`Inode::hash_below_first`) while the parts after it are
    /// entered, and hashes below all of them once every part is held.
    fn enter(all: &[&Inode], rest: &[&Inode], batch: &mut HashBatch) {
        let Some((unit, rest)) = rest.split_first() else {
            let mut ranks = Ranks::with_room();
            // A part hashed already has no changed node below it to rank.
            for unit in all {
                let _ = ranks.inode_body(unit);
            }
            ranks.hash(batch);
            return;
        };
        let mut entered = false;
        unit.hash_below_first(|| {
            entered = true;
            enter(all, rest, batch);
        });
        if !entered {
            enter(all, rest, batch);
        }
    }
    enter(units, units, batch);
}

/// The slots of a Tree inode of `len` slots that can hold a child whose hash is not known,
/// one bit each: those changed since the record the inode is a version of (its lineage's
/// base), or all of them for an inode never written. Every other slot points where the base
/// does, to a child hashed when the base was written. A changed Tree inode has one or two
/// changed slots of 32, and the slots are 56 bytes each: looking at the changed ones alone
/// reads a cache line or two of the slots rather than 28 (at 30M values, ranking waited
/// 0.4 ms a block on those lines).
fn changed_slots(inode: &Inode, len: usize) -> u64 {
    let all = if len >= 64 { u64::MAX } else { (1u64 << len) - 1 };
    if inode.lineage.base.is_some() {
        inode.lineage.slots & all
    } else {
        all
    }
}

/// A value whose hash is not known yet.
enum ValueJob<'a> {
    Value(&'a Value),
    Small(&'a Small),
}

/// A node whose hash is not known yet, and what its hash is computed from.
enum NodeJob<'a> {
    Flat(&'a Dir, &'a Bindings),
    Values(&'a Inode, &'a Bindings),
    Tree(&'a Inode, &'a [IPtr]),
}

/// The changed values and nodes below a subtree's top, each node with its rank: one more
/// than the highest rank of its changed children, 0 with none.
struct Ranks<'a> {
    values: Vec<ValueJob<'a>>,
    nodes: Vec<(u32, NodeJob<'a>)>,
    /// The rank of each node met already, by address: a subtree grafted under several names
    /// is ranked once, not once per path to it (exponentially many, level after level).
    seen: FxHashMap<usize, u32>,
}

impl<'a> Ranks<'a> {
    /// Values and nodes a part of a tezos-mainnet commit has, about: room made for them at
    /// once rather than by doubling from nothing (a part's lists grew five times each).
    const ROOM: usize = 64;

    /// Empty lists, with room for a part's values and nodes.
    fn with_room() -> Ranks<'a> {
        Ranks {
            values: Vec::with_capacity(Self::ROOM),
            nodes: Vec::with_capacity(Self::ROOM),
            seen: FxHashMap::default(),
        }
    }

    /// The rank of `node`, whose hash is not known, ranking it with `rank` when met for the
    /// first time. Only a node held by more than one pointer can be met twice.
    fn node<T>(&mut self, node: &Arc<T>, rank: impl FnOnce(&mut Self) -> u32) -> u32 {
        if Arc::strong_count(node) == 1 {
            return rank(self);
        }
        let at = Arc::as_ptr(node) as usize;
        if let Some(&r) = self.seen.get(&at) {
            return r;
        }
        let r = rank(self);
        self.seen.insert(at, r);
        r
    }

    /// Ranks the changed nodes below `dir` and `dir` itself; its rank. A large directory's
    /// hash is its root inode's: the inode is ranked, the directory takes its hash as is.
    fn dir(&mut self, dir: &'a Arc<Dir>) -> u32 {
        self.node(dir, |ranks| match &dir.body {
            DirBody::Flat(entries) => {
                let rank = ranks.entries(entries);
                ranks.nodes.push((rank, NodeJob::Flat(dir, entries)));
                rank
            }
            // Unknown, as the directory's hash is its root inode's.
            DirBody::Large(root) => ranks.inode(root),
        })
    }

    /// Ranks the changed nodes below `inode` and `inode` itself; its rank.
    fn inode(&mut self, inode: &'a Arc<Inode>) -> u32 {
        self.node(inode, |ranks| {
            let (rank, job) = ranks.inode_body(inode);
            ranks.nodes.push((rank, job));
            rank
        })
    }

    /// Ranks the changed nodes below `inode` (not `inode` itself): what its own hash is
    /// computed from, and the rank it would take.
    fn inode_body(&mut self, inode: &'a Inode) -> (u32, NodeJob<'a>) {
        match &inode.body {
            InodeBody::Values(entries) => (self.entries(entries), NodeJob::Values(inode, entries)),
            InodeBody::Tree(slots) => {
                let mut rank = 0;
                let changed_mask = changed_slots(inode, slots.len());
                let mut changed = changed_mask;
                while changed != 0 {
                    let i = changed.trailing_zeros() as usize;
                    changed &= changed - 1;
                    if let Some(IPtr::Mem(child)) = slots.get(i) {
                        if child.cached_hash().is_none() {
                            rank = rank.max(self.inode(child.node()) + 1);
                        }
                    }
                }
                debug_assert!(
                    slots
                        .iter()
                        .enumerate()
                        .all(|(i, s)| changed_mask >> i & 1 == 1
                            || !matches!(s, IPtr::Mem(c) if c.cached_hash().is_none())),
                    "a slot with a child to hash is not noted as changed since the inode's base"
                );
                (rank, NodeJob::Tree(inode, slots))
            }
        }
    }

    /// Ranks the changed children of a directory or Values inode; the rank of their parent.
    fn entries(&mut self, entries: &'a Bindings) -> u32 {
        let mut rank = 0;
        for (_, child) in entries {
            match child {
                Ptr::Value(v) if v.cached_hash().is_none() => self.values.push(ValueJob::Value(v.node())),
                Ptr::Small(v) if v.cached_hash().is_none() => self.values.push(ValueJob::Small(v)),
                Ptr::Dir(d) if d.cached_hash().is_none() => rank = rank.max(self.dir(d.node()) + 1),
                _ => {}
            }
        }
        rank
    }

    /// Hashes the values, then the nodes rank by rank, recording each hash.
    fn hash(mut self, batch: &mut HashBatch) {
        for job in &self.values {
            batch.contents(match job {
                ValueJob::Value(v) => &v.bytes,
                ValueJob::Small(v) => v.bytes(),
            });
        }
        for (job, &hash) in self.values.iter().zip(batch.finish()) {
            match job {
                ValueJob::Value(v) => v.know_hash(hash),
                ValueJob::Small(v) => v.know_hash(hash),
            }
        }
        self.nodes.sort_by_key(|(rank, _)| *rank);
        for rank in self.nodes.chunk_by(|a, b| a.0 == b.0) {
            for (_, job) in rank {
                match job {
                    // No `warm` first: ranking read every child's hash cell already.
                    NodeJob::Flat(_, entries) => batch.flat_node(entry_hashes(entries)),
                    NodeJob::Values(_, entries) => batch.inode_values(entry_hashes(entries)),
                    NodeJob::Tree(inode, slots) => batch.inode_tree(inode.depth, inode.count, filled_slots(slots)),
                }
            }
            for ((_, job), &hash) in rank.iter().zip(batch.finish()) {
                match job {
                    NodeJob::Flat(dir, _) => dir.know_hash(hash),
                    NodeJob::Values(inode, _) | NodeJob::Tree(inode, _) => inode.know_hash(hash),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use arbor_core::{Hash, InodeConfig};

    use super::super::parts::hash_units;
    use super::super::Tree;

    /// A tree with a large directory of accounts, values short (held in their binding) and
    /// long (a node of their own), a large directory inside an account, and one subtree
    /// grafted under several accounts; then `rounds` of changes, each after a `hash` of the
    /// tree, so that hashed and unhashed nodes mix.
    fn build(cfg: InodeConfig, accounts: u64, rounds: u64, hash: fn(&Tree) -> Hash) -> Tree {
        let mut t = Tree::empty_with(cfg);
        let id = |n: u64| format!("{:016x}", n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for n in 0..accounts {
            t.add_mut(&["index", &id(n), "balance"], &n.to_le_bytes()).unwrap();
            t.add_mut(&["index", &id(n), "script"], format!("a longer value, number {n:08}").as_bytes()).unwrap();
        }
        for k in 0..300u64 {
            t.add_mut(&["index", &id(7), "big_map", &id(k)], &k.to_be_bytes()).unwrap();
        }
        let mut graft = Tree::empty_with(cfg);
        for d in 0..3u64 {
            graft.add_mut(&[format!("d{d}").as_str(), "v"], &[d as u8; 20]).unwrap();
        }
        for n in (0..accounts).step_by(97) {
            t.add_tree_mut(&["index", &id(n), "shared"], &graft).unwrap();
        }
        for r in 0..rounds {
            let _ = hash(&t);
            for n in (r..accounts).step_by(13) {
                t.add_mut(&["index", &id(n), "balance"], &(n + r).to_le_bytes()).unwrap();
            }
            t.add_mut(&["index", &id(7), "big_map", &id(r)], b"changed").unwrap();
            t.remove_mut(&["index", &id(r * 31 % accounts)]).unwrap();
        }
        t
    }

    /// The hash of `t` with each part hashed in ranks first, as a commit hashes it.
    fn hash_in_parts(t: &Tree) -> Hash {
        let units = hash_units(&t.root);
        let mut batch = arbor_core::HashBatch::new();
        for unit in &units {
            super::hash(unit, &mut batch);
        }
        t.hash()
    }

    /// The hash of `t` with its parts hashed three together, the first part alone before
    /// them (so that a group holds a part hashed already); every part has its hash after.
    fn hash_in_groups(t: &Tree) -> Hash {
        let units = hash_units(&t.root);
        let mut batch = arbor_core::HashBatch::new();
        if let Some(first) = units.first() {
            super::hash(first, &mut batch);
        }
        let parts: Vec<&super::Inode> = units.iter().map(|u| &**u).collect();
        for group in parts.chunks(3) {
            super::hash_together(group, &mut batch);
        }
        assert!(units.iter().all(|u| u.cached_hash().is_some()), "every part hashed");
        t.hash()
    }

    #[test]
    fn a_tree_hashed_in_ranks_has_the_hash_it_has_node_by_node() {
        for (cfg, accounts) in [(InodeConfig::TEZOS, 2_000), (InodeConfig::SMALL_TEST, 300)] {
            for rounds in [0, 3] {
                let one_by_one = build(cfg, accounts, rounds, Tree::hash).hash();
                let batched = build(cfg, accounts, rounds, hash_in_parts);
                assert!(hash_units(&batched.root).len() > 1, "{cfg:?}: the tree has parts to hash");
                assert_eq!(hash_in_parts(&batched), one_by_one, "{cfg:?}, {rounds} rounds of changes");
                let grouped = build(cfg, accounts, rounds, hash_in_groups);
                assert_eq!(hash_in_groups(&grouped), one_by_one, "{cfg:?}, {rounds} rounds, parts together");
            }
        }
    }
}
