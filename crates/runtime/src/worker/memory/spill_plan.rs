//! The ledger's spilling decisions: what the thresholds compare (accounted bytes and the
//! memory monitor's unmanaged ones), which chunks go to disk when above them, least recently
//! used first, and what becomes of a chunk once its spill file is written.

use super::{Committed, Key, Ledger, Place};

impl Ledger {
    /// What the thresholds compare: the accounted bytes and the unmanaged ones.
    pub(super) fn occupied(&self) -> u64 {
        self.used() + self.stats.unmanaged_bytes
    }

    /// The monitor's latest share of unaccounted resident bytes. Returns the chunks to spill
    /// when that puts the worker above `worker.memory.spill`.
    pub fn observed_unmanaged(&mut self, bytes: u64) -> Vec<(Key, u64)> {
        self.stats.unmanaged_bytes = bytes;
        self.spill_over_threshold()
    }

    /// True when the worker is above its spill threshold, unmanaged bytes included.
    pub fn above_spill(&self) -> bool {
        self.limit > 0 && self.occupied() > self.spill_at
    }

    /// Chunks to spill so that accounted bytes plus `extra` come down to `target`: unpinned
    /// chunks in memory, least recently used first, those no queued subtask wants before the
    /// others. They are marked spilling.
    pub(super) fn plan_spill(&mut self, target: u64, extra: u64) -> Vec<(Key, u64)> {
        let mut over = (self.occupied() + extra).saturating_sub(target);
        if over == 0 {
            return Vec::new();
        }
        let mut candidates: Vec<(bool, u64, Key, u64)> = self
            .entries
            .iter()
            .filter(|(_, e)| e.place == Place::Memory && e.pins == 0)
            .map(|(k, e)| (e.wants > 0, e.tick, *k, e.bytes))
            .collect();
        // Unwanted before wanted, each least recently used first.
        candidates.sort_unstable();
        let mut chosen = Vec::new();
        for (_, _, key, bytes) in candidates {
            if over == 0 {
                break;
            }
            over = over.saturating_sub(bytes);
            chosen.push((key, bytes));
        }
        for (key, _) in &chosen {
            let e = self.entries.get_mut(key).expect("chosen from entries");
            e.place = Place::Spilling;
        }
        chosen
    }

    /// Chunks to spill after outputs were stored, when above `worker.memory.spill`.
    pub fn spill_over_threshold(&mut self) -> Vec<(Key, u64)> {
        if !self.above_spill() {
            return Vec::new();
        }
        self.plan_spill(self.spill_at, 0)
    }

    /// A spill was written (`ok`) or failed.
    pub fn commit_spill(&mut self, key: Key, ok: bool) -> Committed {
        let Some(e) = self.entries.get_mut(&key) else {
            return Committed::Discard; // released while being written
        };
        if e.place != Place::Spilling {
            return Committed::Discard;
        }
        if !ok || e.pins > 0 {
            e.place = Place::Memory;
            return Committed::Discard;
        }
        e.place = Place::Disk;
        self.stats.memory_bytes -= e.bytes;
        self.stats.spilled_bytes += e.bytes;
        self.stats.spilled_chunks += 1;
        self.stats.spills += 1;
        self.stats.spilled_bytes_total += e.bytes;
        Committed::OnDisk
    }
}
