//! How a node differs from the full record it is a version of ([`Lineage`]), so that writing
//! it can append only what changed (a delta record, FORMAT.md 5.8) instead of every binding
//! again.
//!
//! The steps a lineage notes live in one buffer: their keys, eight bytes each, side by side
//! for searching; then where each step is, eight bytes each; then the steps longer than eight
//! bytes, end to end:
//!
//! ```text
//! | key 0 | key 1 | ... | note 0 | note 1 | ... | long steps ... |
//!   8 B each              8 B each: position among the long steps (29 bits), three
//!                         flags (below), then length (32 bits)
//! ```
//!
//! The flags: the step changed since the mid too; the base held a binding of the step; the
//! mid's node held one. The last two are what the node held when the step was first marked
//! since that record (nothing had changed it since, so the node still held what the record
//! did), and let a delta name a binding its base holds by its position there instead of by
//! its step again (FORMAT.md 5.8).
//!
//! Two buffers (the notes, and the keys with the long steps) cost a node that changes two
//! allocations and up to four growths: at 30M values, growing them was half of the time spent
//! noting changes, and a delta read cold noted its steps one by one, moving every long step
//! noted before for each new one. Now a node's first change makes room for two short steps
//! at once (an account's balance and counter), and a delta read from the log gets its
//! lineage in one allocation of the exact size.

use super::bindings::{search_keyed, spelled, split, IN_KEY};
use super::node::Persisted;
use super::ops::prefix_key;

/// Bytes a noted step takes besides its long bytes: its key and its note.
const PER_STEP: usize = 2 * IN_KEY;

/// The flag of a note's position word: the step changed since the mid too.
const SINCE_MID: u32 = 1 << 31;

/// The flag of a note's position word: the base held a binding of the step.
const IN_BASE: u32 = 1 << 30;

/// The flag of a note's position word: the mid's node held a binding of the step (set with
/// [`SINCE_MID`]).
const IN_MID: u32 = 1 << 29;

/// The most bytes a lineage's long steps may take: a note keeps their position in the 29
/// bits below its flags.
const MAX_LONG_BYTES: usize = (IN_MID - 1) as usize;

/// How a node differs from the full record it is a version of.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lineage {
    /// The full record (FLAT_DIR, INODE_VALUES or INODE_TREE) this node is a version of.
    pub base: Option<Persisted>,
    /// Steps whose binding differs from the base (directories and Values inodes), sorted,
    /// each with whether it also differs from the mid and whether the base and the mid held
    /// it, laid out as the module says. One list
    /// for both: what changed since the mid changed since the base too, and a change is then
    /// looked up once.
    noted: Vec<u8>,
    /// How many steps `noted` holds.
    steps: u32,
    /// Slots that differ from the base (Tree inodes), one bit each.
    pub slots: u64,
    /// A delta of `base` (level 1) this node is also a version of: the node may be written
    /// as a delta of that delta. Boxed: most nodes have none.
    pub mid: Option<Box<Mid>>,
}

/// A level-1 delta record a node descends from. The steps changed since it are flagged in
/// [`Lineage`]'s list.
#[derive(Debug, Clone, Default)]
pub(crate) struct Mid {
    /// The delta record's offset (same store as the base).
    pub offset: u64,
    /// Slots changed since that record (a subset of those changed since the base).
    pub slots: u64,
}

/// A step as a lineage can take it without its bytes spelled out first: its length, and how
/// to write it (a step packed in a record is spelled straight into the lineage).
pub(crate) trait Spelling: Copy {
    /// The step's length in bytes.
    fn len(self) -> usize;
    /// Writes the step to `out`, exactly [`Spelling::len`] bytes.
    fn write_to(self, out: &mut [u8]);
}

impl Spelling for &[u8] {
    fn len(self) -> usize {
        <[u8]>::len(self)
    }
    fn write_to(self, out: &mut [u8]) {
        out.copy_from_slice(self);
    }
}

impl Lineage {
    /// The lineage of a level-1 delta of the full record `base` that changed `steps` (sorted,
    /// distinct, each with whether `base` held a binding of it) or `slots`: one buffer of the
    /// exact size.
    pub(crate) fn of_delta<S: Spelling>(base: Persisted, steps: &[(S, bool)], slots: u64) -> Lineage {
        let long: usize = steps.iter().map(|(s, _)| s.len()).filter(|&n| n > IN_KEY).sum();
        let mut lineage = Lineage { base: Some(base), slots, ..Lineage::default() };
        if long > MAX_LONG_BYTES {
            // Too many to note: the node is written whole next time.
            return Lineage::forgotten();
        }
        let n = steps.len();
        let mut noted = vec![0; PER_STEP * n + long];
        let (keys, rest) = noted.split_at_mut(IN_KEY * n);
        let (notes, long_steps) = rest.split_at_mut(IN_KEY * n);
        let mut at = 0;
        for (i, &(s, in_base)) in steps.iter().enumerate() {
            let len = s.len();
            let key = &mut keys[IN_KEY * i..IN_KEY * (i + 1)];
            if len <= IN_KEY {
                s.write_to(&mut key[..len]);
            } else {
                let step = &mut long_steps[at..at + len];
                s.write_to(step);
                key.copy_from_slice(&step[..IN_KEY]);
            }
            let flags = if in_base { IN_BASE } else { 0 };
            notes[IN_KEY * i..IN_KEY * (i + 1)].copy_from_slice(&note(if len > IN_KEY { at } else { 0 }, len, flags));
            if len > IN_KEY {
                at += len;
            }
        }
        lineage.noted = noted;
        lineage.steps = n as u32;
        debug_assert!((1..n).all(|i| lineage.step(i - 1) < lineage.step(i)), "steps of a delta sorted");
        lineage
    }

    /// A lineage that notes nothing and has no base: its node is written whole.
    fn forgotten() -> Lineage {
        Lineage::default()
    }

    /// The lineage a new version of a node starts from, given the record the node was last
    /// written as or read from (None if changed since): a full record is the base; a delta
    /// of it becomes the mid, its changes carried on; a delta of a delta changes nothing.
    pub(crate) fn derive(&self, disk: Option<&Persisted>) -> Lineage {
        match disk {
            Some(p) if p.level == 0 => Lineage { base: Some(*p), ..Lineage::default() },
            _ => {
                let mut l = self.clone();
                l.rebase(disk);
                l
            }
        }
    }

    /// [`Lineage::derive`] in place, for a node changed where it is: a node changed again
    /// since it was last written keeps its lineage as it is, without a copy of its changes.
    pub(super) fn rebase(&mut self, disk: Option<&Persisted>) {
        match disk {
            Some(p) if p.level == 0 => {
                // Emptied, not dropped: the node's next changes refill the buffer without
                // allocating.
                self.base = Some(*p);
                self.noted.clear();
                self.steps = 0;
                self.slots = 0;
                self.mid = None;
            }
            Some(p) => {
                self.base = Some(Persisted::full(p.store, p.full));
                if p.level == 1 {
                    let mid = Mid { offset: p.offset, slots: 0 };
                    match &mut self.mid {
                        Some(m) => **m = mid,
                        None => self.mid = Some(Box::new(mid)),
                    }
                    for i in 0..self.len() {
                        self.set_flags(i, 0, SINCE_MID | IN_MID);
                    }
                }
            }
            None => {}
        }
    }

    /// Notes that the binding named `step` changes, before it does: `present` says whether
    /// the node holds a binding of `step` now. A node without a base is written whole, so
    /// it notes nothing.
    pub fn mark_step(&mut self, step: &[u8], present: bool) {
        if self.base.is_none() {
            return;
        }
        let since_mid = self.mid.is_some();
        let in_mid = if present { IN_MID } else { 0 };
        match self.find_step(step) {
            Ok(i) if since_mid && !self.since_mid(i) => self.set_flags(i, SINCE_MID | in_mid, 0),
            Ok(_) => {}
            Err(i) => {
                let in_base = if present { IN_BASE } else { 0 };
                let flags = if since_mid { SINCE_MID | in_mid | in_base } else { in_base };
                self.insert_step(i, step, flags);
            }
        }
    }

    /// Number of steps noted.
    fn len(&self) -> usize {
        self.steps as usize
    }

    /// Sets the flags `on` and clears the flags `off` of the `i`-th step's note.
    fn set_flags(&mut self, i: usize, on: u32, off: u32) {
        let at = IN_KEY * (self.len() + i);
        let word = &mut self.noted[at..at + 4];
        let first = u32::from_le_bytes(word[..].try_into().expect("four bytes"));
        word.copy_from_slice(&((first & !off) | on).to_le_bytes());
    }

    /// The `i`-th step's note: where it is among the long steps, its length, and its flags.
    fn note_of(&self, i: usize) -> (usize, usize, u32) {
        let at = IN_KEY * (self.len() + i);
        let word: [u8; IN_KEY] = self.noted[at..at + IN_KEY].try_into().expect("eight bytes");
        let first = u32::from_le_bytes(word[..4].try_into().expect("four bytes"));
        let len = u32::from_le_bytes(word[4..].try_into().expect("four bytes"));
        ((first & MAX_LONG_BYTES as u32) as usize, len as usize, first & !(MAX_LONG_BYTES as u32))
    }

    /// Whether the `i`-th step changed since the mid too.
    fn since_mid(&self, i: usize) -> bool {
        self.note_of(i).2 & SINCE_MID != 0
    }

    /// Notes `step` at `i` in the sorted steps, with `flags`.
    fn insert_step(&mut self, i: usize, step: &[u8], flags: u32) {
        let n = self.len();
        let keys_end = IN_KEY * n;
        let notes_end = PER_STEP * n;
        let old_end = self.noted.len();
        let long_before = old_end - notes_end;
        let long = if step.len() > IN_KEY { step.len() } else { 0 };
        if long_before + long > MAX_LONG_BYTES {
            *self = Lineage::forgotten();
            return;
        }
        let need = PER_STEP + long;
        if old_end + need > self.noted.capacity() {
            // A first change makes room for a second short one (most changed nodes change
            // one or two bindings); later ones double the buffer.
            let room = if old_end == 0 { need + PER_STEP } else { need.max(old_end) };
            self.noted.reserve_exact(room);
        }
        self.noted.resize(old_end + PER_STEP, 0);
        self.noted.extend_from_slice(&step[..long]);
        let b = &mut self.noted;
        // Highest first, each part to its place in the longer list: the long steps up by a
        // key and a note, the notes from `i` on by the same, the notes before `i` and the
        // keys from `i` on by a key.
        b.copy_within(notes_end..old_end, notes_end + PER_STEP);
        b.copy_within(keys_end + IN_KEY * i..notes_end, keys_end + IN_KEY * i + PER_STEP);
        b.copy_within(keys_end..keys_end + IN_KEY * i, keys_end + IN_KEY);
        b.copy_within(IN_KEY * i..keys_end, IN_KEY * (i + 1));
        b[IN_KEY * i..IN_KEY * (i + 1)].copy_from_slice(&prefix_key(step).to_be_bytes());
        let at_note = keys_end + IN_KEY + IN_KEY * i;
        b[at_note..at_note + IN_KEY].copy_from_slice(&note(if long > 0 { long_before } else { 0 }, step.len(), flags));
        self.steps += 1;
    }

    /// The `i`-th step noted (kept as a binding list keeps its steps: `bindings::spelled`).
    fn step(&self, i: usize) -> &[u8] {
        let n = self.len();
        let (keys, _) = split(&self.noted, n);
        let (at, len, ..) = self.note_of(i);
        spelled(&keys[i], len, at, &self.noted[PER_STEP * n..])
    }

    /// Whether the binding named `step` is noted as changed, since the base and since the mid.
    pub fn noted(&self, step: &[u8]) -> bool {
        self.find_step(step).is_ok_and(|i| self.mid.is_none() || self.since_mid(i))
    }

    /// The steps changed since the base, or with `since_mid` since the mid, in order, each
    /// with whether that record's node held a binding of it.
    pub fn changed_steps(&self, since_mid: bool) -> impl Iterator<Item = (&[u8], bool)> + Clone {
        let held = if since_mid { IN_MID } else { IN_BASE };
        (0..self.len()).filter_map(move |i| {
            let (.., flags) = self.note_of(i);
            (!since_mid || flags & SINCE_MID != 0).then(|| (self.step(i), flags & held != 0))
        })
    }

    /// How many steps changed since the base, and since the mid (0 without one).
    pub fn step_changes(&self) -> (usize, usize) {
        let since_mid = if self.mid.is_some() { (0..self.len()).filter(|&i| self.since_mid(i)).count() } else { 0 };
        (self.len(), since_mid)
    }

    /// Where `step` is in the sorted steps, or where it would go.
    fn find_step(&self, step: &[u8]) -> std::result::Result<usize, usize> {
        search_keyed(split(&self.noted, self.len()).0, step, |i| self.step(i))
    }

    /// Notes that slot `slot` changed.
    pub fn mark_slot(&mut self, slot: usize) {
        self.slots |= 1 << slot;
        if let Some(m) = &mut self.mid {
            m.slots |= 1 << slot;
        }
    }

    /// Whether this lineage notes the same changes as `other` (tests).
    #[cfg(test)]
    fn same_steps(&self, other: &[&[u8]]) -> bool {
        self.changed_steps(false).map(|(s, _)| s).eq(other.iter().copied())
    }
}

/// A note: a long step's position among the long steps (0 for a short step), its length, and
/// its flags.
fn note(at: usize, len: usize, flags: u32) -> [u8; IN_KEY] {
    debug_assert!(at <= MAX_LONG_BYTES, "checked by the caller");
    debug_assert_eq!(flags & MAX_LONG_BYTES as u32, 0, "flags only");
    let first = at as u32 | flags;
    let mut word = [0; IN_KEY];
    word[..4].copy_from_slice(&first.to_le_bytes());
    // A step's length fits in 32 bits: a binding list refuses longer steps (`MAX_STEP_BYTES`).
    word[4..].copy_from_slice(&(len as u32).to_le_bytes());
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The steps a lineage notes, looked up by their keys, are the ones marked, in order,
    /// among steps that share their first eight bytes or are prefixes of one another; a
    /// lineage built at once from a delta's steps notes the same steps.
    #[test]
    fn a_lineage_notes_the_steps_marked() {
        let mut rng = arbor_core::toolbox::SplitMix64::new(5);
        let alphabet = [0u8, 1, b'a', 0xff];
        for _ in 0..200 {
            let mut lineage = Lineage::of_delta::<&[u8]>(Persisted::full(1, 100), &[], 0);
            let mut held = std::collections::BTreeMap::new();
            let mut model = std::collections::BTreeSet::new();
            for _ in 0..rng.below(30) {
                let len = 1 + rng.below(12) as usize;
                let step: Vec<u8> = (0..len).map(|_| alphabet[rng.below(4) as usize]).collect();
                let present = rng.below(2) == 1;
                lineage.mark_step(&step, present);
                held.entry(step.clone()).or_insert(present);
                model.insert(step);
            }
            let sorted: Vec<&[u8]> = model.iter().map(Vec::as_slice).collect();
            assert!(lineage.same_steps(&sorted));
            // Whether the base held each step is what the node held when it was first marked.
            let flagged: Vec<(&[u8], bool)> = held.iter().map(|(s, &h)| (s.as_slice(), h)).collect();
            assert!(lineage.changed_steps(false).eq(flagged.iter().copied()));
            let of_delta = Lineage::of_delta(Persisted::full(1, 100), &flagged, 0);
            assert!(of_delta.same_steps(&sorted) && of_delta.changed_steps(false).eq(flagged.iter().copied()));
            for step in &model {
                assert!(lineage.noted(step));
                let mut longer = step.clone();
                longer.push(0);
                assert_eq!(lineage.noted(&longer), model.contains(&longer));
            }
        }
    }

    /// Once a mid is set (the node was read from a level-1 delta), a step noted before is not
    /// changed since the mid until marked again, and one marked after is; whether the mid's
    /// node held a step is what the node held at its first mark since the mid, and a new mid
    /// forgets it.
    #[test]
    fn changes_since_the_mid_are_flagged() {
        let base = Persisted::full(1, 100);
        let long: &[u8] = b"a-step-longer-than-eight-bytes";
        let mut lineage = Lineage::of_delta(base, &[(long, false), (&b"balance"[..], true)], 0);
        let mid = Persisted { store: 1, offset: 200, full: 100, seq: 0, level: 1 };
        lineage.rebase(Some(&mid));
        assert_eq!(lineage.step_changes(), (2, 0));
        // The long step was added since the base: the mid's node held it.
        lineage.mark_step(long, true);
        lineage.mark_step(long, false);
        lineage.mark_step(b"counter", true);
        assert_eq!(lineage.step_changes(), (3, 2));
        assert_eq!(lineage.changed_steps(true).collect::<Vec<_>>(), vec![(long, true), (&b"counter"[..], true)]);
        let since_base = vec![(long, false), (&b"balance"[..], true), (&b"counter"[..], true)];
        assert_eq!(lineage.changed_steps(false).collect::<Vec<_>>(), since_base);
        assert!(lineage.noted(long) && lineage.noted(b"counter") && !lineage.noted(b"balance"));
        let next = Persisted { store: 1, offset: 300, full: 100, seq: 0, level: 1 };
        lineage.rebase(Some(&next));
        lineage.mark_step(long, false);
        assert_eq!(lineage.changed_steps(true).collect::<Vec<_>>(), vec![(long, false)]);
    }

    /// A node without a base is written whole: marking a step notes nothing.
    #[test]
    fn a_lineage_without_a_base_notes_nothing() {
        let mut lineage = Lineage::default();
        lineage.mark_step(b"balance", true);
        assert_eq!(lineage.step_changes(), (0, 0));
        assert!(lineage.noted.is_empty());
    }
}
