//! The sorted bindings of a flat directory or a Values inode, with the first eight bytes of
//! each step kept beside them for searching.
//!
//! A binding is 128 bytes (a step stored inline up to 64 bytes, and a child pointer that
//! carries a 32-byte hash, or a small value and its hash), so a binary search over them
//! reads a cache line or two per probe,
//! and a lookup in a node the block has not touched yet waits for five or six misses. The
//! keys (`ops::prefix_key` of each step: big-endian, zero-padded, ordered as the steps are
//! wherever they differ) are 8 bytes each, side by side: the probes read them, and only a key
//! equal to the one sought sends the search to the step itself.

use std::cmp::Ordering;

use super::node::{Entry, Ptr};
use super::ops::prefix_key;

/// Where `step` is among steps sorted by their bytes (`Ok`), or where it would go (`Err`),
/// as `slice::binary_search` answers: `keys[i]` is the `prefix_key` of the `i`-th step, and
/// `step_at(i)` the step itself, read only when its key equals the one sought.
pub(crate) fn search_keyed<'s>(keys: &[u64], step: &[u8], step_at: impl Fn(usize) -> &'s [u8]) -> Result<usize, usize> {
    let key = prefix_key(step);
    // The first key not below the one sought: the keys are ordered as the steps are (not
    // strictly: steps equal in their first eight bytes, or equal but for trailing zero bytes
    // when shorter, share a key). The standard library's binary search is written to
    // avoid a branch on each comparison, whose outcome no predictor can guess (with a three-way
    // branch at each probe, a block mispredicted 6% more of its branches).
    let mut i = keys.partition_point(|&k| k < key);
    // Equal keys: the steps themselves decide, in order (almost always one at most).
    while keys.get(i) == Some(&key) {
        match step_at(i).cmp(step) {
            Ordering::Less => i += 1,
            Ordering::Equal => return Ok(i),
            Ordering::Greater => break,
        }
    }
    Err(i)
}

/// The keys of a binding list, the first two in place: nearly all directories of a Tezos state
/// hold two or three bindings (a big-map entry's `data` and `len`), and their keys then take
/// no allocation of their own, in the room a `Vec` takes anyway.
type Keys = smallvec::SmallVec<[u64; 2]>;

/// Bindings sorted by step bytes, each step's key beside it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bindings {
    entries: Vec<Entry>,
    /// `prefix_key` of `entries[i].0`, for every `i`.
    keys: Keys,
}

impl Bindings {
    /// Bindings already sorted by step bytes (as decoded, collected and sorted, or split).
    pub fn from_sorted(entries: Vec<Entry>) -> Bindings {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0), "bindings sorted, steps distinct");
        let keys = entries.iter().map(|(s, _)| prefix_key(s)).collect();
        Bindings { entries, keys }
    }

    /// Where the binding named `step` is (`Ok`), or where it would go (`Err`), as
    /// `slice::binary_search` answers.
    pub fn search(&self, step: &[u8]) -> Result<usize, usize> {
        search_keyed(&self.keys, step, |i| &self.entries[i].0)
    }

    /// Inserts `entry` at `i`, where [`Bindings::search`] said its step goes.
    pub fn insert(&mut self, i: usize, entry: Entry) {
        self.keys.insert(i, prefix_key(&entry.0));
        self.entries.insert(i, entry);
    }

    /// Removes the binding at `i`.
    pub fn remove(&mut self, i: usize) -> Entry {
        self.keys.remove(i);
        self.entries.remove(i)
    }

    /// The child of the binding at `i`, to change (its step stays).
    pub fn child_mut(&mut self, i: usize) -> &mut Ptr {
        &mut self.entries[i].1
    }

    /// Every child, to change (the steps stay).
    pub fn children_mut(&mut self) -> impl Iterator<Item = &mut Ptr> {
        self.entries.iter_mut().map(|(_, c)| c)
    }

    /// The bindings, giving up the keys.
    pub fn into_entries(self) -> Vec<Entry> {
        self.entries
    }

    /// Bytes of the two buffers' capacities (the keys', 0 when in place, and the bindings').
    pub fn buffer_bytes(&self) -> (usize, usize) {
        let keys = if self.keys.spilled() { self.keys.capacity() * size_of::<u64>() } else { 0 };
        (keys, self.entries.capacity() * size_of::<Entry>())
    }
}

impl std::ops::Deref for Bindings {
    type Target = [Entry];
    fn deref(&self) -> &[Entry] {
        &self.entries
    }
}

impl<'a> IntoIterator for &'a Bindings {
    type Item = &'a Entry;
    type IntoIter = std::slice::Iter<'a, Entry>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::Bindings;
    use crate::path::Step;
    use crate::tree::node::Ptr;

    /// A directory of two bindings keeps their keys in the room a list's buffer pointer takes:
    /// no allocation, and no byte more in the node; a third key moves them to a buffer.
    #[test]
    fn two_keys_take_no_allocation_and_no_room() {
        assert_eq!(size_of::<Bindings>(), 2 * size_of::<Vec<u64>>());
        let binding = |s: &str| (Step::from_slice(s.as_bytes()), Ptr::value(b"v"));
        let mut b = Bindings::from_sorted(vec![binding("data"), binding("len")]);
        assert_eq!(b.buffer_bytes().0, 0);
        assert_eq!((b.search(b"data"), b.search(b"len"), b.search(b"key")), (Ok(0), Ok(1), Err(1)));
        b.insert(1, binding("key"));
        assert!(b.buffer_bytes().0 >= 3 * size_of::<u64>());
        assert_eq!((b.search(b"data"), b.search(b"key"), b.search(b"len")), (Ok(0), Ok(1), Ok(2)));
    }

    #[test]
    fn search_finds_what_a_search_of_the_steps_finds() {
        let mut rng = arbor_core::toolbox::SplitMix64::new(3);
        // Steps from a small alphabet, many sharing their first eight bytes.
        let alphabet = [0u8, 1, b'a', 0xff];
        let draw = |rng: &mut arbor_core::toolbox::SplitMix64| -> Vec<u8> {
            let len = 1 + rng.below(12) as usize;
            (0..len).map(|_| alphabet[rng.below(alphabet.len() as u64) as usize]).collect()
        };
        for _ in 0..300 {
            let mut steps: Vec<Vec<u8>> = (0..rng.below(40)).map(|_| draw(&mut rng)).collect();
            steps.sort();
            steps.dedup();
            let entries = steps.iter().map(|s| (Step::from_slice(s), Ptr::value(b"v"))).collect();
            let mut b = Bindings::from_sorted(entries);
            for _ in 0..20 {
                let probe = draw(&mut rng);
                assert_eq!(b.search(&probe), steps.binary_search(&probe), "{probe:?} in {steps:?}");
                // Keep the keys in step with inserts and removals.
                match b.search(&probe) {
                    Ok(i) => {
                        b.remove(i);
                        steps.remove(i);
                    }
                    Err(i) => {
                        b.insert(i, (Step::from_slice(&probe), Ptr::value(b"w")));
                        steps.insert(i, probe);
                    }
                }
            }
            for (i, s) in steps.iter().enumerate() {
                assert_eq!(b.search(s), Ok(i));
            }
        }
    }
}
