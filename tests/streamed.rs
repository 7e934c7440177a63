//! Streamed preparation with real processes: a large graph's first subtasks run while the
//! rest is still being expanded, parts reach every worker (one that joins mid-task too), a
//! worker killed mid-stream costs re-runs, never a wrong value, and every result equals an
//! independent evaluation.

mod common;

use ares::api::TaskApi;
use ares::protocol::TaskStatus;
use ares_core::tensor::{self, Tensor};
use common::nodes::{self, Nodes};
use std::time::Duration;

/// Streams from the first chunk on, in parts starting at `first` chunks.
fn streaming(first: usize) -> String {
    format!(
        "task:\n  default_config:\n    stream_from_chunks: 0\n    stream_first_chunks: {first}\n"
    )
}

/// `sum(exp(a * 2 + b) - 1)`, `mean(b)` and `a * b` over 20,000 random values in chunks of
/// 10.
fn job() -> [Tensor; 3] {
    let a = tensor::rand(&[20_000], 10, Some(1)).unwrap();
    let b = tensor::randn(&[20_000], 10, Some(2)).unwrap();
    let y = (&(&(&a * 2.0).unwrap() + &b).unwrap().exp().unwrap() - 1.0).unwrap();
    let mean = b.mean(None, false).unwrap();
    [y.sum(None, false).unwrap(), mean, (&a * &b).unwrap()]
}

fn supervisor_log(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("supervisor.log")).unwrap_or_default()
}

#[test]
fn streamed_graphs_on_separate_processes_equal_the_reference() {
    let log = [(
        "RUST_LOG",
        "ares::supervisor::task_processor::streaming=info",
    )];
    let mut n = Nodes::supervisor_env("", &streaming(512), &log);
    n.add_worker();
    n.add_worker();
    let [sum, mean, product] = job();
    let graph = Tensor::graph(&[&sum, &mean, &product]);
    let want = common::reference::evaluate(&graph);
    let mut c = n.client();
    let task = c.submit_tileable_graph(&graph, None).unwrap();
    let info = c.wait_task(task, Duration::from_secs(60)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{:?}", info.error);
    let got = c.fetch(task).unwrap();
    for (i, (got, want)) in got.iter().zip(&want).enumerate() {
        common::assert_close(got, want, &format!("result {i}"));
    }
    let log = supervisor_log(n.dir.path());
    let line = log
        .lines()
        .find(|l| l.contains("streamed preparation done"))
        .unwrap_or_else(|| panic!("the graph was not streamed:\n{log}"));
    // 2,000 positions of 9 chunks, a first part of 512 chunks: runs of 64 positions (56
    // rounded up to whole regions of 16), 256, 1,024, and the last 656 with the seal.
    assert!(line.contains("parts: 4"), "{line}");
}

/// A worker that registers while a streamed task runs gets the first part and every part
/// since, in order, and runs the task's subtasks like the others.
#[test]
fn a_worker_joining_mid_stream_receives_every_part_so_far() {
    let mut n = Nodes::supervisor("", &streaming(4096));
    n.add_worker();
    let mut c = n.client();
    let t = tensor::ones(&[300_000], 1)
        .unwrap()
        .sum(None, false)
        .unwrap();
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    nodes::wait_progress(&mut c, task, 0.02);
    n.add_worker();
    let info = nodes::wait_end(&mut c, task, Duration::from_secs(120));
    assert_eq!(info.status, TaskStatus::Succeeded, "{:?}", info.error);
    assert_eq!(nodes::scalar(&mut c, task), 300_000.0);
    let joined = std::fs::read_to_string(n.dir.path().join("w1.log")).unwrap();
    assert!(
        !joined.contains("cannot extend") && !joined.contains("never registered"),
        "{joined}"
    );
}

/// A worker killed while parts are still coming: what it held (region roots of finished
/// parts among them) is recomputed, and the sum is exact.
#[test]
fn a_worker_killed_mid_stream_costs_re_runs_not_the_result() {
    let mut n = Nodes::supervisor("  node_timeout_ms: 1000\n", &streaming(4096));
    n.add_worker();
    n.add_worker();
    let mut c = n.client();
    let t = tensor::ones(&[300_000], 1)
        .unwrap()
        .sum(None, false)
        .unwrap();
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    nodes::wait_progress(&mut c, task, 0.05);
    nodes::signal(&n.workers[1], "KILL");
    let killed = std::time::Instant::now();
    let info = nodes::wait_end(&mut c, task, Duration::from_secs(120));
    assert_eq!(info.status, TaskStatus::Succeeded, "{:?}", info.error);
    assert_eq!(nodes::scalar(&mut c, task), 300_000.0);
    assert!(info.retries > 0, "the killed worker's work ran again");
    eprintln!(
        "exact {:.2} s after the kill, {} re-runs, {} subtasks, first part after {:.3} s",
        killed.elapsed().as_secs_f64(),
        info.retries,
        info.subtasks,
        info.prepare_seconds.unwrap_or(f64::NAN)
    );
}
