//! The subtasks a worker ran since its last heartbeat, kept for the dashboard's task stream
//! until the heartbeat carries them to the supervisor ([`crate::protocol::task_stream`]).
//!
//! Compute threads add a job's spans under one lock per job (not per subtask); the actor
//! takes them all at each heartbeat. At most `capacity` (`web.task_stream_capacity`) are
//! kept between two heartbeats: more could not fit the supervisor's ring anyway, so the
//! newest are dropped and counted. A capacity of 0 turns the recording off: the compute
//! threads then read no clock for it.

use crate::protocol::task_stream::{SpanStatus, StreamReport, SubtaskSpan};
use crate::protocol::{SubtaskError, SubtaskReport};
use ares_core::graph::WorkerGraph;
use ares_core::ids::{ChunkIdx, SubtaskIdx, TaskId};
use ares_core::ops::{Op, OpArgs};
use std::time::Instant;

/// A span as a compute thread records it: instants on this worker's clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PendingSpan {
    pub task: TaskId,
    pub subtask: SubtaskIdx,
    pub slot: u32,
    pub depth: u32,
    pub op: Op,
    pub status: SpanStatus,
    pub start: Instant,
    pub end: Instant,
    pub fetch_us: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
}

/// The spans waiting for the next heartbeat.
#[derive(Debug)]
pub struct SpanBuffer {
    spans: Vec<PendingSpan>,
    capacity: usize,
    dropped: u64,
}

impl SpanBuffer {
    pub fn new(capacity: usize) -> Self {
        Self {
            spans: Vec::new(),
            capacity,
            dropped: 0,
        }
    }

    /// Whether spans are recorded at all (`capacity > 0`).
    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// Adds what one compute job ran; those over the capacity are counted, not kept.
    pub fn extend(&mut self, spans: impl IntoIterator<Item = PendingSpan>) {
        for s in spans {
            if self.spans.len() < self.capacity {
                self.spans.push(s);
            } else {
                self.dropped += 1;
            }
        }
    }

    /// Everything since the last call, with times made relative to `now` (the heartbeat).
    pub fn take(&mut self, now: Instant) -> StreamReport {
        let spans = std::mem::take(&mut self.spans)
            .into_iter()
            .map(|s| SubtaskSpan {
                task: s.task,
                subtask: s.subtask,
                slot: s.slot,
                depth: s.depth,
                op: s.op,
                status: s.status,
                start_us_ago: micros(now.saturating_duration_since(s.start)),
                run_us: micros(s.end.saturating_duration_since(s.start)),
                fetch_us: s.fetch_us,
                bytes_in: s.bytes_in,
                bytes_out: s.bytes_out,
            })
            .collect();
        StreamReport {
            spans,
            dropped: std::mem::take(&mut self.dropped),
            spill_at: 0,
            pause_at: 0,
        }
    }
}

fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// The op a subtask is drawn as: its last chunk's, or for a fused chunk its last step's.
pub fn subtask_op(graph: &WorkerGraph, subtask: SubtaskIdx) -> Op {
    let Some(&last) = graph.members.row(subtask.index()).last() else {
        return Op::Fuse;
    };
    let idx = ChunkIdx(last);
    match graph.chunks.args_of(idx) {
        OpArgs::Fuse(steps) => steps.last().map_or(Op::Fuse, |s| s.op),
        _ => graph.chunks.node(idx).op,
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
    use std::time::Duration;

    fn span(start: Instant, run_ms: u64) -> PendingSpan {
        PendingSpan {
            task: TaskId(1),
            subtask: SubtaskIdx(7),
            slot: 1,
            depth: 2,
            op: Op::Rand,
            status: SpanStatus::Succeeded,
            start,
            end: start + Duration::from_millis(run_ms),
            fetch_us: 5,
            bytes_in: 10,
            bytes_out: 20,
        }
    }

    #[test]
    fn keeps_at_most_its_capacity_and_counts_the_rest() {
        let t0 = Instant::now();
        let mut b = SpanBuffer::new(3);
        b.extend((0..5).map(|_| span(t0, 1)));
        let r = b.take(t0 + Duration::from_millis(10));
        assert_eq!((r.spans.len(), r.dropped), (3, 2));
        let again = b.take(t0 + Duration::from_millis(20));
        assert_eq!((again.spans.len(), again.dropped), (0, 0), "taken once");
    }

    #[test]
    fn times_are_relative_to_the_heartbeat() {
        let t0 = Instant::now();
        let mut b = SpanBuffer::new(10);
        b.extend([span(t0, 4)]);
        let s = b.take(t0 + Duration::from_millis(10)).spans[0];
        assert_eq!((s.start_us_ago, s.run_us), (10_000, 4_000));
        assert_eq!((s.slot, s.depth, s.bytes_in, s.bytes_out), (1, 2, 10, 20));
    }

    #[test]
    fn zero_capacity_records_nothing() {
        let mut b = SpanBuffer::new(0);
        assert!(!b.enabled());
        b.extend([span(Instant::now(), 1)]);
        assert_eq!(b.take(Instant::now()).spans.len(), 0);
    }
}
