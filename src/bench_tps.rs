//! `ares bench tps`: the MEP-0002 throughput workload, end to end, with a supervisor and
//! workers as separate processes on loopback: N independent trivial subtasks, or an N-leaf
//! tree reduction of fan-in 4. Measures submission to the last result (median of `repeat`
//! runs on one cluster), every node's CPU time, and each node's peak RSS. The nodes share a
//! random cluster secret, so every connection pays for the handshake as in production.

use anyhow::{bail, Result};
use ares::api::{NativeClient, TaskApi};
use ares::protocol::secret::Secret;
use ares::protocol::TaskStatus;
use ares_core::tensor::{self, Tensor};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Shape {
    /// N independent one-element chunks, one subtask each.
    Indep,
    /// `sum` over N one-element chunks: N leaf subtasks and a fan-in-4 combine tree.
    Tree,
}

/// Stops the node processes when the bench ends, however it ends: SIGTERM, workers first
/// (they leave as in production, and a tool that reports at exit, such as `valgrind
/// --tool=callgrind --trace-children=yes`, gets to write its report), then SIGKILL for any
/// node still running [`STOP_DEADLINE`] later.
pub struct Nodes(pub Vec<Child>);

/// How long the nodes get to exit after SIGTERM.
const STOP_DEADLINE: Duration = Duration::from_secs(10);

impl Drop for Nodes {
    fn drop(&mut self) {
        let deadline = Instant::now() + STOP_DEADLINE;
        // The supervisor is the first node: workers before it.
        for c in self.0.iter_mut().rev() {
            if let Ok(pid) = i32::try_from(c.id()) {
                // SAFETY: a signal to a child this process spawned and has not reaped.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            while Instant::now() < deadline && matches!(c.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn wait_ready(path: &Path) -> Result<String> {
    Ok(ares::node::wait_ready_file(path, Duration::from_secs(30))?.rpc)
}

/// (user + system CPU seconds, peak RSS in KiB) of a process, from /proc.
pub fn proc_usage(pid: u32) -> (f64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(") ")
        .map(|(_, rest)| rest.split(' ').collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let cpu = (ticks(11) + ticks(12)) / 100.0;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    (cpu, hwm)
}

/// The processes of a bench cluster.
#[derive(Clone, Copy, Debug)]
pub struct NodeSpec {
    pub workers: usize,
    /// Slots per worker.
    pub slots: usize,
    /// `scheduling.worker_prefetch`.
    pub prefetch: usize,
    /// `cluster.encrypt`: every link sealed (loopback alone would leave them in clear).
    pub encrypt: bool,
    /// The dashboard's task stream on (`web.task_stream_capacity` at its default) or off (0).
    pub task_stream: bool,
}

/// A supervisor and workers as separate processes on loopback, with a connected client.
pub struct BenchCluster {
    pub nodes: Nodes,
    pub client: NativeClient,
    dir: PathBuf,
}

impl BenchCluster {
    /// Starts the nodes, connects, and runs a warm-up task so every worker has registered.
    pub fn start(spec: NodeSpec) -> Result<Self> {
        let (nodes, client, dir) = start_cluster(spec)?;
        Ok(Self { nodes, client, dir })
    }

    /// Peak RSS in KiB: `{"supervisor": ..., "workers": [...]}`.
    pub fn peak_rss(&self) -> Value {
        let rss: Vec<u64> = self.nodes.0.iter().map(|c| proc_usage(c.id()).1).collect();
        json!({"supervisor": rss[0], "workers": &rss[1..]})
    }
}

impl Drop for BenchCluster {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts the supervisor and the workers of `spec` with a random secret, connects a client
/// and runs a warm-up task.
fn start_cluster(spec: NodeSpec) -> Result<(Nodes, NativeClient, PathBuf)> {
    let NodeSpec {
        workers,
        slots,
        prefetch,
        encrypt,
        task_stream,
    } = spec;
    let dir = std::env::temp_dir().join(format!("ares-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let config = dir.join("bench.yml");
    // Authentication on, as in production: a random secret in a file only we can read.
    let secret = Secret::random();
    let secret_file = dir.join("secret");
    std::fs::write(&secret_file, secret.bytes())?;
    std::fs::set_permissions(
        &secret_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )?;
    let capacity = if task_stream {
        ares::config::WebConfig::default().task_stream_capacity
    } else {
        0
    };
    std::fs::write(
        &config,
        format!("cluster:\n  listen: 127.0.0.1:0\n  encrypt: {encrypt}\n  secret_file: {}\nworker:\n  slots: {slots}\nscheduling:\n  worker_prefetch: {prefetch}\nweb:\n  task_stream_capacity: {capacity}\ntask:\n  default_config:\n    initial_same_color_num: 1\n", secret_file.display()),
    )?;
    let exe = std::env::current_exe()?;
    let spawn = |args: &[&str], ready: &PathBuf| -> Result<Child> {
        let _ = std::fs::remove_file(ready);
        Ok(Command::new(&exe)
            .args(args)
            .arg("--ready-file")
            .arg(ready)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?)
    };
    let sup_ready = dir.join("supervisor.json");
    let mut nodes = Nodes(vec![spawn(
        &[
            "node",
            "--role",
            "supervisor",
            "--config",
            config.to_str().unwrap(),
        ],
        &sup_ready,
    )?]);
    let addr = wait_ready(&sup_ready)?;
    for i in 0..workers {
        let ready = dir.join(format!("worker{i}.json"));
        nodes.0.push(spawn(
            &[
                "node",
                "--role",
                "worker",
                "--config",
                config.to_str().unwrap(),
                "--supervisor",
                &addr,
            ],
            &ready,
        )?);
        wait_ready(&ready)?;
    }
    let mut client = NativeClient::connect_with(&addr, Duration::from_secs(10), &secret)?;
    // Warm up, and make sure every worker has registered before the measured task.
    let warm = tensor::rand(&[64], 1, Some(7))?.sum(None, false)?;
    let t = client.submit_tileable_graph(&Tensor::graph(&[&warm]), None)?;
    client.wait_task(t, Duration::from_secs(30))?;
    client.cancel_task(t)?;
    Ok((nodes, client, dir))
}

/// `whole` prepares the graph in one piece even when it would stream.
pub fn bench_tps(
    shape: Shape,
    n: usize,
    spec: NodeSpec,
    repeat: usize,
    whole: bool,
) -> Result<Value> {
    let (nodes, mut client, dir) = start_cluster(spec)?;
    let NodeSpec {
        workers,
        slots,
        prefetch,
        ..
    } = spec;
    let (graph, fuse) = match shape {
        Shape::Indep => (
            Tensor::graph(&[&tensor::rand(&[n], 1, Some(1))?]),
            Some(false),
        ),
        Shape::Tree => (
            Tensor::graph(&[&tensor::rand(&[n], 1, Some(1))?.sum(None, false)?]),
            None,
        ),
    };
    let mut runs = Vec::with_capacity(repeat.max(1));
    let mut subtasks = 0;
    for _ in 0..repeat.max(1) {
        let cpu_before: Vec<f64> = nodes.0.iter().map(|c| proc_usage(c.id()).0).collect();
        let start = Instant::now();
        // The cluster's task config (bench.yml), without streaming.
        let one_piece = whole.then(|| ares::config::TaskConfig {
            initial_same_color_num: Some(1),
            stream_from_chunks: None,
            ..Default::default()
        });
        let task = client.submit_with_config(&graph, fuse, one_piece)?;
        let info = loop {
            let info = client.wait_task(task, Duration::from_secs(1))?;
            if info.status.is_terminal() {
                break info;
            }
        };
        let seconds = start.elapsed().as_secs_f64();
        let cpu: Vec<f64> = nodes
            .0
            .iter()
            .zip(&cpu_before)
            .map(|(c, before)| proc_usage(c.id()).0 - before)
            .collect();
        if info.status != TaskStatus::Succeeded {
            bail!(
                "benchmark task ended {:?}: {}",
                info.status,
                info.error.unwrap_or_default()
            );
        }
        client.cancel_task(task)?;
        subtasks = info.subtasks;
        runs.push((seconds, cpu, info.prepare_seconds.unwrap_or(0.0)));
    }
    let in_order: Vec<f64> = runs.iter().map(|r| subtasks as f64 / r.0).collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let all: Vec<f64> = runs.iter().map(|r| subtasks as f64 / r.0).collect();
    let (seconds, cpu, prepare) = runs[runs.len() / 2].clone();
    let rss: Vec<u64> = nodes.0.iter().map(|c| proc_usage(c.id()).1).collect();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(json!({
        "bench": "tps",
        "shape": format!("{shape:?}").to_lowercase(),
        "subtasks": subtasks,
        "seconds": seconds,
        // The supervisor's preparation (tile to encode) within `seconds` until the first
        // subtasks can run: all of it, or a streamed graph's first part.
        "prepare_s": prepare,
        "subtasks_per_s": subtasks as f64 / seconds,
        "runs": all.len(),
        "subtasks_per_s_range": [all.last(), all.first()],
        // Each run's rate in the order they ran.
        "subtasks_per_s_runs": in_order,
        "workers": workers,
        "encrypt": spec.encrypt,
        "task_stream": spec.task_stream,
        "slots_per_worker": slots,
        "worker_prefetch": prefetch,
        "whole": whole,
        "supervisor_cpu_s": cpu[0],
        "supervisor_cpu_us_per_subtask": cpu[0] * 1e6 / subtasks as f64,
        "worker_cpu_s": &cpu[1..],
        "peak_rss_kb": {"supervisor": rss[0], "workers": &rss[1..]},
    }))
}
