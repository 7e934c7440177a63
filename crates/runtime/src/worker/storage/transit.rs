//! The store's side of fetched bytes in transit ([`super::super::memory`]'s `transit_bytes`):
//! the worker's core reserves a subtask's remote inputs here before fetching them, adds what
//! lands beyond the projection, and gives back the bytes of a subtask that will not start.
//! Kept apart from the store's chunk keeping, which it only shares the ledger with.

use super::super::memory::FetchRoom;
use super::Storage;
use std::sync::Arc;

impl Storage {
    /// Reserves `bytes` for a subtask's fetches (see [`super::state`]); false: not now. When
    /// the room must be made by spilling, the spill is written on a blocking thread and the
    /// caller asks again later.
    pub fn reserve_transit(self: &Arc<Self>, bytes: u64, alone: bool) -> bool {
        let planned = match self.ledger().reserve_transit(bytes, alone) {
            FetchRoom::Granted => return true,
            FetchRoom::Wait => return false,
            FetchRoom::Spill(planned) => planned,
        };
        let me = self.clone();
        std::thread::spawn(move || me.spill_planned(planned));
        false
    }

    /// Fetched bytes landed beyond their reservation.
    pub fn transit_grew(&self, bytes: u64) {
        self.ledger().transit_grew(bytes);
    }

    /// Chunks of `bytes` in all arrived from a peer (counted for the heartbeat).
    pub fn note_fetched(&self, chunks: u64, bytes: u64) {
        self.ledger().note_fetched(chunks, bytes);
    }

    /// Transit bytes of a subtask that will not start are given back.
    pub fn release_transit(&self, bytes: u64) {
        if bytes > 0 {
            self.ledger().transit_released(bytes);
            self.wake();
        }
    }
}
