//! Supervised actors (issue 9, row 6): each actor of the supervisor and the worker is made to
//! panic in the middle of a running job (`ARES_INJECT_PANIC`, only in builds with the
//! `fault-injection` feature), on real processes. The node must keep serving and the job must
//! end within seconds: with the exact result where the actor's state can be rebuilt (the
//! scheduler re-driven by the tasks, the task manager recounting, a link or a worker
//! starting afresh), or with a clear error where it cannot (a task's processor).
//!
//! Run with `cargo test --features fault-injection --test faults_restart`.

mod common;

use ares::api::{NativeClient, TaskApi};
use ares::protocol::{TaskInfo, TaskStatus};
use ares_core::ids::TaskId;
use ares_core::tensor::Tensor;
use common::nodes::{heavy_job, Nodes};
use std::time::{Duration, Instant};

const JOB: &str = "x = rand(1500000, chunk=15000, seed=4); sum(sin(x) * 3 + x, axis=0)";
/// A job must end this soon after the panic, on a loaded 2-core machine.
const BOUND: Duration = Duration::from_secs(20);

/// A supervisor (with `sup_env`), two workers (the first with `worker_env`) and the web API.
fn nodes(sup_env: &[(&str, &str)], worker_env: &[(&str, &str)]) -> Nodes {
    let mut n = Nodes::supervisor_env(
        "  node_timeout_ms: 3000\n",
        "  fetch_timeout_ms: 2000\nweb:\n  listen: 127.0.0.1:0\n",
        sup_env,
    );
    n.add_worker_env(None, worker_env);
    n.add_worker();
    n
}

/// Waits for the task's end through a client that may be cut off or refused on the way
/// (a restarting task manager or client link): every error is retried on a new connection.
fn wait_through_restarts(n: &Nodes, c: &mut NativeClient, task: TaskId) -> TaskInfo {
    let deadline = Instant::now() + BOUND;
    loop {
        assert!(
            Instant::now() < deadline,
            "{task} did not end within {BOUND:?}"
        );
        match c.wait_task(task, Duration::from_millis(500)) {
            Ok(info) if info.status.is_terminal() => return info,
            Ok(_) => {}
            Err(e) => {
                eprintln!("request failed ({e}); reconnecting");
                std::thread::sleep(Duration::from_millis(100));
                *c = n.client();
            }
        }
    }
}

/// `ares_actor_restarts_total{actor="..."}` from the supervisor's `/metrics`.
fn restarts(n: &Nodes, actor: &str) -> u64 {
    let url = format!("http://{}/metrics", n.web.clone().unwrap());
    let text = ureq::get(&url).call().unwrap().into_string().unwrap();
    let key = format!("ares_actor_restarts_total{{actor=\"{actor}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&key))
        .map_or(0, |v| v.trim().parse().unwrap())
}

/// Submits the job, waits for its end through any restart; returns its info and the time.
fn run_job(n: &Nodes) -> (TaskInfo, Option<ndarray::ArrayD<f64>>, Duration) {
    let (t, want) = heavy_job(JOB);
    let mut c = n.client();
    let start = Instant::now();
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    let info = wait_through_restarts(n, &mut c, task);
    let took = start.elapsed();
    if info.status == TaskStatus::Succeeded {
        let got = c.fetch(task).unwrap().remove(0);
        common::assert_close(&got, &want, "after an actor restart");
        (info, Some(want), took)
    } else {
        (info, None, took)
    }
}

fn log(n: &Nodes, file: &str) -> String {
    std::fs::read_to_string(n.dir.path().join(file)).unwrap()
}

/// Asserts the job succeeded exactly, the actor restarted once, and a second job succeeds.
fn survives(n: &Nodes, actor: &str) {
    let (info, _, took) = run_job(n);
    eprintln!(
        "{actor} panic: job {:?} in {took:?} ({} retries)",
        info.status, info.retries
    );
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    let (again, _, _) = run_job(n);
    assert_eq!(again.status, TaskStatus::Succeeded, "{again:?}");
}

#[test]
fn a_scheduler_panic_re_drives_the_queues_and_the_job_is_exact() {
    let n = nodes(&[("ARES_INJECT_PANIC", "Scheduler:Finished:6")], &[]);
    survives(&n, "Scheduler");
    assert_eq!(restarts(&n, "Scheduler"), 1);
    let log = log(&n, "supervisor.log");
    assert!(log.contains("scheduler restarted"), "{log}");
}

#[test]
fn a_task_processor_panic_fails_its_task_clearly_and_the_next_one_runs() {
    let n = nodes(&[("ARES_INJECT_PANIC", "TaskProcessor:Reports:6")], &[]);
    let (info, _, took) = run_job(&n);
    eprintln!(
        "TaskProcessor panic: {:?} in {took:?}: {:?}",
        info.status, info.error
    );
    assert_eq!(info.status, TaskStatus::Failed, "{info:?}");
    let error = info.error.unwrap();
    assert!(
        error.contains("processor panicked while handling Reports")
            && error.contains("fault injection"),
        "{error}"
    );
    assert_eq!(restarts(&n, "TaskProcessor"), 1);
    let (again, _, _) = run_job(&n);
    assert_eq!(again.status, TaskStatus::Succeeded, "{again:?}");
}

#[test]
fn a_task_manager_panic_answers_an_error_and_keeps_the_tasks() {
    // The first wait's look-up of its task panics (the submission looks nothing up).
    let n = nodes(&[("ARES_INJECT_PANIC", "TaskManager:FindTask:1")], &[]);
    survives(&n, "TaskManager");
    assert_eq!(restarts(&n, "TaskManager"), 1);
}

#[test]
fn a_worker_link_panic_closes_that_connection_and_the_worker_rejoins() {
    let n = nodes(&[("ARES_INJECT_PANIC", "Link:frame:12")], &[]);
    survives(&n, "Link");
    assert_eq!(restarts(&n, "Link"), 1);
    let logs = log(&n, "w0.log") + &log(&n, "w1.log");
    assert!(logs.matches("Worker ready on").count() >= 3, "{logs}");
}

#[test]
fn a_client_link_panic_closes_that_connection_and_the_client_reconnects() {
    let n = nodes(&[("ARES_INJECT_PANIC", "ClientLink:frame:3")], &[]);
    survives(&n, "ClientLink");
    assert_eq!(restarts(&n, "ClientLink"), 1);
}

#[test]
fn a_worker_actor_panic_restarts_the_worker_afresh_and_it_rejoins() {
    let n = nodes(&[], &[("ARES_INJECT_PANIC", "Worker:frame:8")]);
    survives(&n, "Worker");
    let log = log(&n, "w0.log");
    assert!(log.contains("handler panicked"), "{log}");
    assert!(log.matches("Worker ready on").count() >= 2, "{log}");
}
