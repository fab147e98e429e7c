//! What the swarm knows of a store, and the check it runs after every child: the store opens
//! (recovery), fsck is clean, every commit in it was planned and reads back exactly as
//! planned, every acknowledged commit is still there, and what an acknowledged collection
//! dropped stays dropped.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use arbor::io::OsFs;
use arbor::{Hash, InodeConfig, Order, Store};

use crate::model::{show, Key, Model};
use crate::store_config;

/// A planned commit: what it must hold and record.
#[derive(Debug)]
pub struct Planned {
    /// Its contents.
    pub model: Model,
    /// Hash of its tree, by the reference oracle.
    pub tree: Hash,
    /// Its parent.
    pub parent: Option<Hash>,
    /// Its date.
    pub date: i64,
    /// Its message.
    pub message: String,
}

impl Planned {
    /// The commit's hash, computed from the planned metadata.
    pub fn hash(&self) -> Hash {
        let parents: Vec<Hash> = self.parent.into_iter().collect();
        arbor_core::commit_hash(&self.tree, &parents, self.date, b"Tezos", self.message.as_bytes())
    }
}

/// The swarm's knowledge of one store.
#[derive(Debug)]
pub struct StoreState {
    /// Its directory.
    pub dir: PathBuf,
    /// Every commit ever planned for it (acknowledged or not).
    pub known: HashMap<Hash, Arc<Planned>>,
    /// Commits that must be there: acknowledged, or seen after a recovery, and not
    /// collected since.
    pub must: HashSet<Hash>,
    /// Commits an acknowledged collection dropped: they must not come back.
    pub gone: HashSet<Hash>,
    /// Commits present at the last check, in log order.
    pub present: Vec<Hash>,
    /// Checkouts compared value by value, over all checks.
    pub commits_checked: u64,
}

impl StoreState {
    /// A store not created yet.
    pub fn new(dir: PathBuf) -> StoreState {
        StoreState {
            dir,
            known: HashMap::new(),
            must: HashSet::new(),
            gone: HashSet::new(),
            present: Vec::new(),
            commits_checked: 0,
        }
    }

    /// Opens the store as the next process would, checks it, and learns what survived.
    /// `may_vanish`: commits a collection that was not acknowledged may have dropped.
    pub fn check(&mut self, inode: InodeConfig, may_vanish: &HashSet<Hash>) -> Result<(), String> {
        if !self.dir.exists() {
            if let Some(h) = self.must.iter().next() {
                return Err(format!("store {} is gone, with acknowledged commit {}", self.dir.display(), h.to_hex()));
            }
            return Ok(());
        }
        let store = Store::open_with(&self.dir, store_config(Arc::new(OsFs), false))
            .map_err(|e| format!("store {} does not open after the crash: {e}", self.dir.display()))?;
        if store.config().inode != inode {
            return Err("store opened with another inode shape".into());
        }
        let report = store.fsck();
        if !report.errors.is_empty() {
            return Err(format!(
                "fsck of {} found {} problems: {:?}",
                self.dir.display(),
                report.errors.len(),
                report.errors
            ));
        }
        let mut present = Vec::new();
        for h in store.commits() {
            let Some(planned) = self.known.get(&h) else {
                return Err(format!("commit {} in {} was never planned", h.to_hex(), self.dir.display()));
            };
            if store.contains(&h) {
                compare(&store, &h, planned)
                    .map_err(|e| format!("commit {} in {}: {e}", h.to_hex(), self.dir.display()))?;
                self.commits_checked += 1;
                present.push(h);
            }
        }
        let contained: HashSet<Hash> = present.iter().copied().collect();
        for h in &self.must {
            if !contained.contains(h) && !may_vanish.contains(h) {
                return Err(format!("acknowledged commit {} is lost from {}", h.to_hex(), self.dir.display()));
            }
        }
        if let Some(h) = self.gone.iter().find(|h| contained.contains(*h)) {
            return Err(format!(
                "commit {} came back in {} after a collection dropped it",
                h.to_hex(),
                self.dir.display()
            ));
        }
        self.must.retain(|h| contained.contains(h));
        // What a recovery kept is durable from now on, acknowledged or not.
        self.must.extend(present.iter().copied());
        self.present = present;
        store.close().map_err(|e| format!("closing {} after the check: {e}", self.dir.display()))
    }
}

/// Compares a stored commit with its plan: metadata, tree hash and every value.
fn compare(store: &Store, h: &Hash, planned: &Planned) -> Result<(), String> {
    let info = store.commit_info(h).map_err(|e| format!("commit_info: {e}"))?;
    let parents: Vec<Hash> = planned.parent.into_iter().collect();
    if info.tree != planned.tree
        || info.parents != parents
        || info.date != planned.date
        || info.author != b"Tezos"
        || info.message != planned.message.as_bytes()
    {
        return Err(format!("metadata differ from the plan: {info:?}"));
    }
    let tree = store.checkout(h).map_err(|e| format!("checkout: {e}"))?;
    if tree.hash() != planned.tree {
        return Err(format!("checked-out tree hash {} differs from the planned {}", tree.hash(), planned.tree));
    }
    let mut values: BTreeMap<Key, Vec<u8>> = BTreeMap::new();
    tree.fold::<&[u8], _>(&[], None, Order::Sorted, |path, t| {
        if let Some(v) = t.to_value()? {
            values.insert(path.iter().map(|s| s.to_vec()).collect(), v);
        }
        Ok(true)
    })
    .map_err(|e| format!("reading the tree: {e}"))?;
    if &values != planned.model.values() {
        let want = planned.model.values();
        let first = values
            .iter()
            .find(|(k, v)| want.get(*k) != Some(*v))
            .map(|(k, _)| k.clone())
            .or_else(|| want.keys().find(|k| !values.contains_key(*k)).cloned())
            .map_or_else(String::new, |k| show(&k));
        return Err(format!(
            "values differ from the plan ({} read, {} planned; first difference at {first})",
            values.len(),
            want.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{key, Op};

    /// A store with one commit made as the swarm plans it, and the state that knows it.
    fn one_commit(dir: &std::path::Path) -> (StoreState, Hash) {
        let inode = arbor::Config::default().inode;
        let mut model = Model::default();
        model.apply(&Op::Add(key("a/b"), b"1".to_vec()));
        model.apply(&Op::Add(key("big/0001"), vec![b'x'; 100]));
        let planned = Planned { tree: model.hash(inode), model, parent: None, date: 1, message: "c1".into() };
        let store = Store::open_with(dir, store_config(Arc::new(OsFs), false)).unwrap();
        let mut tree = store.empty();
        for (k, v) in planned.model.values() {
            tree.add_mut(k, v).unwrap();
        }
        let h = store.commit(&tree, &[], 1, "Tezos", "c1").unwrap();
        assert_eq!(h, planned.hash(), "the plan names the commit the store makes");
        store.close().unwrap();
        let mut state = StoreState::new(dir.to_path_buf());
        state.known.insert(h, Arc::new(planned));
        state.must.insert(h);
        (state, h)
    }

    #[test]
    fn a_sound_store_passes_and_its_commits_become_required() {
        let dir = tempfile::tempdir().unwrap();
        let (mut state, h) = one_commit(dir.path());
        state.must.clear();
        state.check(arbor::Config::default().inode, &HashSet::new()).unwrap();
        assert_eq!(state.present, vec![h]);
        assert!(state.must.contains(&h), "a commit seen after recovery must stay");
    }

    #[test]
    fn a_lost_acknowledged_commit_fails_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let (mut state, _) = one_commit(dir.path());
        let other = arbor_core::blake2b_256(&[b"never committed"]);
        state.must.insert(other);
        let e = state.check(arbor::Config::default().inode, &HashSet::new()).unwrap_err();
        assert!(e.contains("is lost"), "{e}");
        // Unless an unacknowledged collection may have dropped it.
        state.check(arbor::Config::default().inode, &HashSet::from([other])).unwrap();
    }

    #[test]
    fn wrong_contents_or_an_unplanned_commit_fail_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let (mut state, h) = one_commit(dir.path());
        let mut wrong = Model::default();
        wrong.apply(&Op::Add(key("a/b"), b"2".to_vec()));
        let p = state.known[&h].clone();
        // Same metadata and tree hash as the store's, other values: only the value
        // comparison can tell.
        state
            .known
            .insert(h, Arc::new(Planned { model: wrong, tree: p.tree, parent: None, date: 1, message: "c1".into() }));
        let e = state.check(arbor::Config::default().inode, &HashSet::new()).unwrap_err();
        assert!(e.contains("values differ"), "{e}");
        state.known.clear();
        let e = state.check(arbor::Config::default().inode, &HashSet::new()).unwrap_err();
        assert!(e.contains("never planned"), "{e}");
    }

    #[test]
    fn a_store_that_does_not_open_fails_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let (mut state, _) = one_commit(dir.path());
        for name in std::fs::read_dir(dir.path().join("pack")).unwrap() {
            let path = name.unwrap().path();
            if path.extension().is_some_and(|e| e == "chunk") {
                std::fs::write(&path, b"not a chunk").unwrap();
            }
        }
        assert!(state.check(arbor::Config::default().inode, &HashSet::new()).is_err());
    }
}
