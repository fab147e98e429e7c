//! Writing a tree's new nodes to the log, children before parents.

use std::time::Duration;

use arbor_core::{ChildKind, Hash};

use crate::error::Result;
use crate::pack::log::{GcView, LogWriter};
use crate::pack::record::{kind, put_change, put_entry, ChildRef, Name};
use crate::tree::{warm, Bindings, Dir, DirBody, IPtr, Inode, InodeBody, Lineage, Persisted, Ptr, Reading, Tree};
use arbor_core::leb128;

/// Counters of one commit's writes, and where its time went.
#[derive(Debug, Default, Clone, Copy)]
#[non_exhaustive]
pub struct WriteStats {
    /// Records written (objects, not counting the commit record).
    pub objects: u64,
    /// Values written inline in their parent's record.
    pub inlined: u64,
    /// Of the records written, those written as deltas of an earlier record.
    pub deltas: u64,
    /// Hashing the tree (its changed nodes), from the commit's start. When a helper thread
    /// hashes the tree's parts while the commit writes it (`tree::Parts`), the time until the
    /// helper is done: it overlaps `writing`.
    pub hashing: Duration,
    /// Encoding the changed nodes and the commit record and handing them to the file, from
    /// the commit's start (including the hashing the writer did itself, and its waits for a
    /// part the helper was finishing). For a tree handed over (`Store::commit_owned`) under
    /// `EveryCommit` or `Pipelined`, the last buffer of records is handed to the thread that
    /// writes and syncs it beside the working tree's eviction: its write is not in here.
    pub writing: Duration,
    /// Waiting for durability: the fdatasync of this commit (`EveryCommit`, or `Interval`
    /// when due), or under `Pipelined` the wait for the previous commit's sync plus starting
    /// this one's. For a tree handed over, the wait after the eviction for the records'
    /// write and (`EveryCommit`) the sync.
    pub syncing: Duration,
}

/// A reference to a child once it is on disk (or inline).
enum Written<'a> {
    Inline(&'a [u8]),
    At { offset: u64, hash: Hash, kind: ChildKind },
}

impl Written<'_> {
    /// The child as a record at `at` refers to it.
    fn as_ref(&self, at: u64) -> ChildRef<'_> {
        match self {
            Written::Inline(v) => ChildRef::Inline(v),
            Written::At { offset, hash, kind } => ChildRef::Ref { back: at - offset, hash: *hash, kind: *kind },
        }
    }
}

/// A delta's change as it is written: how it names its binding, and the binding's child
/// (None for a removal).
type Change<'s, 'p> = (Name<&'s [u8]>, Option<Written<'p>>);

/// Most changed bindings (or slots) a delta of a full record of `total` may carry.
///
/// Without deltas of deltas, a node that gets one more distinct change each time it is
/// written costs, per write, about `k / 2` bindings of delta plus `total / k` of the full
/// record rewritten every `k` writes: least at `k = √(2·total)`. With them, most writes are a
/// small delta of a level-1 delta, and a level-1 delta is written only when those outgrow
/// [`chain_limit`], so a longer one pays: on the tezos-mainnet bench (1,000 blocks) a limit of
/// `√(2·total)` appends 132.5 bytes per written value, `√(4·total)` 123.3, `√(8·total)` about
/// 121 at more time per block. A binding changed again and again (a balance, a counter) adds
/// nothing, so hot nodes stay deltas for good. Below 4 bindings a full record is as small.
fn delta_limit(total: usize) -> usize {
    if total < 4 {
        0
    } else {
        ((4 * total) as f64).sqrt() as usize
    }
}

/// Most changes a delta of a level-1 delta may carry, when the level-1 delta (or a new one
/// written instead) carries `changed`: the `√(2·total)` trade of [`delta_limit`], one level
/// up, with the level-1 delta in the role of the full record.
fn chain_limit(changed: usize) -> usize {
    ((2 * changed) as f64).sqrt() as usize
}

/// How a delta names the bindings it changes, in step order: a binding the record it is
/// written against held, by its position there (FORMAT.md 5.8), any other by its step.
///
/// The position of a changed step in that record is its position in the node now, less the
/// steps added before it and plus those removed before it: the changed steps are all the
/// node's differences from the record.
#[derive(Default)]
struct Positions {
    /// Changed steps so far the record lacked and the node holds.
    added: usize,
    /// Changed steps so far the record held and the node lacks.
    removed: usize,
}

impl Positions {
    /// The name of the change of `step`, next in step order: `held` whether the record held
    /// it, `found` where the node's bindings have it (or would).
    fn name<'s>(&mut self, step: &'s [u8], held: bool, found: std::result::Result<usize, usize>) -> Name<&'s [u8]> {
        let (before, now) = match found {
            Ok(i) => (i, true),
            Err(i) => (i, false),
        };
        match (held, now) {
            (true, false) => self.removed += 1,
            (false, true) => self.added += 1,
            _ => {}
        }
        let removed_before = self.removed - usize::from(held && !now);
        let added_before = self.added - usize::from(!held && now);
        match (before + removed_before).checked_sub(added_before) {
            Some(position) if held => Name::Base(position),
            Some(_) => Name::Step(step),
            None => {
                // The notes would contradict the node; naming the step is right whatever
                // the record held.
                debug_assert!(false, "{step:?}: more steps added before it than the node holds");
                Name::Step(step)
            }
        }
    }
}

/// What a changed node is written as.
enum Plan {
    /// Nothing: the node is the record at this place unchanged.
    Same(Persisted),
    /// A delta of the record at this place (a full record, or a level-1 delta).
    Delta(Persisted),
    /// A full record.
    Full,
}

/// Writes the in-memory parts of trees; nodes already in this store are referenced.
///
/// A node changed since it was read or written is appended as a delta of its last full
/// record when few of its bindings changed (FORMAT.md 5.8), else in full.
///
/// Nothing written goes into the object cache here: the store keeps the committed tree as
/// its working tree (`Store::checkout` of the last commit returns it), and nodes the working
/// tree lets go of are handed to the cache then (`tree::evict`).
pub(crate) struct Persister<'a> {
    pub w: &'a mut LogWriter,
    pub uid: u64,
    pub inline_max: usize,
    pub stats: WriteStats,
    /// What garbage collection dropped: nodes must not be written pointing there.
    pub gc: std::sync::Arc<GcView>,
    /// The floor of a collection under way (0 if none): pointers below it are noted.
    pub pending_floor: u64,
    /// Pointers below `pending_floor` written, for the collection to keep what they reach.
    pub below_floor: Vec<u64>,
    /// The writer's commit sequence number, stamped on every node written.
    pub seq: u32,
}

impl Persister<'_> {
    /// Writes the root of `tree` (a directory) if not written yet; returns its offset.
    pub fn root(&mut self, tree: &Tree) -> Result<u64> {
        match &tree.root {
            Ptr::Dir(d) => self.dir(d),
            Ptr::Disk(d) if d.kind == ChildKind::Node => self.kept(d.offset),
            _ => unreachable!("checked to be a directory before writing"),
        }
    }

    fn mine(&mut self, p: Option<&Persisted>) -> Result<Option<u64>> {
        p.filter(|p| p.store == self.uid).map(|p| self.kept(p.offset)).transpose()
    }

    /// Notes a pointer about to be written, for a collection under way.
    pub fn note(&mut self, offset: u64) {
        if offset < self.pending_floor {
            self.below_floor.push(offset);
        }
    }

    /// `offset`, if the record there survived garbage collection. A tree of a dropped commit
    /// held across a collection would otherwise be committed pointing at nothing.
    pub fn kept(&mut self, offset: u64) -> Result<u64> {
        let gc = &self.gc;
        if offset < gc.floor && !gc.archive && !gc.prefix.as_ref().is_some_and(|p| p.contains(offset)) {
            return Err(crate::error::Error::ObjectDropped { offset });
        }
        self.note(offset);
        Ok(offset)
    }

    /// What record a node with `lineage`, `total` bindings (or slots) and `changed` changes
    /// since its base is written as, given `mid_changed` changes since its mid (if any).
    fn plan(&mut self, lineage: &Lineage, changed: usize, mid_changed: usize, total: usize) -> Plan {
        let Some(base) = lineage.base.filter(|b| b.store == self.uid) else { return Plan::Full };
        // A kept level-1 delta keeps its base (garbage collection follows a delta's base).
        if let Some(mid) = lineage.mid.as_ref().filter(|_| mid_changed <= chain_limit(changed)) {
            if self.kept(mid.offset).is_ok() {
                let at = self.at(mid.offset, base.offset, 1);
                return if mid_changed == 0 { Plan::Same(at) } else { Plan::Delta(at) };
            }
        }
        if changed > delta_limit(total) || self.kept(base.offset).is_err() {
            return Plan::Full;
        }
        let at = self.at(base.offset, base.offset, 0);
        if changed == 0 {
            Plan::Same(at)
        } else {
            Plan::Delta(at)
        }
    }

    fn at(&self, offset: u64, full: u64, level: u8) -> Persisted {
        Persisted { store: self.uid, offset, full, seq: self.seq, level }
    }

    /// Where a record just appended at `offset` is: a full record, or a delta of `against`.
    fn written_at(&self, offset: u64, against: Option<Persisted>) -> Persisted {
        match against {
            None => self.at(offset, offset, 0),
            Some(a) => self.at(offset, a.full, a.level + 1),
        }
    }

    fn child<'p>(&mut self, ptr: &'p Ptr) -> Result<Written<'p>> {
        if let Some(bytes) = ptr.value_bytes().filter(|b| b.len() <= self.inline_max) {
            self.stats.inlined += 1;
            return Ok(Written::Inline(bytes));
        }
        match ptr {
            Ptr::Value(v) => {
                let offset = match self.mine(v.written())? {
                    Some(o) => o,
                    None => {
                        let o = self.contents(&v.bytes)?;
                        v.set_written(self.at(o, o, 0));
                        o
                    }
                };
                Ok(Written::At { offset, hash: *v.hash(), kind: ChildKind::Contents })
            }
            // Only with `inline_max` below `SMALL_MAX` (not the default): a small value has
            // no place to remember its record in, and is written again with each version of
            // its parent.
            Ptr::Small(v) => {
                Ok(Written::At { offset: self.contents(v.bytes())?, hash: *v.hash(), kind: ChildKind::Contents })
            }
            Ptr::Dir(d) => Ok(Written::At { offset: self.dir(d)?, hash: *d.hash(), kind: ChildKind::Node }),
            Ptr::Disk(d) => Ok(Written::At { offset: self.kept(d.offset)?, hash: d.hash, kind: d.kind }),
        }
    }

    /// Appends a CONTENTS record of `bytes` and returns its offset.
    fn contents(&mut self, bytes: &[u8]) -> Result<u64> {
        let offset = self.w.append(kind::CONTENTS, bytes)?;
        self.stats.objects += 1;
        Ok(offset)
    }

    /// Writes `d` (if not yet in this store) and returns its offset.
    pub fn dir(&mut self, d: &Dir) -> Result<u64> {
        if let Some(o) = self.mine(d.persisted().as_ref())? {
            return Ok(o);
        }
        let at = match &d.body {
            DirBody::Flat(entries) => self.bindings(kind::FLAT_DIR, None, entries, &d.lineage)?,
            DirBody::Large(root) => self.inode(root)?,
        };
        let _ = d.disk.set(at);
        Ok(at.offset)
    }

    /// Writes a FLAT_DIR or INODE_VALUES record (or a delta of one, or nothing when the node
    /// is its base unchanged); returns where it is.
    fn bindings(
        &mut self,
        full_kind: u8,
        depth: Option<u32>,
        entries: &Bindings,
        lineage: &Lineage,
    ) -> Result<Persisted> {
        let (changed, mid_changed) = lineage.step_changes();
        let (against, changes) = match self.plan(lineage, changed, mid_changed, entries.len()) {
            Plan::Same(at) => return Ok(at),
            Plan::Delta(against) => (Some(against), lineage.changed_steps(against.level == 1)),
            Plan::Full => (None, lineage.changed_steps(false)),
        };
        // Children first: all of them for a full record, the changed ones for a delta (the
        // others are its base's, written already), each named as the delta names it.
        let (children, changed) = match against {
            None => {
                warm(entries, Reading::Records);
                (entries.iter().map(|(_, p)| self.child(p).map(Some)).collect::<Result<_>>()?, Vec::new())
            }
            Some(_) => (Vec::new(), self.changed_children(entries, changes)?),
        };
        let at = self.w.pos();
        let body = &mut self.w.scratch;
        body.clear();
        if let Some(d) = depth {
            leb128::write_u64(body, u64::from(d));
        }
        let record_kind = match against {
            None => {
                leb128::write_u64(body, entries.len() as u64);
                for ((step, _), c) in entries.iter().zip(&children) {
                    let c = c.as_ref().expect("every child of a full record is written");
                    put_entry(body, step, &c.as_ref(at));
                }
                full_kind
            }
            Some(b) => {
                leb128::write_u64(body, at - b.offset);
                leb128::write_u64(body, entries.len() as u64);
                leb128::write_u64(body, changed.len() as u64);
                for (name, c) in &changed {
                    put_change(body, *name, c.as_ref().map(|c| c.as_ref(at)).as_ref());
                }
                self.stats.deltas += 1;
                if full_kind == kind::FLAT_DIR {
                    kind::FLAT_DIR_DELTA
                } else {
                    kind::INODE_VALUES_DELTA
                }
            }
        };
        self.stats.objects += 1;
        let offset = self.w.append_scratch(record_kind)?;
        Ok(self.written_at(offset, against))
    }

    /// Writes the children of a delta's changed bindings (`changes`, in step order, each with
    /// whether the record the delta is written against held it), each with the change's name.
    ///
    /// A function of its own, not inlined: writing recurses through [`Persister::bindings`]
    /// once per directory on a path, and this loop's locals in that frame overflowed the
    /// stack of a debug build on a tree at the deepest paths allowed (`tests/deep_trees.rs`).
    #[inline(never)]
    fn changed_children<'s, 'p>(
        &mut self,
        entries: &'p Bindings,
        changes: impl Iterator<Item = (&'s [u8], bool)> + Clone,
    ) -> Result<Vec<Change<'s, 'p>>> {
        let mut positions = Positions::default();
        let mut changed = Vec::with_capacity(changes.clone().count());
        for (step, held) in changes {
            let found = entries.search(step);
            let child = found.ok().map(|i| self.child(entries.child(i))).transpose()?;
            changed.push((positions.name(step, held, found), child));
        }
        Ok(changed)
    }

    /// Writes an inode (if not yet in this store); returns its offset.
    pub fn inode_offset(&mut self, i: &Inode) -> Result<u64> {
        if let Some(o) = self.mine(i.disk.get())? {
            return Ok(o);
        }
        Ok(self.inode(i)?.offset)
    }

    /// Writes an inode record (full or delta, or nothing when the inode is its base
    /// unchanged); returns where it is.
    fn inode(&mut self, i: &Inode) -> Result<Persisted> {
        let at = match &i.body {
            InodeBody::Values(entries) => self.bindings(kind::INODE_VALUES, Some(i.depth), entries, &i.lineage)?,
            InodeBody::Tree(slots) => {
                let mid_slots = i.lineage.mid.as_ref().map_or(0, |m| m.slots);
                let (since_base, since_mid) = (i.lineage.slots.count_ones(), mid_slots.count_ones());
                let (against, changed) =
                    match self.plan(&i.lineage, since_base as usize, since_mid as usize, slots.len()) {
                        Plan::Same(at) => {
                            let _ = i.disk.set(at);
                            return Ok(at);
                        }
                        Plan::Delta(against) if against.level == 1 => (Some(against), mid_slots),
                        Plan::Delta(against) => (Some(against), i.lineage.slots),
                        Plan::Full => (None, 0),
                    };
                // A full record lists the non-empty slots; a delta the changed ones, a slot
                // emptied since the base as back distance 0. Children are written first.
                let listed = match against {
                    Some(_) => changed,
                    None => slots.iter().enumerate().fold(0u64, |b, (n, s)| match s {
                        IPtr::Empty => b,
                        _ => b | (1 << n),
                    }),
                };
                let mut children = Vec::with_capacity(listed.count_ones() as usize);
                for (n, s) in slots.iter().enumerate().filter(|(n, _)| listed & (1 << n) != 0) {
                    children.push(match s {
                        IPtr::Empty => None,
                        IPtr::Mem(sub) => Some((self.inode_offset(sub)?, *sub.hash())),
                        IPtr::Disk { offset, hash } => Some((self.kept(*offset)?, *hash)),
                    });
                    debug_assert!(against.is_some() || children.last().is_some_and(Option::is_some), "slot {n}");
                }
                let at = self.w.pos();
                let body = &mut self.w.scratch;
                body.clear();
                leb128::write_u64(body, u64::from(i.depth));
                if let Some(b) = against {
                    leb128::write_u64(body, at - b.offset);
                }
                leb128::write_u64(body, i.count);
                leb128::write_u64(body, listed);
                for c in &children {
                    match c {
                        Some((offset, hash)) => {
                            leb128::write_u64(body, at - offset);
                            body.extend_from_slice(hash.as_bytes());
                        }
                        None => leb128::write_u64(body, 0),
                    }
                }
                self.stats.objects += 1;
                let k = if against.is_some() {
                    self.stats.deltas += 1;
                    kind::INODE_TREE_DELTA
                } else {
                    kind::INODE_TREE
                };
                let offset = self.w.append_scratch(k)?;
                self.written_at(offset, against)
            }
        };
        let _ = i.disk.set(at);
        Ok(at)
    }
}
