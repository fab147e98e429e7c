//! What a decoded object held by the cache costs in memory, as the allocator sees it.
//!
//! The cache's budget (`Config::cache_bytes`) is only a bound on memory if each object is
//! weighed at what it really takes: every allocation it owns, rounded up to the allocator's
//! size class, the cache's own bookkeeping, and the room the allocator cannot reuse once
//! the cache churns. Measured as the slope of max RSS against the budget (600 blocks of the
//! tezos-mainnet replay, budgets of 64 MiB and 512 MiB): the first estimate (fixed per-node
//! and per-value constants, bindings by length) grew the process by 1.83 bytes per byte
//! weighed; allocations counted as below, 1.25; with the churn allowance, about 1.

use std::mem::size_of;

use crate::tree::{Bindings, Dir, DirBody, Held, IPtr, Inode, InodeBody, Persisted, Ptr, Value};

/// An `Arc`'s strong and weak counts, before the value.
const ARC_COUNTS: usize = 16;

/// The cache's bookkeeping per object: its key, the entry (weight and object handle), the
/// hash table slot and the ghost and frequency state of its eviction policy (approximate).
const CACHE_ENTRY: usize = 64;

/// Memory the allocator holds for `n` bytes of live objects once the cache has evicted and
/// refilled for a while: freed objects of mixed sizes leave pages part-used that other sizes
/// cannot take. A quarter more, as measured (module comment).
fn with_churn(n: usize) -> usize {
    n + n / 4
}

/// Bytes the allocator takes for a request of `n`: mimalloc rounds small requests up to a
/// multiple of 16 and larger ones to one of four classes per power of two (at most 25%
/// over, 12.5% on average).
fn allocation(n: usize) -> usize {
    match n {
        0 => 0,
        1..=128 => n.next_multiple_of(16),
        _ => n + n / 8,
    }
}

/// A value and its `Arc`, with its bytes when they do not fit inside and the place of its
/// own record when it has one.
fn value_alone(v: &Value) -> usize {
    let spilled = if v.bytes.spilled() { allocation(v.bytes.capacity()) } else { 0 };
    let place = if v.written().is_some() { allocation(size_of::<Persisted>()) } else { 0 };
    allocation(ARC_COUNTS + size_of::<Value>()) + spilled + place
}

/// A list of bindings: its buffer (by capacity), the steps too long to sit inline, and the
/// values the bindings hold in memory. A value is counted with each node that holds it;
/// shared between two cached versions of a node, it is counted twice (an overestimate
/// only: the budget stays a bound).
fn entries(e: &Bindings) -> usize {
    entries_with(e, value_alone)
}

/// [`entries`], each value in memory weighed by `value`.
fn entries_with(e: &Bindings, value: impl Fn(&Value) -> usize) -> usize {
    let inside: usize = e
        .children()
        .map(|child| match child {
            Ptr::Value(v) => value(v),
            // In the binding (counted with the buffer), or cached on its own.
            Ptr::Small(_) | Ptr::Dir(_) | Ptr::Disk(_) => 0,
        })
        .sum();
    let (bindings, bytes) = e.buffer_bytes();
    allocation(bindings) + allocation(bytes) + inside
}

/// An inode and its `Arc` (its sub-inodes are cached on their own).
fn inode_alone(i: &Inode) -> usize {
    inode_with(i, value_alone)
}

/// [`inode_alone`], each value in memory weighed by `value`.
fn inode_with(i: &Inode, value: impl Fn(&Value) -> usize) -> usize {
    let body = match &i.body {
        InodeBody::Values(e) => entries_with(e, value),
        InodeBody::Tree(s) => allocation(s.capacity() * size_of::<IPtr>()),
    };
    allocation(ARC_COUNTS + size_of::<Inode>()) + body
}

/// An inode held by the cache.
pub(super) fn inode(i: &Inode) -> usize {
    with_churn(CACHE_ENTRY + inode_alone(i))
}

/// A directory held by the cache, with the root inode of a large one.
pub(super) fn dir(d: &Dir) -> usize {
    let body = match &d.body {
        DirBody::Flat(e) => entries(e),
        DirBody::Large(root) => inode_alone(root),
    };
    with_churn(CACHE_ENTRY + allocation(ARC_COUNTS + size_of::<Dir>()) + body)
}

/// A node the writer's working tree keeps (`tree::evict`): as the cache would weigh it,
/// without the cache's entry, and each value in memory as one that fits in its allocation.
/// The eviction does not read the values of a node that stays (they are most of the
/// allocations it would read), so their bytes beyond the node's are not counted: a value
/// longer than 24 bytes and kept in memory is at most 1 in 30 on tezos-mainnet.
pub(super) fn held(node: Held<'_>) -> usize {
    let value = |_: &Value| allocation(ARC_COUNTS + size_of::<Value>());
    with_churn(match node {
        Held::Dir(d) => {
            let body = match &d.body {
                DirBody::Flat(e) => entries_with(e, value),
                DirBody::Large(root) => inode_with(root, value),
            };
            allocation(ARC_COUNTS + size_of::<Dir>()) + body
        }
        Held::Inode(i) => inode_with(i, value),
    })
}

/// A value held by the cache on its own (a CONTENTS record).
pub(super) fn value(v: &Value) -> usize {
    with_churn(CACHE_ENTRY + value_alone(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_round_up_to_size_classes() {
        assert_eq!(allocation(0), 0);
        assert_eq!(allocation(1), 16);
        assert_eq!(allocation(104), 112);
        assert_eq!(allocation(1000), 1125);
    }

    /// A value is an allocation per binding of every node in memory: one that grows past
    /// mimalloc's 112-byte size class costs 16 bytes more for each of millions of bindings.
    #[test]
    fn a_value_and_its_counts_fill_at_most_112_bytes() {
        assert!(allocation(ARC_COUNTS + size_of::<Value>()) <= 112, "{} bytes", size_of::<Value>());
    }

    #[test]
    fn a_node_weighs_at_least_its_buffers() {
        let e: Vec<(crate::path::Step, Ptr)> = (0..10u8)
            .map(|i| {
                (
                    crate::path::Step::from_slice(&[i]),
                    Ptr::Value(crate::tree::Linked::new(std::sync::Arc::new(Value::new(&[i])))),
                )
            })
            .collect();
        let d = Dir::new(DirBody::Flat(Bindings::from_sorted(e).unwrap()));
        let DirBody::Flat(e) = &d.body else { unreachable!() };
        let (bindings, bytes) = e.buffer_bytes();
        assert!(dir(&d) >= size_of::<Dir>() + bindings + bytes + 10 * size_of::<Value>());
    }
}
