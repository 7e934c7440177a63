//! Real clusters: a supervisor and workers as separate `ares node` processes on loopback
//! (port 0, addresses read back from ready files), driven through the native client.

mod common;

use ares::api::{NativeClient, TaskApi};
use ares::protocol::TaskStatus;
use ares_core::tensor::{self, Tensor};
use common::cluster::Cluster;
use common::{assert_close, reference};
use std::time::{Duration, Instant};

fn run(c: &mut NativeClient, t: &Tensor) -> Result<ares_core::array::ArrayData, String> {
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[t]), None)
        .map_err(|e| e.to_string())?;
    let info = c.wait_task(task, Duration::from_secs(120)).unwrap();
    match info.status {
        TaskStatus::Succeeded => {
            let r = c.fetch(task).unwrap().remove(0);
            c.cancel_task(task).unwrap();
            Ok(r)
        }
        _ => Err(info.error.unwrap_or_else(|| format!("{:?}", info.status))),
    }
}

#[test]
fn expressions_match_the_reference_on_three_workers() {
    let cluster = Cluster::start(3, 2);
    let mut c = cluster.client();
    let programs = [
        "a = rand(100000, chunk=7000, seed=1); b = rand(100000, chunk=9000, seed=2); sum(a + b)",
        "m = ones((300, 200), chunk=(64, 50)); sum(matmul(m, transpose(m))[::2, 10:])",
        "x = randn(60, 40, chunk=(16, 9), seed=3); (x - x.mean(axis=0)) / x.std(axis=0)",
        "x = arange(50000, chunk=999); concatenate((x[::-3], x[10:20]))",
        "x = rand(30, 50, chunk=7, seed=4); y = rand(50, 20, chunk=6, seed=5); (x @ y).max(axis=1, keepdims=True)",
    ];
    for p in programs {
        let t = ares_core::expr::evaluate(p).unwrap();
        let want = reference::evaluate(&Tensor::graph(&[&t])).remove(0);
        let got = run(&mut c, &t).unwrap();
        assert_eq!(got.dtype(), t.dtype(), "{p}");
        assert_close(&got, &want, p);
    }
}

#[test]
fn blocked_matmul_on_two_workers_equals_the_local_run() {
    // The benchmark's 4x4 blocks at a twentieth of its size: partial products placed by input
    // locality and their siblings, on two single-slot workers as in `ares run --workers 2
    // --slots 1`. The reduction trees are the graph's, so the cluster's sums are the local
    // run's to the bit; both match the independent reference.
    let cluster = Cluster::start(2, 1);
    let mut c = cluster.client();
    let programs = [
        "a = rand((200, 200), chunk=50, seed=1); b = rand((200, 200), chunk=50, seed=2); sum(matmul(a, b))",
        "a = rand((200, 150), chunk=50, seed=3); b = rand((150, 250), chunk=50, seed=4); matmul(a, b)",
    ];
    for p in programs {
        let t = ares_core::expr::evaluate(p).unwrap();
        let got = run(&mut c, &t).unwrap();
        assert_eq!(
            got,
            common::run(&t, &Default::default(), 1, 2),
            "{p}: not --local's"
        );
        let want = reference::evaluate(&Tensor::graph(&[&t])).remove(0);
        assert_close(&got, &want, p);
    }
}

#[test]
fn a_worker_killed_mid_task_does_not_change_the_result() {
    let mut cluster = Cluster::start(3, 1);
    let mut c = cluster.client();
    // ~600 subtasks of real work, so the kill lands mid-task even in a debug build.
    let t = ares_core::expr::evaluate(
        "x = rand(6000000, chunk=20000, seed=9); sum(exp(sin(x) * 2) - x, axis=0)",
    )
    .unwrap();
    let want = common::run(&t, &Default::default(), 1, 2).to_f64();
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let info = c.get_task_result(task).unwrap();
        assert!(
            !info.status.is_terminal(),
            "the task ended before the kill: make it bigger"
        );
        if info.progress >= 0.2 {
            break;
        }
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(5));
    }
    // SIGKILL: no goodbye, its chunks are gone.
    cluster.nodes[1].kill().unwrap();
    let info = c.wait_task(task, Duration::from_secs(120)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{:?}", info.error);
    assert!(info.retries > 0, "the killed worker's subtasks were re-run");
    let got = c.fetch(task).unwrap().remove(0);
    assert_close(&got, &want, "after losing a worker");
    // The cluster keeps serving with the survivors.
    let small = tensor::arange(
        ares_core::array::Scalar::I64(0),
        ares_core::array::Scalar::I64(1000),
        ares_core::array::Scalar::I64(1),
        10,
    )
    .unwrap()
    .sum(None, false)
    .unwrap();
    assert_eq!(
        run(&mut c, &small).unwrap().get_flat(0).unwrap().as_i64(),
        499500
    );
}

#[test]
fn cancel_and_concurrent_tasks() {
    let cluster = Cluster::start(2, 1);
    let mut c = cluster.client();
    // Slow enough to be cancelled mid-way whatever the kernels' speed: 10^9 values, 10^4
    // subtasks (FUSE[rand, exp, sum] streams its values, ~2 s of work on 2 slots at best).
    let slow = ares_core::expr::evaluate("x = rand(1000000000, chunk=100000, seed=1); sum(exp(x))")
        .unwrap();
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&slow]), None)
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let info = c.cancel_task(task).unwrap();
    assert_eq!(info.status, TaskStatus::Cancelled);
    assert_eq!(
        c.wait_task(task, Duration::from_secs(1)).unwrap().status,
        TaskStatus::Cancelled
    );
    assert!(c.fetch(task).is_err());

    // Two tasks in flight at once, on one connection.
    let a = ares_core::expr::evaluate("x = rand(50000, chunk=1000, seed=2); sum(x * 2)").unwrap();
    let b = ares_core::expr::evaluate("y = arange(40000, chunk=777); y[::-1]").unwrap();
    let ta = c
        .submit_tileable_graph(&Tensor::graph(&[&a]), None)
        .unwrap();
    let tb = c
        .submit_tileable_graph(&Tensor::graph(&[&b]), None)
        .unwrap();
    for (task, t) in [(tb, &b), (ta, &a)] {
        assert_eq!(
            c.wait_task(task, Duration::from_secs(60)).unwrap().status,
            TaskStatus::Succeeded
        );
        let want = reference::evaluate(&Tensor::graph(&[t])).remove(0);
        assert_close(&c.fetch(task).unwrap()[0], &want, "concurrent task");
    }
}

/// Cancelling frees the workers at once: on the embedded engine (one worker, two slots, as
/// `ar.start(workers=1, slots=2)`), a task cancelled while its first subtasks run (the
/// supervisor keeps `slots × worker_prefetch` = 1024 of its 10^4 subtasks queued on the
/// worker), then a small task, which must not wait behind the cancelled one's subtasks.
/// Before the fix the worker forgot the cancel along with the task and ran all 1024 queued
/// subtasks in full first: the small task was still running after 120 s (debug build).
#[test]
fn a_task_after_a_cancelled_one_runs_at_once() {
    let config = ares::config::Config::default();
    let cluster = ares::node::EmbeddedCluster::start(&config, 1, 2).unwrap();
    let mut c = cluster.client(Duration::from_secs(10)).unwrap();
    let long = ares_core::expr::evaluate("sum(rand(10000000000, chunk=1000000, seed=1))").unwrap();
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&long]), None)
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    // Running, with its first subtasks done: the worker's queue is full.
    while c
        .wait_task(task, Duration::from_millis(20))
        .unwrap()
        .progress
        == 0.0
    {
        assert!(Instant::now() < deadline, "the long task never ran");
    }
    let cancelled = Instant::now();
    assert_eq!(c.cancel_task(task).unwrap().status, TaskStatus::Cancelled);
    let small = ares_core::expr::evaluate("sum(arange(100))").unwrap();
    let next = c
        .submit_tileable_graph(&Tensor::graph(&[&small]), None)
        .unwrap();
    let info = c.wait_task(next, Duration::from_secs(20)).unwrap();
    let took = cancelled.elapsed();
    assert_eq!(info.status, TaskStatus::Succeeded, "after {took:?}");
    assert_eq!(
        c.fetch(next).unwrap()[0].get_flat(0).unwrap().as_i64(),
        4950
    );
    eprintln!("from the cancel to the next task's result: {took:?}");
    // Two subtasks' kernels may still run when the cancel comes; nothing else may delay it.
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(
        c.wait_task(task, Duration::ZERO).unwrap().status,
        TaskStatus::Cancelled
    );
}

#[test]
fn kernel_errors_fail_the_task_not_the_node() {
    let cluster = Cluster::start(2, 1);
    let mut c = cluster.client();
    let bad = ares_core::expr::evaluate("arange(100, chunk=7) ** -1").unwrap();
    let err = run(&mut c, &bad).unwrap_err();
    assert!(err.contains("negative integer powers"), "{err}");
    let good = ares_core::expr::evaluate("sum(ones(100, chunk=7))").unwrap();
    assert_eq!(
        run(&mut c, &good).unwrap().get_flat(0).unwrap().as_f64(),
        100.0
    );
    // An invalid graph is refused at submission.
    let mut g = Tensor::graph(&[&good]);
    g.outputs = vec![ares_core::ids::TileableIdx(99)];
    let e = c.submit_tileable_graph(&g, None).unwrap_err().to_string();
    assert!(e.contains("malformed graph"), "{e}");
}

#[test]
fn session_execute_and_per_task_config() {
    let cluster = Cluster::start(2, 1);
    let mut session = ares::api::Session::new(Box::new(cluster.client()));
    let t =
        ares_core::expr::evaluate("m = rand(40, 30, chunk=(9, 7), seed=4); (m @ m.T).sum(axis=1)")
            .unwrap();
    let got = session.execute_f64(&t).unwrap();
    let want = reference::evaluate(&Tensor::graph(&[&t])).remove(0);
    assert_close(
        &ares_core::array::ArrayData::F64(got),
        &want,
        "Session::execute",
    );

    // extra config at submission changes the plan: fan-in 8 instead of 4.
    let mut c = cluster.client();
    let sum = ares_core::expr::evaluate("sum(rand(64, chunk=1, seed=1))").unwrap();
    let graph = Tensor::graph(&[&sum]);
    let run = |c: &mut NativeClient, config: Option<ares::config::TaskConfig>| {
        let task = c.submit_with_config(&graph, Some(false), config).unwrap();
        let info = c.wait_task(task, Duration::from_secs(30)).unwrap();
        assert_eq!(info.status, TaskStatus::Succeeded);
        assert!(info.prepare_seconds.is_some());
        c.cancel_task(task).unwrap();
        info.subtasks
    };
    let default = run(&mut c, None);
    let wide = run(
        &mut c,
        Some(ares::config::TaskConfig {
            combine_size: 8,
            ..Default::default()
        }),
    );
    assert!(
        wide < default,
        "fan-in 8 gives fewer combine subtasks: {wide} vs {default}"
    );
}
