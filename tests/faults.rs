//! Faults never hang a job (issue 9): real `ares node` processes on loopback, each fault
//! injected the way an operator would meet it (no worker, SIGSTOP, SIGKILL), each wait with a
//! deadline, each result checked against its known value. Timeouts are short so the suite
//! stays fast; the measured recovery times are printed (`--nocapture`) for RELIABILITY.md.

mod common;

use ares::api::{NativeClient, TaskApi};
use ares::protocol::secret::Secret;
use ares::protocol::{TaskInfo, TaskStatus};
use ares::tensor::Tensor;
use common::cluster::{node, wait_ready};
use std::process::Child;
use std::time::{Duration, Instant};

/// A supervisor and workers started one by one, so a test can start a worker late, stop or
/// kill any node, and read its exit status.
struct Nodes {
    dir: tempfile::TempDir,
    cfg: String,
    addr: String,
    client_secret: Secret,
    supervisor: Child,
    workers: Vec<Child>,
}

impl Drop for Nodes {
    fn drop(&mut self) {
        for n in self.workers.iter_mut().chain([&mut self.supervisor]) {
            signal(n, "CONT");
            let _ = n.kill();
            let _ = n.wait();
        }
    }
}

fn signal(child: &Child, sig: &str) {
    let _ = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &child.id().to_string()])
        .status();
}

impl Nodes {
    /// A supervisor with `cluster_extra` keys (indented two spaces) and `worker_extra` keys in
    /// the `worker:` section; no worker yet.
    fn supervisor(cluster_extra: &str, worker_extra: &str) -> Nodes {
        let dir = tempfile::tempdir().unwrap();
        let secret = Secret::random();
        let client_secret = Secret::random();
        let (sf, cf) = (dir.path().join("secret"), dir.path().join("client-secret"));
        std::fs::write(&sf, secret.bytes()).unwrap();
        std::fs::write(&cf, client_secret.bytes()).unwrap();
        let config = dir.path().join("test.yml");
        std::fs::write(
            &config,
            format!(
                "cluster:\n  listen: 127.0.0.1:0\n  secret_file: {}\n  client_secret_file: {}\n  heartbeat_interval_ms: 100\n{cluster_extra}worker:\n  slots: 1\n{worker_extra}",
                sf.display(),
                cf.display()
            ),
        )
        .unwrap();
        let cfg = config.to_str().unwrap().to_string();
        let ready = dir.path().join("supervisor.json");
        let supervisor = node(&["node", "--role", "supervisor", "--config", &cfg], &ready);
        let (addr, _) = wait_ready(&ready);
        Nodes {
            dir,
            cfg,
            addr,
            client_secret,
            supervisor,
            workers: Vec::new(),
        }
    }

    /// Starts one more worker; returns its data-plane address.
    fn add_worker(&mut self) -> String {
        let ready = self
            .dir
            .path()
            .join(format!("w{}.json", self.workers.len()));
        let args = ["node", "--role", "worker", "--config", &self.cfg];
        let mut args = args.to_vec();
        args.extend(["--supervisor", &self.addr]);
        self.workers.push(node(&args, &ready));
        wait_ready(&ready).0
    }

    fn client(&self) -> NativeClient {
        NativeClient::connect_with(&self.addr, Duration::from_secs(10), &self.client_secret)
            .unwrap()
    }
}

fn submit(c: &mut NativeClient, program: &str) -> ares::ids::TaskId {
    let t = ares::expr::evaluate(program).unwrap();
    c.submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap()
}

/// Waits for the task to end; panics past `deadline`.
fn wait_end(c: &mut NativeClient, task: ares::ids::TaskId, deadline: Duration) -> TaskInfo {
    let info = c.wait_task(task, deadline).unwrap();
    assert!(
        info.status.is_terminal(),
        "not ended after {deadline:?}: {info:?}"
    );
    info
}

fn scalar(c: &mut NativeClient, task: ares::ids::TaskId) -> f64 {
    c.fetch(task)
        .unwrap()
        .remove(0)
        .get_flat(0)
        .unwrap()
        .as_f64()
}

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
