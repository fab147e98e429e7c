//! The order of a directory's entries in `list` and unordered `fold`, as Octez gives it
//! (`docs/ORDER.md`).
//!
//! Octez's answer depends on how Irmin holds the directory in memory, so each directory
//! carries the little that decides it (`Dir::updates`):
//! - written or read, and unchanged since (`Dir::persisted`): the stored form, walked inode
//!   by inode (sorted up to `entries` bindings, slot by slot above, whatever the hashing
//!   form);
//! - built in memory, or listed since it changed: a map, sorted;
//! - changed since it was written or read, and not listed since: a `fold` gives the stored
//!   entries no change touched, in stored order, then the changed steps still present,
//!   sorted; a `list` turns it into a sorted map for good.
//!
//! Nothing is computed on the read and write paths beyond noting, once per step, that a
//! binding changed; the order itself is computed only when asked for.

use std::sync::atomic::{AtomicBool, Ordering};

use arbor_core::order::{irmin_fold_order_after_updates, irmin_order, Update};

use super::bindings::Bindings;
use super::node::{Dir, DirBody, Entry, Ptr};
use super::ops::Ctx;
use crate::error::Result;

/// What changed in a directory since it was written or read (Irmin's pending updates on top
/// of the stored node).
#[derive(Debug, Default)]
pub(crate) struct Updates {
    /// Each step whose binding changed, as where it ends in `steps`, with whether the
    /// directory had the step when it was written or read, in the order of the changes. A
    /// step may come more than once (a value replaced twice); its first record is the one
    /// that counts.
    changed: Vec<(usize, bool)>,
    /// The steps of `changed`, end to end (a step held whole, `Step`, was 72 bytes).
    steps: Vec<u8>,
    /// Set by a `list`: Irmin then holds the directory as a sorted map, from then on.
    listed: AtomicBool,
}

impl Clone for Updates {
    fn clone(&self) -> Updates {
        Updates {
            changed: self.changed.clone(),
            steps: self.steps.clone(),
            listed: AtomicBool::new(self.listed.load(Ordering::Relaxed)),
        }
    }
}

impl Updates {
    /// Each change noted, in order: the step, and whether the directory had it.
    fn each(&self) -> impl Iterator<Item = (&[u8], bool)> {
        let starts = std::iter::once(0).chain(self.changed.iter().map(|&(end, _)| end));
        starts.zip(&self.changed).map(|(start, &(end, had))| (&self.steps[start..end], had))
    }

    /// The step of the last change noted.
    fn last(&self) -> Option<&[u8]> {
        let (end, _) = *self.changed.last()?;
        let start = self.changed.len().checked_sub(2).map_or(0, |i| self.changed[i].0);
        Some(&self.steps[start..end])
    }
}

/// How Irmin holds a directory, as far as the order of its entries goes.
enum Form<'a> {
    /// The stored node: inode order.
    Stored,
    /// A map: sorted.
    Sorted,
    /// The stored node with pending changes.
    Changed(&'a Updates),
}

impl Dir {
    /// Called before the directory changes: a written or read directory starts noting its
    /// changes; a listed one becomes a plain map (sorted, nothing more to note).
    pub(super) fn start_updates(&mut self) {
        if self.persisted().is_some() {
            match &mut self.updates {
                Some(u) => {
                    u.changed.clear();
                    u.steps.clear();
                    *u.listed.get_mut() = false;
                }
                None => self.updates = Some(Box::default()),
            }
        } else if self.updates.as_mut().is_some_and(|u| *u.listed.get_mut()) {
            self.updates = None;
        }
    }

    /// Notes that the binding of `step` changed; `had_it`: whether the directory had the
    /// step just before this change (the first record of a step gives its stored presence).
    pub(super) fn note_update(&mut self, step: &[u8], had_it: bool) {
        if let Some(u) = &mut self.updates {
            if !*u.listed.get_mut() && u.last() != Some(step) {
                room_for_one_more(&mut u.changed);
                u.steps.extend_from_slice(step);
                u.changed.push((u.steps.len(), had_it));
            }
        }
    }

    fn form(&self) -> Form<'_> {
        if self.persisted().is_some() {
            return Form::Stored;
        }
        match &self.updates {
            None => Form::Sorted,
            // Only changes that changed nothing: Irmin kept the stored node.
            Some(u) if u.changed.is_empty() => Form::Stored,
            Some(u) if u.listed.load(Ordering::Relaxed) => Form::Sorted,
            Some(u) => Form::Changed(u),
        }
    }
}

/// Whether a change to the binding holding `child` may be its first since its directory was
/// written or read. A directory below changed since then was noted when it changed; values
/// cannot tell (an inline value read back is as new as one just added), so their steps may
/// be noted more than once.
pub(super) fn may_be_first_change(child: &Ptr) -> bool {
    match child {
        Ptr::Dir(d) => d.persisted().is_some() || d.updates.as_ref().is_some_and(|u| u.changed.is_empty()),
        Ptr::Value(_) | Ptr::Small(_) | Ptr::Disk(_) => true,
    }
}

/// Whether a change below `dir` leaves its order's bookkeeping as it is: `dir` has changed
/// since it was written or read, that change is noted (so a change below it is not
/// `may_be_first_change`, and its parent notes nothing more), and it was not listed since
/// (`Dir::start_updates` would drop its updates).
pub(super) fn changes_already_noted(dir: &Dir) -> bool {
    dir.persisted().is_none()
        && dir.updates.as_ref().is_none_or(|u| !u.changed.is_empty() && !u.listed.load(Ordering::Relaxed))
}

/// Whether binding `new` where `old` is changes nothing, as Irmin judges it before noting an
/// update: the same node, equal contents, or subtrees whose known hashes are equal.
pub(super) fn same_child(old: &Ptr, new: &Ptr) -> bool {
    use arbor_core::ChildKind::{Contents, Node};
    match (old, new) {
        (Ptr::Value(_) | Ptr::Small(_), Ptr::Value(_) | Ptr::Small(_)) => {
            old.value_bytes().zip(new.value_bytes()).is_some_and(|(a, b)| arbor_core::toolbox::bytes::eq(a, b))
        }
        (Ptr::Disk(a), b @ (Ptr::Value(_) | Ptr::Small(_))) | (b @ (Ptr::Value(_) | Ptr::Small(_)), Ptr::Disk(a)) => {
            a.kind == Contents && a.hash == *b.hash()
        }
        (Ptr::Dir(a), Ptr::Dir(b)) => {
            std::sync::Arc::ptr_eq(a.node(), b.node()) || a.cached_hash().is_some_and(|h| Some(h) == b.cached_hash())
        }
        (Ptr::Disk(a), Ptr::Dir(b)) | (Ptr::Dir(b), Ptr::Disk(a)) => a.kind == Node && b.cached_hash() == Some(&a.hash),
        (Ptr::Disk(a), Ptr::Disk(b)) => a.kind == b.kind && a.hash == b.hash,
        _ => false,
    }
}

impl Ctx {
    /// Calls `f` on each binding of `dir` in the order Octez's `list` (`listing`) or
    /// `fold ~order:`Undefined` gives them, until `f` returns false. A `list` of a directory
    /// changed since it was written or read makes it a sorted map, as in Irmin.
    pub fn each_in_octez_order(
        &self,
        dir: &Dir,
        listing: bool,
        f: &mut dyn FnMut(&[u8], &Ptr) -> Result<bool>,
    ) -> Result<()> {
        match (dir.form(), &dir.body) {
            (Form::Changed(u), _) if listing => {
                u.listed.store(true, Ordering::Relaxed);
                self.each_sorted(dir, f)
            }
            (Form::Changed(u), _) => self.each_after_updates(dir, u, f),
            (Form::Sorted, _) => self.each_sorted(dir, f),
            // Hashed flat but stored as inodes above `entries` bindings.
            (Form::Stored, DirBody::Flat(entries)) if entries.len() > self.cfg.entries as usize => {
                let steps: Vec<&[u8]> = entries.iter().map(|(s, _)| s).collect();
                match irmin_order(self.cfg, &steps) {
                    Ok(order) => each_of(order.into_iter().map(|i| (entries.step(i), entries.child(i))), f),
                    // irmin-pack cannot store such a directory at all; sorted is as good as any.
                    Err(_) => self.each_sorted(dir, f),
                }
            }
            // Sorted up to `entries` bindings; above `stable_hash` the hashed inode tree is
            // the stored one.
            (Form::Stored, _) => self.each_entry(dir, f).map(drop),
        }
    }

    fn each_sorted(&self, dir: &Dir, f: &mut dyn FnMut(&[u8], &Ptr) -> Result<bool>) -> Result<()> {
        match &dir.body {
            DirBody::Flat(entries) => each_of(entries.iter(), f),
            DirBody::Large(_) => each_of(self.sorted_entries(dir)?.iter().map(|(s, p)| (&s[..], p)), f),
        }
    }

    fn sorted_entries(&self, dir: &Dir) -> Result<Vec<Entry>> {
        let mut all = Vec::with_capacity(dir.len() as usize);
        if let DirBody::Large(root) = &dir.body {
            self.collect(root, &mut all)?;
            all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        }
        Ok(all)
    }

    /// Irmin's fold of a stored node with pending changes: the stored bindings no change
    /// touched, in stored order, then the changed steps still present, sorted.
    fn each_after_updates(&self, dir: &Dir, u: &Updates, f: &mut dyn FnMut(&[u8], &Ptr) -> Result<bool>) -> Result<()> {
        let owned;
        let current: &Bindings = match &dir.body {
            DirBody::Flat(entries) => entries,
            DirBody::Large(_) => {
                owned = Bindings::from_sorted(self.sorted_entries(dir)?)?;
                &owned
            }
        };
        // The first record of each changed step (a stable sort keeps the records' order).
        let mut first: Vec<(&[u8], bool)> = u.each().collect();
        first.sort_by(|a, b| a.0.cmp(b.0));
        first.dedup_by(|later, kept| later.0 == kept.0);
        let changed = |s: &[u8]| first.binary_search_by(|(c, _)| (*c).cmp(s)).is_ok();
        // The steps the directory had when written or read.
        let mut stored: Vec<&[u8]> = current.iter().map(|(s, _)| s).filter(|s| !changed(s)).collect();
        stored.extend(first.iter().filter(|(_, had)| *had).map(|(s, _)| *s));
        let updates: Vec<Update<'_>> = first
            .iter()
            .map(|(s, _)| if current.search(s).is_ok() { Update::Add(s) } else { Update::Remove(s) })
            .collect();
        match irmin_fold_order_after_updates(self.cfg, &stored, &updates) {
            Ok(order) => each_of(
                order.into_iter().filter_map(|s| current.search(s).ok().map(|i| (current.step(i), current.child(i)))),
                f,
            ),
            // irmin-pack cannot store such a directory at all; sorted is as good as any.
            Err(_) => each_of(current.iter(), f),
        }
    }
}

fn each_of<'a>(
    entries: impl Iterator<Item = (&'a [u8], &'a Ptr)>,
    f: &mut dyn FnMut(&[u8], &Ptr) -> Result<bool>,
) -> Result<()> {
    for (s, p) in entries {
        if !f(s, p)? {
            break;
        }
    }
    Ok(())
}

/// Makes room for one more element in a list of a directory's updates, with room for one, then
/// two, then four. A `Vec` grows from empty to room for four at once: most directories a block
/// changes have one or two steps changed (an account's balance and counter), and with a step
/// noted 80 bytes, the lists of each changed directory (its lineage's then, and its updates')
/// took 640 bytes for one step. At 10M values those two lists were 15% of the
/// fresh pages the replay touched (`perf record -e page-faults -c 1 -g`).
fn room_for_one_more<T>(list: &mut Vec<T>) {
    if list.len() == list.capacity() && list.len() < 4 {
        list.reserve_exact(list.len().max(1));
    }
}
