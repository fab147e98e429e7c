//! A child node in memory as its parent holds it: the node, and a copy of its hash.
//!
//! Hashing a changed node reads the hash of every one of its children. A child in memory
//! (a directory or an inode) kept its hash only inside itself, so each of those reads went
//! to the child, and a changed node's unchanged children are mostly out of the processor's
//! caches: the misses took 8% of a replay's samples, more than any function but Blake2b.
//! The copy sits in the binding or slot, beside the steps and the other children's hashes
//! that the same loop reads.
//!
//! The copy is right by construction: it is taken from the child, and the child can only
//! change through `&mut` access to this pointer ([`Linked::node_mut`]), which drops the copy
//! first. A child shared with another tree is copied before it changes (`Arc::make_mut`),
//! and the copy here then still names the node this pointer holds.

use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use arbor_core::Hash;

/// A node whose hash can be computed, or known without computing it.
pub(crate) trait Hashed {
    /// The node's hash, computed (and kept) when not known yet.
    fn hash(&self) -> &Hash;
    /// The node's hash if computed or recorded already (never computes it).
    fn cached_hash(&self) -> Option<&Hash>;
}

/// A pointer to a child node in memory, with a copy of the child's hash once known.
#[derive(Debug)]
pub(crate) struct Linked<T> {
    node: Arc<T>,
    /// The child's hash, copied the first time it is read through this pointer.
    known: OnceLock<Hash>,
}

impl<T: Hashed> Linked<T> {
    /// A pointer to `node`.
    pub fn new(node: Arc<T>) -> Linked<T> {
        Linked { node, known: OnceLock::new() }
    }

    /// The child's hash: the copy, else the child's (computed if need be), which is copied.
    pub fn hash(&self) -> &Hash {
        if let Some(h) = self.known.get() {
            return h;
        }
        let h = self.node.hash();
        let _ = self.known.set(*h);
        h
    }

    /// The child's hash if known already (the copy, else the child's), never computed.
    pub fn cached_hash(&self) -> Option<&Hash> {
        self.known.get().or_else(|| self.node.cached_hash())
    }

    /// Whether the copy is there: the child's hash can then be read without reading the child.
    pub fn hash_copied(&self) -> bool {
        self.known.get().is_some()
    }
}

impl<T> Linked<T> {
    /// The child, shared.
    pub fn node(&self) -> &Arc<T> {
        &self.node
    }

    /// The child, for a caller that may change it: the copy of its hash is dropped first.
    pub fn node_mut(&mut self) -> &mut Arc<T> {
        self.known = OnceLock::new();
        &mut self.node
    }

    /// The child, for a caller that changes it without changing its hash: eviction, which
    /// turns the child's own children into pointers by offset to the same nodes.
    pub fn node_mut_keeping_hash(&mut self) -> &mut Arc<T> {
        &mut self.node
    }

    /// The child, taken out of the pointer.
    pub fn into_node(self) -> Arc<T> {
        self.node
    }
}

/// Another pointer to the same child, with the copy of its hash if there is one.
impl<T> Clone for Linked<T> {
    fn clone(&self) -> Linked<T> {
        Linked { node: self.node.clone(), known: self.known.clone() }
    }
}

impl<T> Deref for Linked<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.node
    }
}

#[cfg(test)]
mod tests {
    use crate::tree::{Ptr, Tree};

    /// The tree built from scratch with the bindings `tree` should now hold.
    fn rebuilt(values: &[(Vec<String>, Vec<u8>)]) -> Tree {
        let mut t = Tree::empty();
        for (path, v) in values {
            t.add_mut(path, v).unwrap();
        }
        t
    }

    #[test]
    fn a_changed_child_is_hashed_again_not_taken_from_the_copy() {
        // A flat directory `a/`, a large one `big/` (an inode tree, whose slots hold inodes
        // in memory) and a long value, each hashed before it changes, through a tree and a
        // clone.
        let mut values: Vec<(Vec<String>, Vec<u8>)> = vec![
            (vec!["a".into(), "b".into()], b"1".to_vec()),
            (vec!["a".into(), "c".into(), "d".into()], b"2".to_vec()),
            // Longer than a small value: a value node of its own, held through `Linked` too.
            (vec!["a".into(), "long".into()], vec![7; 40]),
        ];
        for i in 0..600 {
            values.push((vec!["big".into(), format!("k{i}"), "v".into()], vec![i as u8]));
        }
        let mut tree = rebuilt(&values);
        let first = tree.hash();
        let Ptr::Dir(root) = &tree.root else { panic!("a directory") };
        let crate::tree::DirBody::Flat(entries) = &root.body else { panic!("a flat root") };
        assert!(
            entries.iter().all(|(_, c)| matches!(c, Ptr::Dir(d) if d.hash_copied())),
            "hashing the root copied its subdirectories' hashes into their bindings"
        );
        let shared = tree.clone();
        for (n, (path, value)) in [
            (vec!["a", "c", "d"], b"3".to_vec()),
            (vec!["big", "k17", "v"], b"4".to_vec()),
            (vec!["big", "k599", "w"], b"5".to_vec()),
            (vec!["a", "long"], vec![8; 40]),
        ]
        .into_iter()
        .enumerate()
        {
            let path: Vec<String> = path.into_iter().map(String::from).collect();
            tree.add_mut(&path, &value).unwrap();
            match values.iter_mut().find(|(p, _)| *p == path) {
                Some(slot) => slot.1 = value,
                None => values.push((path, value)),
            }
            assert_eq!(tree.hash(), rebuilt(&values).hash(), "change {n}");
        }
        assert_ne!(tree.hash(), first);
        assert_eq!(shared.hash(), first, "the clone kept its version");
    }
}
