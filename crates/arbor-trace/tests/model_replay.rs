//! Every read result of a generated trace is what a plain in-memory tree,
//! loaded with the initial state and fed the trace's writes, returns.

use std::collections::BTreeMap;

use arbor_trace::{generate, initial_state, Digest, GeneratorParams, Op, Path, Profile, TraceReader, TreeSummary};

/// The reference model: leaves by path, with the tree semantics of
/// `docs/TRACE.md` (a path is absent, a value, or a node with children).
#[derive(Default)]
struct Model {
    leaves: BTreeMap<Path, Vec<u8>>,
}

impl Model {
    /// Leaves strictly below `path`.
    fn below<'a>(&'a self, path: &'a Path) -> impl Iterator<Item = (&'a Path, &'a Vec<u8>)> + 'a {
        self.leaves
            .range(path.clone()..)
            .skip_while(move |(k, _)| *k == path)
            .take_while(move |(k, _)| k.starts_with(path))
    }

    fn is_node(&self, path: &Path) -> bool {
        self.below(path).next().is_some()
    }

    /// Sorted distinct steps right below `path`.
    fn children(&self, path: &Path) -> Vec<Vec<u8>> {
        let mut c: Vec<Vec<u8>> = self.below(path).map(|(k, _)| k[path.len()].clone()).collect();
        c.dedup();
        c
    }

    fn fold(&self, path: &Path, depth: Option<u32>) -> u64 {
        let max = depth.map_or(usize::MAX, |d| d as usize);
        let mut prefixes: Vec<&[Vec<u8>]> = Vec::new();
        for (k, _) in self.below(path) {
            for d in 1..=(k.len() - path.len()).min(max) {
                prefixes.push(&k[..path.len() + d]);
            }
        }
        prefixes.sort();
        prefixes.dedup();
        prefixes.len() as u64
    }

    fn remove(&mut self, path: &Path) {
        let doomed: Vec<Path> = self.below(path).map(|(k, _)| k.clone()).collect();
        for k in doomed {
            self.leaves.remove(&k);
        }
        self.leaves.remove(path);
    }

    fn add(&mut self, path: &Path, value: Vec<u8>) {
        self.remove(path);
        for n in 0..path.len() {
            self.leaves.remove(&path[..n]);
        }
        self.leaves.insert(path.clone(), value);
    }

    /// Applies `op`; returns an error message if its recorded result is not
    /// what the model gives.
    fn apply(&mut self, op: &Op) -> Result<(), String> {
        let check = |ok: bool, what: &str| {
            if ok {
                Ok(())
            } else {
                Err(format!("{what} mismatch on {op:?}"))
            }
        };
        match op {
            Op::Find { path, result } => {
                let got = self.leaves.get(path).map(|v| Digest::of(v));
                check(got == *result, "find")
            }
            Op::Mem { path, result } => check(self.leaves.contains_key(path) == *result, "mem"),
            Op::MemTree { path, result } => {
                check((self.leaves.contains_key(path) || self.is_node(path)) == *result, "mem_tree")
            }
            Op::FindTree { path, result } => {
                let got = if self.leaves.contains_key(path) {
                    Some(TreeSummary { is_value: true, children: 0 })
                } else if self.is_node(path) {
                    Some(TreeSummary { is_value: false, children: self.children(path).len() as u64 })
                } else {
                    None
                };
                check(got == *result, "find_tree")
            }
            Op::List { path, offset, length, result } => {
                let n = self
                    .children(path)
                    .into_iter()
                    .skip(offset.unwrap_or(0) as usize)
                    .take(length.map_or(usize::MAX, |l| l as usize))
                    .count();
                check(n as u32 == *result, "list")
            }
            Op::Length { path, result } => check(self.children(path).len() as u64 == *result, "length"),
            Op::Fold { path, depth, result } => check(self.fold(path, *depth) == *result, "fold"),
            Op::Add { path, value } => {
                self.add(path, value.clone());
                Ok(())
            }
            Op::AddTree { path, tree } => {
                self.remove(path);
                for (rel, v) in tree {
                    let mut full = path.clone();
                    full.extend(rel.iter().cloned());
                    self.add(&full, v.clone());
                }
                Ok(())
            }
            Op::Remove { path } => {
                self.remove(path);
                Ok(())
            }
            Op::Copy { path, to } => {
                let copied: Vec<(Path, Vec<u8>)> = match self.leaves.get(path) {
                    Some(v) => vec![(Vec::new(), v.clone())],
                    None => self.below(path).map(|(k, v)| (k[path.len()..].to_vec(), v.clone())).collect(),
                };
                check(!copied.is_empty(), "copy source")?;
                self.remove(to);
                for (rel, v) in copied {
                    let mut full = to.clone();
                    full.extend(rel);
                    self.add(&full, v);
                }
                Ok(())
            }
        }
    }
}

#[test]
fn initial_state_is_a_consistent_tree() {
    let values = 30_000;
    let pairs: Vec<(Path, Vec<u8>)> = initial_state(Profile::TezosMainnet, 9, values).collect();
    assert_eq!(pairs.len() as u64, values);
    let again: Vec<(Path, Vec<u8>)> = initial_state(Profile::TezosMainnet, 9, values).collect();
    assert_eq!(pairs, again, "the stream is deterministic");
    let map: BTreeMap<Path, Vec<u8>> = pairs.into_iter().collect();
    assert_eq!(map.len() as u64, values, "paths are distinct");
    // No value sits where another value's path passes through.
    let keys: Vec<&Path> = map.keys().collect();
    for w in keys.windows(2) {
        assert!(!w[1].starts_with(w[0]), "{:?} is a prefix of {:?}", w[0], w[1]);
        assert!(w[0].iter().all(|s| !s.is_empty()));
    }
    // A smaller state is not a prefix of a larger one (sections scale), but
    // the hot paths exist in both.
    let small: BTreeMap<Path, Vec<u8>> = initial_state(Profile::TezosMainnet, 9, 10_000).collect();
    let gc: Path = vec![b"data".to_vec(), b"contracts".to_vec(), b"global_counter".to_vec()];
    assert!(small.contains_key(&gc) && map.contains_key(&gc));
}

#[test]
fn read_results_match_a_model_replay() {
    let params =
        GeneratorParams { blocks: 45, values: 20_000, seed: 4, cycle_length: 10, ..GeneratorParams::default() };
    let mut bytes = Vec::new();
    let summary = generate(params.clone(), &mut bytes).unwrap();
    assert_eq!(summary.blocks, 45);
    assert_eq!(summary.boundary_blocks, 4);

    let reader = TraceReader::new(bytes.as_slice()).unwrap();
    let mut model = Model::default();
    for (p, v) in reader.header().initial_state.stream().unwrap().unwrap() {
        model.leaves.insert(p, v);
    }
    assert_eq!(model.leaves.len(), 20_000);

    let (mut checked, mut hits, mut misses) = (0u64, 0u64, 0u64);
    for block in reader {
        let block = block.unwrap();
        for op in &block.ops {
            if let Err(e) = model.apply(op) {
                panic!("block at level {}: {e}", block.level);
            }
            match op {
                Op::Find { result, .. } => {
                    checked += 1;
                    if result.is_some() {
                        hits += 1
                    } else {
                        misses += 1
                    }
                }
                Op::Mem { .. }
                | Op::MemTree { .. }
                | Op::FindTree { .. }
                | Op::List { .. }
                | Op::Length { .. }
                | Op::Fold { .. } => checked += 1,
                _ => {}
            }
        }
    }
    assert!(checked > 100_000, "only {checked} reads checked");
    // Both outcomes occur: most finds hit; misses are new keys and absent
    // optional fields (e.g. the delegate of an undelegated account).
    assert!(hits > 5 * misses && misses > 0, "hits {hits}, misses {misses}");
    // The state evolved: keys were added and removed.
    assert_ne!(model.leaves.len(), 20_000);
}
