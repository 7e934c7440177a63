//! The subtasks a worker ran since its last heartbeat, kept for the dashboard's task stream
//! until the heartbeat carries them to the supervisor ([`crate::protocol::task_stream`]).
//!
//! Compute threads add a job's spans under one lock per job (not per subtask); the actor
//! takes them all at each heartbeat. At most `capacity` (`web.task_stream_capacity`) are
//! kept between two heartbeats: more could not fit the supervisor's ring anyway, so the
//! newest are dropped and counted. A capacity of 0 turns the recording off: the compute
//! threads then read no clock for it.

use crate::protocol::task_stream::{PackedSpans, SpanStatus, StreamReport};
use crate::protocol::{SubtaskError, SubtaskReport};
use ares_core::graph::WorkerGraph;
use ares_core::ids::{ChunkIdx, SubtaskIdx};
use ares_core::ops::Op;
use std::time::Instant;

/// The spans waiting for the next heartbeat, as the records they travel in.
#[derive(Debug)]
pub struct SpanBuffer {
    spans: PackedSpans,
    capacity: usize,
    dropped: u64,
    /// Where the worker's clock starts: span times are microseconds since then.
    epoch: Instant,
}

impl SpanBuffer {
    pub fn new(capacity: usize) -> Self {
        Self {
            spans: PackedSpans::default(),
            capacity,
            dropped: 0,
            epoch: Instant::now(),
        }
    }

    /// Whether spans are recorded at all (`capacity > 0`).
    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// The clock compute threads time spans on.
    pub fn clock(&self) -> SpanClock {
        SpanClock(self.epoch)
    }

    /// Adds what one compute job ran; those over the capacity are counted, not kept.
    pub fn extend(&mut self, job: &PackedSpans) {
        let room = self.capacity.saturating_sub(self.spans.len());
        self.dropped += self.spans.append_up_to(job, room) as u64;
    }

    /// Everything since the last call, with the clock's reading at `now` (the heartbeat).
    pub fn take(&mut self, now: Instant) -> StreamReport {
        let kept = self.spans.len();
        StreamReport {
            spans: std::mem::replace(&mut self.spans, PackedSpans::with_capacity(kept)),
            now_us: self.clock().micros(now),
            dropped: std::mem::take(&mut self.dropped),
            spill_at: 0,
            pause_at: 0,
        }
    }
}

/// Microseconds since the worker's span epoch.
#[derive(Clone, Copy, Debug)]
pub struct SpanClock(Instant);

impl SpanClock {
    pub fn micros(self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.0).as_micros()).unwrap_or(u64::MAX)
    }
}

/// The op a subtask is drawn as: its last chunk's ([`ChunkGraph::drawn_op`]).
///
/// [`ChunkGraph::drawn_op`]: ares_core::graph::ChunkGraph::drawn_op
pub fn subtask_op(graph: &WorkerGraph, subtask: SubtaskIdx) -> Op {
    match graph.members.row(subtask.index()).last() {
        Some(&last) => graph.chunks.drawn_op(ChunkIdx(last)),
        None => Op::Fuse,
    }
}

/// How a report's outcome is drawn, and the bytes it kept.
pub fn outcome_of(report: &SubtaskReport) -> (SpanStatus, u64) {
    match &report.outcome {
        Ok(outputs) => (SpanStatus::Succeeded, outputs.iter().map(|(_, b)| b).sum()),
        Err(SubtaskError::Fetch(_) | SubtaskError::PeerUnreachable { .. }) => {
            (SpanStatus::FetchFailed, 0)
        }
        Err(SubtaskError::Failed(_) | SubtaskError::NotRun(_)) => (SpanStatus::Failed, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::task_stream::SubtaskSpan;
    use ares_core::ids::TaskId;
    use std::time::Duration;

    fn job(b: &SpanBuffer, n: u32, start: Instant, run_ms: u64) -> PackedSpans {
        let clock = b.clock();
        let mut p = PackedSpans::default();
        for i in 0..n {
            p.push(&SubtaskSpan {
                task: TaskId(1),
                subtask: SubtaskIdx(i),
                slot: 1,
                depth: 2,
                op: Op::Rand,
                status: SpanStatus::Succeeded,
                start_us: clock.micros(start),
                run_us: run_ms * 1000,
                fetch_us: 5,
                bytes_in: 10,
                bytes_out: 20,
            });
        }
        p
    }

    #[test]
    fn keeps_at_most_its_capacity_and_counts_the_rest() {
        let mut b = SpanBuffer::new(3);
        let t0 = Instant::now();
        b.extend(&job(&b, 5, t0, 1));
        let r = b.take(t0 + Duration::from_millis(10));
        assert_eq!((r.spans.len(), r.dropped), (3, 2));
        let again = b.take(t0 + Duration::from_millis(20));
        assert_eq!((again.spans.len(), again.dropped), (0, 0), "taken once");
    }

    #[test]
    fn times_are_on_the_workers_clock_with_the_heartbeats_reading() {
        let mut b = SpanBuffer::new(10);
        let t0 = b.epoch + Duration::from_millis(3);
        b.extend(&job(&b, 1, t0, 4));
        let r = b.take(t0 + Duration::from_millis(10));
        let s = r.spans.get(0).unwrap();
        assert_eq!((s.start_us, s.run_us, r.now_us), (3_000, 4_000, 13_000));
        assert_eq!((s.slot, s.depth, s.bytes_in, s.bytes_out), (1, 2, 10, 20));
    }

    #[test]
    fn zero_capacity_records_nothing() {
        let mut b = SpanBuffer::new(0);
        assert!(!b.enabled());
        b.extend(&job(&b, 1, Instant::now(), 1));
        assert_eq!(b.take(Instant::now()).spans.len(), 0);
    }
}
