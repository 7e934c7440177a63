//! Memory over time per worker: one sample per heartbeat (memory, reserved, spilled and
//! unmanaged bytes) for the last `web.history_seconds`, with the worker's limit and its
//! spill and pause thresholds as it last reported them.
//!
//! Bounded twice: by age, and by a count fixed from the config (the window over the
//! heartbeat interval, twice over), so a worker beating faster than configured shortens its
//! own history instead of growing the supervisor's. A worker that left keeps its history
//! until it ages out; at most [`MAX_WORKERS`] are tracked.

use crate::protocol::MemoryStats;
use ares_core::ids::WorkerId;
use std::collections::{BTreeMap, VecDeque};

/// Workers whose history is kept at once (live ones and those gone within the window).
pub const MAX_WORKERS: usize = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub t_us: u64,
    pub memory: u64,
    /// Reserved by running subtasks plus fetched for waiting ones.
    pub reserved: u64,
    pub spilled: u64,
    pub unmanaged: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerMemory {
    pub samples: VecDeque<Sample>,
    pub limit: u64,
    pub spill_at: u64,
    pub pause_at: u64,
}

#[derive(Debug)]
pub struct MemoryHistory {
    workers: BTreeMap<WorkerId, WorkerMemory>,
    window_us: u64,
    max_samples: usize,
}

impl MemoryHistory {
    /// `window_s` seconds kept, at most `max_samples` samples per worker.
    pub fn new(window_s: u64, max_samples: usize) -> Self {
        Self {
            workers: BTreeMap::new(),
            window_us: window_s.saturating_mul(1_000_000),
            max_samples,
        }
    }

    /// The samples to keep for a window of `window_s` seconds at one per `heartbeat_ms`.
    pub fn samples_for(window_s: u64, heartbeat_ms: u64) -> usize {
        let per_window = window_s.saturating_mul(1000) / heartbeat_ms.max(1);
        (per_window.saturating_mul(2).saturating_add(2)).min(1 << 20) as usize
    }

    pub fn record(&mut self, worker: WorkerId, t_us: u64, m: &MemoryStats, thresholds: (u64, u64)) {
        if self.max_samples == 0 {
            return;
        }
        if !self.workers.contains_key(&worker) && self.workers.len() >= MAX_WORKERS {
            self.prune(t_us);
            if self.workers.len() >= MAX_WORKERS {
                return;
            }
        }
        let w = self.workers.entry(worker).or_default();
        (w.limit, w.spill_at, w.pause_at) = (m.limit, thresholds.0, thresholds.1);
        if w.samples.len() >= self.max_samples {
            w.samples.pop_front();
        }
        w.samples.push_back(Sample {
            t_us,
            memory: m.memory_bytes,
            reserved: m.reserved_bytes.saturating_add(m.transit_bytes),
            spilled: m.spilled_bytes,
            unmanaged: m.unmanaged_bytes,
        });
        let oldest = t_us.saturating_sub(self.window_us);
        while w.samples.front().is_some_and(|s| s.t_us < oldest) {
            w.samples.pop_front();
        }
    }

    /// Drops the samples older than the window, and the workers left with none.
    pub fn prune(&mut self, now_us: u64) {
        let oldest = now_us.saturating_sub(self.window_us);
        self.workers.retain(|_, w| {
            while w.samples.front().is_some_and(|s| s.t_us < oldest) {
                w.samples.pop_front();
            }
            !w.samples.is_empty()
        });
    }

    pub fn workers(&self) -> impl Iterator<Item = (&WorkerId, &WorkerMemory)> {
        self.workers.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(memory: u64) -> MemoryStats {
        MemoryStats {
            limit: 1000,
            memory_bytes: memory,
            spilled_bytes: 7,
            unmanaged_bytes: 3,
            ..Default::default()
        }
    }

    #[test]
    fn keeps_the_window_and_the_thresholds() {
        let mut h = MemoryHistory::new(10, MemoryHistory::samples_for(10, 1000));
        for s in 0..30u64 {
            h.record(WorkerId(1), s * 1_000_000, &stats(s), (600, 800));
        }
        let (_, w) = h.workers().next().unwrap();
        let kept: Vec<u64> = w.samples.iter().map(|s| s.memory).collect();
        assert_eq!(kept, (19..30).collect::<Vec<_>>());
        assert_eq!((w.limit, w.spill_at, w.pause_at), (1000, 600, 800));
        assert_eq!((w.samples[0].spilled, w.samples[0].unmanaged), (7, 3));
    }

    #[test]
    fn a_fast_beating_worker_shortens_its_own_history() {
        let max = MemoryHistory::samples_for(10, 1000);
        let mut h = MemoryHistory::new(10, max);
        for s in 0..100_000u64 {
            h.record(WorkerId(1), s, &stats(s), (0, 0));
        }
        assert_eq!(h.workers().next().unwrap().1.samples.len(), max);
    }

    #[test]
    fn gone_workers_age_out_and_the_count_is_bounded() {
        let mut h = MemoryHistory::new(10, 100);
        h.record(WorkerId(1), 0, &stats(1), (0, 0));
        h.record(WorkerId(2), 20_000_000, &stats(1), (0, 0));
        h.prune(20_000_000);
        let ids: Vec<u32> = h.workers().map(|(w, _)| w.0).collect();
        assert_eq!(ids, vec![2]);
        for i in 0..(MAX_WORKERS as u32 + 10) {
            h.record(WorkerId(10 + i), 20_000_000, &stats(1), (0, 0));
        }
        assert_eq!(h.workers().count(), MAX_WORKERS);
    }
}
