//! Helpers shared by the integration tests.

use std::collections::BTreeMap;

use arbor_core::reference::RefTree;
use arbor_core::{contents_hash, flat_node_hash, inode_tree_hash, inode_values_hash, ChildKind, Hash, InodeConfig};

/// A hashed directory entry, as a store would hold it.
type Entry<'a> = (&'a [u8], ChildKind, Hash);

/// Hashes `tree` with the incremental functions of `arbor_core::tezos`,
/// building the inode tree the way a store would (one pass per level).
pub fn incremental_hash(tree: &RefTree, cfg: InodeConfig) -> Hash {
    match tree {
        RefTree::Contents(v) => contents_hash(v),
        RefTree::Node(children) => {
            let entries: Vec<Entry<'_>> = children
                .iter()
                .map(|(step, child)| {
                    let kind = match child {
                        RefTree::Contents(_) => ChildKind::Contents,
                        RefTree::Node(_) => ChildKind::Node,
                    };
                    (step.as_slice(), kind, incremental_hash(child, cfg))
                })
                .collect();
            if entries.len() <= cfg.stable_hash as usize {
                flat_node_hash(entries.iter().map(|(s, k, h)| (*s, *k, h)))
            } else {
                let refs: Vec<&Entry<'_>> = entries.iter().collect();
                inode_hash(cfg, 0, &refs)
            }
        }
    }
}

/// Hash of the inode at `depth` holding `entries` (sorted by step).
fn inode_hash(cfg: InodeConfig, depth: u32, entries: &[&Entry<'_>]) -> Hash {
    if entries.len() <= cfg.entries as usize {
        return inode_values_hash(entries.iter().map(|(s, k, h)| (*s, *k, h)));
    }
    let mut buckets: Vec<Vec<&Entry<'_>>> = vec![Vec::new(); cfg.entries as usize];
    for e in entries {
        buckets[cfg.slot(depth, e.0) as usize].push(e);
    }
    let slots: Vec<(u32, Hash)> = buckets
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.is_empty())
        .map(|(i, b)| (i as u32, inode_hash(cfg, depth + 1, b)))
        .collect();
    inode_tree_hash(depth, entries.len() as u64, slots.iter().map(|(i, h)| (*i, h)))
}

/// A directory from `(step, child)` pairs.
pub fn dir<K: AsRef<[u8]>>(children: impl IntoIterator<Item = (K, RefTree)>) -> RefTree {
    RefTree::Node(children.into_iter().map(|(k, v)| (k.as_ref().to_vec(), v)).collect::<BTreeMap<_, _>>())
}

/// A contents value.
pub fn val(v: impl AsRef<[u8]>) -> RefTree {
    RefTree::Contents(v.as_ref().to_vec())
}
