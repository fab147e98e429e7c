//! The model a store is checked against: a context as the plain map it denotes (full path of
//! every value → value), changed by the same operations as the store's trees, and hashed by
//! arbor-core's reference oracle rather than by the engine under test.

use std::collections::BTreeMap;

use arbor::InodeConfig;
use arbor_core::reference::RefTree;
use arbor_core::Hash;

/// A path as owned steps (never empty in this harness: the root is not a target).
pub type Key = Vec<Vec<u8>>;

/// One change of a commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// Set a value at a path (replacing whatever was there, and any value on the way).
    Add(Key, Vec<u8>),
    /// Remove the value or subtree at a path (nothing if absent).
    Remove(Key),
    /// Copy the subtree (or value) at the first path to the second path; both trees see the
    /// source as it was before the copy. A missing source is not planned.
    Copy(Key, Key),
}

/// A context as a map. Invariant: no key is a strict prefix of another (a value has no
/// children), and an empty directory does not exist, as in Tezos.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Model {
    values: BTreeMap<Key, Vec<u8>>,
}

impl Model {
    /// Every value, by path.
    pub fn values(&self) -> &BTreeMap<Key, Vec<u8>> {
        &self.values
    }

    /// Applies one change.
    pub fn apply(&mut self, op: &Op) {
        match op {
            Op::Add(k, v) => {
                self.remove(k);
                self.clear_way(k);
                self.values.insert(k.clone(), v.clone());
            }
            Op::Remove(k) => self.remove(k),
            Op::Copy(from, to) => {
                let sub = self.subtree(from);
                self.remove(to);
                self.clear_way(to);
                for (rel, v) in sub {
                    let mut k = to.clone();
                    k.extend(rel);
                    self.values.insert(k, v);
                }
            }
        }
    }

    /// The subtree at `k`: relative paths and values (one empty path for a value).
    pub fn subtree(&self, k: &[Vec<u8>]) -> Vec<(Key, Vec<u8>)> {
        self.values
            .range(k.to_vec()..)
            .take_while(|(key, _)| key.starts_with(k))
            .map(|(key, v)| (key[k.len()..].to_vec(), v.clone()))
            .collect()
    }

    /// Removes the value at `k` and everything below it.
    fn remove(&mut self, k: &[Vec<u8>]) {
        let doomed: Vec<Key> = self
            .values
            .range(k.to_vec()..)
            .take_while(|(key, _)| key.starts_with(k))
            .map(|(key, _)| key.clone())
            .collect();
        for key in doomed {
            self.values.remove(&key);
        }
    }

    /// Removes a value standing on a strict prefix of `k` (it becomes a directory).
    fn clear_way(&mut self, k: &[Vec<u8>]) {
        for n in 1..k.len() {
            self.values.remove(&k[..n]);
        }
    }

    /// The Tezos context hash of the root directory, by the reference oracle.
    pub fn hash(&self, cfg: InodeConfig) -> Hash {
        self.ref_tree().hash(cfg)
    }

    fn ref_tree(&self) -> RefTree {
        // Builds nested maps first, then converts: keys arrive sorted but a value and a
        // directory never share a path (the invariant), so insertion order does not matter.
        #[derive(Default)]
        struct Node {
            children: BTreeMap<Vec<u8>, Node>,
            value: Option<Vec<u8>>,
        }
        fn convert(node: Node) -> RefTree {
            match node.value {
                Some(v) => RefTree::Contents(v),
                None => RefTree::Node(node.children.into_iter().map(|(s, n)| (s, convert(n))).collect()),
            }
        }
        let mut root = Node::default();
        for (k, v) in &self.values {
            let mut at = &mut root;
            for step in k {
                at = at.children.entry(step.clone()).or_default();
            }
            at.value = Some(v.clone());
        }
        convert(root)
    }
}

/// A path from its `/`-separated text form (the harness's steps never contain `/`).
pub fn key(text: &str) -> Key {
    text.split('/').map(|s| s.as_bytes().to_vec()).collect()
}

/// The `/`-separated text form of a path.
pub fn show(k: &[Vec<u8>]) -> String {
    k.iter().map(|s| String::from_utf8_lossy(s).into_owned()).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_replaces_subtrees_and_values_on_the_way() {
        let mut m = Model::default();
        m.apply(&Op::Add(key("a/b/c"), b"1".to_vec()));
        m.apply(&Op::Add(key("a/b/d"), b"2".to_vec()));
        m.apply(&Op::Add(key("a/b"), b"3".to_vec()));
        assert_eq!(m.values().len(), 1);
        m.apply(&Op::Add(key("a/b/e"), b"4".to_vec()));
        assert_eq!(m.values().keys().cloned().collect::<Vec<_>>(), vec![key("a/b/e")]);
    }

    #[test]
    fn copy_takes_the_source_as_it_was() {
        let mut m = Model::default();
        m.apply(&Op::Add(key("d/x"), b"1".to_vec()));
        m.apply(&Op::Add(key("d/y/z"), b"2".to_vec()));
        m.apply(&Op::Copy(key("d"), key("d/y")));
        let keys: Vec<String> = m.values().keys().map(|k| show(k)).collect();
        assert_eq!(keys, ["d/x", "d/y/x", "d/y/y/z"]);
        m.apply(&Op::Remove(key("d/y")));
        assert_eq!(m.values().len(), 1);
    }

    #[test]
    fn empty_model_hashes_as_the_empty_tree() {
        let cfg = InodeConfig::TEZOS;
        assert_eq!(Model::default().hash(cfg), RefTree::Node(BTreeMap::new()).hash(cfg));
        let mut m = Model::default();
        m.apply(&Op::Add(key("a"), b"1".to_vec()));
        assert_ne!(m.hash(cfg), Model::default().hash(cfg));
    }
}
