//! The figures of a worker's memory that leave it: in its heartbeat to the supervisor (which
//! places and pauses by them), in `ares run --json` and on the metrics page.

use serde::{Deserialize, Serialize};

/// What a worker reports in its heartbeat (and `ares run --json` in `memory`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryStats {
    /// The limit in bytes (0 = none).
    pub limit: u64,
    /// Bytes of chunks in memory.
    pub memory_bytes: u64,
    /// Bytes reserved by running subtasks.
    pub reserved_bytes: u64,
    /// Bytes of remote inputs fetched, or reserved for fetching, by subtasks not yet started.
    pub transit_bytes: u64,
    /// Highest accounted bytes (memory + reserved + transit) so far.
    pub peak_bytes: u64,
    /// This worker's share of the process's resident bytes that the accounting does not see
    /// (above the process's baseline), sampled by [`super::monitor`] in a worker process: it
    /// counts toward the spill and pause thresholds. 0 where no monitor runs.
    pub unmanaged_bytes: u64,
    /// Bytes and chunks on disk now.
    pub spilled_bytes: u64,
    pub spilled_chunks: u64,
    /// Chunks written to disk and read back, in all, and the bytes of those written.
    pub spills: u64,
    pub spilled_bytes_total: u64,
    pub unspills: u64,
    /// Times the worker paused (stopped starting subtasks) above `worker.memory.pause`.
    pub pauses: u64,
    /// Bytes and chunks of inputs fetched from peers, in all: what placement did not keep
    /// where it was made.
    pub fetched_bytes_total: u64,
    pub fetched_chunks_total: u64,
}

impl MemoryStats {
    /// Accounted bytes: chunks in memory, reservations and fetches.
    pub fn accounted(&self) -> u64 {
        self.memory_bytes + self.reserved_bytes + self.transit_bytes
    }
}
