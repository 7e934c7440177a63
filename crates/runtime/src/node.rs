//! Starting nodes: `ares node --role supervisor|worker`, and the embedded cluster behind
//! `ares run` (a supervisor and N workers in one process, talking over loopback TCP: the
//! same code path as separate processes).

use crate::config::Config;
use crate::protocol::secret::Credentials;
use crate::shutdown::Shutdown;
use crate::{supervisor, worker};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    Supervisor,
    Worker,
}

/// Writes `{"rpc": ..., "web": ...|null, "role": ...}` atomically (write, then rename).
pub fn write_ready_file(
    path: &Path,
    rpc: SocketAddr,
    web: Option<SocketAddr>,
    role: Role,
) -> std::io::Result<()> {
    let body = serde_json::json!({"rpc": rpc.to_string(), "web": web.map(|w| w.to_string()), "role": format!("{role:?}").to_lowercase()});
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, body.to_string())?;
    std::fs::rename(tmp, path)
}

/// The addresses a node wrote to its ready file.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct Ready {
    pub rpc: String,
    pub web: Option<String>,
}

/// Waits up to `timeout` for a node's ready file and reads it.
pub fn wait_ready_file(path: &Path, timeout: Duration) -> anyhow::Result<Ready> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            return Ok(serde_json::from_str(&text)?);
        }
        if std::time::Instant::now() > deadline {
            anyhow::bail!("{} did not appear within {timeout:?}", path.display());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
    }
}

/// Runs a node until SIGINT/SIGTERM (or, for a worker, until its supervisor goes away).
pub fn run_node(
    role: Role,
    config: Config,
    supervisor_addr: Option<String>,
    ready_file: Option<&Path>,
) -> anyhow::Result<()> {
    let creds = Credentials::load(&config.cluster)?;
    ares_core::io::roots::init_global(&config.data.roots, None)?;
    let allow = config.cluster.allow_unauthenticated;
    match role {
        Role::Supervisor => {
            creds.check_exposure("the supervisor", &config.cluster.listen, allow)?
        }
        Role::Worker => {
            creds.check_exposure("the worker's data plane", &config.worker.data_listen, allow)?
        }
    }
    let stop = Shutdown::on_signals();
    if role == Role::Worker {
        // Resident bytes the accounting does not see count toward the spill and pause
        // thresholds (started before any store: its baseline is the bare process).
        worker::monitor::start();
    }
    let config_rejoin_ms = config.cluster.node_timeout_ms;
    // A worker that lost its supervisor after registering starts afresh (no stale chunks,
    // graphs or ids survive) and tries to rejoin for up to `cluster.node_timeout_ms`.
    let mut wait = Duration::from_secs(30);
    loop {
        let system = actix_rt::System::new();
        let ready = ready_file.map(Path::to_path_buf);
        let (config, creds, node_stop) = (config.clone(), creds.clone(), stop.clone());
        let supervisor_addr = supervisor_addr.clone();
        let started: anyhow::Result<_> = system.block_on(async move {
            let mut manager = None;
            let mut spool = None;
            let mut worker_addr = None;
            let drain = Duration::from_millis(config.worker.drain_timeout_ms);
            let (addr, web) = match role {
                Role::Supervisor => {
                    let (s, web) = start_supervisor(&config, &creds).await?;
                    manager = Some(s.manager);
                    spool = Some(s.spool);
                    (s.rpc_addr, web)
                }
                Role::Worker => {
                    let sup = supervisor_addr
                        .or(config.cluster.supervisor.clone())
                        .ok_or_else(|| anyhow::anyhow!("a worker needs --supervisor HOST:PORT or cluster.supervisor in its config"))?;
                    let (w, data) = worker::start(&config, &creds, &sup, wait, &node_stop).await?;
                    worker_addr = Some(w);
                    (data, None)
                }
            };
            if let Some(path) = &ready {
                write_ready_file(path, addr, web, role)?;
            }
            match web {
                Some(w) => eprintln!("ares {role:?} ready on {addr}, web on http://{w}"),
                None => eprintln!("ares {role:?} ready on {addr}"),
            }
            actix_rt::spawn(async move {
                shutdown_signal().await;
                tracing::info!("signal received; shutting down");
                // Running tasks fail with a clear error, and their waiting clients hear it
                // before the process goes.
                if let Some(m) = manager {
                    let failed = m.send(supervisor::messages::ShutDown).await.unwrap_or(0);
                    if failed > 0 {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
                // A worker drains: no new work, running subtasks finish (bounded), reports
                // and its leaving reach the supervisor, then it exits 0.
                if let Some(w) = worker_addr {
                    let _ = w.send(worker::DrainAndLeave(drain)).await;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                actix_rt::System::current().stop();
            });
            Ok(spool)
        });
        let spool = match started {
            Ok(spool) => spool,
            Err(e) if role == Role::Worker && stop.requested() => {
                tracing::info!("stopped by a signal while joining the supervisor: {e}");
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let code = system.run_with_code();
        // The upload spool goes with the supervisor, whoever still holds it.
        if let Some(s) = spool {
            s.remove();
        }
        let code = code?;
        if role == Role::Worker && code == worker::REJOIN_EXIT && stop.requested() {
            tracing::info!("stopped by a signal after losing the supervisor: not rejoining");
            return Ok(());
        }
        if role == Role::Worker && code == worker::REJOIN_EXIT {
            wait = Duration::from_millis(config_rejoin_ms);
            tracing::warn!("rejoining the supervisor for up to {} ms", config_rejoin_ms);
            continue;
        }
        if code != 0 {
            anyhow::bail!("node stopped with code {code}");
        }
        return Ok(());
    }
}

/// A supervisor and `workers` workers running on background threads, sharing a random
/// secret that never leaves the process. Each worker's actors run on an arbiter thread of
/// their own: on one shared thread the supervisor's and every worker's message handling
/// were serial, and that thread was the bottleneck of small-chunk jobs
/// (`sum(ones(10**6, chunk=1))` spent 57% of its samples there while the slots idled).
pub struct EmbeddedCluster {
    pub rpc_addr: SocketAddr,
    pub credentials: Credentials,
    system: actix_rt::System,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The workers' threads, joined on drop so their stores are cleaned up before it returns.
    workers: Vec<actix_rt::Arbiter>,
}

impl EmbeddedCluster {
    pub fn start(config: &Config, workers: usize, slots: usize) -> anyhow::Result<Self> {
        let mut config = config.clone();
        // The embedded cluster reads and writes data in the current directory by default.
        ares_core::io::roots::init_global(
            &config.data.roots,
            std::env::current_dir().ok().as_deref(),
        )?;
        config.cluster.listen = "127.0.0.1:0".into();
        config.worker.data_listen = "127.0.0.1:0".into();
        config.worker.slots = slots;
        config.worker.memory.node_workers = workers.max(1);
        let credentials = Credentials::random();
        let creds = credentials.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("ares-embedded".into())
            .spawn(move || {
                let system = actix_rt::System::new();
                let started = system.block_on(async {
                    let (sup, _web) = start_supervisor(&config, &creds).await?;
                    let addr = sup.rpc_addr.to_string();
                    let mut threads = Vec::with_capacity(workers);
                    for _ in 0..workers {
                        threads.push(start_worker_thread(&config, &creds, &addr).await?);
                    }
                    all_registered(&sup.scheduler, workers).await?;
                    Ok::<_, std::io::Error>((sup.rpc_addr, threads, sup.spool))
                });
                let spool = started.as_ref().ok().map(|(_, _, s)| s.clone());
                let started = started.map(|(a, t, _)| (a, t, actix_rt::System::current()));
                let _ = tx.send(started);
                let _ = system.run();
                if let Some(s) = spool {
                    s.remove();
                }
            })?;
        let (rpc_addr, workers, system) = rx.recv()??;
        Ok(Self {
            rpc_addr,
            credentials,
            system,
            thread: Some(thread),
            workers,
        })
    }
}

/// Starts a worker on an arbiter (thread) of its own.
/// Starts the supervisor's actors and, when `web.listen` is set, the HTTP API over them;
/// returns the web address too. The web settings are checked before any actor starts: a bad
/// token, TLS file or web address is a plain error.
pub async fn start_supervisor(
    config: &Config,
    creds: &Credentials,
) -> std::io::Result<(supervisor::SupervisorHandle, Option<SocketAddr>)> {
    let web = match &config.web.listen {
        Some(listen) => Some(crate::web::prepare(&config.web, listen)?),
        None => None,
    };
    let sup = supervisor::start(config, creds).await?;
    let web_addr = match web {
        Some(prepared) => Some(crate::web::start(
            &config.web,
            prepared,
            sup.manager.clone(),
            sup.scheduler.clone(),
            sup.service.clone(),
            sup.history.clone(),
        )?),
        None => None,
    };
    Ok((sup, web_addr))
}

async fn start_worker_thread(
    config: &Config,
    creds: &Credentials,
    supervisor: &str,
) -> std::io::Result<actix_rt::Arbiter> {
    let (config, creds, supervisor) = (config.clone(), creds.clone(), supervisor.to_string());
    let (done, started) = tokio::sync::oneshot::channel();
    let thread = actix_rt::Arbiter::new();
    let spawned = thread.spawn(async move {
        let result = worker::start(
            &config,
            &creds,
            &supervisor,
            Duration::from_secs(10),
            &Shutdown::never(),
        )
        .await;
        let _ = done.send(result.map(|_| ()));
    });
    let stopped = || std::io::Error::other("the worker's thread stopped while it started");
    if !spawned {
        return Err(stopped());
    }
    started.await.map_err(|_| stopped())??;
    Ok(thread)
}

/// Waits (10 s at most) until the scheduler knows `workers` workers. A worker is connected
/// before the scheduler has registered it, and a first task prepared in between would bind
/// every initial subtask to the workers registered so far: one worker ran nearly all of
/// `ares run`'s subtasks while the other idled.
async fn all_registered(
    scheduler: &actix::Addr<supervisor::scheduler::Scheduler>,
    workers: usize,
) -> std::io::Result<()> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let known = scheduler
            .send(supervisor::messages::GetWorkers)
            .await
            .map_or(0, |w| w.len());
        if known >= workers {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(std::io::Error::other(format!(
                "{known} of {workers} embedded workers registered within 10 s"
            )));
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

impl EmbeddedCluster {
    /// A native client of this cluster, proving its secret.
    pub fn client(&self, wait: Duration) -> crate::api::ApiResult<crate::api::NativeClient> {
        crate::api::NativeClient::connect_with(
            &self.rpc_addr.to_string(),
            wait,
            &self.credentials.client_secret(),
        )
    }
}

impl Drop for EmbeddedCluster {
    fn drop(&mut self) {
        self.system.stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        for worker in self.workers.drain(..) {
            worker.stop();
            let _ = worker.join();
        }
    }
}
