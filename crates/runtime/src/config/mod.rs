//! Configuration, loaded once from YAML and validated.
//!
//! Unknown keys are rejected (with the line and column the YAML parser reports) so that a
//! typo never silently falls back to a default. `task.default_config` is the core's
//! [`TaskConfig`] (what preparation reads); every other section is the runtime's.

use ares_core::error::{AresError, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub use ares_core::config::TaskConfig;

pub mod memory;
pub use memory::{MemoryLimit, WorkerMemoryConfig};
mod web;
pub use web::WebConfig;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TaskSection {
    pub default_config: TaskConfig,
    /// Ended tasks kept for their info and results; older ones are evicted (their results
    /// freed) unless a session still names their result.
    pub keep_finished: usize,
}

impl Default for TaskSection {
    fn default() -> Self {
        Self {
            default_config: TaskConfig::default(),
            keep_finished: 1000,
        }
    }
}

/// `cluster`: addresses and liveness.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterConfig {
    /// Where a supervisor listens for workers and clients (`HOST:PORT`; port 0 = any).
    pub listen: String,
    /// Where a worker finds its supervisor.
    pub supervisor: Option<String>,
    /// How often workers send a heartbeat.
    pub heartbeat_interval_ms: u64,
    /// A worker silent for this long is dead.
    pub node_timeout_ms: u64,
    /// Largest frame a connection accepts; a larger one closes that connection.
    pub max_frame_bytes: usize,
    /// File holding the cluster secret (surrounding whitespace trimmed); else
    /// `ARES_CLUSTER_SECRET`. Workers, the data plane and (without a client secret) clients
    /// prove it in the handshake.
    pub secret_file: Option<std::path::PathBuf>,
    /// File holding the secret clients prove instead (else `ARES_CLIENT_SECRET`); a client
    /// credential can never register a worker.
    pub client_secret_file: Option<std::path::PathBuf>,
    /// Lets a node listen beyond loopback without a secret (anyone may then connect).
    pub allow_unauthenticated: bool,
    /// Runs clients' code (`map_blocks` & co.: a Python function in the graph). A
    /// supervisor refuses such graphs at submission without it; a worker refuses to run
    /// them. Off by default; the engine embedded in a Python process turns it on (the code
    /// is its own user's).
    pub allow_code: bool,
    /// A connection that has not finished the handshake by then is closed.
    pub handshake_timeout_ms: u64,
    /// Encrypt the links between nodes and from clients (Noise with the role's secret as
    /// pre-shared key). Unset: whenever this node listens on, or joins a supervisor at, an
    /// address beyond loopback. A link is encrypted when either of its ends asks, so `false`
    /// only stops this node from asking.
    pub encrypt: Option<bool>,
    /// A task with work left fails after this long without any live worker.
    pub no_worker_timeout_ms: u64,
    /// A worker silent this long is suspect: what it runs or has queued runs again
    /// elsewhere (first report wins), before `node_timeout_ms` declares it dead.
    pub suspect_after_ms: u64,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:7700".into(),
            supervisor: None,
            heartbeat_interval_ms: 1000,
            node_timeout_ms: 10_000,
            max_frame_bytes: 1 << 30,
            secret_file: None,
            client_secret_file: None,
            allow_unauthenticated: false,
            allow_code: false,
            handshake_timeout_ms: 5000,
            encrypt: None,
            no_worker_timeout_ms: 30_000,
            suspect_after_ms: 3000,
        }
    }
}

impl ClusterConfig {
    /// Whether a node asks for encrypted links: `encrypt` when set, else whether any of
    /// `addrs` (what the node listens on and connects to) is beyond loopback.
    pub fn seals(&self, addrs: &[&str]) -> bool {
        self.encrypt.unwrap_or_else(|| {
            addrs
                .iter()
                .any(|a| !crate::protocol::secret::is_loopback(a))
        })
    }
}

/// `scheduling`: retries and batching.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchedulingConfig {
    /// How many times one subtask may be re-run after its worker died or its inputs were lost.
    pub subtask_max_retries: u32,
    /// Most subtasks one RunSubtasks message carries.
    pub max_batch: usize,
    /// Subtasks in flight per worker slot: the worker queues them (deepest first) and runs at
    /// most `slots` at once. Higher hides the round trip for short subtasks; 1 = no queueing.
    /// Placement binds a subtask to its worker when it is queued, so a higher value moves
    /// work earlier without changing where it runs, and the projected memory of what is in
    /// flight still has to fit `worker.memory_limit`.
    pub worker_prefetch: usize,
}

impl Default for SchedulingConfig {
    fn default() -> Self {
        Self {
            subtask_max_retries: 3,
            worker_prefetch: 512,
            max_batch: 4096,
        }
    }
}

/// `worker`: what a worker offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkerConfig {
    /// Subtasks run at once; 0 = one per CPU.
    pub slots: usize,
    /// Bytes of chunk data and running subtasks the worker may hold: `auto`, `512MiB`, `2GB`
    /// or an integer (0 = no limit). See [`memory`].
    pub memory_limit: MemoryLimit,
    /// Spill and pause thresholds.
    pub memory: WorkerMemoryConfig,
    /// Where chunks are spilled (each worker in its own subdirectory); `null` = the system's
    /// temporary directory.
    pub spill_dir: Option<std::path::PathBuf>,
    /// Where the worker serves chunks to its peers (`HOST:PORT`; port 0 = any).
    pub data_listen: String,
    /// A peer fetch (connect, handshake, each read and write) that stalls this long fails;
    /// after its retries the subtask reports the peer unreachable.
    pub fetch_timeout_ms: u64,
    /// SIGTERM: how long running subtasks may take to finish before the worker leaves.
    pub drain_timeout_ms: u64,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            slots: 0,
            memory_limit: MemoryLimit::Auto,
            memory: WorkerMemoryConfig::default(),
            spill_dir: None,
            data_listen: "127.0.0.1:0".into(),
            fetch_timeout_ms: 10_000,
            drain_timeout_ms: 30_000,
        }
    }
}

impl WorkerConfig {
    /// The memory limit in bytes (0 = none), `auto` resolved against this machine.
    pub fn memory_limit_bytes(&self) -> u64 {
        match self.memory_limit {
            MemoryLimit::Bytes(n) => n,
            auto => auto.resolve(memory::machine_memory(), self.memory.node_workers),
        }
    }

    pub fn effective_slots(&self) -> usize {
        if self.slots == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            self.slots
        }
    }
}

/// `limits`: what one peer may ask for; a refusal is an error reply, the node goes on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Nodes of one submitted tileable graph.
    pub max_graph_nodes: usize,
    /// Chunks one task may create, reduction trees included, projected at submission.
    pub max_chunks_per_task: u64,
    /// Tasks pending or running in one session.
    pub max_tasks_in_flight_per_session: usize,
    /// Tasks pending or running on the supervisor.
    pub max_tasks_in_flight: usize,
    /// Open connections per listening port (RPC, each data plane); more are refused.
    pub max_connections: usize,
    /// Requests one client connection may have waiting for an answer; one more closes it.
    pub max_requests_in_flight_per_connection: usize,
    /// Bytes of one tensor upload (`.npy` stream, web or native protocol); a larger one is
    /// refused before it is spooled.
    pub max_upload_bytes: u64,
    /// An upload over the native protocol that receives no piece for this long is dropped
    /// (its spool file removed); the web server's own timeouts cover HTTP uploads.
    pub upload_idle_timeout_ms: u64,
    /// Bytes of the spool files of every upload held at once, together: from its first byte
    /// until the upload is freed, since the file is the lineage its chunks are recomputed
    /// from when a worker dies (a native upload counts its declared size from `UploadBegin`,
    /// an HTTP one its bytes as they arrive); one more is refused until some are freed.
    pub max_spool_bytes: u64,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            max_graph_nodes: 100_000,
            max_chunks_per_task: 20_000_000,
            max_tasks_in_flight_per_session: 64,
            max_tasks_in_flight: 256,
            max_connections: 1024,
            max_requests_in_flight_per_connection: 1024,
            max_upload_bytes: 64 << 30,
            upload_idle_timeout_ms: 60_000,
            max_spool_bytes: 64 << 30,
        }
    }
}

/// The whole configuration file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub task: TaskSection,
    pub cluster: ClusterConfig,
    pub scheduling: SchedulingConfig,
    pub worker: WorkerConfig,
    pub web: WebConfig,
    pub limits: LimitsConfig,
    pub data: DataConfig,
}

/// `data`: where `from_npy`/`to_zarr`... may read and write (see `crate::io::roots`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DataConfig {
    /// Directories data paths must lie in; relative paths are relative to the first. Empty:
    /// no path is allowed (`ares run`'s embedded cluster then allows the current directory).
    pub roots: Vec<std::path::PathBuf>,
    /// The directory in which the supervisor creates its private upload spool directory
    /// (`ares-supervisor-<pid>-<random>`, mode 0700). None: the first root's `.ares-uploads/`
    /// when `roots` is set (so workers sharing that root read uploads from another host),
    /// else the system's temp dir.
    pub upload_spool: Option<std::path::PathBuf>,
}

impl Config {
    /// Parses and validates YAML; `origin` names the source in errors.
    pub fn from_yaml(text: &str, origin: &str) -> Result<Config> {
        let config: Config =
            yaml_serde::from_str(text).map_err(|e| AresError::Config(format!("{origin}: {e}")))?;
        config
            .validate()
            .map_err(|e| AresError::Config(format!("{origin}: {e}")))?;
        Ok(config)
    }

    pub fn validate(&self) -> Result<()> {
        self.task.default_config.validate()?;
        self.worker.memory.validate()?;
        let c = &self.cluster;
        if c.heartbeat_interval_ms == 0 || c.node_timeout_ms <= c.heartbeat_interval_ms {
            return Err(AresError::Config(format!(
                "cluster.node_timeout_ms ({}) must exceed cluster.heartbeat_interval_ms ({}), which must be positive",
                c.node_timeout_ms, c.heartbeat_interval_ms
            )));
        }
        if c.no_worker_timeout_ms == 0 || self.worker.fetch_timeout_ms == 0 {
            return Err(AresError::Config(
                "cluster.no_worker_timeout_ms and worker.fetch_timeout_ms must be positive".into(),
            ));
        }
        if c.max_frame_bytes < 1024 {
            return Err(AresError::Config(format!(
                "cluster.max_frame_bytes must be at least 1024, got {}",
                c.max_frame_bytes
            )));
        }
        if self.web.token.as_deref() == Some("") {
            return Err(AresError::Config(
                "web.token must not be empty (omit it to disable auth)".into(),
            ));
        }
        if self.web.max_connections == 0
            || self.web.request_timeout_ms == 0
            || self.web.idle_timeout_ms == 0
            || self.web.max_sessions == 0
            || self.web.session_idle_timeout_ms == 0
        {
            return Err(AresError::Config(
                "web.max_connections, web.request_timeout_ms, web.idle_timeout_ms, web.max_sessions and web.session_idle_timeout_ms must be at least 1".into(),
            ));
        }
        if self.web.tls_cert.is_some() != self.web.tls_key.is_some() {
            return Err(AresError::Config(
                "web.tls_cert and web.tls_key go together".into(),
            ));
        }
        if let Some(t) = &self.web.token {
            if !web::valid_token(t) {
                return Err(AresError::Config(
                    "web.token must be printable ASCII without spaces, ';', ',' or quotes".into(),
                ));
            }
        }
        for (key, addr) in [
            ("web.listen", self.web.listen.as_ref()),
            ("cluster.listen", Some(&c.listen)),
            ("cluster.supervisor", c.supervisor.as_ref()),
            ("worker.data_listen", Some(&self.worker.data_listen)),
        ] {
            if let Some(a) = addr {
                if a.rsplit_once(':')
                    .and_then(|(_, p)| p.parse::<u16>().ok())
                    .is_none()
                {
                    return Err(AresError::Config(format!("{key}: {a:?} is not HOST:PORT")));
                }
            }
        }
        let l = &self.limits;
        if l.max_graph_nodes == 0
            || l.max_chunks_per_task == 0
            || l.max_tasks_in_flight == 0
            || l.max_tasks_in_flight_per_session == 0
            || l.max_connections == 0
            || l.max_requests_in_flight_per_connection == 0
        {
            return Err(AresError::Config(
                "every limits.* key must be at least 1".into(),
            ));
        }
        if c.handshake_timeout_ms == 0 {
            return Err(AresError::Config(
                "cluster.handshake_timeout_ms must be at least 1".into(),
            ));
        }
        if self.scheduling.worker_prefetch == 0 {
            return Err(AresError::Config(
                "scheduling.worker_prefetch must be at least 1".into(),
            ));
        }
        if self.scheduling.max_batch == 0 {
            return Err(AresError::Config(
                "scheduling.max_batch must be at least 1".into(),
            ));
        }
        Ok(())
    }

    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| AresError::Config(format!("cannot read {}: {e}", path.display())))?;
        Self::from_yaml(&text, &path.display().to_string())
    }
}

#[cfg(test)]
mod tests;
