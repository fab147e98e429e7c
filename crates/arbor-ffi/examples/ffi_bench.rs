//! Operations per second of `find`, `add` and (O(1), the cost of a crossing) `hash` through the Rust API and through the C ABI (its
//! extern functions called from Rust), on the same in-memory tree as bindings/c/bench and
//! bindings/ocaml/bench build: `ffi_bench [values] [operations]`. A benchmark, not a test.
//!
//! The tree: `values` values at `data/contracts/index/<8 hex digits of i * 2654435761>/balance`,
//! each the 8 little-endian bytes of `i`. `find` looks up key `(j * 7919) % values` for each
//! operation `j`; `add` adds keys `values + j` one after the other, each onto the previous tree.

use std::time::Instant;

use arbor::Tree;
use arbor_ffi::*;

fn id(i: u64) -> String {
    format!("{:08x}", (i as u32).wrapping_mul(2654435761))
}

fn report(what: &str, ops: u64, secs: f64) {
    println!("{what:<28} {:>12.0} ops/s  {:>8.1} ns/op", ops as f64 / secs, secs * 1e9 / ops as f64);
}

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().expect("a number")).collect();
    let n = args.first().copied().unwrap_or(100_000);
    let m = args.get(1).copied().unwrap_or(200_000);
    let mut base = Tree::empty();
    for i in 0..n {
        base.add_mut(&["data", "contracts", "index", &id(i), "balance"], &i.to_le_bytes()).expect("add");
    }
    println!("tree of {n} values, hash {}", base.hash());
    // A first pass over the lookups, untimed, so every measured pass finds the tree warm.
    for j in 0..m {
        base.find(&["data", "contracts", "index", &id((j * 7919) % n), "balance"]).expect("find");
    }

    // An O(1) call: what a crossing costs by itself.
    let start = Instant::now();
    for _ in 0..m {
        std::hint::black_box(std::hint::black_box(&base).hash());
    }
    report("rust hash (O(1))", m, start.elapsed().as_secs_f64());
    let start = Instant::now();
    let mut found = 0u64;
    for j in 0..m {
        let i = (j * 7919) % n;
        found += u64::from(base.find(&["data", "contracts", "index", &id(i), "balance"]).expect("find").is_some());
    }
    report("rust find", m, start.elapsed().as_secs_f64());
    assert_eq!(found, m);
    let start = Instant::now();
    let mut t = base.clone();
    for j in 0..m {
        t = t.add(&["data", "contracts", "index", &id(n + j), "balance"], &(n + j).to_le_bytes()).expect("add");
    }
    report("rust add", m, start.elapsed().as_secs_f64());
    println!("after adds: {}", t.hash());

    // The same through the C ABI's functions.
    let mut handle: *mut ArborTree = std::ptr::null_mut();
    // SAFETY: `base` is a valid tree; `handle` is writable.
    unsafe { arbor_tree_clone(&arbor_ffi_tree(&base), &mut handle) };
    let slices = |k: &str| -> [ArborSlice; 5] {
        let s = |x: &str| ArborSlice { ptr: x.as_ptr(), len: x.len() };
        [s("data"), s("contracts"), s("index"), ArborSlice { ptr: k.as_ptr(), len: k.len() }, s("balance")]
    };
    let start = Instant::now();
    let mut h = ArborHash { bytes: [0; 32] };
    for _ in 0..m {
        // SAFETY: valid handle and output.
        let s = unsafe { arbor_tree_hash(std::hint::black_box(handle), &mut h) };
        assert!(s == ArborStatus::Ok);
    }
    report("C ABI hash (from Rust)", m, start.elapsed().as_secs_f64());
    let start = Instant::now();
    for j in 0..m {
        let k = id((j * 7919) % n);
        let p = slices(&k);
        let mut f = false;
        let mut v = ArborBytes { ptr: std::ptr::null_mut(), len: 0 };
        // SAFETY: valid handle, path and outputs; the bytes are freed below.
        let s = unsafe { arbor_tree_find(handle, p.as_ptr(), p.len(), &mut f, &mut v) };
        assert!(s == ArborStatus::Ok && f);
        // SAFETY: returned by arbor_tree_find.
        unsafe { arbor_bytes_free(v) };
    }
    report("C ABI find (from Rust)", m, start.elapsed().as_secs_f64());
    let start = Instant::now();
    let mut cur = handle;
    for j in 0..m {
        let k = id(n + j);
        let p = slices(&k);
        let v = (n + j).to_le_bytes();
        let mut next = std::ptr::null_mut();
        // SAFETY: valid handle, path, value and output.
        let s = unsafe { arbor_tree_add(cur, p.as_ptr(), p.len(), v.as_ptr(), v.len(), &mut next) };
        assert!(s == ArborStatus::Ok);
        if cur != handle {
            // SAFETY: a handle made by arbor_tree_add, no longer used.
            unsafe { arbor_tree_free(cur) };
        }
        cur = next;
    }
    report("C ABI add (from Rust)", m, start.elapsed().as_secs_f64());
    // SAFETY: valid handle and output.
    unsafe { arbor_tree_hash(cur, &mut h) };
    println!("after adds: {}", arbor::Hash::from(h.bytes));
    // SAFETY: handles made by arbor, freed once.
    unsafe {
        arbor_tree_free(cur);
        arbor_tree_free(handle);
    }
}

/// A tree handle on the stack, for cloning into a heap handle.
fn arbor_ffi_tree(t: &Tree) -> ArborTree {
    ArborTree::from(t.clone())
}
