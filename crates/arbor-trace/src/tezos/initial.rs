//! The initial state as a stream: entity after entity, leaf after leaf.

use super::fields::Entity;
use super::layout::{Layout, INITIAL_CYCLES};
use super::pathbuf::PathBuf;
use crate::types::Path;

/// Walks the entities of a layout in stream order.
#[derive(Clone, Debug)]
pub(crate) struct EntityCursor {
    next: Option<Entity>,
}

impl EntityCursor {
    /// A cursor at the first entity.
    pub(crate) fn new() -> Self {
        EntityCursor { next: Some(Entity::Globals) }
    }

    /// The next entity of the initial state, if any.
    pub(crate) fn advance(&mut self, l: &Layout) -> Option<Entity> {
        let cur = self.next?;
        self.next = following(l, cur);
        Some(cur)
    }
}

/// The entity after `cur` in stream order.
fn following(l: &Layout, cur: Entity) -> Option<Entity> {
    let first_of = |stage: u8| -> Option<Entity> {
        match stage {
            0 => Some(Entity::Listings),
            1 => (INITIAL_CYCLES > 0).then_some(Entity::Cycle(0)),
            2 => (l.implicit > 0).then_some(Entity::Implicit(0)),
            3 => (l.originated > 0).then_some(Entity::Originated(0)),
            4 => (l.big_maps > 0).then_some(Entity::BigMap(0)),
            5 => (l.commitments > 0).then_some(Entity::Commitment(0)),
            _ => None,
        }
    };
    let from_stage = |stage: u8| (stage..=6).find_map(first_of);
    match cur {
        Entity::Globals => from_stage(0),
        Entity::Listings => from_stage(1),
        Entity::Cycle(c) if c + 1 < INITIAL_CYCLES => Some(Entity::Cycle(c + 1)),
        Entity::Cycle(_) => from_stage(2),
        Entity::Implicit(a) if a + 1 < l.implicit => Some(Entity::Implicit(a + 1)),
        Entity::Implicit(_) => from_stage(3),
        Entity::Originated(o) if o + 1 < l.originated => Some(Entity::Originated(o + 1)),
        Entity::Originated(_) => from_stage(4),
        Entity::BigMap(b) if l.entries(b) > 0 => Some(Entity::Entry(b, 0)),
        Entity::Entry(b, i) if i + 1 < l.entries(b) => Some(Entity::Entry(b, i + 1)),
        Entity::BigMap(b) | Entity::Entry(b, _) if b + 1 < l.big_maps => Some(Entity::BigMap(b + 1)),
        Entity::BigMap(_) | Entity::Entry(..) => from_stage(5),
        Entity::Commitment(k) if k + 1 < l.commitments => Some(Entity::Commitment(k + 1)),
        Entity::Commitment(_) | Entity::Snapshot(_) => None,
    }
}

/// The deterministic initial state of a profile: `(path, value)` pairs in a
/// fixed order, produced one entity at a time (O(1) memory however many
/// values are asked for). Returned by [`crate::initial_state`].
#[derive(Clone)]
pub struct InitialStateIter {
    layout: Layout,
    cursor: EntityCursor,
    remaining: u64,
    pending: Vec<(Path, Vec<u8>)>,
    leaves: Vec<(u32, Vec<u8>)>,
    pb: PathBuf,
}

impl InitialStateIter {
    pub(crate) fn new(seed: u64, values: u64) -> Self {
        InitialStateIter {
            layout: Layout::new(seed, values),
            cursor: EntityCursor::new(),
            remaining: values,
            pending: Vec::new(),
            leaves: Vec::new(),
            pb: PathBuf::default(),
        }
    }

    fn refill(&mut self) -> bool {
        while let Some(e) = self.cursor.advance(&self.layout) {
            self.layout.initial_leaves(e, &mut self.leaves);
            if self.leaves.is_empty() {
                continue;
            }
            self.layout.entity_path(e, &mut self.pb);
            let base = self.pb.len();
            // Stored reversed so that `pop` yields field order.
            for (f, v) in self.leaves.drain(..).rev() {
                self.pb.truncate(base);
                self.layout.push_field(e, f, &mut self.pb);
                self.pending.push((self.pb.to_path(), v));
            }
            return true;
        }
        false
    }
}

impl Iterator for InitialStateIter {
    type Item = (Path, Vec<u8>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        if self.pending.is_empty() && !self.refill() {
            return None;
        }
        self.remaining -= 1;
        self.pending.pop()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

/// Value lengths of the initial state, in stream order, without building
/// paths (used by statistics).
pub(crate) fn initial_value_lengths(seed: u64, values: u64, mut f: impl FnMut(u64)) {
    let layout = Layout::new(seed, values);
    let mut cursor = EntityCursor::new();
    let mut remaining = values;
    let mut leaves = Vec::new();
    while let Some(e) = cursor.advance(&layout) {
        layout.initial_leaves(e, &mut leaves);
        for (_, v) in &leaves {
            if remaining == 0 {
                return;
            }
            remaining -= 1;
            f(v.len() as u64);
        }
    }
}
