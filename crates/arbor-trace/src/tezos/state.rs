//! What the generator knows of the current state, without holding it.
//!
//! An entity that was never written still has its initial leaves, which are
//! re-derived from `(seed, index)` on demand; only entities written since the
//! start are kept, as `(field, digest)` lists. Memory is therefore bounded by
//! what the blocks touch, not by the size of the state.

use super::fields::Entity;
use super::layout::Layout;
use crate::types::Digest;
use rustc_hash::FxHashMap;

/// Present fields of one entity, sorted by field.
pub(crate) type Fields = Vec<(u32, Digest)>;

/// The generator's view of the state.
pub(crate) struct State {
    written: FxHashMap<Entity, Fields>,
    scratch: Vec<(u32, Vec<u8>)>,
    value: Vec<u8>,
    view: Fields,
}

impl State {
    /// The initial state of `layout`, nothing written yet.
    pub(crate) fn new() -> Self {
        State { written: FxHashMap::default(), scratch: Vec::new(), value: Vec::new(), view: Vec::new() }
    }

    /// Number of entities written since the start.
    pub(crate) fn written_entities(&self) -> usize {
        self.written.len()
    }

    fn initial_fields(&mut self, l: &Layout, e: Entity) -> Fields {
        l.initial_leaves(e, &mut self.scratch);
        self.scratch.iter().map(|(f, v)| (*f, Digest::of(v))).collect()
    }

    /// The present fields of `e` (sorted by field).
    pub(crate) fn fields(&mut self, l: &Layout, e: Entity) -> &Fields {
        if self.written.contains_key(&e) {
            return &self.written[&e];
        }
        self.view = self.initial_fields(l, e);
        &self.view
    }

    /// The digest of field `f` of `e`, `None` when absent.
    pub(crate) fn get(&mut self, l: &Layout, e: Entity, f: u32) -> Option<Digest> {
        if let Some(fields) = self.written.get(&e) {
            return lookup(fields, f);
        }
        let mut v = std::mem::take(&mut self.value);
        let r = l.initial_value(e, f, &mut v).then(|| Digest::of(&v));
        self.value = v;
        r
    }

    fn entry(&mut self, l: &Layout, e: Entity) -> &mut Fields {
        if !self.written.contains_key(&e) {
            let init = self.initial_fields(l, e);
            self.written.insert(e, init);
        }
        self.written.get_mut(&e).expect("just inserted")
    }

    /// Sets field `f` of `e`.
    pub(crate) fn set(&mut self, l: &Layout, e: Entity, f: u32, d: Digest) {
        let fields = self.entry(l, e);
        match fields.binary_search_by_key(&f, |(g, _)| *g) {
            Ok(i) => fields[i].1 = d,
            Err(i) => fields.insert(i, (f, d)),
        }
    }

    /// Replaces all fields of `e` (an empty list removes it).
    pub(crate) fn replace(&mut self, e: Entity, mut fields: Fields) {
        fields.sort_unstable_by_key(|(f, _)| *f);
        self.written.insert(e, fields);
    }
}

fn lookup(fields: &Fields, f: u32) -> Option<Digest> {
    fields.binary_search_by_key(&f, |(g, _)| *g).ok().map(|i| fields[i].1)
}
