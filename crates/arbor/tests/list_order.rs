//! `Tree::list` (page by page) and `Tree::fold(.., Order::Undefined, ..)` give a directory's
//! entries in Octez's order (`docs/ORDER.md`): committed directories in irmin-pack's stored
//! order, directories changed since their checkout with their changes last until listed,
//! listed or built-in-memory ones sorted. Sizes 1, 32, 33, 200, 256, 257 and 5,000 (flat and
//! inode-hashed), checked against a model of Irmin's forms that uses `arbor_core::order`, and
//! in a few cases against orders derived by hand or by a separate implementation.

use std::collections::BTreeMap;

use arbor::{Depth, InodeConfig, Order, Store, Tree};
use arbor_core::order::{irmin_fold_order_after_updates, irmin_order, Update};

const SIZES: [usize; 7] = [1, 32, 33, 200, 256, 257, 5_000];
const CFG: InodeConfig = InodeConfig::TEZOS;

type Bytes = Vec<u8>;

/// The steps of the test directory `d`: decimal numbers, every seventh one a subdirectory.
fn name(i: usize) -> Bytes {
    i.to_string().into_bytes()
}

fn is_subdir(i: usize) -> bool {
    i % 7 == 3
}

/// How Irmin holds directory `d`, and what it holds.
#[derive(Clone, Debug)]
struct Model {
    /// Its bindings now: step to value (subdirectories: the value of their one child `v`).
    now: BTreeMap<Bytes, Bytes>,
    /// The steps it had at checkout (None: built in memory, a map).
    committed: Option<Vec<Bytes>>,
    /// Changes since checkout, in order: (step, added or replaced).
    updates: Vec<(Bytes, bool)>,
    /// Listed since it changed: a map.
    listed: bool,
}

impl Model {
    fn built(n: usize) -> Model {
        let now = (0..n).map(|i| (name(i), format!("v{i}").into_bytes())).collect();
        Model { now, committed: None, updates: Vec::new(), listed: false }
    }

    /// The model after a commit and a checkout.
    fn checked_out(&self) -> Model {
        let committed = Some(self.now.keys().cloned().collect());
        Model { now: self.now.clone(), committed, updates: Vec::new(), listed: false }
    }

    fn tracks(&self) -> bool {
        self.committed.is_some() && !self.listed
    }

    fn set(&mut self, step: &[u8], value: &[u8]) {
        if self.now.get(step).map(Vec::as_slice) == Some(value) {
            return; // Irmin notes no update for an equal binding.
        }
        self.now.insert(step.to_vec(), value.to_vec());
        if self.tracks() {
            self.updates.push((step.to_vec(), true));
        }
    }

    fn remove(&mut self, step: &[u8]) {
        if self.now.remove(step).is_some() && self.tracks() {
            self.updates.push((step.to_vec(), false));
        }
    }

    fn sorted(&self) -> Vec<Bytes> {
        self.now.keys().cloned().collect()
    }

    /// `fold ~order:`Undefined`.
    fn fold(&self) -> Vec<Bytes> {
        match &self.committed {
            Some(c) if !self.listed => {
                let c: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
                let u: Vec<Update<'_>> =
                    self.updates.iter().map(|(s, add)| if *add { Update::Add(s) } else { Update::Remove(s) }).collect();
                irmin_fold_order_after_updates(CFG, &c, &u).unwrap().into_iter().map(<[u8]>::to_vec).collect()
            }
            _ => self.sorted(),
        }
    }

    /// `list` in full: a changed directory becomes a map.
    fn list(&mut self) -> Vec<Bytes> {
        match &self.committed {
            Some(c) if self.updates.is_empty() => {
                let refs: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
                irmin_order(CFG, &refs).unwrap().into_iter().map(|i| c[i].clone()).collect()
            }
            _ => {
                self.listed = true;
                self.sorted()
            }
        }
    }
}

/// The tree holding `d` as [`Model::built`] says, plus a sibling `e`.
fn build(base: Tree, n: usize) -> Tree {
    let mut t = base.add(&["e", "x"], b"1").unwrap();
    for i in 0..n {
        let (s, v) = (i.to_string(), format!("v{i}"));
        if is_subdir(i) {
            t.add_mut(&["d", &s, "v"], v.as_bytes()).unwrap();
        } else {
            t.add_mut(&["d", &s], v.as_bytes()).unwrap();
        }
    }
    t
}

fn fold_steps(t: &Tree) -> Vec<Bytes> {
    let mut out = Vec::new();
    t.fold(&["d"], Some(Depth::Eq(1)), Order::Undefined, |k, _| {
        out.push(k[0].to_vec());
        Ok(true)
    })
    .unwrap();
    out
}

fn list_steps(t: &Tree, offset: Option<usize>, length: Option<usize>) -> Vec<Bytes> {
    t.list(&["d"], offset, length).unwrap().into_iter().map(|(s, _)| s.to_vec()).collect()
}

/// Pages of `list` against the full order `want`: windows of every kind, and consecutive pages.
fn check_pages(t: &Tree, want: &[Bytes], what: &str) {
    let n = want.len();
    let windows = [
        (None, None),
        (Some(0), Some(0)),
        (Some(0), Some(1)),
        (Some(1), Some(10)),
        (Some(n / 2), Some(7)),
        (Some(n.saturating_sub(3)), Some(10)),
        (Some(n), Some(5)),
        (Some(n + 5), None),
        (None, Some(n + 1)),
        (Some(n / 3), None),
    ];
    for (off, len) in windows {
        let from = off.unwrap_or(0).min(n);
        let to = len.map_or(n, |l| (from + l).min(n));
        assert_eq!(list_steps(t, off, len), want[from..to], "{what}: list offset {off:?} length {len:?}");
    }
    let mut paged = Vec::new();
    for page in 0.. {
        let got = list_steps(t, Some(page * 50), Some(50));
        if got.is_empty() {
            break;
        }
        paged.extend(got);
    }
    assert_eq!(paged, want, "{what}: pages of 50");
}

/// Changes that Octez notes as updates, and some it does not, on a directory of `n` entries.
fn change(t: &mut Tree, m: &mut Model, n: usize) {
    let set = |t: &mut Tree, m: &mut Model, i: usize, v: &[u8]| {
        let s = name(i);
        m.set(&s, v);
        let s = std::str::from_utf8(&s).unwrap().to_owned();
        if is_subdir(i) && i < n {
            t.add_mut(&["d", &s, "v"], v).unwrap();
        } else {
            t.add_mut(&["d", &s], v).unwrap();
        }
    };
    // Replacements (one in a subdirectory: index 3), and one with the same value (no update).
    for i in [0, n / 2, 3, n - 1] {
        if i < n && n > 1 {
            set(t, m, i, b"changed");
        }
    }
    set(t, m, n / 3, format!("v{}", n / 3).as_bytes());
    // Additions, sorting before and after the existing steps, and one added then removed.
    for s in ["+new", "000", "zz-new", "5-new"] {
        m.set(s.as_bytes(), b"new");
        t.add_mut(&["d", s], b"new").unwrap();
    }
    m.remove(b"5-new");
    t.remove_mut(&["d", "5-new"]).unwrap();
    // Removals (not the last entry), one re-added afterwards.
    if n > 2 {
        for i in [1, n - 2] {
            m.remove(&name(i));
            t.remove_mut(&["d", std::str::from_utf8(&name(i)).unwrap()]).unwrap();
        }
        set(t, m, 1, b"back");
    }
    // Removing what is not there changes nothing.
    t.remove_mut(&["d", "absent"]).unwrap();
}

fn committed_case(n: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(tmp.path()).unwrap();
    let built = Model::built(n);
    let t = build(store.empty(), n);
    let h = store.commit(&t, &[], 0, "t", "").unwrap();
    let m = built.checked_out();
    let want = m.clone().list();
    assert_eq!(want.len(), n);
    assert_eq!(want == m.sorted(), n <= 32, "{n} entries: only up to 32 come sorted");
    // The working tree lent back after the commit, then the commit read from the log.
    for (what, t) in [("lent", store.checkout(&h).unwrap()), ("read", store.checkout(&h).unwrap())] {
        let what = format!("{n} committed ({what})");
        assert_eq!(fold_steps(&t), want, "{what}: fold");
        check_pages(&t, &want, &what);
        // Listing a committed directory does not make it a map.
        assert_eq!(fold_steps(&t), want, "{what}: fold after list");
    }
    drop(store);
    let store = Store::open(tmp.path()).unwrap();
    let t = store.checkout(&h).unwrap();
    check_pages(&t, &want, &format!("{n} committed (reopened)"));
    assert_eq!(fold_steps(&t), want, "{n} committed (reopened): fold");
}

fn changed_case(n: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(tmp.path()).unwrap();
    let built = Model::built(n);
    let h = store.commit(&build(store.empty(), n), &[], 0, "t", "").unwrap();
    for lent in [true, false] {
        let what = format!("{n} changed ({})", if lent { "lent" } else { "read" });
        let mut m = built.checked_out();
        let mut t = store.checkout(&h).unwrap();
        if !lent {
            // A second checkout reads the commit from the log.
            let _ = store.checkout(&h).unwrap();
            t = store.checkout(&h).unwrap();
        }
        change(&mut t, &mut m, n);
        // Folded before any list: unchanged entries in stored order, then the changed ones.
        let folded = m.fold();
        assert_eq!(fold_steps(&t), folded, "{what}: fold before list");
        assert_eq!(fold_steps(&t), folded, "{what}: a fold changes nothing");
        assert_ne!(folded, m.sorted(), "{what}: the case must tell the orders apart");
        // A sorted fold stays sorted.
        let mut sorted = Vec::new();
        t.fold(&["d"], Some(Depth::Eq(1)), Order::Sorted, |k, _| {
            sorted.push(k[0].to_vec());
            Ok(true)
        })
        .unwrap();
        assert_eq!(sorted, m.sorted(), "{what}: sorted fold");
        // Listed: sorted from then on, changed again or not.
        let listed = m.list();
        assert_eq!(listed, m.sorted());
        check_pages(&t, &listed, &format!("{what}: listed"));
        assert_eq!(fold_steps(&t), m.sorted(), "{what}: fold after list");
        m.set(b"after-list", b"x");
        t.add_mut(&["d", "after-list"], b"x").unwrap();
        assert_eq!(fold_steps(&t), m.sorted(), "{what}: fold after list and a change");
        // Committed again: the stored order of the new entries.
        let h2 = store.commit(&t, &[h], 1, "t", "").unwrap();
        let again = m.checked_out();
        let want = again.clone().list();
        let t2 = store.checkout(&h2).unwrap();
        assert_eq!(fold_steps(&t2), want, "{what}: fold after commit");
        check_pages(&t2, &want, &format!("{what}: committed again"));
    }
}

/// Changes on a committed directory with no list in between, committed and not.
fn changed_twice_case(n: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(tmp.path()).unwrap();
    let built = Model::built(n);
    let h = store.commit(&build(store.empty(), n), &[], 0, "t", "").unwrap();
    let mut m = built.checked_out();
    let mut t = store.checkout(&h).unwrap();
    change(&mut t, &mut m, n);
    // A second round on the same steps: a step's first change decides where it goes.
    change(&mut t, &mut m, n);
    assert_eq!(fold_steps(&t), m.fold(), "{n} changed twice: fold");
    // A tree sharing `d` sees the same forms; listing through it makes `d` a map for both.
    let other = t.add(&["e", "y"], b"2").unwrap();
    assert_eq!(fold_steps(&other), m.fold(), "{n} changed twice: fold through another tree");
    let _ = list_steps(&other, None, Some(1));
    m.listed = true;
    assert_eq!(fold_steps(&t), m.sorted(), "{n} changed twice: fold after a list through another tree");
}

fn built_case(n: usize) {
    let m = Model::built(n);
    let t = build(Tree::empty(), n);
    assert_eq!(fold_steps(&t), m.sorted(), "{n} built: fold");
    check_pages(&t, &m.sorted(), &format!("{n} built"));
}

#[test]
fn committed_directories_come_in_stored_order() {
    for n in SIZES {
        committed_case(n);
    }
}

#[test]
fn changed_directories_fold_their_changes_last_until_listed() {
    for n in SIZES {
        changed_case(n);
    }
}

#[test]
fn repeated_changes_and_shared_directories() {
    for n in SIZES {
        changed_twice_case(n);
    }
}

#[test]
fn directories_built_in_memory_come_sorted() {
    for n in SIZES {
        built_case(n);
    }
}

/// Hand-derived: committed {a, b, c}; replace a, remove b, add 0 and d. Octez folds the
/// untouched c first, then the changed steps still present, sorted: 0, a, d.
#[test]
fn small_changed_directory_by_hand() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(tmp.path()).unwrap();
    let mut t = store.empty();
    for s in ["a", "b", "c"] {
        t.add_mut(&["d", s], b"1").unwrap();
    }
    let h = store.commit(&t, &[], 0, "t", "").unwrap();
    let mut t = store.checkout(&h).unwrap();
    let steps = |v: &[&str]| v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>();
    t.add_mut(&["d", "a"], b"2").unwrap();
    t.add_mut(&["d", "c"], b"1").unwrap(); // same value: not a change
    t.remove_mut(&["d", "b"]).unwrap();
    t.add_mut(&["d", "d"], b"1").unwrap();
    t.add_mut(&["d", "0"], b"1").unwrap();
    assert_eq!(fold_steps(&t), steps(&["c", "0", "a", "d"]));
    assert_eq!(list_steps(&t, Some(1), Some(2)), steps(&["a", "c"]));
    assert_eq!(fold_steps(&t), steps(&["0", "a", "c", "d"]));
}

/// Orders computed by a separate implementation of `docs/HASH.md` §5 and `docs/ORDER.md`
/// (the vectors of `arbor-core/tests/irmin_order.rs`), read back from committed directories.
#[test]
fn committed_orders_match_independent_vectors() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(tmp.path()).unwrap();
    let mut t = store.empty();
    for i in 0..33 {
        t.add_mut(&["k33", &format!("k{i:02}")], b"v").unwrap();
    }
    for n in [200, 257, 5_000] {
        for i in 0..n {
            t.add_mut(&[format!("d{n}"), i.to_string()], b"v").unwrap();
        }
    }
    let h = store.commit(&t, &[], 0, "t", "").unwrap();
    drop((t, store));
    let store = Store::open(tmp.path()).unwrap();
    let t = store.checkout(&h).unwrap();
    let listed = |dir: &str| -> Vec<String> {
        t.list(&[dir], None, None).unwrap().into_iter().map(|(s, _)| String::from_utf8(s.to_vec()).unwrap()).collect()
    };
    let k33: Vec<String> = [
        29, 5, 17, 22, 28, 32, 8, 11, 12, 7, 30, 6, 13, 4, 21, 31, 16, 24, 18, 3, 1, 14, 15, 20, 23, 0, 26, 9, 10, 27,
        2, 25, 19,
    ]
    .iter()
    .map(|i| format!("k{i:02}"))
    .collect();
    assert_eq!(listed("k33"), k33);
    for (n, head, tail) in [
        (200, [10, 169, 31, 55, 65, 7, 104, 194, 21, 32], [14, 177, 197]),
        (257, [10, 169, 202, 249, 31, 55, 65, 7, 104, 194], [177, 197, 250]),
        (5_000, [1964, 2194, 2354, 4149, 1024, 1725, 3694, 3918, 2911, 31], [2693, 343, 920]),
    ] {
        let got = listed(&format!("d{n}"));
        let want = |v: &[i32]| v.iter().map(i32::to_string).collect::<Vec<_>>();
        assert_eq!(got[..10], want(&head), "{n} entries: head");
        assert_eq!(got[n - 3..], want(&tail), "{n} entries: tail");
    }
}
