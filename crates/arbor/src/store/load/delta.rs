//! Decoding a delta of bindings (FLAT_DIR_DELTA, INODE_VALUES_DELTA) in one pass.
//!
//! A delta record holds a node's changed bindings, sorted; the node is its base's bindings
//! with those changes applied (FORMAT.md 5.8), and the base may itself be a delta of a full
//! record. Each record of the chain is read here as a stream of bindings in step order, and
//! the streams are merged straight into the node's binding list: a binding is decoded once,
//! from the record that last wrote it. Decoding the base into a list of its own first and
//! applying the changes to a copy of that list decoded most bindings twice: at 30M values,
//! where a block decodes about 200 deltas read cold, that was 1.35 + 1.26 ms of a block.
//!
//! A base decoded already (in the cache) is streamed from its list instead of its record.

use std::cmp::Ordering;

use crate::error::{Corruption, Result};
use crate::pack::log::ReadFrame;
use crate::pack::record::{invalid, kind, ChildRef, Name, Reader, StepRef};
use crate::tree::{Bindings, Builder, DirBody, InodeBody, Lineage, Persisted, Ptr, Spelling};

use super::{based, long_steps_guess, Cached, Loader, Object};

/// A binding as a stream yields it: its step as its record holds it, and its child.
struct Binding<'a> {
    step: StepRef<'a>,
    child: Child<'a>,
}

/// A binding's child, before it becomes a tree pointer.
enum Child<'a> {
    /// As the record at the given offset refers to it.
    Record(ChildRef<'a>, u64),
    /// A child of a list decoded already.
    Decoded(&'a Ptr),
}

/// The bindings of a node in step order.
enum Stream<'a> {
    /// A full record's entries.
    Full(Full<'a>),
    /// A list decoded already, from binding `.1` on.
    Decoded(&'a Bindings, usize),
    /// A delta's changes applied to its base's bindings.
    Merged(Box<Merged<'a>>),
}

impl<'a> Stream<'a> {
    fn next(&mut self, loader: &Loader) -> Result<Option<Binding<'a>>> {
        match self {
            Stream::Full(full) => full.next(loader),
            Stream::Decoded(list, i) => {
                let list: &'a Bindings = list;
                if *i == list.len() {
                    return Ok(None);
                }
                *i += 1;
                Ok(Some(Binding { step: StepRef::Plain(list.step(*i - 1)), child: Child::Decoded(list.child(*i - 1)) }))
            }
            Stream::Merged(merged) => merged.next(loader),
        }
    }

    /// The most bindings the stream may yield: what its records can hold.
    fn bound(&self) -> usize {
        match self {
            Stream::Full(full) => full.left,
            Stream::Decoded(list, i) => list.len() - i,
            Stream::Merged(merged) => merged.base.bound() + merged.left,
        }
    }

    /// About how many bytes the long steps the stream yields take ([`long_steps_guess`]).
    fn long_bytes_guess(&self) -> usize {
        match self {
            Stream::Full(full) => long_steps_guess(&full.r, full.left),
            Stream::Decoded(list, _) => list.buffer_bytes().1,
            Stream::Merged(merged) => merged.base.long_bytes_guess() + long_steps_guess(&merged.changes, merged.left),
        }
    }
}

/// The entries of a full record at `at` (FLAT_DIR or INODE_VALUES), checked to be in order.
struct Full<'a> {
    r: Reader<'a>,
    at: u64,
    left: usize,
    index: usize,
    last: Option<StepRef<'a>>,
}

impl<'a> Full<'a> {
    fn next(&mut self, loader: &Loader) -> Result<Option<Binding<'a>>> {
        if self.left == 0 {
            self.r.finish().map_err(loader.bad(self.at))?;
            return Ok(None);
        }
        self.left -= 1;
        let (step, child) = self.r.entry_ref().map_err(loader.bad(self.at))?;
        if self.last.is_some_and(|last| last.cmp_spelled(step) != Ordering::Less) {
            return Err(loader.corrupt(self.at, Corruption::OutOfOrder { what: "bindings", index: self.index }));
        }
        self.last = Some(step);
        self.index += 1;
        Ok(Some(Binding { step, child: Child::Record(child, self.at) }))
    }
}

/// The changes of the delta at `at` applied to the bindings of its base, in step order.
///
/// The changes are checked to be in order, a change named by its base's binding to name one
/// the base has, and, once the stream is done, to leave the number of bindings the delta
/// records. A removal of a binding the base lacks is allowed (the writer marks a step before
/// it knows whether the change takes).
struct Merged<'a> {
    base: Stream<'a>,
    /// The base's next binding, read ahead.
    next_base: Option<Binding<'a>>,
    /// The position in the base of its next binding (read ahead or not).
    base_index: usize,
    changes: Reader<'a>,
    /// The next change, read ahead: None as its child, a removal.
    next_change: Option<(Name<StepRef<'a>>, Option<ChildRef<'a>>)>,
    at: u64,
    left: usize,
    /// The changed steps as their record holds them (the base's record, for a change named
    /// by its base's binding), in order, each with whether the base held it (for the node's
    /// lineage).
    steps: Vec<(StepRef<'a>, bool)>,
    recorded: u64,
    yielded: u64,
}

impl<'a> Merged<'a> {
    fn new(base: Stream<'a>, changes: Reader<'a>, at: u64, left: usize, recorded: u64) -> Merged<'a> {
        Merged {
            base,
            next_base: None,
            base_index: 0,
            changes,
            next_change: None,
            at,
            left,
            steps: Vec::with_capacity(left),
            recorded,
            yielded: 0,
        }
    }

    /// Notes the next change's step, `held` whether the base holds it, checking it comes
    /// after the one before.
    fn note_step(&mut self, step: StepRef<'a>, held: bool, loader: &Loader) -> Result<()> {
        if self.steps.last().is_some_and(|(prev, _)| prev.cmp_spelled(step) != Ordering::Less) {
            let kind = Corruption::OutOfOrder { what: "changes", index: self.steps.len() };
            return Err(loader.corrupt(self.at, kind));
        }
        self.steps.push((step, held));
        Ok(())
    }

    fn next(&mut self, loader: &Loader) -> Result<Option<Binding<'a>>> {
        loop {
            if self.next_change.is_none() && self.left > 0 {
                self.left -= 1;
                let (name, child) = self.changes.change_ref().map_err(loader.bad(self.at))?;
                if let Name::Step(step) = name {
                    self.note_step(step, false, loader)?;
                }
                self.next_change = Some((name, child));
            }
            if self.next_base.is_none() {
                self.next_base = self.base.next(loader)?;
            }
            let order = match (&self.next_base, &self.next_change) {
                (None, None) => {
                    self.changes.finish().map_err(loader.bad(self.at))?;
                    if self.yielded != self.recorded {
                        let kind = Corruption::CountMismatch { recorded: self.recorded, actual: self.yielded };
                        return Err(loader.corrupt(self.at, kind));
                    }
                    return Ok(None);
                }
                (Some(_), None) => Ordering::Less,
                (None, Some((Name::Step(_), _))) => Ordering::Greater,
                (None, Some((Name::Base(i), _))) => {
                    return Err(loader.bad(self.at)(invalid("position of a base binding", *i as u64)));
                }
                (Some(base), Some((Name::Step(step), _))) => base.step.cmp_spelled(*step),
                (Some(_), Some((Name::Base(i), _))) => match self.base_index.cmp(i) {
                    // Named after the base's binding there was passed: out of order.
                    Ordering::Greater => {
                        let kind = Corruption::OutOfOrder { what: "changes", index: self.steps.len() };
                        return Err(loader.corrupt(self.at, kind));
                    }
                    o => o,
                },
            };
            // A base binding before the next change is kept; one the change names is
            // replaced or removed.
            let mut step = None;
            if order != Ordering::Greater {
                let base = self.next_base.take().expect("compared with the change");
                self.base_index += 1;
                if order == Ordering::Less {
                    self.yielded += 1;
                    return Ok(Some(base));
                }
                match self.next_change {
                    Some((Name::Base(_), _)) => self.note_step(base.step, true, loader)?,
                    _ => self.steps.last_mut().expect("noted when read").1 = true,
                }
                step = Some(base.step);
            }
            if let Some((name, Some(child))) = self.next_change.take() {
                let step = match name {
                    Name::Step(s) => s,
                    Name::Base(_) => step.expect("a change named by position names a base binding"),
                };
                self.yielded += 1;
                return Ok(Some(Binding { step, child: Child::Record(child, self.at) }));
            }
        }
    }
}

/// A changed step goes to the node's lineage spelled straight from its record.
impl Spelling for StepRef<'_> {
    fn len(self) -> usize {
        StepRef::len(self)
    }
    fn write_to(self, out: &mut [u8]) {
        StepRef::write_to(self, out);
    }
}

/// Where a delta's base is and its lineage, as [`Loader::delta_at`] takes them.
struct Place {
    at: Persisted,
    lineage: Lineage,
}

impl Loader {
    /// Decodes the delta record at `at` (FLAT_DIR_DELTA, or INODE_VALUES_DELTA at `depth`) of
    /// the record at `base`, `count` bindings, from `r` positioned at its change count.
    /// Returns its bindings, where it is and its lineage. `chained`: whether the base may be
    /// a level-1 delta (FORMAT.md 5.8: a chain is at most two deltas long).
    #[expect(clippy::too_many_arguments, reason = "a delta's fields, decoded by its caller, and where it sits")]
    pub(super) fn delta_bindings(
        &self,
        mut r: Reader<'_>,
        at: u64,
        base: u64,
        count: u64,
        full_kind: u8,
        depth: u32,
        chained: bool,
    ) -> Result<(Bindings, Persisted, Lineage)> {
        let bad = self.bad(at);
        let changes = r.len().map_err(&bad)?;
        // What each stream reads from: held here while the streams borrow them.
        let base_object;
        let base_frame: ReadFrame;
        let full_object;
        let full_frame: ReadFrame;
        // The base's bindings as a stream, and where the record they are decoded from is.
        let (stream, place) = match self.decoded_base(base, full_kind, depth, chained) {
            Some(object) => {
                base_object = object;
                decoded_stream(&base_object).ok_or_else(|| self.delta_base(at, base))?
            }
            None => {
                base_frame = self.read(base)?;
                let (k, body) = base_frame.parts();
                if k == full_kind {
                    self.full_stream(body, base, full_kind, depth)?
                } else if chained && k == kind::delta_of(full_kind) {
                    // A level-1 delta: its own base must be a full record.
                    let mut r1 = Reader::new(body);
                    if full_kind != kind::FLAT_DIR {
                        self.inode_depth(&mut r1, base, depth)?;
                    }
                    let full = self.target(base, r1.leb().map_err(self.bad(base))?)?;
                    let count1 = r1.leb().map_err(self.bad(base))?;
                    let changes1 = r1.len().map_err(self.bad(base))?;
                    let (inner, full_place) = match self.decoded_base(full, full_kind, depth, false) {
                        Some(object) => {
                            full_object = object;
                            decoded_stream(&full_object).ok_or_else(|| self.delta_base(at, base))?
                        }
                        None => {
                            full_frame = self.read(full)?;
                            let (k, body) = full_frame.parts();
                            if k != full_kind {
                                return Err(self.delta_base(at, base));
                            }
                            self.full_stream(body, full, full_kind, depth)?
                        }
                    };
                    // The level-1 delta's own place is known once its steps are: below.
                    (Stream::Merged(Box::new(Merged::new(inner, r1, base, changes1, count1))), full_place)
                } else {
                    return Err(self.delta_base(at, base));
                }
            }
        };
        let guess = stream.long_bytes_guess() + long_steps_guess(&r, changes);
        // The recorded count is checked once merged; the room made for it is what the
        // records can hold.
        let room = usize::try_from(count).unwrap_or(usize::MAX).min(stream.bound() + changes);
        let mut out = Builder::new(room, guess);
        let mut merged = Merged::new(stream, r, at, changes, count);
        while let Some(b) = merged.next(self)? {
            let child = match b.child {
                Child::Record(c, from) => self.child_ptr(c, from)?,
                Child::Decoded(p) => p.clone(),
            };
            out.push_with(b.step.len(), |to| b.step.write_to(to), child)?;
        }
        let steps = std::mem::take(&mut merged.steps);
        // The base's place: a level-1 delta's is derived from its own base's, as decoding
        // it on its own would.
        let place = match &mut merged.base {
            Stream::Merged(inner) => {
                if full_kind != kind::FLAT_DIR && !(1..=self.inode.entries as u64).contains(&inner.yielded) {
                    return Err(self.bad(base)(invalid("binding count of a values inode", inner.yielded)));
                }
                let inner_steps = std::mem::take(&mut inner.steps);
                let (at1, lineage1) = self.delta_at(base, (&place.at, &place.lineage), &inner_steps, 0);
                Place { at: at1, lineage: lineage1 }
            }
            _ => place,
        };
        let (p, lineage) = self.delta_at(at, (&place.at, &place.lineage), &steps, 0);
        Ok((out.finish(), p, lineage))
    }

    /// The stream of a full record's entries (`body`, at `at`), after its depth when it is
    /// an inode's (checked to be `depth`), and where the record is.
    fn full_stream<'a>(&self, body: &'a [u8], at: u64, full_kind: u8, depth: u32) -> Result<(Stream<'a>, Place)> {
        let mut r = Reader::new(body);
        if full_kind != kind::FLAT_DIR {
            self.inode_depth(&mut r, at, depth)?;
        }
        let left = r.len().map_err(self.bad(at))?;
        if full_kind != kind::FLAT_DIR && (left == 0 || left > self.inode.entries as usize) {
            return Err(self.bad(at)(invalid("binding count of a values inode", left as u64)));
        }
        let full = Full { r, at, left, index: 0, last: None };
        Ok((Stream::Full(full), Place { at: self.persisted(at), lineage: Lineage::default() }))
    }

    /// The base at `offset` as decoded already, if the cache has it and it may be a base:
    /// a full record, or with `chained` a level-1 delta; an inode at `depth`.
    ///
    /// A base read from its record is not put in the cache: it is an older version of a
    /// node, and the only version a tree reaches is the delta being decoded, which the cache
    /// holds instead. Cached bases took 170 MiB of a 300-block replay at 30M values (most
    /// nodes of its large directories are deltas) and were never read again.
    pub(super) fn decoded_base(&self, offset: u64, full_kind: u8, depth: u32, chained: bool) -> Option<Object> {
        let fits = |p: Option<&Persisted>| p.is_some_and(|p| p.level == 0 || (chained && p.level == 1));
        match self.cache.get(&offset)? {
            Cached { object: Object::Dir(d), .. }
                if full_kind == kind::FLAT_DIR && fits(d.disk.get()) && matches!(d.body, DirBody::Flat(_)) =>
            {
                Some(Object::Dir(d))
            }
            Cached { object: Object::Inode(i), .. }
                if full_kind != kind::FLAT_DIR && fits(i.disk.get()) && i.depth == depth =>
            {
                Some(Object::Inode(i))
            }
            _ => None,
        }
    }

    /// The error for a delta at `at` whose base at `base` is not a record it can be a
    /// version of.
    pub(super) fn delta_base(&self, at: u64, base: u64) -> crate::error::Error {
        self.corrupt(at, Corruption::DeltaBase { base })
    }
}

/// The bindings of a decoded base as a stream, and where it is; None when it holds no
/// bindings (a large directory, a Tree inode).
fn decoded_stream(object: &Object) -> Option<(Stream<'_>, Place)> {
    let (list, disk, lineage) = match object {
        Object::Dir(d) => match &d.body {
            DirBody::Flat(list) => (list, &d.disk, &d.lineage),
            DirBody::Large(_) => return None,
        },
        Object::Inode(i) => match &i.body {
            InodeBody::Values(list) => (list, &i.disk, &i.lineage),
            InodeBody::Tree(_) => return None,
        },
        Object::Value(_) => return None,
    };
    let (at, lineage) = based(disk, lineage);
    Some((Stream::Decoded(list, 0), Place { at: *at, lineage: lineage.clone() }))
}
