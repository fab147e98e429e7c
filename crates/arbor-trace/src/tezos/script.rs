//! What one block does to the context: the per-block reads of protocol
//! globals, then one script per manager operation (transfers, contract
//! calls touching big maps, reveals, delegations, originations,
//! activations), each reading before it writes as the protocol does.
//!
//! The constants below are the calibration against the Lima audit (see
//! `docs/WORKLOAD.md` for the figures they reproduce).

use super::ctx::Ctx;
use super::fields::*;
use super::layout::{Layout, HOT_ACCOUNTS};
use crate::error::Result;
use crate::rng::{Rng, Scatter, Zipf};
use rustc_hash::FxHashMap;

/// Mean manager operations per block: `contracts/global_counter` is read
/// once per operation, 2,121,152 times over 10,000 blocks (the Lima audit).
pub(crate) const MEAN_TRANSACTIONS: f64 = 212.0;
/// Probability that a block holds one bot's batch of calls to one contract
/// (the single block of the Lima audit is one such batch of 222 calls).
const P_BATCH: f64 = 0.4;
/// Share of contract calls that touch the three hot DEX big maps
/// (`total_bytes` read 614,589 times each over 10,000 blocks).
const P_DEX: f64 = 0.38;
/// Other hot big maps (3-9) and their per-call probabilities, from their
/// read counts over 10,000 blocks (e.g. 103258: 79,037 reads).
const HOT_BIG_MAP_P: [(u64, f64); 7] =
    [(3, 0.093), (4, 0.055), (5, 0.039), (6, 0.034), (7, 0.034), (8, 0.024), (9, 0.012)];
/// Probability that a big map update removes the entry.
const P_ENTRY_REMOVE: f64 = 0.06;
/// Probability that a big map update creates a new entry.
const P_ENTRY_NEW: f64 = 0.2;
/// Probability that a transfer goes to a new account.
const P_NEW_ACCOUNT: f64 = 0.03;
/// Probability that a transfer empties and deletes its source.
const P_DELETE_SOURCE: f64 = 0.004;
/// Hot originated contracts, reached as the first Zipf ranks.
const HOT_CONTRACTS: u64 = 5;
/// Accounts that lead batches (chosen uniformly).
const BOT_POOL: u64 = 500;
/// One batch in this many goes to a hot contract.
const BOT_CONTRACTS: u64 = 100;

/// The kinds of manager operation, with their shares.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Transfer,
    Call,
    Reveal,
    Delegation,
    Origination,
    Activation,
}

fn pick_kind(rng: &mut Rng) -> Kind {
    let u = rng.unit();
    match u {
        _ if u < 0.34 => Kind::Transfer,
        _ if u < 0.94 => Kind::Call,
        _ if u < 0.97 => Kind::Reveal,
        _ if u < 0.99 => Kind::Delegation,
        _ if u < 0.995 => Kind::Origination,
        _ => Kind::Activation,
    }
}

/// Pickers and counters that live across blocks.
pub(crate) struct Workload {
    accounts: Zipf,
    account_scatter: Scatter,
    contracts: Zipf,
    contract_scatter: Scatter,
    tail_big_maps: Zipf,
    big_map_scatter: Scatter,
    bots: Scatter,
    /// Accounts, contracts and big maps created so far.
    pub(crate) new_accounts: u64,
    new_contracts: u64,
    new_big_maps: u64,
    /// Entries created per big map.
    new_entries: FxHashMap<u64, u64>,
    next_commitment: u64,
    /// Contracts whose script was loaded in the current block.
    loaded: Vec<u64>,
}

impl Workload {
    /// Pickers for `layout`.
    pub(crate) fn new(l: &Layout) -> Self {
        let regular = l.implicit.max(1);
        let tail_contracts = l.originated.saturating_sub(HOT_CONTRACTS).max(1);
        let tail_maps = l.big_maps.saturating_sub(10).max(1);
        Workload {
            accounts: Zipf::new(regular, 0.5),
            account_scatter: Scatter::new(regular, l.seed ^ 0x11),
            contracts: Zipf::new(tail_contracts + HOT_CONTRACTS, 0.6),
            contract_scatter: Scatter::new(tail_contracts, l.seed ^ 0x22),
            tail_big_maps: Zipf::new(tail_maps, 0.7),
            big_map_scatter: Scatter::new(tail_maps, l.seed ^ 0x33),
            bots: Scatter::new(regular, l.seed ^ 0x44),
            new_accounts: 0,
            new_contracts: 0,
            new_big_maps: 0,
            new_entries: FxHashMap::default(),
            next_commitment: 0,
            loaded: Vec::new(),
        }
    }

    /// Forgets per-block caches.
    pub(crate) fn start_block(&mut self) {
        self.loaded.clear();
    }

    /// A source account: Zipf over existing accounts, sometimes a recently
    /// created one.
    fn account(&self, l: &Layout, rng: &mut Rng) -> u64 {
        if self.new_accounts > 0 && rng.chance(0.05) {
            let recent = self.new_accounts.min(1000);
            return l.implicit + self.new_accounts - 1 - rng.below(recent);
        }
        self.account_scatter.map(self.accounts.sample(rng))
    }

    /// A contract to call: hot ones first, then a scattered Zipf tail.
    fn contract(&self, l: &Layout, rng: &mut Rng) -> u64 {
        if self.new_contracts > 0 && rng.chance(0.02) {
            return l.originated + rng.below(self.new_contracts);
        }
        let r = self.contracts.sample(rng);
        if r < HOT_CONTRACTS || l.originated <= HOT_CONTRACTS {
            r.min(l.originated.saturating_sub(1))
        } else {
            HOT_CONTRACTS + self.contract_scatter.map(r - HOT_CONTRACTS)
        }
    }

    /// A big map outside the DEX triple.
    fn big_map(&self, l: &Layout, rng: &mut Rng) -> u64 {
        let mut u = rng.unit();
        for &(b, p) in &HOT_BIG_MAP_P {
            if u < p {
                return b;
            }
            u -= p;
        }
        if self.new_big_maps > 0 && rng.chance(0.02) {
            return l.big_maps + rng.below(self.new_big_maps);
        }
        10 + self.big_map_scatter.map(self.tail_big_maps.sample(rng))
    }

    /// An entry of big map `b`: an existing one (Zipf), or a new key.
    fn entry(&mut self, l: &Layout, b: u64, rng: &mut Rng) -> u64 {
        let n = l.entries(b);
        let created = self.new_entries.get(&b).copied().unwrap_or(0);
        if n == 0 || rng.chance(P_ENTRY_NEW) {
            self.new_entries.insert(b, created + 1);
            return n + created;
        }
        let z = Zipf::new(n, 0.9);
        Scatter::new(n, l.seed ^ b).map(z.sample(rng))
    }

    /// One manager operation. `batch` forces a call from `src` to `dest`.
    pub(crate) fn operation(&mut self, cx: &mut Ctx<'_>, batch: Option<(u64, u64)>) -> Result<()> {
        let l = cx.layout;
        if let Some((src, dest)) = batch {
            return self.call(cx, src, dest, 0.5);
        }
        let src = self.account(l, cx.rng);
        match pick_kind(cx.rng) {
            Kind::Transfer => self.transfer(cx, src),
            Kind::Call => {
                let dest = self.contract(l, cx.rng);
                self.call(cx, src, dest, P_DEX)
            }
            Kind::Reveal => {
                self.prologue(cx, src)?;
                cx.mem(Entity::Implicit(src), C_MANAGER)?;
                cx.write(Entity::Implicit(src), C_MANAGER).map(|_| ())
            }
            Kind::Delegation => {
                self.prologue(cx, src)?;
                cx.find(Entity::Implicit(src), C_DELEGATE)?;
                cx.write(Entity::Implicit(src), C_DELEGATE)?;
                let baker = l.baker(cx.rng.below(l.bakers));
                cx.update(Entity::Implicit(baker), C_STAKING).map(|_| ())
            }
            Kind::Origination => self.originate(cx, src),
            Kind::Activation => self.activate(cx),
        }
    }

    /// Checks and fees common to every manager operation.
    fn prologue(&mut self, cx: &mut Ctx<'_>, src: u64) -> Result<()> {
        let s = Entity::Implicit(src);
        cx.update(Entity::Globals, G_GLOBAL_COUNTER)?;
        cx.update(s, C_COUNTER)?;
        cx.find(s, C_MANAGER)?;
        self.debit(cx, src)
    }

    /// Balance debit of `src` and the delegate look-up it implies.
    fn debit(&mut self, cx: &mut Ctx<'_>, src: u64) -> Result<()> {
        let s = Entity::Implicit(src);
        cx.mem(s, C_BALANCE)?;
        cx.find(s, C_BALANCE)?;
        cx.find(s, C_BALANCE)?;
        cx.write(s, C_BALANCE)?;
        cx.find(s, C_DELEGATE).map(|_| ())
    }

    /// Balance credit of implicit account `dest`, allocating it if new.
    fn credit(&mut self, cx: &mut Ctx<'_>, dest: u64) -> Result<()> {
        let d = Entity::Implicit(dest);
        let exists = cx.mem(d, C_BALANCE)?;
        cx.find(d, C_BALANCE)?;
        cx.write(d, C_BALANCE)?;
        if exists {
            cx.find(d, C_DELEGATE).map(|_| ())
        } else {
            cx.write(d, C_COUNTER).map(|_| ())
        }
    }

    fn transfer(&mut self, cx: &mut Ctx<'_>, src: u64) -> Result<()> {
        let l = cx.layout;
        self.prologue(cx, src)?;
        self.debit(cx, src)?;
        let dest = if cx.rng.chance(P_NEW_ACCOUNT) {
            self.new_accounts += 1;
            l.implicit + self.new_accounts - 1
        } else {
            self.account(l, cx.rng)
        };
        self.credit(cx, dest)?;
        let deletable = src >= HOT_ACCOUNTS + l.bakers && src != dest;
        if deletable && cx.rng.chance(P_DELETE_SOURCE) {
            let s = Entity::Implicit(src);
            cx.mem_tree(s)?;
            cx.find_tree(s)?;
            cx.remove(s)?;
        }
        Ok(())
    }

    fn call(&mut self, cx: &mut Ctx<'_>, src: u64, dest: u64, p_dex: f64) -> Result<()> {
        let l = cx.layout;
        let c = Entity::Originated(dest);
        self.prologue(cx, src)?;
        self.debit(cx, src)?;
        cx.find(c, C_BALANCE)?;
        if !self.loaded.contains(&dest) {
            self.loaded.push(dest);
            cx.mem(c, C_STORAGE)?;
            cx.find(c, C_STORAGE)?;
        }
        cx.mem(c, C_USED_BYTES)?;
        cx.find(c, C_USED_BYTES)?;
        cx.find(c, C_USED_BYTES)?;
        cx.write(c, C_USED_BYTES)?;
        let storage = cx.write(c, C_STORAGE)?;
        cx.mem(c, C_LEN_STORAGE)?;
        cx.find(c, C_LEN_STORAGE)?;
        cx.write_len(c, C_LEN_STORAGE, storage)?;
        cx.update(c, C_PAID_BYTES)?;
        if cx.rng.chance(p_dex) {
            for b in 0..3 {
                cx.update(Entity::BigMap(b), BM_TOTAL_BYTES)?;
            }
            for b in 0..3 {
                self.entry_update(cx, b)?;
            }
            if cx.rng.chance(0.5) {
                let b = cx.rng.below(3);
                self.entry_update(cx, b)?;
            }
        } else {
            let b = self.big_map(l, cx.rng);
            cx.update(Entity::BigMap(b), BM_TOTAL_BYTES)?;
            let updates =
                2 + u64::from(cx.rng.chance(0.6)) + u64::from(cx.rng.chance(0.4)) + u64::from(cx.rng.chance(0.2));
            for _ in 0..updates {
                self.entry_update(cx, b)?;
            }
        }
        if cx.rng.chance(0.3) {
            let b = self.big_map(l, cx.rng);
            let i = self.entry(l, b, cx.rng);
            cx.mem(Entity::Entry(b, i), E_DATA)?;
            cx.find(Entity::Entry(b, i), E_DATA)?;
        }
        if cx.rng.chance(0.08) {
            let dest = self.account(l, cx.rng);
            self.credit(cx, dest)?;
        }
        Ok(())
    }

    /// Update, creation or removal of one entry of big map `b`. A new key
    /// is only tested with `mem` before its two writes (as when a token is
    /// minted); an existing one is read first.
    fn entry_update(&mut self, cx: &mut Ctx<'_>, b: u64) -> Result<()> {
        let i = self.entry(cx.layout, b, cx.rng);
        let e = Entity::Entry(b, i);
        let initial = i < cx.layout.entries(b);
        if initial && cx.rng.chance(P_ENTRY_REMOVE) {
            cx.mem_tree(e)?;
            cx.find_tree(e)?;
            return cx.remove(e);
        }
        if cx.mem(e, E_DATA)? {
            cx.find(e, E_DATA)?;
            if cx.rng.chance(0.5) {
                cx.mem(e, E_LEN)?;
            }
            cx.find(e, E_LEN)?;
        }
        let len = cx.write(e, E_DATA)?;
        cx.write_len(e, E_LEN, len)
    }

    /// A new contract (one `add_tree`) with a new big map.
    fn originate(&mut self, cx: &mut Ctx<'_>, src: u64) -> Result<()> {
        let l = cx.layout;
        self.prologue(cx, src)?;
        let c = Entity::Originated(l.originated + self.new_contracts);
        self.new_contracts += 1;
        cx.mem_tree(c)?;
        cx.add_tree(c, &ORIGINATED_FIELDS)?;
        cx.update(Entity::Globals, G_BIG_MAPS_NEXT)?;
        let m = Entity::BigMap(l.big_maps + self.new_big_maps);
        self.new_big_maps += 1;
        for f in 0..3 {
            cx.write(m, f)?;
        }
        self.debit(cx, src)
    }

    /// Activation of a fundraiser commitment into a new account.
    fn activate(&mut self, cx: &mut Ctx<'_>) -> Result<()> {
        let l = cx.layout;
        if self.next_commitment >= l.commitments {
            return self.transfer(cx, 0);
        }
        let k = Entity::Commitment(self.next_commitment);
        self.next_commitment += 1;
        cx.find_tree(k)?;
        cx.remove(k)?;
        let a = Entity::Implicit(l.implicit + self.new_accounts);
        self.new_accounts += 1;
        cx.write(a, C_BALANCE)?;
        cx.write(a, C_COUNTER).map(|_| ())
    }

    /// A bot's batch for this block, if any: `(source, contract, calls)`.
    pub(crate) fn batch(&self, l: &Layout, rng: &mut Rng, transactions: u64) -> Option<(u64, u64, u64)> {
        if !rng.chance(P_BATCH) {
            return None;
        }
        // Bots rotate: any one account or contract leads few batches, so no
        // contract path reaches the seed's 10,000-block top reads.
        let src = match rng.below(BOT_POOL.min(l.implicit.max(1))) {
            r if r < HOT_ACCOUNTS => r,
            r => self.bots.map(r),
        };
        let dest = match rng.below(BOT_CONTRACTS) {
            r if r < HOT_CONTRACTS => r.min(l.originated.saturating_sub(1)),
            _ => self.contract(l, rng),
        };
        let calls = (transactions as f64 * (0.3 + 0.7 * rng.unit())) as u64;
        Some((src, dest, calls))
    }
}

/// Reads and writes of protocol globals at the start and end of a block.
pub(crate) fn block_start(cx: &mut Ctx<'_>, cycle: u64) -> Result<()> {
    for g in [G_VERSION, G_CONSTANTS, G_CYCLE_ERAS] {
        cx.find(Entity::Globals, g)?;
    }
    for g in [G_ENDORSEMENT_BRANCH, G_GRAND_PARENT_BRANCH, G_FIRST_LEVEL, G_CURRENT_PERIOD] {
        cx.find(Entity::Globals, g)?;
    }
    let cy = Entity::Cycle(cycle);
    cx.find(cy, CY_RANDOM_SEED)?;
    cx.find(cy, CY_STAKE_DISTRIBUTION)?;
    if cx.rng.chance(0.62) {
        cx.find(cy, CY_RANDOM_SEED)?;
        cx.find(cy, CY_STAKE_DISTRIBUTION)?;
    }
    Ok(())
}

/// End of a block: the remaining global reads (4 per block in all for
/// version, constants, eras and branches), branch updates, a few directory
/// reads.
pub(crate) fn block_end(cx: &mut Ctx<'_>, cycle: u64, hot_tail: u64) -> Result<()> {
    for _ in 0..3 {
        for g in [G_VERSION, G_CONSTANTS, G_CYCLE_ERAS, G_ENDORSEMENT_BRANCH, G_GRAND_PARENT_BRANCH] {
            cx.find(Entity::Globals, g)?;
        }
    }
    cx.find(Entity::Globals, G_FIRST_LEVEL)?;
    cx.find(Entity::Globals, G_CURRENT_PERIOD)?;
    cx.update(Entity::Globals, G_PARTICIPATION_EMA)?;
    cx.update(Entity::Globals, G_LB_EMA)?;
    cx.write(Entity::Globals, G_ENDORSEMENT_BRANCH)?;
    cx.write(Entity::Globals, G_GRAND_PARENT_BRANCH)?;
    cx.fold(Entity::Originated(0), None)?;
    cx.list(Entity::Originated(hot_tail), Some(0), Some(10))?;
    cx.length(Entity::Cycle(cycle))
}
