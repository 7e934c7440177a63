//! Faults never hang a job (issue 9): real `ares node` processes on loopback, each fault
//! injected the way an operator would meet it (no worker, SIGSTOP, SIGKILL), each wait with a
//! deadline, each result checked against its known value. Timeouts are short so the suite
//! stays fast; the measured recovery times are printed (`--nocapture`) for RELIABILITY.md.

mod common;

use ares::api::TaskApi;
use ares::protocol::TaskStatus;
use ares_core::tensor::Tensor;
use common::nodes::{heavy_job, scalar, signal, submit, wait_end, wait_progress, Nodes};
use std::time::{Duration, Instant};

const NO_WORKER: &str = "  node_timeout_ms: 2000\n  no_worker_timeout_ms: 1500\n";

#[test]
fn a_task_without_live_workers_fails_with_a_clear_error() {
    let nodes = Nodes::supervisor(NO_WORKER, "");
    let mut c = nodes.client();
    let start = Instant::now();
    let task = submit(&mut c, "sum(arange(100, chunk=7))");
    let info = wait_end(&mut c, task, Duration::from_secs(20));
    let took = start.elapsed();
    eprintln!("no live workers: failed after {took:?}");
    assert_eq!(info.status, TaskStatus::Failed, "{info:?}");
    assert_eq!(info.error.as_deref(), Some("no live workers for 1.5 s"));
    assert!(took >= Duration::from_millis(1500), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // The supervisor still serves: a worker joins and the same program succeeds.
    let mut nodes = nodes;
    nodes.add_worker();
    let task = submit(&mut c, "sum(arange(100, chunk=7))");
    let info = wait_end(&mut c, task, Duration::from_secs(30));
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    assert_eq!(scalar(&mut c, task), 4950.0);
}

#[test]
fn a_worker_that_joins_in_time_takes_the_waiting_work() {
    let mut nodes = Nodes::supervisor(NO_WORKER, "");
    let mut c = nodes.client();
    let task = submit(&mut c, "sum(arange(100, chunk=7))");
    std::thread::sleep(Duration::from_millis(700));
    nodes.add_worker();
    let info = wait_end(&mut c, task, Duration::from_secs(30));
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    assert_eq!(scalar(&mut c, task), 4950.0);
}

#[test]
fn a_frozen_peer_costs_a_fetch_timeout_not_the_job() {
    // node_timeout_ms is far beyond the test's deadline: only the fetch timeout can save it.
    let (nodes, took) = freeze_a_peer_holding_chunks(
        "  node_timeout_ms: 10000\nscheduling:\n  worker_prefetch: 1\n",
        "  fetch_timeout_ms: 1500\nweb:\n  listen: 127.0.0.1:0\n",
    );
    // Usually the fetch timeout ends it in ~3 s; if the frozen worker still had a subtask
    // whose output nobody reads from it yet, that waits for node_timeout_ms (a known gap).
    assert!(took < Duration::from_secs(15), "{took:?}");
    let log = std::fs::read_to_string(nodes.dir.path().join("supervisor.log")).unwrap();
    assert!(
        log.contains("a peer could not fetch from it") || log.contains("missed its heartbeats"),
        "{log}"
    );
}

#[test]
fn fetches_from_a_peer_declared_dead_fail_at_once() {
    // The fetch timeout (60 s) is far beyond the test's deadline: the others' fetches from
    // the frozen worker must end when the supervisor declares it dead (node_timeout_ms), not
    // when they time out. Its subtasks are run again elsewhere once it is suspect, 1 s after
    // the freeze, and read its chunks from it: those are the fetches that hang.
    let (nodes, took) = freeze_a_peer_holding_chunks(
        "  node_timeout_ms: 4000\n  suspect_after_ms: 1000\nscheduling:\n  worker_prefetch: 1\n",
        "  fetch_timeout_ms: 60000\nweb:\n  listen: 127.0.0.1:0\n",
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    let log = std::fs::read_to_string(nodes.dir.path().join("supervisor.log")).unwrap();
    assert!(log.contains("missed its heartbeats"), "{log}");
}

/// Three workers run a job whose heavy stage reads every leaf chunk from other workers; the
/// first worker is frozen (SIGSTOP) once it holds chunks and nothing is queued for it. The
/// result is checked; returns the nodes and how long the job took after the freeze.
fn freeze_a_peer_holding_chunks(supervisor: &str, worker: &str) -> (Nodes, Duration) {
    // With one subtask in flight per worker, the frozen worker's finished chunks are read by
    // the others (its own queue cannot hide them), which is the fault of row 1.
    let mut nodes = Nodes::supervisor(supervisor, worker);
    let frozen_addr = nodes.add_worker();
    for _ in 0..2 {
        nodes.add_worker();
    }
    let mut c = nodes.client();
    // Cheap leaves, then a heavy stage reading the reversed chunks from other workers.
    let (t, want) = heavy_job(
        "x = rand(6000000, chunk=20000, seed=9); y = x[::-1]; sum(exp(sin(y) * 2) - y, axis=0)",
    );
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    wait_progress(&mut c, task, 0.1);
    // Freeze it once it holds chunks and nothing is queued for it (pre-assigned work would
    // wait for node_timeout_ms, a different fault; if some was queued just before the
    // SIGSTOP, resume it and try again): the others need its chunks.
    let web = format!("http://{}/api/cluster/nodes", nodes.web.clone().unwrap());
    let w0 = || -> Option<serde_json::Value> {
        let v: serde_json::Value = ureq::get(&web).call().unwrap().into_json().unwrap();
        let nodes = v["nodes"].as_array().unwrap().clone();
        let w = nodes
            .iter()
            .find(|n| n["data_addr"] == frozen_addr.as_str());
        w.cloned()
    };
    // At most the subtask it runs, recovered with its chunks.
    let idle = |w: &Option<serde_json::Value>| w.as_ref().is_none_or(|w| w["queued"] == 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let w = w0().expect("the worker to freeze is registered");
        assert!(Instant::now() < deadline, "{w}");
        if !(w["queued"] == 0 && w["stored_chunks"].as_u64() > Some(0)) {
            std::thread::sleep(Duration::from_millis(2));
            continue;
        }
        signal(&nodes.workers[0], "STOP");
        if idle(&w0()) {
            break;
        }
        signal(&nodes.workers[0], "CONT");
    }
    let info = c.get_task_result(task).unwrap();
    assert!(
        !info.status.is_terminal(),
        "ended before the freeze: {info:?}"
    );
    let frozen = Instant::now();
    let info = wait_end(&mut c, task, Duration::from_secs(30));
    let took = frozen.elapsed();
    eprintln!(
        "frozen peer ({}): job ended {took:?} after the SIGSTOP ({} retries)",
        worker.lines().next().unwrap_or("").trim(),
        info.retries
    );
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    let got = c.fetch(task).unwrap().remove(0);
    common::assert_close(&got, &want, "with a frozen peer");
    signal(&nodes.workers[0], "CONT");
    (nodes, took)
}

/// Kills or freezes the supervisor while both workers are busy; every worker must try to
/// rejoin, then exit non-zero within 2 × `node_timeout_ms` (2 s here) plus 2.5 s (a heartbeat
/// tick, the restart, a loaded CI machine). Returns the slowest exit.
fn workers_exit_when_the_supervisor(sig: &str) -> Duration {
    let mut nodes = Nodes::supervisor("  node_timeout_ms: 2000\n", "");
    for _ in 0..2 {
        nodes.add_worker();
    }
    let mut c = nodes.client();
    let t = ares_core::expr::evaluate(
        "x = rand(6000000, chunk=20000, seed=9); sum(exp(sin(x) * 2) - x, axis=0)",
    )
    .unwrap();
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    wait_progress(&mut c, task, 0.1);
    signal(&nodes.supervisor, sig);
    let gone = Instant::now();
    let bound = Duration::from_millis(6500);
    let mut slowest = Duration::ZERO;
    for (i, w) in nodes.workers.iter_mut().enumerate() {
        let status = loop {
            if let Some(s) = w.try_wait().unwrap() {
                break s;
            }
            if gone.elapsed() > bound {
                let log = nodes.dir.path().join(format!("w{i}.log"));
                let log = std::fs::read_to_string(log).unwrap_or_default();
                panic!("worker {i} still running after {bound:?}; its log:\n{log}");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        slowest = slowest.max(gone.elapsed());
        assert!(!status.success(), "worker {i} exited with {status}");
    }
    eprintln!("supervisor {sig}: workers exited non-zero within {slowest:?}");
    slowest
}

#[test]
fn busy_workers_exit_when_the_supervisor_is_killed() {
    workers_exit_when_the_supervisor("KILL");
}

#[test]
fn busy_workers_exit_when_the_supervisor_freezes() {
    let took = workers_exit_when_the_supervisor("STOP");
    // Silence, not a closed connection, told them: it takes the timeout.
    assert!(took >= Duration::from_millis(2000), "{took:?}");
}

#[test]
fn a_subtask_that_kills_every_worker_fails_its_task_by_name() {
    // Each worker may map 1.5 GB; one chunk of 4·10^8 int64 ones (3.2 GB) aborts it, as an
    // out-of-memory kill would.
    let mut nodes = Nodes::supervisor(
        "  node_timeout_ms: 2000\n  no_worker_timeout_ms: 20000\nscheduling:\n  subtask_max_retries: 2\n",
        "",
    );
    for _ in 0..3 {
        nodes.add_worker_limited(Some(1_500_000));
    }
    let mut c = nodes.client();
    let start = Instant::now();
    // int64: float constants are generated block by block and never make the chunk.
    let task = submit(
        &mut c,
        "sum(ones(400000000, chunk=400000000, dtype=\"int64\"))",
    );
    let info = wait_end(&mut c, task, Duration::from_secs(30));
    eprintln!("killer subtask: task failed after {:?}", start.elapsed());
    assert_eq!(info.status, TaskStatus::Failed, "{info:?}");
    let error = info.error.unwrap();
    assert!(error.starts_with("subtask "), "{error}");
    assert!(error.contains("(full, sum)"), "{error}");
    assert!(
        error.contains("had to run again 3 times, over scheduling.subtask_max_retries = 2"),
        "{error}"
    );
    assert!(
        error.contains("was lost while it had the subtask (connection closed)"),
        "{error}"
    );
    // Each aborted (the last one may still be dumping core).
    let deadline = Instant::now() + Duration::from_secs(10);
    for (i, w) in nodes.workers.iter_mut().enumerate() {
        let status = loop {
            if let Some(s) = w.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "worker {i} still running");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(!status.success(), "worker {i}: {status}");
    }
}

#[test]
fn a_worker_paused_past_the_node_timeout_rejoins_and_takes_work() {
    let mut nodes = Nodes::supervisor("  node_timeout_ms: 1000\n", "web:\n  listen: 127.0.0.1:0\n");
    for _ in 0..3 {
        nodes.add_worker();
    }
    let mut c = nodes.client();
    let (t, want) =
        heavy_job("x = rand(3000000, chunk=20000, seed=9); sum(exp(sin(x) * 2) - x, axis=0)");
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    wait_progress(&mut c, task, 0.2);
    signal(&nodes.workers[1], "STOP");
    std::thread::sleep(Duration::from_millis(2500));
    signal(&nodes.workers[1], "CONT");
    let resumed = Instant::now();
    let info = wait_end(&mut c, task, Duration::from_secs(60));
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    common::assert_close(&c.fetch(task).unwrap().remove(0), &want, "after a pause");
    c.cancel_task(task).unwrap();
    // Declared dead, it is told so on resuming, drops its state and registers again in the
    // same process: three live workers, each holding part of the next result.
    let web = format!("http://{}/api/cluster/nodes", nodes.web.clone().unwrap());
    let live = || -> Vec<serde_json::Value> {
        let v: serde_json::Value = ureq::get(&web).call().unwrap().into_json().unwrap();
        v["nodes"].as_array().unwrap().clone()
    };
    while live().len() < 3 {
        assert!(
            resumed.elapsed() < Duration::from_secs(5),
            "not rejoined: {:?}",
            live()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    eprintln!(
        "paused worker: registered again {:?} after resuming",
        resumed.elapsed()
    );
    assert!(nodes.workers[1].try_wait().unwrap().is_none(), "it exited");
    let task = submit(&mut c, "rand(600000, chunk=20000, seed=1) * 2");
    let info = wait_end(&mut c, task, Duration::from_secs(30));
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    std::thread::sleep(Duration::from_millis(500)); // a few heartbeats carry the counts
    let nodes_now = live();
    assert_eq!(nodes_now.len(), 3, "{nodes_now:?}");
    assert!(
        nodes_now
            .iter()
            .all(|n| n["stored_chunks"].as_u64() > Some(0)),
        "every worker, the rejoined one included, holds result chunks: {nodes_now:?}"
    );
    let log = std::fs::read_to_string(nodes.dir.path().join("supervisor.log")).unwrap();
    assert!(log.contains("missed its heartbeats"), "{log}");
}

#[test]
fn sigterm_fails_running_tasks_and_the_supervisor_exits_zero() {
    let mut nodes = Nodes::supervisor("  node_timeout_ms: 2000\n", "");
    nodes.add_worker();
    let mut c = nodes.client();
    let task = submit(
        &mut c,
        "x = rand(6000000, chunk=20000, seed=9); sum(exp(sin(x) * 2) - x, axis=0)",
    );
    wait_progress(&mut c, task, 0.05);
    signal(&nodes.supervisor, "TERM");
    let sent = Instant::now();
    let info = wait_end(&mut c, task, Duration::from_secs(10));
    assert_eq!(info.status, TaskStatus::Failed, "{info:?}");
    assert_eq!(info.error.as_deref(), Some("supervisor shutting down"));
    let status = loop {
        if let Some(s) = nodes.supervisor.try_wait().unwrap() {
            break s;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "the supervisor lingers"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    eprintln!(
        "SIGTERM: supervisor exited {status} after {:?}",
        sent.elapsed()
    );
    assert!(status.success(), "{status}");
}
