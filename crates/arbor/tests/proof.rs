//! Proofs built by the engine: identical to the reference prover's for the same tree, claims
//! and writes; verified from their bytes alone against tree and commit hashes; from trees in
//! memory and from commits loaded back from disk; and for closures, with the after-root of
//! the tree their writes produce.

use std::collections::BTreeMap;

use arbor::proof::{prove_with, prove_with_tree, verify, verify_paths, Proof, ProofError, Proved, Write};
use arbor::{InodeConfig, Store, Tree};
use arbor_core::proof::{prove, Path, RefSource};
use arbor_core::reference::RefTree;

/// The shared SplitMix64 on a bare state, with this test's modulo draws.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        arbor_core::toolbox::SplitMix64::step(&mut self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn step(&mut self) -> Vec<u8> {
        let len = 1 + self.below(4);
        (0..len).map(|_| b"abcdef0123"[self.below(10)]).collect()
    }
}

/// A random context as path → value: a few directories, one of them `big` entries large.
fn random_model(rng: &mut Rng, n: usize, big: usize) -> BTreeMap<Path, Vec<u8>> {
    let mut m = BTreeMap::new();
    for i in 0..big {
        m.insert(vec![b"big".to_vec(), format!("k{i}").into_bytes()], vec![i as u8]);
    }
    while m.len() < n + big {
        let depth = 1 + rng.below(3);
        let p: Path = (0..depth).map(|_| rng.step()).collect();
        // Keep it a tree: no value may be a prefix of another path.
        let clash = (1..=p.len()).any(|k| m.contains_key(&p[..k])) || m.keys().any(|k| k.starts_with(&p));
        if !clash && p[0] != b"big" {
            m.insert(p, vec![rng.below(256) as u8; rng.below(4)]);
        }
    }
    m
}

fn to_tree(m: &BTreeMap<Path, Vec<u8>>, cfg: InodeConfig) -> Tree {
    let mut t = Tree::empty_with(cfg);
    for (p, v) in m {
        t.add_mut(p, v).unwrap();
    }
    t
}

fn to_ref(m: &BTreeMap<Path, Vec<u8>>) -> RefTree {
    let mut root = RefTree::Node(BTreeMap::new());
    for (p, v) in m {
        let mut cur = &mut root;
        for s in &p[..p.len() - 1] {
            let RefTree::Node(children) = cur else { unreachable!() };
            cur = children.entry(s.clone()).or_insert_with(|| RefTree::Node(BTreeMap::new()));
        }
        let RefTree::Node(children) = cur else { unreachable!() };
        children.insert(p.last().unwrap().clone(), RefTree::Contents(v.clone()));
    }
    root
}

/// Reads over existing values and directories, and absent paths.
fn random_reads(rng: &mut Rng, m: &BTreeMap<Path, Vec<u8>>, n: usize) -> Vec<Path> {
    let keys: Vec<&Path> = m.keys().collect();
    (0..n)
        .map(|_| {
            let mut p = keys[rng.below(keys.len())].clone();
            match rng.below(4) {
                0 => p,
                1 => {
                    p.pop();
                    p
                }
                2 => {
                    *p.last_mut().unwrap() = rng.step();
                    p
                }
                _ => {
                    p.push(rng.step());
                    p
                }
            }
        })
        .collect()
}

fn random_writes(rng: &mut Rng, m: &BTreeMap<Path, Vec<u8>>, n: usize) -> Vec<Write> {
    let keys: Vec<&Path> = m.keys().collect();
    (0..n)
        .map(|_| {
            let mut p = keys[rng.below(keys.len())].clone();
            match rng.below(5) {
                0 => Write::Add(p, vec![1, 2]),
                1 => {
                    *p.last_mut().unwrap() = rng.step();
                    Write::Add(p, vec![3])
                }
                2 => {
                    p.pop();
                    Write::Remove(p)
                }
                _ => Write::Remove(p),
            }
        })
        .collect()
}

fn apply(t: &Tree, writes: &[Write]) -> Tree {
    let mut t = t.clone();
    for w in writes {
        match w {
            Write::Add(p, v) => t.add_mut(p, v).unwrap(),
            Write::Remove(p) => t.remove_mut(p).unwrap(),
        }
    }
    t
}

#[test]
fn engine_proofs_are_the_reference_proofs() {
    for (cfg, big, seeds) in [(InodeConfig::SMALL_TEST, 12, 150), (InodeConfig::TEZOS, 400, 25)] {
        for seed in 0..seeds {
            let mut rng = Rng(seed);
            let m = random_model(&mut rng, 60, big);
            let tree = to_tree(&m, cfg);
            let reference = to_ref(&m);
            assert_eq!(tree.hash(), reference.hash(cfg));
            let n = 1 + rng.below(20);
            let reads = random_reads(&mut rng, &m, n);
            let n = rng.below(10);
            let writes = random_writes(&mut rng, &m, n);
            let ours = tree.prove_changes(&reads, &writes).unwrap();
            let theirs = prove(&RefSource::new(cfg), &&reference, cfg, &reads, &writes).unwrap();
            assert_eq!(ours, theirs, "seed {seed}");
            assert_eq!(ours.after, apply(&tree, &writes).hash(), "seed {seed}");
            let v = verify(&ours.encode(), &tree.hash(), cfg).unwrap();
            v.expect_writes(&writes).unwrap();
            for p in &reads {
                let expected = match tree.find_tree(p).unwrap() {
                    None => Proved::Absent,
                    Some(t) => match t.to_value().unwrap() {
                        Some(v) => Proved::Value(v),
                        None => Proved::Dir(t.hash()),
                    },
                };
                assert_eq!(v.get(p), Some(&expected));
            }
        }
    }
}

#[test]
fn proofs_of_a_commit_loaded_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let m = random_model(&mut Rng(42), 500, 3000);
    let reads = random_reads(&mut Rng(43), &m, 40);
    let (commit, in_memory) = {
        let store = Store::open(dir.path()).unwrap();
        let mut t = store.empty();
        for (p, v) in &m {
            t.add_mut(p, v).unwrap();
        }
        let c = store.commit(&t, &[], 0, "Tezos", "").unwrap();
        (c, t.prove(&reads).unwrap())
    };
    let store = Store::open(dir.path()).unwrap();
    let proof = store.prove(&commit, &reads).unwrap();
    assert_eq!(proof, in_memory, "loaded lazily from the log, the proof is the same");
    let root = store.commit_info(&commit).unwrap().tree;
    let v = verify_paths(&proof.encode(), &root, InodeConfig::TEZOS, &reads).unwrap();
    for p in &reads {
        if let Some(value) = m.get(p) {
            assert_eq!(v.get(p), Some(&Proved::Value(value.clone())));
        }
    }
    // And a closure on the checked-out tree, shrinking the large directory to flat.
    let tree = store.checkout(&commit).unwrap();
    let (seen, proof, after) = prove_with_tree(&tree, |r| {
        let seen = r.find(&["big", "k7"])?;
        for i in 0..2800 {
            r.remove(&["big".to_string(), format!("k{i}")])?;
        }
        r.add(&["big", "fresh"], b"new")?;
        Ok(seen)
    })
    .unwrap();
    assert_eq!(seen, Some(vec![7]));
    assert_eq!(after.length(&["big"]).unwrap(), 201);
    let v = verify(&proof.encode(), &root, InodeConfig::TEZOS).unwrap();
    assert_eq!(v.after(), after.hash());
}

#[test]
fn prove_with_records_reads_and_writes() {
    let cfg = InodeConfig::TEZOS;
    let m = random_model(&mut Rng(9), 200, 300);
    let tree = to_tree(&m, cfg);
    let some: Vec<&Path> = m.keys().take(3).collect();
    let ((), proof) = prove_with(&tree, |r| {
        assert!(r.mem(some[0])?);
        assert!(r.mem_tree(&["big"])?);
        assert_eq!(r.find(&["big", "k1"])?, Some(vec![1]));
        assert_eq!(r.find(&["big", "missing"])?, None);
        r.add(&["big", "k1"], b"changed")?;
        // Reads see the closure's writes; the proof proves the value before them.
        assert_eq!(r.find(&["big", "k1"])?, Some(b"changed".to_vec()));
        r.remove(some[1])?;
        r.add(&["new", "dir", "leaf"], b"x")?;
        Ok(())
    })
    .unwrap();
    let v = verify(&proof.encode(), &tree.hash(), cfg).unwrap();
    assert_eq!(v.get(&["big", "k1"]), Some(&Proved::Value(vec![1])));
    assert_eq!(v.get(&["big", "missing"]), Some(&Proved::Absent));
    assert!(matches!(v.get(&["big"]), Some(Proved::Dir(_))));
    assert_eq!(v.writes().len(), 3);
    let after = tree.add(&["big", "k1"], b"changed").unwrap().remove(some[1]).unwrap();
    let after = after.add(&["new", "dir", "leaf"], b"x").unwrap();
    assert_eq!(v.after(), after.hash());
    v.expect_reads(&[
        some[0].clone(),
        vec![b"big".to_vec()],
        vec![b"big".to_vec(), b"k1".to_vec()],
        vec![b"big".to_vec(), b"missing".to_vec()],
    ])
    .unwrap();
}

#[test]
fn engine_errors_and_tampering() {
    let tree = to_tree(&random_model(&mut Rng(1), 30, 0), InodeConfig::SMALL_TEST);
    assert!(matches!(tree.prove(&[["a", ""]]), Err(arbor::Error::EmptyStep { index: 1 })));
    let bytes = tree.prove(&[["x"]]).unwrap().encode();
    let root = tree.hash();
    for i in 0..bytes.len() * 8 {
        let mut b = bytes.clone();
        b[i / 8] ^= 1 << (i % 8);
        let ok = verify(&b, &root, InodeConfig::SMALL_TEST).and_then(|v| v.expect_reads(&[["x"]]));
        assert!(ok.is_err(), "bit {i}");
    }
    let e = verify(&bytes, &root, InodeConfig::TEZOS).unwrap_err();
    assert!(matches!(e, ProofError::ConfigMismatch { .. }));
    assert_eq!(Proof::decode(&bytes).unwrap().encode(), bytes);
}
