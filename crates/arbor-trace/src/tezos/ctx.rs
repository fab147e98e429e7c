//! Emits context operations for one block, with results computed from the
//! generator's state, and applies writes to that state.

use super::fields::{dir_shape, field_kind, Entity};
use super::layout::Layout;
use super::pathbuf::PathBuf;
use super::state::State;
use super::values::{make_value, ValueKind};
use crate::error::Result;
use crate::format::BlockEncoder;
use crate::rng::Rng;
use crate::types::{Digest, OpKind, TreeSummary};

/// Per-block operation emitter.
pub(crate) struct Ctx<'a> {
    pub(crate) layout: &'a Layout,
    pub(crate) state: &'a mut State,
    pub(crate) enc: &'a mut BlockEncoder,
    pub(crate) rng: &'a mut Rng,
    /// Operations emitted, by [`OpKind`] (in `OpKind::ALL` order).
    pub(crate) counts: &'a mut [u64; OpKind::ALL.len()],
    pb: PathBuf,
    /// The entity whose directory path `pb` starts with, and its length.
    cur: Option<(Entity, usize)>,
    value: Vec<u8>,
}

fn kind_index(k: OpKind) -> usize {
    OpKind::ALL.iter().position(|&x| x == k).unwrap_or(0)
}

impl<'a> Ctx<'a> {
    /// An emitter writing into `enc`.
    pub(crate) fn new(
        layout: &'a Layout,
        state: &'a mut State,
        enc: &'a mut BlockEncoder,
        rng: &'a mut Rng,
        counts: &'a mut [u64; OpKind::ALL.len()],
    ) -> Self {
        Ctx { layout, state, enc, rng, counts, pb: PathBuf::default(), cur: None, value: Vec::new() }
    }

    fn count(&mut self, k: OpKind) {
        self.counts[kind_index(k)] += 1;
    }

    /// Puts the directory path of `e` in `pb`, reusing it when the
    /// previous operation was on the same entity.
    fn dir(&mut self, e: Entity) {
        match self.cur {
            Some((c, base)) if c == e => self.pb.truncate(base),
            _ => {
                self.layout.entity_path(e, &mut self.pb);
                self.cur = Some((e, self.pb.len()));
            }
        }
    }

    fn leaf(&mut self, e: Entity, f: u32) {
        self.dir(e);
        self.layout.push_field(e, f, &mut self.pb);
    }

    /// `mem` of field `f` of `e`.
    pub(crate) fn mem(&mut self, e: Entity, f: u32) -> Result<bool> {
        let r = self.state.get(self.layout, e, f).is_some();
        self.leaf(e, f);
        self.enc.mem(&self.pb.slices()[..self.pb.len()], r)?;
        self.count(OpKind::Mem);
        Ok(r)
    }

    /// `find` of field `f` of `e`.
    pub(crate) fn find(&mut self, e: Entity, f: u32) -> Result<Option<Digest>> {
        let r = self.state.get(self.layout, e, f);
        self.leaf(e, f);
        self.enc.find(&self.pb.slices()[..self.pb.len()], r.as_ref())?;
        self.count(OpKind::Find);
        Ok(r)
    }

    /// `add` of the value in `self.value` to field `f` of `e`.
    fn add_current(&mut self, e: Entity, f: u32) -> Result<usize> {
        self.leaf(e, f);
        self.enc.add(&self.pb.slices()[..self.pb.len()], &self.value)?;
        self.state.set(self.layout, e, f, Digest::of(&self.value));
        self.count(OpKind::Add);
        Ok(self.value.len())
    }

    /// Writes a fresh value of the field's kind; returns its length.
    pub(crate) fn write(&mut self, e: Entity, f: u32) -> Result<usize> {
        make_value(field_kind(e, f), 0, self.rng, &mut self.value);
        self.add_current(e, f)
    }

    /// Writes the 4-byte length `len` to a `len` field.
    pub(crate) fn write_len(&mut self, e: Entity, f: u32, len: usize) -> Result<()> {
        make_value(ValueKind::Len4, len, self.rng, &mut self.value);
        self.add_current(e, f).map(|_| ())
    }

    /// `mem`, `find`, then a fresh value: the usual read-modify-write.
    pub(crate) fn update(&mut self, e: Entity, f: u32) -> Result<usize> {
        self.mem(e, f)?;
        self.find(e, f)?;
        self.write(e, f)
    }

    fn present(&mut self, e: Entity) -> Vec<u32> {
        self.state.fields(self.layout, e).iter().map(|(f, _)| *f).collect()
    }

    /// `mem_tree` of the directory of `e`.
    pub(crate) fn mem_tree(&mut self, e: Entity) -> Result<bool> {
        let r = !self.state.fields(self.layout, e).is_empty();
        self.dir(e);
        self.enc.mem_tree(&self.pb.slices()[..self.pb.len()], r)?;
        self.count(OpKind::MemTree);
        Ok(r)
    }

    /// `find_tree` of the directory of `e`.
    pub(crate) fn find_tree(&mut self, e: Entity) -> Result<Option<TreeSummary>> {
        let present = self.present(e);
        let r = if present.is_empty() {
            None
        } else {
            Some(match dir_shape(e, &present, None) {
                None => TreeSummary { is_value: true, children: 0 },
                Some((children, _)) => TreeSummary { is_value: false, children },
            })
        };
        self.dir(e);
        self.enc.find_tree(&self.pb.slices()[..self.pb.len()], r)?;
        self.count(OpKind::FindTree);
        Ok(r)
    }

    /// `list` of the directory of `e`.
    pub(crate) fn list(&mut self, e: Entity, offset: Option<u32>, length: Option<u32>) -> Result<()> {
        let present = self.present(e);
        let children = dir_shape(e, &present, None).map_or(0, |(c, _)| c);
        let after = children.saturating_sub(offset.map_or(0, u64::from));
        let r = after.min(length.map_or(u64::MAX, u64::from)) as u32;
        self.dir(e);
        self.enc.list(&self.pb.slices()[..self.pb.len()], offset, length, r)?;
        self.count(OpKind::List);
        Ok(())
    }

    /// `length` of the directory of `e`.
    pub(crate) fn length(&mut self, e: Entity) -> Result<()> {
        let present = self.present(e);
        let r = dir_shape(e, &present, None).map_or(0, |(c, _)| c);
        self.dir(e);
        self.enc.length(&self.pb.slices()[..self.pb.len()], r)?;
        self.count(OpKind::Length);
        Ok(())
    }

    /// `fold` of the directory of `e` down to `depth`.
    pub(crate) fn fold(&mut self, e: Entity, depth: Option<u32>) -> Result<()> {
        let present = self.present(e);
        let r = dir_shape(e, &present, depth).map_or(0, |(_, v)| v);
        self.dir(e);
        self.enc.fold(&self.pb.slices()[..self.pb.len()], depth, r)?;
        self.count(OpKind::Fold);
        Ok(())
    }

    /// `remove` of the directory of `e`.
    pub(crate) fn remove(&mut self, e: Entity) -> Result<()> {
        self.dir(e);
        self.enc.remove(&self.pb.slices()[..self.pb.len()])?;
        self.state.replace(e, Vec::new());
        self.count(OpKind::Remove);
        Ok(())
    }

    /// `add_tree` replacing the directory of `e` by fresh values for
    /// `fields` (in generation order: each `len` right after its sibling).
    pub(crate) fn add_tree(&mut self, e: Entity, fields: &[u32]) -> Result<()> {
        let mut leaves: Vec<(Vec<Vec<u8>>, Vec<u8>)> = Vec::with_capacity(fields.len());
        let mut digests = Vec::with_capacity(fields.len());
        let mut last_len = 0;
        for &f in fields {
            make_value(field_kind(e, f), last_len, self.rng, &mut self.value);
            last_len = self.value.len();
            self.dir(e);
            let base = self.pb.len();
            self.layout.push_field(e, f, &mut self.pb);
            leaves.push((self.pb.suffix(base), self.value.clone()));
            digests.push((f, Digest::of(&self.value)));
        }
        self.dir(e);
        self.enc.add_tree(&self.pb.slices()[..self.pb.len()], &leaves)?;
        self.state.replace(e, digests);
        self.count(OpKind::AddTree);
        Ok(())
    }
}
