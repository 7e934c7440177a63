//! The supervisor's counters and gauges, in one process-wide registry (crate `prometheus`)
//! that the actors update as things happen: plain functions, below every role, so no actor
//! needs to know about HTTP. `GET /metrics` ([`crate::web`]) renders them in the Prometheus
//! text format, with tasks by state counted from the task manager when scraped. The
//! scheduler reports what workers hold and spill through [`set_worker_bytes`].

use crate::protocol::TaskStatus;
use prometheus::{Encoder, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry};
use std::sync::OnceLock;

struct Metrics {
    registry: Registry,
    tasks: IntGaugeVec,
    subtasks_run: IntCounter,
    subtasks_retried: IntCounter,
    subtasks_failed: IntCounter,
    workers_live: IntGauge,
    fetch_timeouts: IntCounter,
    restarts: IntCounterVec,
    bytes_held: IntGaugeVec,
    bytes_spilled: IntGaugeVec,
}

fn metrics() -> &'static Metrics {
    static M: OnceLock<Metrics> = OnceLock::new();
    M.get_or_init(|| {
        let registry = Registry::new();
        let counter = |name: &str, help: &str| {
            let c = IntCounter::new(name, help).expect("valid metric");
            registry.register(Box::new(c.clone())).expect("unique");
            c
        };
        let gauge_vec = |name: &str, help: &str, label: &str| {
            let g = IntGaugeVec::new(Opts::new(name, help), &[label]).expect("valid metric");
            registry.register(Box::new(g.clone())).expect("unique");
            g
        };
        let restarts = IntCounterVec::new(
            Opts::new(
                "ares_actor_restarts_total",
                "actor restarts after a panic in a handler, by actor",
            ),
            &["actor"],
        )
        .expect("valid metric");
        registry
            .register(Box::new(restarts.clone()))
            .expect("unique");
        let workers_live =
            IntGauge::new("ares_workers_live", "registered live workers").expect("valid metric");
        registry
            .register(Box::new(workers_live.clone()))
            .expect("unique");
        Metrics {
            tasks: gauge_vec(
                "ares_tasks",
                "tasks the supervisor holds, by state",
                "state",
            ),
            subtasks_run: counter("ares_subtasks_run_total", "subtasks that ran to a result"),
            subtasks_retried: counter(
                "ares_subtasks_retried_total",
                "subtask runs repeated after lost workers or inputs",
            ),
            subtasks_failed: counter(
                "ares_subtasks_failed_total",
                "subtasks that failed (kernel error or panic)",
            ),
            fetch_timeouts: counter(
                "ares_fetch_timeouts_total",
                "peer fetches that timed out (worker.fetch_timeout_ms), as workers reported them",
            ),
            bytes_held: gauge_vec(
                "ares_worker_bytes_held",
                "bytes of chunk data a worker holds in memory",
                "worker",
            ),
            bytes_spilled: gauge_vec(
                "ares_worker_bytes_spilled",
                "bytes of chunk data a worker spilled to disk",
                "worker",
            ),
            workers_live,
            restarts,
            registry,
        }
    })
}

/// An actor panicked in a handler and restarts.
pub fn actor_restarted(actor: &str) {
    metrics().restarts.with_label_values(&[actor]).inc();
}

/// Subtask reports: `run` ran to a result, `failed` failed for good.
pub fn subtasks_reported(run: u64, failed: u64) {
    metrics().subtasks_run.inc_by(run);
    metrics().subtasks_failed.inc_by(failed);
}

pub fn subtasks_retried(n: u64) {
    metrics().subtasks_retried.inc_by(n);
}

pub fn fetch_timeout() {
    metrics().fetch_timeouts.inc();
}

pub fn set_workers_live(n: usize) {
    metrics().workers_live.set(n as i64);
}

/// What a worker holds, from its heartbeats.
pub fn set_worker_held(worker: &str, held: u64) {
    metrics()
        .bytes_held
        .with_label_values(&[worker])
        .set(held as i64);
}

/// What a worker holds in memory and has spilled to disk (the `memory` helper's figures).
pub fn set_worker_bytes(worker: &str, held: u64, spilled: u64) {
    let m = metrics();
    m.bytes_held.with_label_values(&[worker]).set(held as i64);
    m.bytes_spilled
        .with_label_values(&[worker])
        .set(spilled as i64);
}

/// A worker left: its byte gauges go.
pub fn forget_worker(worker: &str) {
    let m = metrics();
    let _ = m.bytes_held.remove_label_values(&[worker]);
    let _ = m.bytes_spilled.remove_label_values(&[worker]);
}

/// The registry in the Prometheus text format, with tasks by state set from `statuses`.
pub fn render(statuses: impl IntoIterator<Item = TaskStatus>) -> String {
    let m = metrics();
    let mut counts = [0i64; 5];
    for s in statuses {
        counts[s as usize] += 1;
    }
    for (name, n) in ["pending", "running", "succeeded", "failed", "cancelled"]
        .iter()
        .zip(counts)
    {
        m.tasks.with_label_values(&[name]).set(n);
    }
    let mut out = Vec::new();
    prometheus::TextEncoder::new()
        .encode(&m.registry.gather(), &mut out)
        .expect("text encoding of gathered metrics");
    String::from_utf8(out).expect("the text format is UTF-8")
}
