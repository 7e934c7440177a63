//! A worker's memory accounting, free of files, locks and threads: which chunks are in memory
//! or on disk, how recently each was used, which ones running subtasks pin and queued ones
//! want, and how many bytes running subtasks reserved before they ran.
//!
//! Accounted bytes = chunks in memory + reservations. A subtask reserves its projection
//! ([`projected_bytes`], from shapes and dtypes before it runs) less the inputs already in
//! memory here. It starts only when that fits under the limit and the worker is at most at
//! the pause threshold. Otherwise, while other subtasks run, it waits (a pause, when above
//! the threshold): each subtask that ends spills least recently used chunks down to the
//! spill threshold, chunks no running subtask pins, those no queued subtask wants first.
//! With nothing running it spills what it needs itself and then starts: the supervisor
//! refused every subtask whose projection exceeds the limit, so it fits once everything
//! unpinned is on disk. [`super::storage`] is the shell doing the I/O.

use ares_core::ids::{ChunkIdx, TaskId};
use rustc_hash::FxHashMap;

pub use crate::footprint::{
    check_fits, chunk_bytes, human, local_inputs, projected_bytes, run_bytes,
};

pub type Key = (TaskId, ChunkIdx);

mod spill_plan;
mod transit;
pub use crate::protocol::MemoryStats;
pub use transit::FetchRoom;

/// Chunks smaller than this are counted in the bytes held but get no entry: a spill file
/// would cost more than it frees, and an entry per tiny chunk (a table probe on every store
/// and release) was most of a worker's time on trivial subtasks.
pub const UNTRACKED_BELOW: u64 = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Memory,
    /// Being written: still in memory (and counted there) until the write is committed.
    Spilling,
    Disk,
}

#[derive(Debug)]
struct Entry {
    bytes: u64,
    tick: u64,
    place: Place,
    /// Running subtasks reading it: never spilled.
    pins: u32,
    /// Queued subtasks reading it: spilled only after every unwanted chunk.
    wants: u32,
    /// The lease that reserved its load from disk.
    load_lease: Option<LeaseId>,
}

/// One running subtask's reservation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeaseId(std::num::NonZeroU64);

/// What a subtask about to start should do.
#[derive(Debug, PartialEq, Eq)]
pub enum Admit {
    /// Start under this lease (its bytes reserved).
    Go(LeaseId),
    /// Write these chunks to disk (they are marked spilling), then ask again.
    Spill(Vec<(Key, u64)>),
    /// Wait for a running subtask (or a spill in progress) to finish, then ask again.
    Wait,
}

/// What to do with a chunk whose spill was written.
#[derive(Debug, PartialEq, Eq)]
pub enum Committed {
    /// Drop it from memory: it is on disk now.
    OnDisk,
    /// Keep it in memory and delete the file (pinned or released meanwhile, or the write failed).
    Discard,
}

#[derive(Debug, Default)]
pub struct Ledger {
    limit: u64,
    spill_at: u64,
    pause_at: u64,
    entries: FxHashMap<Key, Entry>,
    /// Last use is the entry's `tick`. The least recently used are found by sorting, only
    /// when something must spill: an ordered set updated on every store, touch and release
    /// cost every subtask, spilling or not, a third of the worker's time on trivial ones.
    tick: u64,
    running: usize,
    /// Bytes still reserved per running subtask.
    leases: FxHashMap<LeaseId, u64>,
    next_lease: u64,
    paused: bool,
    stats: MemoryStats,
}

impl Ledger {
    /// `limit` 0 = no limit; `spill` and `pause` are fractions of it.
    pub fn new(limit: u64, spill: f64, pause: f64) -> Self {
        Self {
            limit,
            spill_at: (limit as f64 * spill) as u64,
            pause_at: (limit as f64 * pause) as u64,
            stats: MemoryStats {
                limit,
                ..MemoryStats::default()
            },
            ..Self::default()
        }
    }

    pub fn stats(&self) -> MemoryStats {
        self.stats
    }

    /// Accounted bytes: chunks in memory, reservations and fetches.
    fn used(&self) -> u64 {
        self.stats.accounted()
    }

    fn note_peak(&mut self) {
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.used());
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// Takes up to `bytes` from a lease's reservation.
    fn take_reserved(&mut self, lease: Option<LeaseId>, bytes: u64) {
        if let Some(left) = lease.and_then(|l| self.leases.get_mut(&l)) {
            let moved = bytes.min(*left);
            *left -= moved;
            self.stats.reserved_bytes -= moved;
        }
    }

    /// A chunk under [`UNTRACKED_BELOW`] bytes was stored: counted, never spilled, no entry.
    pub fn stored_untracked(&mut self, bytes: u64, lease: Option<LeaseId>) {
        self.take_reserved(lease, bytes);
        self.stats.memory_bytes += bytes;
        self.note_peak();
    }

    /// A chunk stored with [`Ledger::stored_untracked`] was forgotten.
    pub fn removed_untracked(&mut self, bytes: u64) {
        self.stats.memory_bytes = self.stats.memory_bytes.saturating_sub(bytes);
    }

    /// A chunk was stored in memory, computed under `lease` (which reserved its bytes).
    /// Returns true when it replaced a chunk that had a file (see [`Ledger::removed`]).
    pub fn stored(&mut self, key: Key, bytes: u64, lease: Option<LeaseId>) -> bool {
        let tick = self.next_tick();
        let entry = Entry {
            bytes,
            tick,
            place: Place::Memory,
            pins: 0,
            wants: 0,
            load_lease: None,
        };
        // One probe of the table (it is large and cold: each probe is a cache miss).
        let had_file = match self.entries.entry(key) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(entry);
                false
            }
            std::collections::hash_map::Entry::Occupied(mut o) => {
                let old = o.insert(entry);
                Self::forget_place(&mut self.stats, &old);
                old.place != Place::Memory
            }
        };
        self.take_reserved(lease, bytes);
        self.stats.memory_bytes += bytes;
        self.note_peak();
        had_file
    }

    /// Takes a forgotten entry's bytes off the counts of where it was.
    fn forget_place(stats: &mut MemoryStats, e: &Entry) {
        match e.place {
            Place::Memory | Place::Spilling => stats.memory_bytes -= e.bytes,
            Place::Disk => {
                stats.spilled_bytes -= e.bytes;
                stats.spilled_chunks -= 1;
            }
        }
    }

    /// Marks a chunk used now.
    pub fn touch(&mut self, key: Key) {
        let tick = self.next_tick();
        if let Some(e) = self.entries.get_mut(&key) {
            e.tick = tick;
        }
    }

    /// Forgets a chunk; returns true when it had a file (on disk or being written).
    pub fn removed(&mut self, key: Key) -> bool {
        let Some(e) = self.entries.remove(&key) else {
            return false;
        };
        Self::forget_place(&mut self.stats, &e);
        e.place != Place::Memory
    }

    /// Forgets every chunk of a task in one pass; returns those that had a file.
    pub fn removed_task(&mut self, task: TaskId) -> Vec<Key> {
        let mut with_files = Vec::new();
        let stats = &mut self.stats;
        self.entries.retain(|k, e| {
            if k.0 != task {
                return true;
            }
            Self::forget_place(stats, e);
            if e.place != Place::Memory {
                with_files.push(*k);
            }
            false
        });
        with_files
    }

    /// The size of a chunk on disk.
    pub fn spilled_size(&self, key: Key) -> Option<u64> {
        self.entries
            .get(&key)
            .filter(|e| e.place == Place::Disk)
            .map(|e| e.bytes)
    }

    /// Chunks held (in memory or on disk).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Queued subtasks will read these chunks (`+1`), or no longer will (`-1`).
    pub fn want(&mut self, keys: &[Key], wanted: bool) {
        for k in keys {
            if let Some(e) = self.entries.get_mut(k) {
                e.wants = if wanted {
                    e.wants + 1
                } else {
                    e.wants.saturating_sub(1)
                };
            }
        }
    }

    /// Pins a subtask's local inputs before it asks to start (pins cost nothing).
    pub fn pin(&mut self, keys: &[Key]) {
        for k in keys {
            if let Some(e) = self.entries.get_mut(k) {
                e.pins += 1;
            }
        }
    }

    /// Undoes [`Ledger::pin`] for a subtask that did not start.
    pub fn unpin(&mut self, keys: &[Key]) {
        for k in keys {
            if let Some(e) = self.entries.get_mut(k) {
                e.pins = e.pins.saturating_sub(1);
            }
        }
    }

    /// A subtask reading `inputs` (already pinned) and needing `run_bytes` more asks to start;
    /// `transit` of the accounted bytes are its fetched inputs, which its lease takes over.
    pub fn admit(&mut self, inputs: &[Key], run_bytes: u64, transit: u64) -> Admit {
        let loads: u64 = inputs
            .iter()
            .filter_map(|k| self.entries.get(k))
            .filter(|e| e.place == Place::Disk && e.load_lease.is_none())
            .map(|e| e.bytes)
            .sum();
        let need = run_bytes + loads;
        let transit = transit.min(self.stats.transit_bytes);
        let used = self.occupied() - transit;
        let fits = self.limit == 0 || (used + need <= self.limit && used <= self.pause_at);
        if !fits {
            // Running subtasks spill down to the threshold when they end: wait for that.
            let spilling = self.entries.values().any(|e| e.place == Place::Spilling);
            if self.running > 0 || spilling {
                if !self.paused && used > self.pause_at {
                    self.paused = true;
                    self.stats.pauses += 1;
                }
                return Admit::Wait;
            }
            // Nothing runs: make the room now, as far as unpinned chunks allow.
            let target = self.pause_at.min(self.limit.saturating_sub(need)) + transit;
            let spill = self.plan_spill(target, 0);
            if !spill.is_empty() {
                return Admit::Spill(spill);
            }
        }
        self.paused = false;
        self.next_lease += 1;
        let lease = LeaseId(std::num::NonZeroU64::MIN.saturating_add(self.next_lease));
        for k in inputs {
            if let Some(e) = self.entries.get_mut(k) {
                if e.place == Place::Disk && e.load_lease.is_none() {
                    e.load_lease = Some(lease);
                }
            }
        }
        self.running += 1;
        self.stats.transit_bytes -= transit;
        self.leases.insert(lease, need);
        self.stats.reserved_bytes += need;
        self.note_peak();
        Admit::Go(lease)
    }

    /// A chunk was read back from disk into memory (its load taken from the reservation of
    /// the lease that reserved it); false when it was not on disk (loaded meanwhile).
    pub fn loaded(&mut self, key: Key) -> bool {
        let tick = self.next_tick();
        let Some(e) = self.entries.get_mut(&key) else {
            return false;
        };
        if e.place != Place::Disk {
            return false;
        }
        e.place = Place::Memory;
        e.tick = tick;
        let (bytes, lease) = (e.bytes, e.load_lease.take());
        self.stats.spilled_bytes -= bytes;
        self.stats.spilled_chunks -= 1;
        self.stats.unspills += 1;
        self.take_reserved(lease, bytes);
        self.stats.memory_bytes += bytes;
        self.note_peak();
        true
    }

    /// A subtask ended: what is left of its reservation returns and its inputs are unpinned.
    pub fn finished(&mut self, lease: LeaseId, inputs: &[Key]) {
        self.running = self.running.saturating_sub(1);
        let left = self.leases.remove(&lease).unwrap_or(0);
        self.stats.reserved_bytes -= left.min(self.stats.reserved_bytes);
        for k in inputs {
            if let Some(e) = self.entries.get_mut(k) {
                e.pins = e.pins.saturating_sub(1);
                if e.load_lease == Some(lease) {
                    e.load_lease = None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
