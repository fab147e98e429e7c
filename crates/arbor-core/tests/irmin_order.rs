//! `irmin_order`: the order irmin-pack lists a committed directory in, for directories of
//! 1, 32, 33, 200, 256, 257 and 5,000 entries. Each result is checked against the rules
//! of `docs/ORDER.md` by a separate checker, for input in any order, and against vectors
//! computed by a separate Python implementation of `docs/HASH.md` §5 and `docs/ORDER.md`.

use arbor_core::order::{irmin_fold_order_after_updates, irmin_order, Update};
use arbor_core::InodeConfig;

fn decimal_steps(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| i.to_string().into_bytes()).collect()
}

fn order_of(cfg: InodeConfig, steps: &[Vec<u8>]) -> Vec<usize> {
    let refs: Vec<&[u8]> = steps.iter().map(Vec::as_slice).collect();
    irmin_order(cfg, &refs).unwrap()
}

/// Checks `seq` (steps in the order produced, all below one inode at `depth`) against the
/// rules: at most `entries` bindings are sorted by bytes; more are grouped by slot in
/// increasing slot order, each group following the rules one depth down.
fn check_rules(cfg: InodeConfig, depth: u32, seq: &[&[u8]]) {
    if seq.len() <= cfg.entries as usize {
        assert!(seq.windows(2).all(|w| w[0] < w[1]), "a leaf inode at depth {depth} is not sorted");
        return;
    }
    let mut start = 0;
    let mut last_slot = None;
    while start < seq.len() {
        let slot = cfg.slot(depth, seq[start]);
        assert!(last_slot.is_none_or(|l| l < slot), "slots not increasing at depth {depth}");
        let end = start + seq[start..].iter().take_while(|s| cfg.slot(depth, s) == slot).count();
        check_rules(cfg, depth + 1, &seq[start..end]);
        last_slot = Some(slot);
        start = end;
    }
}

fn check_size(n: usize) {
    let cfg = InodeConfig::TEZOS;
    let steps = decimal_steps(n);
    let order = order_of(cfg, &steps);
    let mut seen = order.clone();
    seen.sort_unstable();
    assert_eq!(seen, (0..n).collect::<Vec<_>>(), "{n} entries: not a permutation");
    let seq: Vec<&[u8]> = order.iter().map(|&i| steps[i].as_slice()).collect();
    check_rules(cfg, 0, &seq);
    let sorted = {
        let mut s = seq.clone();
        s.sort_unstable();
        s
    };
    // Up to 32 entries irmin-pack keeps one sorted leaf; above, the order is not sorted.
    assert_eq!(seq == sorted, n <= 32, "{n} entries");
    // The input order does not matter: reversed input, same steps out.
    let reversed: Vec<Vec<u8>> = steps.iter().rev().cloned().collect();
    let again: Vec<&[u8]> = order_of(cfg, &reversed).iter().map(|&i| reversed[i].as_slice()).collect();
    assert_eq!(again, seq, "{n} entries: depends on the input order");
}

#[test]
fn sizes_1_32_33_200_256_257_5000_follow_the_rules() {
    for n in [1, 32, 33, 200, 256, 257, 5_000] {
        check_size(n);
    }
}

#[test]
fn vectors_from_an_independent_implementation() {
    let small: Vec<Vec<u8>> = (0..6).map(|i| format!("{i:02}").into_bytes()).collect();
    assert_eq!(order_of(InodeConfig::SMALL_TEST, &small), [2, 5, 0, 3, 1, 4]);

    let k33: Vec<Vec<u8>> = (0..33).map(|i| format!("k{i:02}").into_bytes()).collect();
    assert_eq!(
        order_of(InodeConfig::TEZOS, &k33),
        [
            29, 5, 17, 22, 28, 32, 8, 11, 12, 7, 30, 6, 13, 4, 21, 31, 16, 24, 18, 3, 1, 14, 15, 20, 23, 0, 26, 9, 10,
            27, 2, 25, 19
        ]
    );
    for (n, head, tail) in [
        (200, [10, 169, 31, 55, 65, 7, 104, 194, 21, 32], [14, 177, 197]),
        (257, [10, 169, 202, 249, 31, 55, 65, 7, 104, 194], [177, 197, 250]),
        (5_000, [1964, 2194, 2354, 4149, 1024, 1725, 3694, 3918, 2911, 31], [2693, 343, 920]),
    ] {
        let order = order_of(InodeConfig::TEZOS, &decimal_steps(n));
        assert_eq!(order[..10], head, "{n} entries");
        assert_eq!(order[n - 3..], tail, "{n} entries");
    }
}

#[test]
fn list_pages_are_slices_of_the_order() {
    // `list ~offset ~length` under Octez: consecutive pages of 50 cover the order exactly once.
    let steps = decimal_steps(257);
    let order = order_of(InodeConfig::TEZOS, &steps);
    let pages: Vec<usize> = order.chunks(50).flatten().copied().collect();
    assert_eq!(pages, order);
}

#[test]
fn a_directory_changed_in_memory_folds_its_updates_last() {
    let cfg = InodeConfig::TEZOS;
    let steps = decimal_steps(40);
    let refs: Vec<&[u8]> = steps.iter().map(Vec::as_slice).collect();
    let committed: Vec<&[u8]> = irmin_order(cfg, &refs).unwrap().into_iter().map(|i| refs[i]).collect();
    // Replace the first committed step, remove the second, add two new ones.
    let updates = [Update::Add(b"zz"), Update::Add(committed[0]), Update::Remove(committed[1]), Update::Add(b"aa")];
    let got = irmin_fold_order_after_updates(cfg, &refs, &updates).unwrap();
    let mut expected: Vec<&[u8]> = committed[2..].to_vec();
    let mut added: Vec<&[u8]> = vec![b"zz", committed[0], b"aa"];
    added.sort_unstable();
    expected.extend(added);
    assert_eq!(got, expected);
}
