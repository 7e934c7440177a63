//! What the dashboard plots over time, kept by the supervisor in bounded rings: the task
//! stream (every subtask run, [`task_stream`]) and each worker's memory ([`memory`]).
//!
//! Both are fed by the heartbeats workers send anyway: each worker link records into one
//! shared [`ClusterHistory`] under a short lock (no actor message, nothing on the
//! scheduler's path), and the web routes read copies of it. Times are the supervisor's own:
//! a worker reports its spans as "started so long before this heartbeat", so no two clocks
//! need to agree. Seconds in the views count from when the supervisor started (`epoch_unix`
//! says when that was).

pub mod memory;
pub mod task_stream;

use crate::config::WebConfig;
use crate::protocol::task_stream::StreamReport;
use crate::protocol::MemoryStats;
use ares_core::ids::WorkerId;
use memory::MemoryHistory;
use serde::Serialize;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use task_stream::{StreamEntry, TaskStreamRing};

struct Inner {
    stream: TaskStreamRing,
    memory: MemoryHistory,
    /// Spans workers reported as dropped (over their per-heartbeat capacity).
    dropped_by_workers: u64,
    last_prune_us: u64,
}

impl Inner {
    /// A worker's spans (a heartbeat's or a piece of them) arrived at `now`.
    fn push_spans(&mut self, now: u64, worker: WorkerId, stream: StreamReport) {
        self.dropped_by_workers = self.dropped_by_workers.saturating_add(stream.dropped);
        self.stream.push(now, worker, stream.now_us, stream.spans);
    }
}

/// The shared history: cheap to clone (one per worker link, one for the web API).
#[derive(Clone)]
pub struct ClusterHistory {
    inner: Arc<Mutex<Inner>>,
    epoch: Instant,
    epoch_unix: f64,
}

fn secs(us: u64) -> f64 {
    us as f64 / 1e6
}

impl ClusterHistory {
    pub fn new(web: &WebConfig, heartbeat_ms: u64) -> Self {
        let samples = MemoryHistory::samples_for(web.history_seconds, heartbeat_ms);
        let epoch_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        Self {
            inner: Arc::new(Mutex::new(Inner {
                stream: TaskStreamRing::new(web.task_stream_capacity),
                memory: MemoryHistory::new(web.history_seconds, samples),
                dropped_by_workers: 0,
                last_prune_us: 0,
            })),
            epoch: Instant::now(),
            epoch_unix,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now_us(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// A heartbeat of `worker` arrived: its memory sample and the subtasks it ran.
    pub fn record(&self, worker: WorkerId, memory: &MemoryStats, stream: StreamReport) {
        let mut inner = self.lock();
        // Read under the lock: arrival times only grow along the ring.
        let now = self.now_us();
        let thresholds = (stream.spill_at, stream.pause_at);
        inner.memory.record(worker, now, memory, thresholds);
        if now.saturating_sub(inner.last_prune_us) > 1_000_000 {
            inner.memory.prune(now);
            inner.last_prune_us = now;
        }
        inner.push_spans(now, worker, stream);
    }

    /// A piece of `worker`'s spans sent between two heartbeats.
    pub fn record_spans(&self, worker: WorkerId, stream: StreamReport) {
        let mut inner = self.lock();
        let now = self.now_us();
        inner.push_spans(now, worker, stream);
    }

    /// The runs that arrived after `since` seconds (all with `None`), at most `limit`.
    pub fn task_stream(&self, since: Option<f64>, limit: usize) -> TaskStreamView {
        let since_us = since.map(|s| (s.max(0.0) * 1e6) as u64);
        let inner = self.lock();
        let now = self.now_us();
        let entries = inner.stream.since(since_us, limit);
        TaskStreamView {
            now: secs(now),
            epoch_unix: self.epoch_unix,
            capacity: inner.stream.capacity(),
            recorded: inner.stream.recorded,
            overwritten: inner.stream.overwritten,
            dropped_by_workers: inner.dropped_by_workers,
            entries: entries.iter().map(EntryView::of).collect(),
        }
    }

    pub fn memory_history(&self) -> MemoryHistoryView {
        let mut inner = self.lock();
        let now = self.now_us();
        inner.memory.prune(now);
        let workers = inner
            .memory
            .workers()
            .map(|(id, w)| {
                let col = |f: fn(&memory::Sample) -> u64| w.samples.iter().map(f).collect();
                WorkerMemoryView {
                    worker: id.to_string(),
                    limit: w.limit,
                    spill_at: w.spill_at,
                    pause_at: w.pause_at,
                    times: w.samples.iter().map(|s| secs(s.t_us)).collect(),
                    memory: col(|s| s.memory),
                    reserved: col(|s| s.reserved),
                    spilled: col(|s| s.spilled),
                    unmanaged: col(|s| s.unmanaged),
                }
            })
            .collect();
        MemoryHistoryView {
            now: secs(now),
            epoch_unix: self.epoch_unix,
            workers,
        }
    }
}

/// `GET /api/cluster/task_stream`.
#[derive(Debug, Serialize)]
pub struct TaskStreamView {
    /// The supervisor's time of this answer: pass it as the next `since`.
    pub now: f64,
    pub epoch_unix: f64,
    pub capacity: usize,
    /// Runs ever recorded, overwritten in the ring since, dropped by workers.
    pub recorded: u64,
    pub overwritten: u64,
    pub dropped_by_workers: u64,
    pub entries: Vec<EntryView>,
}

#[derive(Debug, Serialize)]
pub struct EntryView {
    pub worker: String,
    pub slot: u32,
    pub task: u32,
    pub subtask: u32,
    pub depth: u32,
    pub op: &'static str,
    pub family: &'static str,
    pub start: f64,
    pub end: f64,
    pub status: &'static str,
    pub fetch: f64,
    pub bytes_in: u64,
    pub bytes_out: u64,
}

impl EntryView {
    fn of(e: &StreamEntry) -> Self {
        EntryView {
            worker: e.worker.to_string(),
            slot: e.slot,
            task: e.task.0,
            subtask: e.subtask.0,
            depth: e.depth,
            op: e.op.name(),
            family: ares_core::ops::registry::family_of(e.op).name(),
            start: secs(e.start_us),
            end: secs(e.end_us),
            status: e.status.name(),
            fetch: secs(e.fetch_us),
            bytes_in: e.bytes_in,
            bytes_out: e.bytes_out,
        }
    }
}

/// `GET /api/cluster/memory_history`.
#[derive(Debug, Serialize)]
pub struct MemoryHistoryView {
    pub now: f64,
    pub epoch_unix: f64,
    pub workers: Vec<WorkerMemoryView>,
}

#[derive(Debug, Serialize)]
pub struct WorkerMemoryView {
    pub worker: String,
    /// Bytes; 0 = no limit (then no thresholds either).
    pub limit: u64,
    pub spill_at: u64,
    pub pause_at: u64,
    /// Seconds of each sample, and the bytes at each.
    pub times: Vec<f64>,
    pub memory: Vec<u64>,
    pub reserved: Vec<u64>,
    pub spilled: Vec<u64>,
    pub unmanaged: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::task_stream::{PackedSpans, SpanStatus, SubtaskSpan};
    use ares_core::ids::{SubtaskIdx, TaskId};
    use ares_core::ops::Op;

    /// A report sent at 10 ms on the worker's clock, of a span that started `ago_us` before.
    fn report(subtask: u32, ago_us: u64) -> StreamReport {
        let spans = PackedSpans::of(&[SubtaskSpan {
            task: TaskId(3),
            subtask: SubtaskIdx(subtask),
            slot: 1,
            depth: 0,
            op: Op::Rand,
            status: SpanStatus::Succeeded,
            start_us: 10_000 - ago_us,
            run_us: 100,
            fetch_us: 0,
            bytes_in: 0,
            bytes_out: 64,
        }]);
        StreamReport {
            spans,
            now_us: 10_000,
            dropped: 1,
            spill_at: 60,
            pause_at: 80,
        }
    }

    #[test]
    fn spans_land_on_the_supervisors_clock_and_since_is_incremental() {
        let h = ClusterHistory::new(&WebConfig::default(), 1000);
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.record(WorkerId(0), &MemoryStats::default(), report(0, 1000));
        let first = h.task_stream(None, usize::MAX);
        assert_eq!(first.entries.len(), 1);
        let e = &first.entries[0];
        assert!(e.start < e.end && e.end <= first.now, "{e:?} {}", first.now);
        assert_eq!(
            (e.op, e.family, e.status),
            ("rand", "creation", "succeeded")
        );
        h.record(WorkerId(1), &MemoryStats::default(), report(1, 0));
        let next = h.task_stream(Some(first.now), usize::MAX);
        let got: Vec<(String, u32)> = (next.entries.iter())
            .map(|e| (e.worker.clone(), e.subtask))
            .collect();
        assert_eq!(got, vec![("w1".to_string(), 1)]);
        assert_eq!(next.dropped_by_workers, 2);
        let mem = h.memory_history();
        assert_eq!(mem.workers.len(), 2);
        assert_eq!((mem.workers[0].spill_at, mem.workers[0].pause_at), (60, 80));
    }
}
