//! The engine's trees as a [`ProofSource`]: directories and inodes shown exactly as stored
//! (which is how they are hashed), loaded through the store's cache as the walks need them.

use std::sync::Arc;

use arbor_core::proof::{ProofSource, SourceDir, SourceInode};
use arbor_core::{ChildKind, Hash};

use crate::error::{Error, Result};
use crate::tree::{Bindings, Ctx, DirBody, IPtr, Inode, InodeBody, Ptr};

/// A tree's nodes, seen through its context.
pub(super) struct EngineSource<'a> {
    pub ctx: &'a Ctx,
}

fn entries(e: &Bindings) -> Vec<(Vec<u8>, Ptr)> {
    e.iter().map(|(s, p)| (s.to_vec(), p.clone())).collect()
}

/// A walk reached a node the engine does not hold: a bug, never the caller's doing.
fn internal(what: &str) -> Error {
    Error::InvalidArgument(format!("proof source: {what}"))
}

impl EngineSource<'_> {
    fn load(&self, slot: &IPtr, depth: u32) -> Result<Arc<Inode>> {
        match slot {
            IPtr::Mem(i) => Ok(i.node().clone()),
            IPtr::Disk { offset, hash } => self.ctx.load_inode(*offset, hash, depth),
            IPtr::Empty => Err(internal("empty inode slot")),
        }
    }
}

impl ProofSource for EngineSource<'_> {
    type Node = Ptr;
    type Inode = IPtr;
    type Error = Error;

    fn kind(&self, node: &Ptr) -> ChildKind {
        node.kind()
    }

    fn hash(&self, node: &Ptr) -> Result<Hash> {
        Ok(*node.hash())
    }

    fn value(&self, node: &Ptr) -> Result<Vec<u8>> {
        let v = self.ctx.value_of(node)?.ok_or_else(|| internal("value expected"))?;
        Ok(v.bytes.to_vec())
    }

    fn dir(&self, node: &Ptr) -> Result<SourceDir<Ptr, IPtr>> {
        let d = self.ctx.dir_of(node)?.ok_or_else(|| internal("directory expected"))?;
        Ok(match &d.body {
            DirBody::Flat(e) => SourceDir::Flat(entries(e)),
            DirBody::Large(root) => SourceDir::Large(IPtr::mem(root.clone())),
        })
    }

    fn inode(&self, inode: &IPtr, depth: u32) -> Result<SourceInode<Ptr, IPtr>> {
        let i = self.load(inode, depth)?;
        Ok(match &i.body {
            InodeBody::Values(e) => SourceInode::Values(entries(e)),
            InodeBody::Tree(slots) => SourceInode::Tree {
                count: i.count,
                slots: slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| !matches!(s, IPtr::Empty))
                    .map(|(n, s)| (n as u32, s.clone()))
                    .collect(),
            },
        })
    }

    fn inode_hash(&self, inode: &IPtr, _depth: u32) -> Result<Hash> {
        inode.hash().copied().ok_or_else(|| internal("empty inode slot"))
    }
}
