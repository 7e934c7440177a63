//! The task stream's ring: the newest `web.task_stream_capacity` subtask runs, kept as the
//! packed records the heartbeats carried them in ([`PackedSpans`]), one batch per
//! heartbeat, in the order the heartbeats arrived.
//!
//! Recording a heartbeat is moving its byte string into the ring (no decoding on the thread
//! that also schedules); the dashboard's query decodes the batches it returns. Its memory is
//! bounded by the capacity alone, however many subtasks run (10^7 runs cost what 10^5 do):
//! the oldest batches go, the oldest records of a batch when only part of one must. `since`
//! finds the batches that arrived after a time by binary search: arrival times only grow
//! along the ring.

use crate::protocol::task_stream::{PackedSpans, SpanStatus};
use ares_core::ids::{SubtaskIdx, TaskId, WorkerId};
use ares_core::ops::Op;
use std::collections::VecDeque;

/// One subtask run on the supervisor's clock (microseconds since the history began).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamEntry {
    /// When the heartbeat carrying it arrived: what `since` compares.
    pub received_us: u64,
    pub start_us: u64,
    pub end_us: u64,
    pub fetch_us: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub worker: WorkerId,
    pub slot: u32,
    pub task: TaskId,
    pub subtask: SubtaskIdx,
    pub depth: u32,
    pub op: Op,
    pub status: SpanStatus,
}

/// The spans of one heartbeat.
#[derive(Debug)]
struct Batch {
    received_us: u64,
    worker: WorkerId,
    /// The worker's clock when it sent the heartbeat (its spans' times are on that clock).
    sent_us: u64,
    spans: PackedSpans,
}

impl Batch {
    /// Its spans, placed on the supervisor's clock: a span that started `d` before the
    /// heartbeat was sent started `d` before it arrived.
    fn entries(&self) -> impl Iterator<Item = StreamEntry> + '_ {
        self.spans.iter().map(move |s| {
            let start_us =
                (self.received_us).saturating_sub(self.sent_us.saturating_sub(s.start_us));
            StreamEntry {
                received_us: self.received_us,
                start_us,
                end_us: start_us.saturating_add(s.run_us).min(self.received_us),
                fetch_us: s.fetch_us,
                bytes_in: s.bytes_in,
                bytes_out: s.bytes_out,
                worker: self.worker,
                slot: u32::from(s.slot),
                task: s.task,
                subtask: s.subtask,
                depth: s.depth,
                op: s.op,
                status: s.status,
            }
        })
    }
}

/// At most `capacity` runs; the oldest are dropped first.
#[derive(Debug)]
pub struct TaskStreamRing {
    batches: VecDeque<Batch>,
    /// Spans held over all batches (≤ capacity).
    held: usize,
    capacity: usize,
    /// Runs ever recorded, and those dropped since to keep the bound.
    pub recorded: u64,
    pub overwritten: u64,
}

impl TaskStreamRing {
    pub fn new(capacity: usize) -> Self {
        Self {
            batches: VecDeque::new(),
            held: 0,
            capacity,
            recorded: 0,
            overwritten: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.held
    }

    pub fn is_empty(&self) -> bool {
        self.held == 0
    }

    /// Adds a heartbeat's spans (arriving no earlier than the last), dropping the oldest
    /// runs past the capacity; a ring of capacity 0 keeps nothing.
    pub fn push(
        &mut self,
        received_us: u64,
        worker: WorkerId,
        sent_us: u64,
        mut spans: PackedSpans,
    ) {
        if self.capacity == 0 || spans.is_empty() {
            return;
        }
        let n = spans.len();
        self.recorded += n as u64;
        if n > self.capacity {
            spans.drop_front(n - self.capacity);
            self.overwritten += (n - self.capacity) as u64;
        }
        self.held += spans.len();
        self.batches.push_back(Batch {
            received_us,
            worker,
            sent_us,
            spans,
        });
        while self.held > self.capacity {
            let over = self.held - self.capacity;
            let oldest = self.batches.front_mut().expect("held > 0 means a batch");
            let len = oldest.spans.len();
            if len <= over {
                self.batches.pop_front();
                self.held -= len;
                self.overwritten += len as u64;
            } else {
                oldest.spans.drop_front(over);
                self.held -= over;
                self.overwritten += over as u64;
            }
        }
    }

    /// The entries that arrived after `since_us` (all with `None`), oldest first; at most
    /// `limit`, the newest of them. Only the batches returned are decoded.
    pub fn since(&self, since_us: Option<u64>, limit: usize) -> Vec<StreamEntry> {
        let first = since_us.map_or(0, |t| self.batches.partition_point(|b| b.received_us <= t));
        // Walk back from the newest batch until `limit` runs are covered.
        let (mut from, mut covered) = (self.batches.len(), 0usize);
        while from > first && covered < limit {
            from -= 1;
            covered += self.batches[from].spans.len();
        }
        let skip = covered.saturating_sub(limit);
        let mut out = Vec::with_capacity(covered.min(limit));
        out.extend(
            self.batches
                .range(from..)
                .flat_map(Batch::entries)
                .skip(skip),
        );
        out
    }

    /// Bytes the ring holds (its allocations), for the bound's test.
    pub fn allocated_bytes(&self) -> usize {
        self.batches.capacity() * std::mem::size_of::<Batch>()
            + self
                .batches
                .iter()
                .map(|b| b.spans.allocated_bytes())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::task_stream::{SubtaskSpan, SPAN_BYTES};

    fn spans(first: u32, n: u32) -> PackedSpans {
        let spans: Vec<SubtaskSpan> = (first..first + n)
            .map(|i| SubtaskSpan {
                task: TaskId(1),
                subtask: SubtaskIdx(i),
                slot: 0,
                depth: 0,
                op: Op::Rand,
                status: SpanStatus::Succeeded,
                start_us: 90,
                run_us: 5,
                fetch_us: 0,
                bytes_in: 0,
                bytes_out: 8,
            })
            .collect();
        PackedSpans::of(&spans)
    }

    fn subtasks(v: &[StreamEntry]) -> Vec<u32> {
        v.iter().map(|e| e.subtask.0).collect()
    }

    #[test]
    fn keeps_the_newest_capacity_entries_oldest_first() {
        let mut r = TaskStreamRing::new(3);
        for i in 0..5 {
            r.push(u64::from(i) * 100, WorkerId(0), 100, spans(i, 1));
        }
        assert_eq!(subtasks(&r.since(None, usize::MAX)), vec![2, 3, 4]);
        assert_eq!((r.recorded, r.overwritten, r.len()), (5, 2, 3));
    }

    #[test]
    fn the_oldest_batch_loses_its_oldest_runs_when_only_part_must_go() {
        let mut r = TaskStreamRing::new(5);
        r.push(100, WorkerId(0), 100, spans(0, 3));
        r.push(200, WorkerId(1), 100, spans(3, 4));
        assert_eq!(subtasks(&r.since(None, usize::MAX)), vec![2, 3, 4, 5, 6]);
        r.push(300, WorkerId(1), 100, spans(7, 9));
        assert_eq!(
            subtasks(&r.since(None, usize::MAX)),
            vec![11, 12, 13, 14, 15]
        );
        assert_eq!((r.recorded, r.overwritten, r.len()), (16, 11, 5));
    }

    #[test]
    fn times_land_on_the_supervisors_clock() {
        let mut r = TaskStreamRing::new(10);
        // Sent at 100 on the worker's clock, started at 90 there, ran 5: arrived at 1000.
        r.push(1000, WorkerId(2), 100, spans(0, 1));
        let e = r.since(None, 1)[0];
        assert_eq!((e.start_us, e.end_us, e.worker), (990, 995, WorkerId(2)));
    }

    #[test]
    fn since_returns_what_arrived_after() {
        let mut r = TaskStreamRing::new(4);
        for i in 0..7 {
            r.push(u64::from(i) * 100, WorkerId(0), 100, spans(i, 1));
        }
        // Holds 3,4,5,6 (received 300..600).
        assert_eq!(subtasks(&r.since(Some(400), usize::MAX)), vec![5, 6]);
        assert_eq!(subtasks(&r.since(Some(250), usize::MAX)), vec![3, 4, 5, 6]);
        assert_eq!(subtasks(&r.since(Some(600), usize::MAX)), Vec::<u32>::new());
        assert_eq!(
            subtasks(&r.since(None, 2)),
            vec![5, 6],
            "the newest within limit"
        );
    }

    #[test]
    fn capacity_zero_keeps_nothing() {
        let mut r = TaskStreamRing::new(0);
        r.push(1, WorkerId(0), 1, spans(0, 1));
        assert!(r.is_empty());
        assert_eq!(r.recorded, 0);
    }

    /// 10^7 runs, in heartbeats of 1,000, through a ring of 10^5: its allocation stays
    /// within the capacity's records (and a batch per heartbeat held).
    #[test]
    fn memory_stays_within_the_capacity_at_ten_million_runs() {
        let cap = 100_000;
        let mut r = TaskStreamRing::new(cap);
        let beat = spans(0, 1000);
        for i in 0..10_000u64 {
            r.push(i, WorkerId(0), 100, beat.clone());
        }
        assert_eq!((r.len(), r.recorded), (cap, 10_000_000));
        let bound = cap * SPAN_BYTES + 2 * (cap / 1000) * std::mem::size_of::<Batch>();
        assert!(
            r.allocated_bytes() <= bound,
            "{} > {bound}",
            r.allocated_bytes()
        );
        assert_eq!(r.since(Some(9_997), usize::MAX).len(), 2000);
    }
}
