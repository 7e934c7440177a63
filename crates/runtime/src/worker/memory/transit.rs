//! The ledger's bytes in transit: the remote inputs of subtasks that fetch them or hold them
//! before starting (see [`super::state`] for who asks). They count in the accounted bytes
//! like a running subtask's reservation, so the worker never holds fetched data beyond its
//! limit: a fetch starts only when its projected bytes fit under the limit (and the worker is
//! at most at the pause threshold), and a subtask that starts takes its own transit bytes
//! into its lease ([`Ledger::admit`]) instead of reserving them twice.

use super::{Key, Ledger, Place};

/// What a subtask about to fetch should do.
#[derive(Debug, PartialEq, Eq)]
pub enum FetchRoom {
    /// Fetch: the bytes are counted.
    Granted,
    /// Write these chunks to disk (they are marked spilling), then ask again.
    Spill(Vec<(Key, u64)>),
    /// Ask again once a running subtask, a spill or another fetch freed room.
    Wait,
}

impl Ledger {
    /// Reserves `bytes` for a subtask's fetches. `alone`: no other subtask fetches or holds
    /// fetched inputs. When it does not fit and nothing runs, spills, or is fetched, the
    /// unpinned chunks go to disk first; with none left it is granted anyway (the supervisor
    /// refused every subtask whose projection exceeds the limit, so it fits then).
    pub fn reserve_transit(&mut self, bytes: u64, alone: bool) -> FetchRoom {
        let used = self.occupied();
        let fits = self.limit == 0 || (used + bytes <= self.limit && used <= self.pause_at);
        if !fits {
            let spilling = self.entries.values().any(|e| e.place == Place::Spilling);
            if !alone || self.running > 0 || spilling {
                return FetchRoom::Wait;
            }
            let target = self.pause_at.min(self.limit.saturating_sub(bytes));
            let spill = self.plan_spill(target, 0);
            if !spill.is_empty() {
                return FetchRoom::Spill(spill);
            }
        }
        self.stats.transit_bytes += bytes;
        self.note_peak();
        FetchRoom::Granted
    }

    /// Fetched bytes landed beyond their reservation.
    pub fn transit_grew(&mut self, bytes: u64) {
        self.stats.transit_bytes += bytes;
        self.note_peak();
    }

    /// Chunks of `bytes` in all arrived from a peer.
    pub fn note_fetched(&mut self, chunks: u64, bytes: u64) {
        self.stats.fetched_chunks_total += chunks;
        self.stats.fetched_bytes_total += bytes;
    }

    /// Transit bytes of a subtask that will not start.
    pub fn transit_released(&mut self, bytes: u64) {
        self.stats.transit_bytes = self.stats.transit_bytes.saturating_sub(bytes);
    }
}
