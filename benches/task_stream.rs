//! The dashboard's task stream, piece by piece, in nanoseconds per subtask span: what a
//! compute slot adds to each subtask (a clock read and a record appended), what a heartbeat
//! frame costs to encode on the worker and to decode on the supervisor, what the
//! supervisor's link does with it (the batch moved into the ring), and what the dashboard's
//! query decodes off the scheduler's thread. `ares bench tps --no-task-stream` measures the
//! whole against the same binary; these figures say where it goes, independently of the
//! machine's load. `cargo bench --bench task_stream`; figures in BENCHMARKS.md.

use ares::config::WebConfig;
use ares::protocol::task_stream::{PackedSpans, SpanStatus, StreamReport, SubtaskSpan};
use ares::protocol::{codec, FromWorker, MemoryStats};
use ares::supervisor::history::ClusterHistory;
use ares::worker::spans::SpanBuffer;
use ares_core::ids::{SubtaskIdx, TaskId, WorkerId};
use ares_core::ops::Op;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Spans per heartbeat: a worker running 100,000 subtasks a second, beating every second.
const BEAT: usize = 100_000;

fn ns_per(d: Duration, n: usize) -> f64 {
    d.as_nanos() as f64 / n as f64
}

/// The slot's part: per subtask, the clock read that ends it and its record appended to the
/// job's string; per job of 64, the string appended to the worker's buffer.
fn record(buffer: &mut SpanBuffer, n: usize) -> f64 {
    let clock = buffer.clock();
    let started = Instant::now();
    let mut start = Instant::now();
    let mut job = PackedSpans::with_capacity(64);
    for i in 0..n {
        let end = Instant::now();
        job.push(&SubtaskSpan {
            task: TaskId(1),
            subtask: SubtaskIdx(i as u32),
            slot: 0,
            depth: 0,
            op: Op::Add,
            status: SpanStatus::Succeeded,
            start_us: clock.micros(start),
            run_us: clock.micros(end).saturating_sub(clock.micros(start)),
            fetch_us: 0,
            bytes_in: 8,
            bytes_out: 8,
        });
        start = end;
        if job.len() == 64 {
            buffer.extend(&job);
            job = PackedSpans::with_capacity(64);
        }
    }
    buffer.extend(&job);
    ns_per(started.elapsed(), n)
}

fn main() {
    let mut buffer = SpanBuffer::new(BEAT);
    let reps = 20;
    let mut slot_ns = Vec::new();
    let (mut encode_ns, mut decode_ns, mut ring_ns) = (Vec::new(), Vec::new(), Vec::new());
    let history = ClusterHistory::new(&WebConfig::default(), 1000);
    for _ in 0..reps {
        slot_ns.push(record(&mut buffer, BEAT));
        let stream = buffer.take(Instant::now());
        assert_eq!(stream.spans.len(), BEAT);
        let beat = FromWorker::Heartbeat {
            stored_chunks: 0,
            stored_bytes: 0,
            memory: MemoryStats::default(),
            stream,
        };
        let t = Instant::now();
        let frame = codec::encode_frame(&[beat]).unwrap();
        encode_ns.push(ns_per(t.elapsed(), BEAT));
        let t = Instant::now();
        let mut got: Vec<FromWorker> = codec::decode_frame(&frame).unwrap();
        decode_ns.push(ns_per(t.elapsed(), BEAT));
        let Some(FromWorker::Heartbeat { memory, stream, .. }) = got.pop() else {
            panic!("a heartbeat")
        };
        let t = Instant::now();
        history.record(WorkerId(0), &memory, black_box(stream));
        ring_ns.push(ns_per(t.elapsed(), BEAT));
    }
    let t = Instant::now();
    let view = history.task_stream(None, BEAT);
    let query_ns = ns_per(t.elapsed(), view.entries.len());
    assert_eq!(view.entries.len(), BEAT);
    let empty = StreamReport::default();
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "task stream, ns per span (median of {reps} heartbeats of {BEAT} spans; the ring holds {}):",
        WebConfig::default().task_stream_capacity
    );
    println!(
        "  slot: clock read + record appended     {:8.1}",
        median(&mut slot_ns)
    );
    println!(
        "  worker: heartbeat frame encoded         {:8.1}",
        median(&mut encode_ns)
    );
    println!(
        "  supervisor: heartbeat frame decoded     {:8.1}",
        median(&mut decode_ns)
    );
    println!(
        "  supervisor: batch moved into the ring   {:8.1}",
        median(&mut ring_ns)
    );
    println!("  web thread: query decoded to entries    {query_ns:8.1} (JSON not included)");
    println!(
        "  (an empty report encodes to {} bytes)",
        codec::encode(&empty).unwrap().len()
    );
}
