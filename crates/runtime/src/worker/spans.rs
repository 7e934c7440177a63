//! The subtasks a worker ran, kept for the dashboard's task stream until a heartbeat (or a
//! piece sent before it) carries them to the supervisor ([`crate::protocol::task_stream`]).
//!
//! A compute job records its subtasks with a [`JobRecorder`]: one clock read per subtask
//! (its end is the next one's start), one record appended to a string the compute thread
//! reuses from job to job, and one lock per job (not per subtask) to hand them to the
//! [`SpanBuffer`], which the actor empties at each heartbeat. At most the worker's share of
//! `web.task_stream_capacity` (the capacity divided by the live workers) are kept between two
//! heartbeats, so that every worker's latest runs fit in the supervisor's ring together (with
//! the whole capacity each, one worker's heartbeat pushed the others' out of the ring); the
//! newest are dropped and counted. A capacity of 0 turns the recording off: the compute
//! threads then read no clock for it.
//!
//! Once the buffer is full, jobs that start before the next heartbeat record nothing and only
//! count their subtasks as dropped, on an atomic counter: no clock read, no record appended
//! and thrown away, no lock (`ares bench tps` runs a worker at several times the spans a
//! heartbeat keeps).
//!
//! The spans do not wait for the heartbeat when there are many: once the buffer holds
//! [`SPAN_PIECE`] of them, the next drain of finished subtasks sends them as a piece
//! (`FromWorker::Spans`) in the frame of its reports; the heartbeat carries the rest, the
//! clock and the count of dropped ones. (A heartbeat of 50,000 spans, 3.2 MB, held up the
//! reports queued behind it while the supervisor read it, and the worker ran dry: `ares bench
//! tps` lost 7-16 % to it on this project's VM, against about 2 % at a tenth of the volume.)
//! Each piece is sent without a copy (its frame is written from the buffer's own memory),
//! and that memory comes back once the frame is out: two allocations take turns
//! ([`SpanRecords::split`]), written once when the worker starts (filling fresh pages cost
//! the compute slots about 20 ns a span).
//!
//! The clock is the processor's time-stamp counter ([`quanta`], which falls back to the OS's
//! monotonic clock where the counter is not invariant): `ares bench tps` runs a subtask in
//! about a microsecond, and a vDSO `Instant::now()` (about 40 ns here) was most of what the
//! stream cost a compute slot; the counter reads in about 13 ns.

use crate::protocol::task_stream::{
    SpanRecords, SpanStatus, StreamReport, SubtaskSpan, SPAN_PIECE,
};
use crate::protocol::{SubtaskError, SubtaskReport};
use ares_core::graph::WorkerGraph;
use ares_core::ids::{ChunkIdx, SubtaskIdx, TaskId};
use ares_core::ops::Op;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The spans waiting for the next heartbeat, as the records they travel in.
#[derive(Debug)]
pub struct SpanBuffer {
    spans: SpanRecords,
    /// Spans sent in pieces since the last heartbeat (they count against the capacity).
    sent: usize,
    /// `web.task_stream_capacity`: what all workers' spans of a heartbeat may hold together.
    configured: usize,
    /// This worker's share of it.
    capacity: usize,
    clock: SpanClock,
}

impl SpanBuffer {
    pub fn new(capacity: usize) -> Self {
        Self::with_clock(capacity, SpanClock::new(quanta::Clock::new()))
    }

    /// A buffer timing spans on `clock` (tests pass a mock clock).
    pub fn with_clock(capacity: usize, clock: SpanClock) -> Self {
        let mut spans = SpanRecords::default();
        if capacity > 0 {
            spans.prefault(capacity.min(PREFAULTED_SPANS));
        }
        Self {
            spans,
            sent: 0,
            configured: capacity,
            capacity,
            clock,
        }
    }

    /// Whether spans are recorded at all (`capacity > 0`).
    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// The clock compute threads time spans on.
    pub fn clock(&self) -> SpanClock {
        self.clock.clone()
    }

    /// Keeps this worker's share of the capacity among `workers` live workers (at least one
    /// span each while the stream is on).
    pub fn share_among(&mut self, workers: usize) {
        if self.configured > 0 {
            self.capacity = (self.configured / workers.max(1)).max(1);
        }
    }

    /// Adds what one compute job ran; those over the capacity are counted, not kept.
    pub fn extend(&mut self, job: &SpanRecords) {
        let room = self.capacity.saturating_sub(self.sent + self.spans.len());
        let over = self.spans.append_up_to(job, room) as u64;
        self.clock.dropped.fetch_add(over, Ordering::Relaxed);
        if self.sent + self.spans.len() >= self.capacity {
            self.clock.full.store(true, Ordering::Relaxed);
        }
    }

    /// The spans held, once they are [`SPAN_PIECE`] or more, to send before the heartbeat
    /// (they still count against this heartbeat's capacity).
    pub fn piece(&mut self) -> Option<StreamReport> {
        if self.spans.len() < SPAN_PIECE {
            return None;
        }
        self.sent += self.spans.len();
        Some(StreamReport {
            spans: self.spans.split(),
            now_us: self.clock.micros(self.clock.now()),
            ..StreamReport::default()
        })
    }

    /// Everything since the last call, with the clock's reading now (the heartbeat's): the
    /// records themselves, whose memory comes back to the buffer once they are sent.
    pub fn take(&mut self) -> StreamReport {
        let spans = self.spans.split();
        self.sent = 0;
        self.clock.full.store(false, Ordering::Relaxed);
        StreamReport {
            spans,
            now_us: self.clock.micros(self.clock.now()),
            dropped: self.clock.dropped.swap(0, Ordering::Relaxed),
            spill_at: 0,
            pause_at: 0,
        }
    }
}

/// Spans each of a worker's two allocations holds from the start, at most (two pieces'
/// worth, 512 KB): the records wait only until the next drain of finished subtasks sends
/// them as a piece ([`SPAN_PIECE`]); an allocation grows past it when they wait longer.
pub const PREFAULTED_SPANS: usize = 2 * SPAN_PIECE;

/// The worker's span clock: raw readings of the time-stamp counter, turned into
/// microseconds since the worker started (its epoch); and whether the buffer it fills is
/// full until the next heartbeat (then jobs record nothing and count their subtasks here,
/// with the spans a job had over the capacity).
#[derive(Clone, Debug)]
pub struct SpanClock {
    clock: quanta::Clock,
    epoch: u64,
    full: Arc<AtomicBool>,
    dropped: Arc<AtomicU64>,
}

impl SpanClock {
    pub fn new(clock: quanta::Clock) -> Self {
        let epoch = clock.raw();
        Self {
            clock,
            epoch,
            full: Arc::default(),
            dropped: Arc::default(),
        }
    }

    /// A raw reading (convert it with [`SpanClock::micros`]).
    pub fn now(&self) -> u64 {
        self.clock.raw()
    }

    /// Microseconds from the epoch to a raw reading (0 for a reading before it).
    pub fn micros(&self, raw: u64) -> u64 {
        self.clock.delta_as_nanos(self.epoch, raw) / 1000
    }
}

thread_local! {
    /// The string a compute thread appends its job's records to, kept (with its capacity)
    /// from one job to the next (taken out while a job runs).
    static JOB_SPANS: RefCell<Option<SpanRecords>> = const { RefCell::new(None) };
}

/// What one compute job ran, recorded as it runs and handed to the [`SpanBuffer`] at the
/// end ([`JobRecorder::finish`]).
pub struct JobRecorder<'a> {
    clock: &'a SpanClock,
    task: TaskId,
    slot: u16,
    /// The clock's raw reading when the last subtask ended (or the job started).
    last: u64,
    /// The job's records; `None` when the buffer was full as the job started: its
    /// subtasks are only counted.
    spans: Option<SpanRecords>,
    uncounted: u64,
}

impl<'a> JobRecorder<'a> {
    /// Starts timing a job of `task` on compute slot `slot`.
    pub fn start(clock: &'a SpanClock, task: TaskId, slot: u32) -> Self {
        let full = clock.full.load(Ordering::Relaxed);
        let spans = (!full).then(|| {
            let mut spans = JOB_SPANS
                .with(|s| s.borrow_mut().take())
                .unwrap_or_default();
            spans.clear();
            spans
        });
        Self {
            clock,
            task,
            slot: u16::try_from(slot).unwrap_or(u16::MAX),
            last: if full { 0 } else { clock.now() },
            spans,
            uncounted: 0,
        }
    }

    /// Ends the subtask that ran since the last call; records it when it reported
    /// (`report` with the bytes it read), as a run of `op` at `depth` after `fetch_us` of
    /// fetching.
    pub fn ran(
        &mut self,
        subtask: SubtaskIdx,
        depth: u32,
        op: impl FnOnce() -> Op,
        report: Option<(&SubtaskReport, u64)>,
        fetch_us: u64,
    ) {
        let Some(spans) = self.spans.as_mut() else {
            self.uncounted += u64::from(report.is_some());
            return;
        };
        let end = self.clock.now();
        let start = std::mem::replace(&mut self.last, end);
        let Some((report, bytes_in)) = report else {
            return;
        };
        let (status, bytes_out) = outcome_of(report);
        let start_us = self.clock.micros(start);
        spans.push(&SubtaskSpan {
            task: self.task,
            subtask,
            slot: self.slot,
            depth,
            op: op(),
            status,
            start_us,
            run_us: self.clock.micros(end).saturating_sub(start_us),
            fetch_us,
            bytes_in,
            bytes_out,
        });
    }

    /// Hands the job's spans to the worker's buffer (one lock) and gives the string back to
    /// the thread for its next job; a job that only counted adds to the clock's counter.
    pub fn finish(self, buffer: &Mutex<SpanBuffer>) {
        let Some(spans) = self.spans else {
            self.clock
                .dropped
                .fetch_add(self.uncounted, Ordering::Relaxed);
            return;
        };
        if !spans.is_empty() {
            buffer
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(&spans);
        }
        JOB_SPANS.with(|s| *s.borrow_mut() = Some(spans));
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
    use crate::protocol::SubtaskReport;
    use std::time::Duration;

    /// A buffer on a mock clock that reads 0 now, and the handle moving it.
    fn mocked(capacity: usize) -> (Mutex<SpanBuffer>, std::sync::Arc<quanta::Mock>) {
        let (clock, mock) = quanta::Clock::mock();
        (
            Mutex::new(SpanBuffer::with_clock(capacity, SpanClock::new(clock))),
            mock,
        )
    }

    fn ok(subtask: u32) -> SubtaskReport {
        SubtaskReport {
            subtask: SubtaskIdx(subtask),
            outcome: Ok(vec![(ChunkIdx(0), 20)]),
        }
    }

    /// Runs a job of `n` subtasks of `run_ms` each on the buffer's clock.
    fn job(b: &Mutex<SpanBuffer>, mock: &quanta::Mock, n: u32, run_ms: u64) {
        let clock = b.lock().unwrap().clock();
        let mut rec = JobRecorder::start(&clock, TaskId(1), 1);
        for i in 0..n {
            mock.increment(Duration::from_millis(run_ms));
            rec.ran(SubtaskIdx(i), 2, || Op::Rand, Some((&ok(i), 10)), 5);
        }
        rec.finish(b);
    }

    #[test]
    fn keeps_at_most_its_capacity_and_counts_the_rest() {
        let (b, mock) = mocked(3);
        job(&b, &mock, 5, 1);
        let r = b.lock().unwrap().take();
        assert_eq!((r.spans.len(), r.dropped), (3, 2));
        let again = b.lock().unwrap().take();
        assert_eq!((again.spans.len(), again.dropped), (0, 0), "taken once");
    }

    ///   epoch   3 ms          7 ms        13 ms
    ///     |------|=============|-----------|
    ///          job starts   subtask ends  heartbeat
    #[test]
    fn times_are_on_the_workers_clock_with_the_heartbeats_reading() {
        let (b, mock) = mocked(10);
        mock.increment(Duration::from_millis(3));
        job(&b, &mock, 1, 4);
        mock.increment(Duration::from_millis(6));
        let r = b.lock().unwrap().take();
        let s = r.spans.get(0).unwrap();
        assert_eq!((s.start_us, s.run_us, r.now_us), (3_000, 4_000, 13_000));
        assert_eq!((s.slot, s.depth, s.bytes_in, s.bytes_out), (1, 2, 10, 20));
        assert_eq!(
            (s.op, s.status, s.fetch_us),
            (Op::Rand, SpanStatus::Succeeded, 5)
        );
    }

    /// A subtask without a report (cancelled) is not drawn, but its time is not given to the
    /// next one: each span starts where the one before it ended.
    #[test]
    fn a_subtask_without_a_report_ends_the_previous_span_all_the_same() {
        let (b, mock) = mocked(10);
        let clock = b.lock().unwrap().clock();
        let mut rec = JobRecorder::start(&clock, TaskId(1), 0);
        mock.increment(Duration::from_millis(2));
        rec.ran(SubtaskIdx(0), 0, || Op::Rand, None, 0);
        mock.increment(Duration::from_millis(1));
        rec.ran(SubtaskIdx(1), 0, || Op::Rand, Some((&ok(1), 0)), 0);
        rec.finish(&b);
        let r = b.lock().unwrap().take();
        let s = r.spans.get(0).unwrap();
        assert_eq!(
            (r.spans.len(), s.subtask, s.start_us, s.run_us),
            (1, SubtaskIdx(1), 2_000, 1_000)
        );
    }

    /// Once the buffer is full, a job starting before the next heartbeat records nothing and
    /// counts its subtasks as dropped; the heartbeat's take opens the buffer again.
    ///
    ///   job 1 (5 subtasks)  -> 3 kept, 2 dropped, buffer full
    ///   job 2 (4 subtasks)  -> 0 kept, 4 dropped (not recorded at all)
    ///   take                -> 3 spans, 6 dropped; job 3 (2) -> 2 kept
    #[test]
    fn a_full_buffer_stops_the_recording_until_the_heartbeat() {
        let (b, mock) = mocked(3);
        job(&b, &mock, 5, 1);
        job(&b, &mock, 4, 1);
        let r = b.lock().unwrap().take();
        assert_eq!((r.spans.len(), r.dropped), (3, 6));
        job(&b, &mock, 2, 1);
        let r = b.lock().unwrap().take();
        assert_eq!((r.spans.len(), r.dropped), (2, 0));
    }

    /// With two live workers, each keeps half the capacity between heartbeats.
    #[test]
    fn a_worker_keeps_its_share_of_the_capacity() {
        let (b, mock) = mocked(10);
        b.lock().unwrap().share_among(2);
        job(&b, &mock, 8, 1);
        let r = b.lock().unwrap().take();
        assert_eq!((r.spans.len(), r.dropped), (5, 3));
        b.lock().unwrap().share_among(1);
        job(&b, &mock, 8, 1);
        assert_eq!(b.lock().unwrap().take().spans.len(), 8);
    }

    /// Once the buffer holds a piece's worth, the piece leaves before the heartbeat and still
    /// counts against its capacity; the heartbeat takes the rest and opens a new period.
    ///
    ///   capacity 3 pieces:  job 1.5 pieces -> piece of 1.5 sent
    ///                       job 2 pieces   -> 1.5 kept (the capacity), 0.5 dropped
    ///                       heartbeat      -> 1.5 pieces, 0.5 dropped; the next job records
    #[test]
    fn a_piece_leaves_early_and_counts_against_the_heartbeat() {
        let (b, mock) = mocked(3 * SPAN_PIECE);
        let n = SPAN_PIECE as u32;
        assert!(b.lock().unwrap().piece().is_none(), "nothing yet");
        job(&b, &mock, n + n / 2, 1);
        let piece = b.lock().unwrap().piece().unwrap();
        assert_eq!(
            (piece.spans.len(), piece.dropped),
            (SPAN_PIECE + SPAN_PIECE / 2, 0)
        );
        assert!(b.lock().unwrap().piece().is_none(), "taken once");
        job(&b, &mock, 2 * n, 1);
        let beat = b.lock().unwrap().take();
        assert_eq!(
            (beat.spans.len(), beat.dropped),
            (SPAN_PIECE + SPAN_PIECE / 2, u64::from(n / 2))
        );
        job(&b, &mock, 2, 1);
        assert_eq!(b.lock().unwrap().take().spans.len(), 2);
    }

    /// The thread's string is reused: a second job starts empty, not after the first's.
    #[test]
    fn each_job_hands_over_only_its_own_spans() {
        let (b, mock) = mocked(100);
        job(&b, &mock, 4, 1);
        job(&b, &mock, 2, 1);
        assert_eq!(b.lock().unwrap().take().spans.len(), 6);
    }

    #[test]
    fn zero_capacity_records_nothing() {
        let (b, mock) = mocked(0);
        assert!(!b.lock().unwrap().enabled());
        job(&b, &mock, 1, 1);
        assert_eq!(b.lock().unwrap().take().spans.len(), 0);
    }
}
