//! Operating faults (issue 9): a worker drained with SIGTERM, and a worker frozen while it
//! runs a subtask whose output nobody is fetching yet (the suspect timeout hands its work to
//! others long before `node_timeout_ms`). Real `ares node` processes on loopback, results
//! checked against the local executor; the measured times are printed for RELIABILITY.md.

mod common;

use ares::api::TaskApi;
use ares::protocol::TaskStatus;
use ares_core::tensor::Tensor;
use common::nodes::{heavy_job, signal, wait_end, wait_progress, Nodes};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

fn wait_exit(child: &mut Child, deadline: Duration) -> (ExitStatus, Duration) {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return (s, start.elapsed());
        }
        assert!(
            start.elapsed() < deadline,
            "still running after {deadline:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn log(nodes: &Nodes, file: &str) -> String {
    std::fs::read_to_string(nodes.dir.path().join(file)).unwrap()
}

#[test]
fn sigterm_drains_a_worker_which_exits_zero_and_the_job_is_exact() {
    let mut nodes = Nodes::supervisor(
        "  node_timeout_ms: 3000\n",
        "  drain_timeout_ms: 5000\nweb:\n  listen: 127.0.0.1:0\n",
    );
    nodes.add_worker();
    nodes.add_worker();
    let mut c = nodes.client();
    let (t, want) =
        heavy_job("x = rand(3000000, chunk=20000, seed=5); sum(exp(sin(x)) * 2 - x, axis=0)");
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    wait_progress(&mut c, task, 0.2);
    signal(&nodes.workers[0], "TERM");
    let (status, took) = wait_exit(&mut nodes.workers[0], Duration::from_secs(10));
    eprintln!("drained worker exited {status} {took:?} after SIGTERM");
    assert!(status.success(), "{status}");
    let info = wait_end(&mut c, task, Duration::from_secs(30));
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    let first = info.subtasks;
    let got = c.fetch(task).unwrap().remove(0);
    common::assert_close(&got, &want, "after a worker drained");
    let sup = log(&nodes, "supervisor.log");
    assert!(sup.contains("drained after SIGTERM and left"), "{sup}");
    let w0 = log(&nodes, "w0.log");
    assert!(w0.contains("drain over"), "{w0}");
    assert!(
        !w0.contains("rejoining"),
        "a drained worker does not rejoin: {w0}"
    );
    // The cluster goes on with the other worker.
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    let info = wait_end(&mut c, task, Duration::from_secs(30));
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    let all = (first + info.subtasks) as f64;
    // /metrics counts what happened: one worker left, two jobs done, subtasks run.
    let url = format!("http://{}/metrics", nodes.web.clone().unwrap());
    let text = ureq::get(&url).call().unwrap().into_string().unwrap();
    let value = |key: &str| -> f64 {
        let line = text.lines().find(|l| l.starts_with(key));
        let line = line.unwrap_or_else(|| panic!("no {key} in:\n{text}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert_eq!(value("ares_workers_live "), 1.0);
    assert_eq!(value("ares_tasks{state=\"succeeded\"} "), 2.0);
    assert_eq!(value("ares_tasks{state=\"running\"} "), 0.0);
    assert!(
        value("ares_subtasks_run_total ") >= all,
        "{all} subtasks: {text}"
    );
}

#[test]
fn a_worker_frozen_mid_subtask_is_suspect_and_its_work_runs_elsewhere() {
    // node_timeout_ms is far past the test's bound: only the suspect timeout (and, for
    // inputs it holds, the fetch timeout) can end the job in time.
    let mut nodes = Nodes::supervisor(
        "  node_timeout_ms: 30000\n  suspect_after_ms: 1000\n",
        "  fetch_timeout_ms: 1500\n",
    );
    nodes.add_worker();
    nodes.add_worker();
    let mut c = nodes.client();
    // Few, heavy subtasks: the frozen worker is always in the middle of one.
    let (t, want) =
        heavy_job("x = rand(4000000, chunk=250000, seed=6); sum(exp(sin(x) * 2) - x, axis=0)");
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    wait_progress(&mut c, task, 0.05);
    signal(&nodes.workers[0], "STOP");
    let frozen = Instant::now();
    let info = wait_end(&mut c, task, Duration::from_secs(25));
    let took = frozen.elapsed();
    eprintln!(
        "worker frozen mid-subtask: job ended {took:?} after the SIGSTOP ({} retries)",
        info.retries
    );
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    let got = c.fetch(task).unwrap().remove(0);
    common::assert_close(&got, &want, "with a frozen worker");
    let sup = log(&nodes, "supervisor.log");
    assert!(
        sup.contains("subtasks of silent workers run again elsewhere"),
        "{sup}"
    );
    signal(&nodes.workers[0], "CONT");
}

#[test]
fn workers_stopped_after_their_supervisor_exit_at_once_instead_of_rejoining() {
    // As when a whole cluster is stopped (`docker compose down`): the supervisor, which has
    // no task to fail, goes at once; its workers notice before their own SIGTERM arrives and
    // start rejoining. The signal must end that, not `node_timeout_ms` (10 s) of retries.
    let mut nodes = Nodes::supervisor("  node_timeout_ms: 10000\n", "");
    nodes.add_worker();
    nodes.add_worker();
    let mut c = nodes.client();
    let (t, _) = heavy_job("sum(arange(1000, chunk=100))");
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    assert_eq!(
        wait_end(&mut c, task, Duration::from_secs(30)).status,
        TaskStatus::Succeeded
    );
    drop(c);
    signal(&nodes.supervisor, "TERM");
    let (status, took) = wait_exit(&mut nodes.supervisor, Duration::from_secs(5));
    eprintln!("idle supervisor exited {status} {took:?} after SIGTERM");
    assert!(status.success(), "{status}");
    std::thread::sleep(Duration::from_millis(300)); // the workers are rejoining by now
    for w in &nodes.workers {
        signal(w, "TERM");
    }
    for i in 0..nodes.workers.len() {
        let (status, took) = wait_exit(&mut nodes.workers[i], Duration::from_secs(3));
        eprintln!("worker {i} exited {status} {took:?} after SIGTERM");
        assert!(status.success(), "{status}");
    }
    let w0 = log(&nodes, "w0.log");
    assert!(w0.contains("lost the supervisor"), "{w0}");
}

#[test]
fn results_lost_with_a_worker_after_the_task_succeeded_are_recomputed() {
    let mut nodes = Nodes::supervisor("", "");
    for _ in 0..2 {
        nodes.add_worker();
    }
    let mut c = nodes.client();
    // A kept result of 40 chunks, spread over both workers.
    let (t, want) = heavy_job("x = rand(4000000, chunk=100000, seed=3); exp(sin(x)) * 2 - x");
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    let info = wait_end(&mut c, task, Duration::from_secs(60));
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    assert_eq!(info.retries, 0, "{info:?}");
    nodes.workers[0].kill().unwrap();
    nodes.workers[0].wait().unwrap();
    let lost = Instant::now();
    // The supervisor sees the connection close and runs again what made its results.
    let deadline = lost + Duration::from_secs(20);
    let during = loop {
        let info = c.get_task_result(task).unwrap();
        if info.retries > 0 {
            break info.status;
        }
        assert!(
            Instant::now() < deadline,
            "the lost results were not recomputed"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    // The fetch waits for that run (if it is still going), then reads every chunk from the
    // worker left.
    let got = c.fetch(task).unwrap().remove(0);
    let info = c.get_task_result(task).unwrap();
    eprintln!(
        "results lost after success: fetched {:?} after the kill ({} re-runs; {during:?} when asked)",
        lost.elapsed(),
        info.retries
    );
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    common::assert_close(&got, &want, "results recomputed after a worker was lost");
    assert!(log(&nodes, "supervisor.log").contains("recomputing them from lineage"));
}

#[test]
fn a_named_result_being_recomputed_is_read_once_it_is_back() {
    let mut nodes = Nodes::supervisor("", "web:\n  listen: 127.0.0.1:0\n");
    for _ in 0..2 {
        nodes.add_worker();
    }
    let web = format!("http://{}/api/session/s", nodes.web.clone().unwrap());
    let call = |method: &str, path: &str, body: Option<serde_json::Value>| -> serde_json::Value {
        let r = ureq::request(method, &format!("{web}{path}"));
        let r = match body {
            Some(b) => r.send_json(b),
            None => r.call(),
        };
        r.unwrap_or_else(|e| panic!("{method} {path}: {e}"))
            .into_json()
            .unwrap()
    };
    call("PUT", "", None);
    let expr = "rand(4000000, chunk=100000, seed=4) * 3 - 1";
    let x = call(
        "POST",
        "/task",
        Some(serde_json::json!({"expr": expr, "name": "x"})),
    )["task_id"]
        .as_u64()
        .unwrap();
    let info = call("GET", &format!("/task/{x}?action=wait&timeout=60"), None);
    assert_eq!(info["status"], "succeeded", "{info}");
    nodes.workers[0].kill().unwrap();
    nodes.workers[0].wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while call("GET", &format!("/task/{x}"), None)["retries"] == 0 {
        assert!(
            Instant::now() < deadline,
            "x's lost chunks were not recomputed"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Reading `x` waits for its recompute, then reads it where it is now.
    let t = call("POST", "/task", Some(serde_json::json!({"expr": "sum(x)"})))["task_id"]
        .as_u64()
        .unwrap();
    let info = call("GET", &format!("/task/{t}?action=wait&timeout=60"), None);
    assert_eq!(info["status"], "succeeded", "{info}");
    let got = call("GET", &format!("/task/{t}/result"), None)["data"]
        .as_f64()
        .unwrap();
    let (_, want) = heavy_job(&format!("sum({expr})"));
    let want = want.iter().next().copied().unwrap();
    assert!((got - want).abs() <= 1e-9 * want.abs(), "{got} vs {want}");
}

#[test]
fn a_frozen_result_holder_is_read_around_once_the_read_times_out() {
    // node_timeout_ms is far beyond the test's deadline: only the read's timeout can tell
    // the supervisor that the frozen worker's results must be recomputed.
    let mut nodes = Nodes::supervisor("  node_timeout_ms: 60000\n", "  fetch_timeout_ms: 1000\n");
    for _ in 0..2 {
        nodes.add_worker();
    }
    let mut c = nodes.client();
    let (t, want) = heavy_job("x = rand(4000000, chunk=100000, seed=5); exp(sin(x)) * 2 - x");
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    let info = wait_end(&mut c, task, Duration::from_secs(60));
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    signal(&nodes.workers[0], "STOP");
    let frozen = Instant::now();
    let got = c.fetch(task).unwrap().remove(0);
    let info = c.get_task_result(task).unwrap();
    eprintln!(
        "result holder frozen: fetched {:?} after the SIGSTOP ({} re-runs)",
        frozen.elapsed(),
        info.retries
    );
    signal(&nodes.workers[0], "CONT");
    assert!(info.retries > 0, "{info:?}");
    common::assert_close(&got, &want, "results recomputed around a frozen holder");
    assert!(log(&nodes, "supervisor.log").contains("reading results from w"));
}
