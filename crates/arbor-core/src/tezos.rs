//! The hashing rules of the Tezos context (irmin-pack's Tezos configuration):
//! contents, flat directories, inode trees and commits.
//!
//! Each hash's encoding is written once (`*_input`, to an `Input` of crate::hash): into a
//! `Feed`, which hands Blake2b whole runs of blocks from the stack, by the `*_hash` functions
//! that run for every node written; or into a [`HashBatch`], hashed with others at once.

use crate::caml::caml_hash;
use alloc::vec::Vec;

use crate::hash::{blake2b_state, finish, Feed, Hash, Input, Pieces};

/// What a directory entry points to; it changes the entry's encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildKind {
    /// A value (a blob of bytes).
    Contents,
    /// A sub-directory.
    Node,
}

impl ChildKind {
    /// The 8-byte kind field of a flat directory entry.
    #[inline]
    fn flat_tag(self) -> [u8; 8] {
        match self {
            ChildKind::Contents => [0xff, 0, 0, 0, 0, 0, 0, 0],
            ChildKind::Node => [0; 8],
        }
    }

    /// The 1-byte tag of a binding in a Values inode.
    #[inline]
    fn inode_tag(self) -> u8 {
        match self {
            ChildKind::Contents => 0x01,
            ChildKind::Node => 0x00,
        }
    }
}

/// Shape of the inode trees: when a directory stops being hashed flat, and
/// how many slots each inode has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InodeConfig {
    /// Slots per inode; also the largest binding count of a Values inode.
    pub entries: u32,
    /// Directories with at most this many entries are hashed flat.
    pub stable_hash: u32,
}

impl InodeConfig {
    /// The configuration Octez uses: 32 slots, flat up to 256 entries.
    pub const TEZOS: InodeConfig = InodeConfig { entries: 32, stable_hash: 256 };

    /// irmin's small test configuration (2 slots, flat up to 3 entries),
    /// which makes deep inode trees out of a handful of entries.
    pub const SMALL_TEST: InodeConfig = InodeConfig { entries: 2, stable_hash: 3 };

    /// The slot that `step` occupies in an inode at `depth`.
    #[inline]
    pub fn slot(&self, depth: u32, step: &[u8]) -> u32 {
        let h = caml_hash(depth, step);
        // A mask where the remainder is one (every shape in use): the divisor is not known
        // when this is compiled, and a division is the slowest step of a walk's descent.
        if self.entries.is_power_of_two() {
            h & (self.entries - 1)
        } else {
            h % self.entries
        }
    }
}

/// Converts a length to the `u64` written in encodings (lossless on every
/// platform Rust supports).
#[inline]
fn len64(n: usize) -> u64 {
    n as u64
}

/// Hash of a contents value: `H(be64(len) ‖ value)`.
pub fn contents_hash(value: &[u8]) -> Hash {
    let mut feed = Feed::new();
    contents_input(&mut feed, value);
    feed.finish()
}

/// Writes the input of [`contents_hash`] to `out`.
fn contents_input(out: &mut impl Input, value: &[u8]) {
    out.put(&len64(value.len()).to_be_bytes());
    out.put(value);
}

/// Hash of a directory hashed flat (at most `stable_hash` entries):
/// `H(be64(n) ‖ [kind ‖ leb(len step) ‖ step ‖ be64(32) ‖ child]…)`.
///
/// The entries must already be sorted by step bytes; `n` is the iterator's
/// length.
// Out of line, as the two below: the 1 KiB buffer of a `Feed` must not sit in the frame of a
// caller that recurses into children (the engine's tree hashing, one frame a level).
#[inline(never)]
pub fn flat_node_hash<'a, I>(entries: I) -> Hash
where
    I: ExactSizeIterator<Item = (&'a [u8], ChildKind, &'a Hash)>,
{
    let mut feed = Feed::new();
    flat_node_input(&mut feed, entries);
    feed.finish()
}

/// Writes the input of [`flat_node_hash`] to `out`.
fn flat_node_input<'a, I>(out: &mut impl Input, entries: I)
where
    I: ExactSizeIterator<Item = (&'a [u8], ChildKind, &'a Hash)>,
{
    out.put(&len64(entries.len()).to_be_bytes());
    let mut prev: Option<&[u8]> = None;
    for (step, kind, child) in entries {
        debug_assert!(prev.is_none_or(|p| p < step), "entries not sorted");
        prev = Some(step);
        out.put(&kind.flat_tag());
        out.put_leb(len64(step.len()));
        out.put(step);
        out.put(&len64(Hash::LEN).to_be_bytes());
        out.put(child.as_bytes());
    }
}

/// Hash of a Values inode (at most `entries` bindings):
/// `H(0x00 ‖ leb(n) ‖ [leb(len step) ‖ step ‖ tag ‖ child]…)`.
///
/// The bindings must already be sorted by step bytes; `n` is the iterator's
/// length.
#[inline(never)]
pub fn inode_values_hash<'a, I>(entries: I) -> Hash
where
    I: ExactSizeIterator<Item = (&'a [u8], ChildKind, &'a Hash)>,
{
    let mut feed = Feed::new();
    inode_values_input(&mut feed, entries);
    feed.finish()
}

/// Writes the input of [`inode_values_hash`] to `out`.
fn inode_values_input<'a, I>(out: &mut impl Input, entries: I)
where
    I: ExactSizeIterator<Item = (&'a [u8], ChildKind, &'a Hash)>,
{
    out.put_byte(0x00);
    out.put_leb(len64(entries.len()));
    let mut prev: Option<&[u8]> = None;
    for (step, kind, child) in entries {
        debug_assert!(prev.is_none_or(|p| p < step), "bindings not sorted");
        prev = Some(step);
        out.put_leb(len64(step.len()));
        out.put(step);
        out.put_byte(kind.inode_tag());
        out.put(child.as_bytes());
    }
}

/// Hash of a Tree inode at `depth` holding `total` bindings below it:
/// `H(0x01 ‖ leb(depth) ‖ leb(total) ‖ leb(k) ‖ [leb(slot) ‖ child]…)`.
///
/// `slots` yields `(slot index, child inode hash)` for the `k` non-empty
/// slots, in increasing slot order.
#[inline(never)]
pub fn inode_tree_hash<'a, I>(depth: u32, total: u64, slots: I) -> Hash
where
    I: ExactSizeIterator<Item = (u32, &'a Hash)>,
{
    let mut feed = Feed::new();
    inode_tree_input(&mut feed, depth, total, slots);
    feed.finish()
}

/// Writes the input of [`inode_tree_hash`] to `out`.
fn inode_tree_input<'a, I>(out: &mut impl Input, depth: u32, total: u64, slots: I)
where
    I: ExactSizeIterator<Item = (u32, &'a Hash)>,
{
    out.put_byte(0x01);
    out.put_leb(u64::from(depth));
    out.put_leb(total);
    out.put_leb(len64(slots.len()));
    let mut prev: Option<u32> = None;
    for (slot, child) in slots {
        debug_assert!(prev.is_none_or(|p| p < slot), "slots not increasing");
        prev = Some(slot);
        out.put_leb(u64::from(slot));
        out.put(child.as_bytes());
    }
}

/// The inputs of many hashes that do not depend on one another, hashed together.
///
/// Blake2b works on 64-bit words, so one hash uses a quarter of an AVX2 register; four at
/// a time fill it (`blake2b_simd::many`), at about twice the bytes per second of one after
/// another on the machines measured (200-byte to 8 KB inputs). A commit hashes thousands of
/// nodes, each as soon as its children are hashed: the nodes that wait on none of the others
/// are put here and hashed at once.
#[derive(Debug, Default)]
pub struct HashBatch {
    /// The inputs, one after the other.
    bytes: Pieces,
    /// Where each input ends in `bytes`.
    ends: Vec<usize>,
    /// The hashes of the last inputs hashed ([`HashBatch::finish`]).
    hashes: Vec<Hash>,
    /// The inputs' indexes, longest input first, each below its length ([`HashBatch::finish`]).
    order: Vec<u64>,
}

impl HashBatch {
    /// An empty batch.
    pub fn new() -> HashBatch {
        HashBatch::default()
    }

    /// Gives the buffers back to the allocator if they hold more than `bytes` bytes of room
    /// (a batch keeps what its largest inputs took).
    pub fn shrink_to(&mut self, bytes: usize) {
        let ends = self.ends.capacity() * core::mem::size_of::<usize>();
        let order = self.order.capacity() * core::mem::size_of::<u64>();
        if self.bytes.capacity() + ends + order + self.hashes.capacity() * Hash::LEN > bytes {
            *self = HashBatch::new();
        }
    }

    /// How many inputs the batch holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the batch holds no input.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn close(&mut self) {
        self.ends.push(self.bytes.len());
    }

    /// Adds the input of [`contents_hash`]`(value)`.
    pub fn contents(&mut self, value: &[u8]) {
        contents_input(&mut self.bytes, value);
        self.close();
    }

    /// Adds the input of [`flat_node_hash`]`(entries)`.
    pub fn flat_node<'a, I>(&mut self, entries: I)
    where
        I: ExactSizeIterator<Item = (&'a [u8], ChildKind, &'a Hash)>,
    {
        flat_node_input(&mut self.bytes, entries);
        self.close();
    }

    /// Adds the input of [`inode_values_hash`]`(entries)`.
    pub fn inode_values<'a, I>(&mut self, entries: I)
    where
        I: ExactSizeIterator<Item = (&'a [u8], ChildKind, &'a Hash)>,
    {
        inode_values_input(&mut self.bytes, entries);
        self.close();
    }

    /// Adds the input of [`inode_tree_hash`]`(depth, total, slots)`.
    pub fn inode_tree<'a, I>(&mut self, depth: u32, total: u64, slots: I)
    where
        I: ExactSizeIterator<Item = (u32, &'a Hash)>,
    {
        inode_tree_input(&mut self.bytes, depth, total, slots);
        self.close();
    }

    /// The hash of each input, in the order they were added; the batch is left empty, its
    /// buffers kept for the next inputs.
    ///
    /// Allocates nothing once the batch's buffers have grown: the inputs' order and the
    /// hashes are kept in them, and the hashing states (about 120 bytes an input) are made on
    /// the stack, as many as there are inputs up to `JOBS_AT_ONCE` at a time. Two vectors of
    /// them made for each call were 7% of the fresh pages a replay at 10M values touched: the
    /// commit's helper thread, which calls this, is a new thread for each commit, and its
    /// allocations took fresh memory.
    pub fn finish(&mut self) -> &[Hash] {
        let mut params = blake2b_simd::Params::new();
        params.hash_length(Hash::LEN);
        let ends = &self.ends;
        let input = |i: usize| &self.bytes.as_slice()[if i == 0 { 0 } else { ends[i - 1] }..ends[i]];
        // Longest first: four inputs are hashed side by side until one of them ends, and
        // the next input takes its lane; the last inputs, fewer than four, are hashed two or
        // one at a time. In the order added, a long input (a Values inode's 32 bindings, 20
        // blocks of 128 bytes) left among the last ran alone to its end.
        // Each input as one number, its length's complement above its index: sorted as
        // numbers, the longest come first (the order only decides how full the lanes are),
        // and the index says where its hash goes.
        self.order.clear();
        let longest_first =
            |i: usize| u64::from(u32::MAX - input(i).len().min(u32::MAX as usize) as u32) << 32 | i as u64;
        self.order.extend((0..ends.len()).map(longest_first));
        self.order.sort_unstable();
        self.hashes.clear();
        self.hashes.resize(ends.len(), Hash([0; 32]));
        let index = |key: u64| key as u32 as usize;
        for group in self.order.chunks(JOBS_AT_ONCE) {
            // Filled where it lies: collected, the vector (8 KiB) was made elsewhere and moved.
            let mut jobs = smallvec::SmallVec::<[blake2b_simd::many::HashManyJob<'_>; JOBS_AT_ONCE]>::new();
            jobs.extend(group.iter().map(|&key| blake2b_simd::many::HashManyJob::new(&params, input(index(key)))));
            blake2b_simd::many::hash_many(jobs.iter_mut());
            for (&key, job) in group.iter().zip(&jobs) {
                self.hashes[index(key)].0.copy_from_slice(job.to_hash().as_bytes());
            }
        }
        self.bytes.clear();
        self.ends.clear();
        &self.hashes
    }
}

/// How many inputs [`HashBatch::finish`] hashes in one call of `blake2b_simd::many`: a
/// multiple of the four lanes, so that only a group's last inputs (the shortest, as they
/// come longest first) may leave lanes empty.
const JOBS_AT_ONCE: usize = 64;

/// Hash of a commit:
/// `H(be64(32) ‖ tree ‖ be64(p) ‖ [be64(32) ‖ parent]… ‖ be64(date) ‖
/// be64(len author) ‖ author ‖ be64(len message) ‖ message)`.
///
/// Parents enter the hash in increasing order of their bytes, whatever order
/// they are given in (duplicates are kept): Irmin sorts a commit's parents by
/// hash before it builds the commit, so a merge commit has one hash however
/// its parents were listed. `date` (seconds since the epoch) is written as a
/// two's complement big-endian 64-bit integer.
pub fn commit_hash(tree: &Hash, parents: &[Hash], date: i64, author: &[u8], message: &[u8]) -> Hash {
    let hash_len = len64(Hash::LEN).to_be_bytes();
    let mut state = blake2b_state();
    state.update(&hash_len);
    state.update(tree.as_bytes());
    state.update(&len64(parents.len()).to_be_bytes());
    let mut hash_parent = |parent: &Hash| {
        state.update(&hash_len);
        state.update(parent.as_bytes());
    };
    if parents.is_sorted() {
        // Nearly every commit: zero or one parent, or parents already in order.
        parents.iter().for_each(&mut hash_parent);
    } else {
        let mut sorted: alloc::vec::Vec<&Hash> = parents.iter().collect();
        sorted.sort_unstable();
        sorted.into_iter().for_each(hash_parent);
    }
    state.update(&date.to_be_bytes());
    state.update(&len64(author.len()).to_be_bytes());
    state.update(author);
    state.update(&len64(message.len()).to_be_bytes());
    state.update(message);
    finish(&state)
}

/// Hash of the empty directory (a flat node with no entries).
pub fn empty_node_hash() -> Hash {
    flat_node_hash(core::iter::empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::blake2b_256;

    #[test]
    fn a_batch_hashes_each_input_as_the_single_functions_do() {
        let hashes: Vec<Hash> = (0..40u8).map(|i| blake2b_256(&[&[i]])).collect();
        let steps: Vec<Vec<u8>> = (0..300u32).map(|i| alloc::format!("step{i:05}").into_bytes()).collect();
        let entries = |n: usize| {
            (0..n).map(|i| {
                (&steps[i][..], if i % 3 == 0 { ChildKind::Node } else { ChildKind::Contents }, &hashes[i % 40])
            })
        };
        // Batches of every size around the four lanes hashed together, of inputs from a few
        // bytes to several Blake2b blocks, in every kind.
        for size in [0usize, 1, 2, 3, 4, 5, 8, 9, 13, 31, 32, 33, 70] {
            let mut batch = HashBatch::new();
            let mut expected = Vec::new();
            for j in 0..size {
                let n = (j * 37) % 300;
                match j % 4 {
                    0 => {
                        let value = alloc::vec![j as u8; n];
                        batch.contents(&value);
                        expected.push(contents_hash(&value));
                    }
                    1 => {
                        batch.flat_node(entries(n));
                        expected.push(flat_node_hash(entries(n)));
                    }
                    2 => {
                        batch.inode_values(entries(n % 33));
                        expected.push(inode_values_hash(entries(n % 33)));
                    }
                    _ => {
                        let slots = || (0..(n % 32) as u32).map(|s| (s, &hashes[s as usize]));
                        batch.inode_tree(j as u32, n as u64 * 1000, slots());
                        expected.push(inode_tree_hash(j as u32, n as u64 * 1000, slots()));
                    }
                }
            }
            assert_eq!(batch.len(), size);
            assert_eq!(batch.finish(), expected, "a batch of {size}");
            assert!(batch.is_empty(), "finishing empties the batch");
        }
    }

    #[test]
    fn a_batch_gives_back_only_buffers_larger_than_asked() {
        let mut batch = HashBatch::new();
        batch.contents(&[7u8; 100_000]);
        let expected = contents_hash(&[7u8; 100_000]);
        assert_eq!(batch.finish(), [expected]);
        batch.shrink_to(1 << 20);
        assert!(batch.bytes.capacity() >= 100_000, "kept: within the limit");
        batch.shrink_to(50_000);
        assert_eq!(batch.bytes.capacity(), 0, "given back: over the limit");
        batch.contents(b"after");
        assert_eq!(batch.finish(), [contents_hash(b"after")]);
    }

    #[test]
    fn empty_node_is_hash_of_zero_count() {
        assert_eq!(empty_node_hash(), blake2b_256(&[&[0u8; 8]]));
    }

    #[test]
    fn slot_uses_depth_as_seed() {
        let cfg = InodeConfig::TEZOS;
        assert_eq!(cfg.slot(0, b"a"), 721_651_713 % 32);
        assert_eq!(cfg.slot(0, b"abcdef"), 926_323_203 % 32);
        assert!(InodeConfig::SMALL_TEST.slot(5, b"xyz") < 2);
    }

    #[test]
    fn flat_entry_layout() {
        // One contents entry, spelled out byte by byte.
        let child = contents_hash(b"v");
        let mut expected = alloc::vec::Vec::new();
        expected.extend_from_slice(&1u64.to_be_bytes());
        expected.extend_from_slice(&[0xff, 0, 0, 0, 0, 0, 0, 0]);
        expected.push(3);
        expected.extend_from_slice(b"key");
        expected.extend_from_slice(&32u64.to_be_bytes());
        expected.extend_from_slice(child.as_bytes());
        let got = flat_node_hash([(&b"key"[..], ChildKind::Contents, &child)].into_iter());
        assert_eq!(got, blake2b_256(&[&expected]));
    }

    /// The commit bytes of `docs/HASH.md` section 6, spelled out for
    /// parents already in the order the hash uses.
    fn commit_bytes(tree: &Hash, parents: &[[u8; 32]], date: i64, author: &[u8], message: &[u8]) -> Hash {
        let mut bytes = alloc::vec::Vec::new();
        bytes.extend_from_slice(&32u64.to_be_bytes());
        bytes.extend_from_slice(tree.as_bytes());
        bytes.extend_from_slice(&(parents.len() as u64).to_be_bytes());
        for p in parents {
            bytes.extend_from_slice(&32u64.to_be_bytes());
            bytes.extend_from_slice(p);
        }
        bytes.extend_from_slice(&date.to_be_bytes());
        bytes.extend_from_slice(&(author.len() as u64).to_be_bytes());
        bytes.extend_from_slice(author);
        bytes.extend_from_slice(&(message.len() as u64).to_be_bytes());
        bytes.extend_from_slice(message);
        blake2b_256(&[&bytes])
    }

    #[test]
    fn parents_are_hashed_in_byte_order_whatever_the_given_order() {
        let t = empty_node_hash();
        // 0x80.. must come after 0x7f..: bytes compare unsigned.
        let (low, mid, high) = ([0x01; 32], [0x7f; 32], [0x80; 32]);
        let sorted = commit_bytes(&t, &[low, mid, high], 7, b"Tezos", b"merge");
        let orders = [[low, mid, high], [high, mid, low], [mid, high, low], [high, low, mid]];
        for order in orders {
            let given = order.map(Hash);
            assert_eq!(commit_hash(&t, &given, 7, b"Tezos", b"merge"), sorted);
        }
        // The order matters to the bytes, so the test above could fail.
        assert_ne!(sorted, commit_bytes(&t, &[high, mid, low], 7, b"Tezos", b"merge"));
    }

    #[test]
    fn duplicate_parents_are_kept() {
        let t = empty_node_hash();
        let (a, b) = ([0x02; 32], [0x01; 32]);
        let got = commit_hash(&t, &[Hash(a), Hash(b), Hash(a)], 0, b"", b"");
        assert_eq!(got, commit_bytes(&t, &[b, a, a], 0, b"", b""));
        assert_ne!(got, commit_hash(&t, &[Hash(a), Hash(b)], 0, b"", b""));
    }

    #[test]
    fn negative_dates_are_twos_complement() {
        let t = empty_node_hash();
        let a = commit_hash(&t, &[], -1, b"Tezos", b"");
        let mut bytes = alloc::vec::Vec::new();
        bytes.extend_from_slice(&32u64.to_be_bytes());
        bytes.extend_from_slice(t.as_bytes());
        bytes.extend_from_slice(&0u64.to_be_bytes());
        bytes.extend_from_slice(&[0xff; 8]);
        bytes.extend_from_slice(&5u64.to_be_bytes());
        bytes.extend_from_slice(b"Tezos");
        bytes.extend_from_slice(&0u64.to_be_bytes());
        assert_eq!(a, blake2b_256(&[&bytes]));
    }
}
