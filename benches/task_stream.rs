//! The dashboard's task stream, piece by piece, in nanoseconds per subtask span: what a
//! compute slot adds to each subtask (a clock read and a record appended), what a heartbeat
//! frame costs to encode on the worker and to decode on the supervisor, what the
//! supervisor's link does with it (the batch moved into the ring), and what the dashboard's
//! query decodes off the scheduler's thread. `ares bench tps --no-task-stream` measures the
//! whole against the same binary; these figures say where it goes, independently of the
//! machine's load. `cargo bench --bench task_stream`; figures in BENCHMARKS.md.

use ares::config::WebConfig;
use ares::protocol::task_stream::StreamReport;
use ares::protocol::{codec, FromWorker, MemoryStats, SubtaskReport};
use ares::supervisor::history::ClusterHistory;
use ares::worker::spans::{JobRecorder, SpanBuffer};
use ares_core::ids::{ChunkIdx, SubtaskIdx, TaskId, WorkerId};
use ares_core::ops::Op;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Spans per heartbeat: a worker running 100,000 subtasks a second, beating every second.
const BEAT: usize = 100_000;

fn ns_per(d: Duration, n: usize) -> f64 {
    d.as_nanos() as f64 / n as f64
}

/// The slot's part, as a compute job does it ([`JobRecorder`]): per subtask, the clock read
/// that ends it and its record appended to the job's string; per job of 64, the string
/// handed to the worker's buffer.
fn record(buffer: &Mutex<SpanBuffer>, n: usize) -> f64 {
    let clock = buffer.lock().unwrap().clock();
    let report = SubtaskReport {
        subtask: SubtaskIdx(0),
        outcome: Ok(vec![(ChunkIdx(0), 8)]),
    };
    let started = Instant::now();
    let mut job = JobRecorder::start(&clock, TaskId(1), 0);
    for i in 0..n {
        job.ran(SubtaskIdx(i as u32), 0, || Op::Add, Some((&report, 8)), 0);
        if (i + 1) % 64 == 0 {
            job.finish(buffer);
            job = JobRecorder::start(&clock, TaskId(1), 0);
        }
    }
    job.finish(buffer);
    ns_per(started.elapsed(), n)
}

fn main() {
    let buffer = Mutex::new(SpanBuffer::new(BEAT));
    let reps = 20;
    let (mut slot_ns, mut take_ns) = (Vec::new(), Vec::new());
    let (mut encode_ns, mut decode_ns, mut ring_ns) = (Vec::new(), Vec::new(), Vec::new());
    let history = ClusterHistory::new(&WebConfig::default(), 1000);
    for _ in 0..reps {
        slot_ns.push(record(&buffer, BEAT));
        let t = Instant::now();
        let stream = buffer.lock().unwrap().take();
        take_ns.push(ns_per(t.elapsed(), BEAT));
        assert_eq!(stream.spans.len(), BEAT);
        let beat = FromWorker::Heartbeat {
            stored_chunks: 0,
            stored_bytes: 0,
            memory: MemoryStats::default(),
            stream,
        };
        let t = Instant::now();
        // The frame as the connection writes it: the spans spliced in from the worker's
        // buffer, then (here only) joined into one string to decode.
        let pieces = codec::encode_frame_pieces(&[beat], usize::MAX).unwrap();
        encode_ns.push(ns_per(t.elapsed(), BEAT));
        let frame: Vec<u8> = pieces.concat();
        let t = Instant::now();
        let mut got: Vec<FromWorker> = codec::decode_frame(&frame[4..]).unwrap();
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
        "  worker: heartbeat takes the spans       {:8.1}",
        median(&mut take_ns)
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
