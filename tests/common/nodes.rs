//! Nodes started one by one for the fault suite (`tests/faults.rs`): a supervisor, then
//! workers (optionally under `ulimit -v`), each a real `ares node` process on loopback with
//! its log beside its ready file, so a test can stop, kill or resume any of them.

use super::cluster::wait_ready;
use ares::api::{NativeClient, TaskApi};
use ares::protocol::secret::Secret;
use ares::protocol::TaskInfo;
use ares_core::tensor::Tensor;
use std::process::Child;
use std::time::{Duration, Instant};

/// A supervisor and workers started one by one, so a test can start a worker late, stop or
/// kill any node, and read its exit status.
/// The fault tests measure recovery times on a small machine: they run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub struct Nodes {
    _serial: std::sync::MutexGuard<'static, ()>,
    pub dir: tempfile::TempDir,
    pub cfg: String,
    pub addr: String,
    pub web: Option<String>,
    pub client_secret: Secret,
    pub supervisor: Child,
    pub workers: Vec<Child>,
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

pub fn signal(child: &Child, sig: &str) {
    let _ = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &child.id().to_string()])
        .stderr(std::process::Stdio::null())
        .status();
}

impl Nodes {
    /// A supervisor with `cluster_extra` keys (indented two spaces) and `worker_extra` keys in
    /// the `worker:` section; no worker yet.
    pub fn supervisor(cluster_extra: &str, worker_extra: &str) -> Nodes {
        Self::supervisor_env(cluster_extra, worker_extra, &[])
    }

    /// [`Nodes::supervisor`] with environment variables for the supervisor process.
    pub fn supervisor_env(cluster_extra: &str, worker_extra: &str, env: &[(&str, &str)]) -> Nodes {
        let serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
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
        let supervisor = std::process::Command::new(env!("CARGO_BIN_EXE_ares"))
            .args([
                "node",
                "--role",
                "supervisor",
                "--config",
                &cfg,
                "--ready-file",
            ])
            .arg(&ready)
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(ready.with_extension("log")).unwrap())
            .spawn()
            .unwrap();
        let (addr, web) = wait_ready(&ready);
        Nodes {
            _serial: serial,
            dir,
            cfg,
            addr,
            web,
            client_secret,
            supervisor,
            workers: Vec::new(),
        }
    }

    /// Starts one more worker; returns its data-plane address.
    pub fn add_worker(&mut self) -> String {
        self.add_worker_limited(None)
    }

    /// Starts one more worker, with at most `vm_kb` of virtual memory (`ulimit -v`) if set.
    pub fn add_worker_limited(&mut self, vm_kb: Option<u64>) -> String {
        self.add_worker_env(vm_kb, &[])
    }

    /// Starts one more worker with `ulimit -v` if set and environment variables.
    pub fn add_worker_env(&mut self, vm_kb: Option<u64>, env: &[(&str, &str)]) -> String {
        let n = self.workers.len();
        let ready = self.dir.path().join(format!("w{n}.json"));
        let bin = env!("CARGO_BIN_EXE_ares");
        let limit = vm_kb.map_or(String::new(), |kb| format!("ulimit -v {kb} && "));
        let script = format!("{limit}exec \"$0\" \"$@\"");
        let rd = ready.to_str().unwrap();
        let mut args = vec!["-c", &script, bin, "node", "--role", "worker"];
        args.extend(["--config", &self.cfg, "--supervisor", &self.addr]);
        args.extend(["--ready-file", rd]);
        let log = std::fs::File::create(ready.with_extension("log")).unwrap();
        let child = std::process::Command::new("bash")
            .args(&args)
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.workers.push(child);
        wait_ready(&ready).0
    }

    pub fn client(&self) -> NativeClient {
        NativeClient::connect_with(&self.addr, Duration::from_secs(10), &self.client_secret)
            .unwrap()
    }
}

pub fn submit(c: &mut NativeClient, program: &str) -> ares_core::ids::TaskId {
    let t = ares_core::expr::evaluate(program).unwrap();
    c.submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap()
}

/// Waits for the task to end; panics past `deadline`.
pub fn wait_end(
    c: &mut NativeClient,
    task: ares_core::ids::TaskId,
    deadline: Duration,
) -> TaskInfo {
    let info = c.wait_task(task, deadline).unwrap();
    assert!(
        info.status.is_terminal(),
        "not ended after {deadline:?}: {info:?}"
    );
    info
}

pub fn scalar(c: &mut NativeClient, task: ares_core::ids::TaskId) -> f64 {
    c.fetch(task)
        .unwrap()
        .remove(0)
        .get_flat(0)
        .unwrap()
        .as_f64()
}

/// A job and its value from the local executor.
pub fn heavy_job(program: &str) -> (Tensor, ndarray::ArrayD<f64>) {
    let t = ares_core::expr::evaluate(program).unwrap();
    let p = ares_core::prepare::prepare(
        &Tensor::graph(&[&t]),
        &Default::default(),
        &ares_core::prepare::uniform_cluster(1, 2),
        ares_core::ids::TaskId(1),
    )
    .unwrap();
    let want = ares_core::executor::execute(&p.subtasks, 2)
        .unwrap()
        .0
        .remove(0);
    (t, want.to_f64())
}

/// Waits until the task is `fraction` done (and not ended).
pub fn wait_progress(c: &mut NativeClient, task: ares_core::ids::TaskId, fraction: f64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let info = c.get_task_result(task).unwrap();
        assert!(!info.status.is_terminal(), "ended too soon: {info:?}");
        if info.progress >= fraction {
            return;
        }
        assert!(Instant::now() < deadline, "no progress: {info:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}
