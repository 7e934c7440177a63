//! Clusters of real `ares node` processes on loopback (port 0, addresses from ready files).

use ares::api::{NativeClient, TaskApi};
use ares::protocol::secret::Secret;
use ares::protocol::TaskStatus;
use ares_core::tensor::{self, Tensor};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Cluster {
    pub nodes: Vec<Child>,
    pub addr: String,
    /// The web API address, when the config enables it.
    pub web: Option<String>,
    /// Each worker's data-plane address.
    pub workers: Vec<String>,
    /// The cluster secret every node proves.
    pub secret: Secret,
    /// The secret clients prove (`cluster.client_secret_file`).
    pub client_secret: Secret,
    pub dir: tempfile::TempDir,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for n in &mut self.nodes {
            let _ = n.kill();
            let _ = n.wait();
        }
    }
}

/// Waits for a ready file; returns (rpc, web).
pub fn wait_ready(path: &Path) -> (String, Option<String>) {
    let ready = ares::node::wait_ready_file(path, Duration::from_secs(30)).unwrap();
    (ready.rpc, ready.web)
}

pub fn node(args: &[&str], ready: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ares"))
        .args(args)
        .arg("--ready-file")
        .arg(ready)
        .stdout(Stdio::null())
        // Each node's log beside its ready file (`*.log`), for failures and log-volume checks.
        .stderr(std::fs::File::create(ready.with_extension("log")).unwrap())
        .spawn()
        .unwrap()
}

impl Cluster {
    pub fn start(workers: usize, slots: usize) -> Cluster {
        Self::start_with(workers, slots, "")
    }

    /// Starts with extra YAML appended to the test config (e.g. a `web:` section).
    pub fn start_with(workers: usize, slots: usize, extra_yaml: &str) -> Cluster {
        Self::start_full(workers, slots, "", extra_yaml)
    }

    /// Starts with extra keys in the `cluster:` section (each line indented by two spaces)
    /// and extra YAML appended.
    pub fn start_full(
        workers: usize,
        slots: usize,
        cluster_extra: &str,
        extra_yaml: &str,
    ) -> Cluster {
        Self::start_inner(workers, slots, cluster_extra, extra_yaml, None)
    }

    /// [`Cluster::start_with`] with the supervisor limited to `fds` open files (`ulimit -n`).
    pub fn start_fd_limited(workers: usize, extra_yaml: &str, fds: u32) -> Cluster {
        Self::start_inner(workers, 1, "", extra_yaml, Some(fds))
    }

    fn start_inner(
        workers: usize,
        slots: usize,
        cluster_extra: &str,
        extra_yaml: &str,
        fd_limit: Option<u32>,
    ) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("test.yml");
        let secret = Secret::random();
        let secret_file = dir.path().join("secret");
        std::fs::write(&secret_file, secret.bytes()).unwrap();
        // Clients prove their own secret: a client credential must never pass as a node's.
        let client_secret = Secret::random();
        let client_file = dir.path().join("client-secret");
        std::fs::write(&client_file, client_secret.bytes()).unwrap();
        // A `max_frame_bytes` in `cluster_extra` replaces the default one.
        let frame = if cluster_extra.contains("max_frame_bytes") {
            ""
        } else {
            "  max_frame_bytes: 67108864\n"
        };
        std::fs::write(
            &config,
            format!("cluster:\n  listen: 127.0.0.1:0\n  secret_file: {}\n  client_secret_file: {}\n  heartbeat_interval_ms: 100\n  node_timeout_ms: 2000\n{frame}{cluster_extra}worker:\n  slots: {slots}\n{extra_yaml}", secret_file.display(), client_file.display()),
        )
        .unwrap();
        let cfg = config.to_str().unwrap().to_string();
        let ready: PathBuf = dir.path().join("supervisor.json");
        let sup_args = ["node", "--role", "supervisor", "--config", &cfg];
        let mut nodes = vec![match fd_limit {
            None => node(&sup_args, &ready),
            Some(fds) => {
                let script = format!("ulimit -n {fds} && exec \"$0\" \"$@\"");
                let mut args = vec!["-c", &script, env!("CARGO_BIN_EXE_ares")];
                args.extend(sup_args);
                args.extend(["--ready-file", ready.to_str().unwrap()]);
                Command::new("bash")
                    .args(&args)
                    .stdout(Stdio::null())
                    .stderr(std::fs::File::create(ready.with_extension("log")).unwrap())
                    .spawn()
                    .unwrap()
            }
        }];
        let (addr, web) = wait_ready(&ready);
        let mut data_addrs = Vec::new();
        for i in 0..workers {
            let ready = dir.path().join(format!("w{i}.json"));
            nodes.push(node(
                &[
                    "node",
                    "--role",
                    "worker",
                    "--config",
                    &cfg,
                    "--supervisor",
                    &addr,
                ],
                &ready,
            ));
            data_addrs.push(wait_ready(&ready).0);
        }
        let cluster = Cluster {
            nodes,
            addr,
            web,
            workers: data_addrs,
            secret,
            client_secret,
            dir,
        };
        // Every worker registered: a task with as many initial subtasks as workers runs on all.
        let mut c = cluster.client();
        let warm = tensor::rand(&[8 * workers], 1, Some(0))
            .unwrap()
            .sum(None, false)
            .unwrap();
        let t = c
            .submit_tileable_graph(&Tensor::graph(&[&warm]), None)
            .unwrap();
        assert_eq!(
            c.wait_task(t, Duration::from_secs(30)).unwrap().status,
            TaskStatus::Succeeded
        );
        c.cancel_task(t).unwrap(); // frees the warm-up result
        std::thread::sleep(Duration::from_millis(200));
        cluster
    }

    pub fn client(&self) -> NativeClient {
        NativeClient::connect_with(&self.addr, Duration::from_secs(10), &self.client_secret)
            .unwrap()
    }
}
