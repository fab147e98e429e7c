//! The sorted bindings of a flat directory or a Values inode: each binding's child and where
//! its step is, 64 bytes side by side; the first eight bytes of each step, zero-padded, side
//! by side for searching (and, for a step of at most eight bytes, the step itself); and the
//! longer steps end to end in one buffer.
//!
//! A binding held its step inline (up to 64 bytes) beside its child pointer, 128 bytes in
//! all, most of them unused: nearly all steps below an account are at most eight bytes
//! (`balance`, `counter`, `data`, `len`, big-map ids). Now a binding is one cache line, its
//! child first; a short step is read from its key, which the search has just read; a long
//! one (a contract id, a big-map key hash) from the node's step buffer, never an
//! allocation of its own. A search probes the keys (big-endian, zero-padded: ordered as the
//! steps are wherever they differ), 8 bytes each, side by side; only a key equal to the one
//! sought sends it to the step itself.
//!
//! A removed binding's long step stays in the buffer until the buffer would have to grow: it
//! is then compacted instead when at least half of it is such leftovers, so that a list holds
//! at most about twice its long steps' bytes.

use std::cmp::Ordering;

use arbor_core::toolbox::bytes;

use super::node::{Entry, Ptr};
use super::ops::prefix_key;
use crate::error::{Error, Result};
use crate::path::Step;

/// A search key: the first eight bytes of a step, zero-padded, as a number ordered as the
/// steps are wherever they differ (`ops::prefix_key`).
pub(crate) trait Key: Copy {
    /// The key as a number.
    fn value(self) -> u64;
}

impl Key for u64 {
    fn value(self) -> u64 {
        self
    }
}

/// The bytes themselves (big-endian): a step of at most eight bytes can be read back from them.
impl Key for [u8; 8] {
    fn value(self) -> u64 {
        u64::from_be_bytes(self)
    }
}

/// Where `step` is among steps sorted by their bytes (`Ok`), or where it would go (`Err`),
/// as `slice::binary_search` answers: `keys[i]` is the key of the `i`-th step, and
/// `step_at(i)` the step itself, read only when its key equals the one sought.
pub(crate) fn search_keyed<'s, K: Key>(
    keys: &[K],
    step: &[u8],
    step_at: impl Fn(usize) -> &'s [u8],
) -> std::result::Result<usize, usize> {
    let key = prefix_key(step);
    // The first key not below the one sought: the keys are ordered as the steps are (not
    // strictly: steps equal in their first eight bytes, or equal but for trailing zero bytes
    // when shorter, share a key). The standard library's binary search is written to
    // avoid a branch on each comparison, whose outcome no predictor can guess (with a three-way
    // branch at each probe, a block mispredicted 6% more of its branches).
    let mut i = keys.partition_point(|&k| k.value() < key);
    // Equal keys: the steps themselves decide, in order (almost always one at most).
    while keys.get(i).is_some_and(|k| k.value() == key) {
        match order_of_same_key(step_at(i), step) {
            Ordering::Less => i += 1,
            Ordering::Equal => return Ok(i),
            Ordering::Greater => break,
        }
    }
    Err(i)
}

/// The byte order of two steps whose keys (`ops::prefix_key`) are equal, without comparing
/// the bytes the keys hold. Steps of at most [`IN_KEY`] bytes are their key's bytes, cut
/// where the step ends: with equal keys, the shorter is a prefix of the longer, whose bytes
/// past it are zeros, and comes first. So does a step of at most [`IN_KEY`] bytes beside a
/// longer one. Two longer steps share their first [`IN_KEY`] bytes: the rest decides. A
/// block's searches find most of their steps, and nearly all of them are short (`balance`,
/// `counter`, a big-map id): the byte comparison of each was a call to `memcmp` (the
/// replay's `memcmp` samples fell by a tenth without them).
#[inline]
fn order_of_same_key(a: &[u8], b: &[u8]) -> Ordering {
    debug_assert_eq!(prefix_key(a), prefix_key(b), "steps with the same key");
    if a.len() <= IN_KEY || b.len() <= IN_KEY {
        a.len().cmp(&b.len())
    } else {
        bytes::cmp(&a[IN_KEY..], &b[IN_KEY..])
    }
}

/// A binding list's keys, 8 bytes each in binding order, then its long steps end to end, in
/// one buffer: in place up to 16 bytes (the two keys of a big-map entry's `data` and `len`),
/// so that the list is two words of buffers and its directory fills mimalloc's 256-byte
/// size class (one more buffer made every directory 320 bytes).
type Bytes = smallvec::SmallVec<[u8; 16]>;

/// Steps of at most this many bytes are read from their keys.
pub(super) const IN_KEY: usize = 8;

/// One binding: its child, and its step's length and (when longer than [`IN_KEY`]) where
/// it is among the list's long steps. 64 bytes, a cache line, with the child first.
#[derive(Debug, Clone)]
struct Slot {
    child: Ptr,
    at: u32,
    len: u32,
}

/// Bindings sorted by step bytes, each step's key beside them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bindings {
    slots: Vec<Slot>,
    /// The first eight bytes of each step, zero-padded, in binding order; then the long
    /// steps (and the long steps of removed bindings not compacted away yet).
    bytes: Bytes,
}

/// The most bytes the long steps of one binding list may take: their positions are 32-bit.
pub(crate) const MAX_STEP_BYTES: u64 = u32::MAX as u64;

impl Bindings {
    /// Bindings already sorted by step bytes (as collected and sorted, or split).
    pub fn from_sorted(entries: Vec<Entry>) -> Result<Bindings> {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0), "bindings sorted, steps distinct");
        let bytes = entries.iter().map(|(s, _)| s.len()).filter(|&n| n > IN_KEY).sum();
        let mut b = Builder::new(entries.len(), bytes);
        for (step, child) in entries {
            b.push(&step, child)?;
        }
        Ok(b.finish())
    }

    /// Bindings sorted by step bytes, part of one list (split when it grew past what one node
    /// holds): their long steps fit, since the whole list's did.
    pub fn from_part(entries: Vec<Entry>) -> Bindings {
        Bindings::from_sorted(entries).expect("part of a list's long steps fits where the whole list's did")
    }

    /// Number of bindings.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no bindings.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Where the binding named `step` is (`Ok`), or where it would go (`Err`), as
    /// `slice::binary_search` answers.
    pub fn search(&self, step: &[u8]) -> std::result::Result<usize, usize> {
        let (keys, long) = self.parts();
        search_keyed(keys, step, |i| step_of(&self.slots[i], &keys[i], long))
    }

    /// The step of the binding at `i`.
    #[inline]
    pub fn step(&self, i: usize) -> &[u8] {
        let (keys, long) = self.parts();
        step_of(&self.slots[i], &keys[i], long)
    }

    /// The child of the binding at `i`.
    pub fn child(&self, i: usize) -> &Ptr {
        &self.slots[i].child
    }

    /// The child of the binding at `i`, to change (its step stays).
    pub fn child_mut(&mut self, i: usize) -> &mut Ptr {
        &mut self.slots[i].child
    }

    /// Every child, in order.
    pub fn children(&self) -> impl ExactSizeIterator<Item = &Ptr> {
        self.slots.iter().map(|s| &s.child)
    }

    /// Every child, to change (the steps stay).
    pub fn children_mut(&mut self) -> impl Iterator<Item = &mut Ptr> {
        self.slots.iter_mut().map(|s| &mut s.child)
    }

    /// Every binding as (step, child), in order.
    pub fn iter(&self) -> Iter<'_> {
        let (keys, long) = self.parts();
        Iter { slots: self.slots.iter(), keys: keys.iter(), long }
    }

    /// Inserts a binding at `i`, where [`Bindings::search`] said `step` goes.
    pub fn insert(&mut self, i: usize, step: &[u8], child: Ptr) -> Result<()> {
        debug_assert!(i == 0 || self.step(i - 1) < step, "inserted in order");
        debug_assert!(i == self.len() || step < self.step(i), "inserted in order");
        let (at, len) = self.place(step)?;
        if self.bytes.len() + IN_KEY > self.bytes.capacity() {
            self.bytes.reserve_exact(IN_KEY + a_quarter(self.bytes.len()));
        }
        self.bytes.insert_from_slice(IN_KEY * i, &prefix_key(step).to_be_bytes());
        if self.slots.len() == self.slots.capacity() {
            self.slots.reserve_exact(1 + a_quarter(self.slots.len()));
        }
        self.slots.insert(i, Slot { child, at, len });
        Ok(())
    }

    /// Removes the binding at `i`; returns its child.
    pub fn remove(&mut self, i: usize) -> Ptr {
        let slot = self.slots.remove(i);
        self.bytes.drain(IN_KEY * i..IN_KEY * (i + 1));
        // The last long step written goes with it; any other stays until the next compaction.
        let keys_end = IN_KEY * self.len();
        if slot.len as usize > IN_KEY && keys_end + slot.at as usize + slot.len as usize == self.bytes.len() {
            self.bytes.truncate(keys_end + slot.at as usize);
        }
        slot.child
    }

    /// The bindings as owned steps and children, giving up the list.
    pub fn into_entries(self) -> Vec<Entry> {
        let Bindings { slots, bytes } = self;
        let (keys, long) = split(&bytes, slots.len());
        slots.into_iter().zip(keys).map(|(s, k)| (Step::from_slice(step_of(&s, k, long)), s.child)).collect()
    }

    /// Bytes of the two buffers' capacities: the bindings', and the keys' and long steps'
    /// (0 when in place).
    pub fn buffer_bytes(&self) -> (usize, usize) {
        let bytes = if self.bytes.spilled() { self.bytes.capacity() } else { 0 };
        (self.slots.capacity() * size_of::<Slot>(), bytes)
    }

    /// The keys, and the long steps.
    #[inline]
    fn parts(&self) -> (&[[u8; 8]], &[u8]) {
        split(&self.bytes, self.slots.len())
    }

    /// Where a new binding's step goes: nowhere but its key when short; else copied to the
    /// end of the long steps, as a position among them. When the buffer is full and at
    /// least half of its long steps are those of removed bindings, it is compacted instead
    /// of grown.
    fn place(&mut self, step: &[u8]) -> Result<(u32, u32)> {
        if step.len() <= IN_KEY {
            return Ok((0, step.len() as u32));
        }
        let keys_end = IN_KEY * self.len();
        if self.bytes.len() + IN_KEY + step.len() > self.bytes.capacity() {
            let live: usize = self.slots.iter().map(|s| s.len as usize).filter(|&n| n > IN_KEY).sum();
            if 2 * live <= self.bytes.len() - keys_end {
                self.compact(live);
            }
        }
        let at = long_at(self.bytes.len() - keys_end, step.len())?;
        if self.bytes.len() + IN_KEY + step.len() > self.bytes.capacity() {
            // With room for the key, which the insert adds next.
            self.bytes.reserve_exact(IN_KEY + step.len() + a_quarter(self.bytes.len()));
        }
        self.bytes.extend_from_slice(step);
        Ok((at, step.len() as u32))
    }

    /// Rewrites the long steps with the live ones only (`live` bytes), in binding order.
    fn compact(&mut self, live: usize) {
        let keys_end = IN_KEY * self.len();
        let mut bytes = Bytes::with_capacity(keys_end + live);
        bytes.extend_from_slice(&self.bytes[..keys_end]);
        for slot in self.slots.iter_mut().filter(|s| s.len as usize > IN_KEY) {
            let at = bytes.len() - keys_end;
            let from = keys_end + slot.at as usize;
            bytes.extend_from_slice(&self.bytes[from..from + slot.len as usize]);
            // At most the old position: the old buffer held every live step.
            slot.at = at as u32;
        }
        self.bytes = bytes;
    }
}

/// A binding list built in order (decoded, or collected and sorted): the keys and the long
/// steps go to buffers of their own, joined once at the end (into a buffer of the exact
/// size), so that a long step is not moved again by every key after it.
pub(crate) struct Builder {
    slots: Vec<Slot>,
    keys: Vec<[u8; IN_KEY]>,
    long: Vec<u8>,
}

impl Builder {
    /// Room for `bindings` bindings whose long steps take about `long_bytes` bytes.
    pub fn new(bindings: usize, long_bytes: usize) -> Builder {
        Builder {
            slots: Vec::with_capacity(bindings),
            keys: Vec::with_capacity(bindings),
            long: Vec::with_capacity(long_bytes),
        }
    }

    /// Number of bindings so far.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// The step of the last binding, if any.
    pub fn last_step(&self) -> Option<&[u8]> {
        Some(step_of(self.slots.last()?, self.keys.last()?, &self.long))
    }

    /// Appends a binding whose step sorts after every step so far.
    pub fn push(&mut self, step: &[u8], child: Ptr) -> Result<()> {
        debug_assert!(self.last_step().is_none_or(|last| last < step), "pushed in order");
        self.push_with(step.len(), |out| out.copy_from_slice(step), child)
    }

    /// Appends a binding whose step, `len` bytes, `write` writes to the slice it is given
    /// (of exactly that length), where the list keeps it: a record's packed step is spelled
    /// out there, not into a step of its own first. The step need not sort after the
    /// others: [`Builder::last_in_order`] tells.
    pub fn push_with(&mut self, len: usize, write: impl FnOnce(&mut [u8]), child: Ptr) -> Result<()> {
        let (key, at) = if len <= IN_KEY {
            // The zero padding after a short step is its key's.
            let mut key = [0; IN_KEY];
            write(&mut key[..len]);
            (key, 0)
        } else {
            let at = self.long.len();
            let place = long_at(at, len)?;
            self.long.resize(at + len, 0);
            let step = &mut self.long[at..];
            write(step);
            let key = *step.first_chunk::<IN_KEY>().expect("a long step is longer than a key");
            (key, place)
        };
        self.keys.push(key);
        self.slots.push(Slot { child, at, len: len as u32 });
        Ok(())
    }

    /// Whether the last binding's step sorts after the one before it (or is the only one).
    pub fn last_in_order(&self) -> bool {
        let n = self.slots.len();
        if n < 2 {
            return true;
        }
        let (a, b) = (&self.keys[n - 2], &self.keys[n - 1]);
        // Keys that differ order the steps (`ops::prefix_key`).
        match a.cmp(b) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => {
                order_of_same_key(
                    step_of(&self.slots[n - 2], a, &self.long),
                    step_of(&self.slots[n - 1], b, &self.long),
                ) == Ordering::Less
            }
        }
    }

    /// The list, the long steps after the keys.
    pub fn finish(self) -> Bindings {
        let keys = self.keys.as_flattened();
        let mut bytes = Bytes::with_capacity(keys.len() + self.long.len());
        bytes.extend_from_slice(keys);
        bytes.extend_from_slice(&self.long);
        Bindings { slots: self.slots, bytes }
    }
}

/// How much room a list about to outgrow its buffer gets beyond what the insert needs: a
/// quarter of its length. A list read from the log is exactly as long as its record, and a
/// vector's growth doubled a node for one binding added: that was 6% of the fresh pages a
/// replay at 10M values touched (`perf record -e page-faults -c 1 -g`), each node that grows
/// keeping the room for as long as it stays in memory.
fn a_quarter(len: usize) -> usize {
    len / 4
}

/// The position of a long step of `len` bytes appended at `at` among a list's long steps, if its end is
/// within [`MAX_STEP_BYTES`] (then its length fits in 32 bits too).
fn long_at(at: usize, len: usize) -> Result<u32> {
    let end = at as u64 + len as u64;
    if end > MAX_STEP_BYTES {
        return Err(Error::StepsTooLarge { bytes: end, max: MAX_STEP_BYTES });
    }
    Ok(at as u32)
}

/// The keys of `n` bindings at the start of `bytes`, and the long steps after them.
#[inline]
pub(super) fn split(bytes: &[u8], n: usize) -> (&[[u8; 8]], &[u8]) {
    let (keys, long) = bytes.split_at(IN_KEY * n);
    (keys.as_chunks::<IN_KEY>().0, long)
}

/// The step of `slot`, whose key is `key`, in a list whose long steps are `long`.
#[inline]
fn step_of<'a>(slot: &Slot, key: &'a [u8; 8], long: &'a [u8]) -> &'a [u8] {
    spelled(key, slot.len as usize, slot.at as usize, long)
}

/// A step of `len` bytes kept as keys and long steps are (here and in a node's lineage): read
/// from its key `key` when at most [`IN_KEY`] bytes long, else from `at` in `long`.
#[inline]
pub(super) fn spelled<'a>(key: &'a [u8; IN_KEY], len: usize, at: usize, long: &'a [u8]) -> &'a [u8] {
    if len <= IN_KEY {
        &key[..len]
    } else {
        &long[at..][..len]
    }
}

/// The bindings of a list as (step, child), in order ([`Bindings::iter`]).
#[derive(Clone)]
pub(crate) struct Iter<'a> {
    slots: std::slice::Iter<'a, Slot>,
    keys: std::slice::Iter<'a, [u8; 8]>,
    long: &'a [u8],
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a [u8], &'a Ptr);
    fn next(&mut self) -> Option<Self::Item> {
        let (s, k) = (self.slots.next()?, self.keys.next()?);
        Some((step_of(s, k, self.long), &s.child))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.slots.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let (s, k) = (self.slots.next_back()?, self.keys.next_back()?);
        Some((step_of(s, k, self.long), &s.child))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Bindings {
    type Item = (&'a [u8], &'a Ptr);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::{order_of_same_key, prefix_key, Bindings, Builder, Slot};
    use crate::path::Step;
    use crate::tree::node::Ptr;

    /// A binding is one cache line; a list of two short steps keeps its keys (which are its
    /// steps) in place (no allocation but the bindings'); a third key moves them to a buffer.
    #[test]
    fn a_binding_is_a_cache_line_and_short_steps_take_no_allocation() {
        assert_eq!(size_of::<Slot>(), 64);
        assert_eq!(size_of::<Bindings>(), 2 * size_of::<Vec<u8>>());
        let binding = |s: &str| (Step::from_slice(s.as_bytes()), Ptr::value(b"v"));
        let mut b = Bindings::from_sorted(vec![binding("data"), binding("len")]).unwrap();
        assert_eq!(b.buffer_bytes().1, 0);
        assert_eq!(b.step(1), b"len");
        assert_eq!((b.search(b"data"), b.search(b"len"), b.search(b"key")), (Ok(0), Ok(1), Err(1)));
        b.insert(1, b"key", Ptr::value(b"w")).unwrap();
        assert!(b.buffer_bytes().1 >= 3 * size_of::<u64>());
        assert_eq!((b.search(b"data"), b.search(b"key"), b.search(b"len")), (Ok(0), Ok(1), Ok(2)));
        assert_eq!((b.step(0), b.step(1), b.step(2)), (&b"data"[..], &b"key"[..], &b"len"[..]));
    }

    /// A builder fed steps written in place tells whether each came after the one before it,
    /// as byte order has it, whether the keys decide or (equal in eight bytes, or a short
    /// step's zero padding) the steps themselves; what it builds reads back the same steps.
    #[test]
    fn steps_written_in_place_are_checked_in_byte_order() {
        let steps: [&[u8]; 9] =
            [b"", b"\0", b"a", b"a\0", b"abcdefgh", b"abcdefgh\0", b"abcdefghij", b"abcdefgi", b"b"];
        for a in steps {
            for c in steps {
                let mut b = Builder::new(2, 32);
                for s in [a, c] {
                    b.push_with(s.len(), |out| out.copy_from_slice(s), Ptr::value(b"v")).unwrap();
                }
                assert_eq!(b.last_in_order(), a < c, "{a:?} then {c:?}");
                if a < c {
                    let list = b.finish();
                    assert_eq!((list.step(0), list.step(1)), (a, c));
                    assert_eq!((list.search(a), list.search(c)), (Ok(0), Ok(1)));
                }
            }
        }
    }

    /// Steps of removed bindings are compacted away before the buffer grows: however many
    /// bindings come and go, the buffer stays within about twice the live steps (and one
    /// step more), and every binding keeps its own step.
    #[test]
    fn removed_steps_are_compacted_before_the_buffer_grows() {
        let mut rng = arbor_core::toolbox::SplitMix64::new(7);
        let mut b = Bindings::default();
        let mut model: Vec<Vec<u8>> = Vec::new();
        for round in 0..4000u32 {
            let step = format!("step-{}-{}", rng.below(300), "x".repeat(rng.below(40) as usize)).into_bytes();
            match b.search(&step) {
                Ok(i) => {
                    assert!(matches!(b.remove(i), Ptr::Small(_)));
                    model.remove(i);
                }
                Err(i) => {
                    b.insert(i, &step, Ptr::value(&round.to_le_bytes())).unwrap();
                    model.insert(i, step);
                }
            }
            let live: usize = model.iter().map(Vec::len).sum();
            let longest = model.iter().map(Vec::len).max().unwrap_or(0);
            let long = b.bytes.len() - 8 * b.len();
            assert!(long <= 2 * live + 2 * longest + 16, "{long} bytes for {live}");
        }
        let steps: Vec<&[u8]> = b.iter().map(|(s, _)| s).collect();
        assert_eq!(steps, model.iter().map(Vec::as_slice).collect::<Vec<_>>());
        assert_eq!(b.into_entries().into_iter().map(|(s, _)| s.to_vec()).collect::<Vec<_>>(), model);
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
            let mut b = Bindings::from_sorted(entries).unwrap();
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
                        b.insert(i, &probe, Ptr::value(b"w")).unwrap();
                        steps.insert(i, probe);
                    }
                }
            }
            for (i, s) in steps.iter().enumerate() {
                assert_eq!(b.search(s), Ok(i));
                assert_eq!(b.step(i), &s[..]);
            }
        }
    }

    /// Two steps with the same key are ordered as their bytes are, whatever their lengths
    /// (short ones padded with zeros to their key, long ones sharing eight bytes).
    #[test]
    fn steps_with_one_key_are_ordered_as_their_bytes() {
        let steps: [&[u8]; 12] = [
            b"",
            b"\0",
            b"\0\0",
            b"a",
            b"a\0",
            b"a\0\0\0\0\0\0\0",
            b"a\0\0\0\0\0\0\0\0",
            b"a\0\0\0\0\0\0\0b",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefghij",
            b"abcdefghik",
        ];
        for a in steps {
            for c in steps.iter().filter(|c| prefix_key(c) == prefix_key(a)) {
                assert_eq!(order_of_same_key(a, c), a.cmp(c), "{a:?} against {c:?}");
            }
        }
    }
}
