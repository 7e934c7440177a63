//! The supervisor: TaskManager, one TaskProcessor per task, the Scheduler, and one Link per
//! connection, each a thin actix shell over a pure state machine (`*/state.rs`).
//!
//! The actors know each other only through the messages and `Recipient` handles of
//! [`messages`]: no actor module imports another's, except that the TaskManager creates the
//! TaskProcessors.

pub mod admission;
pub mod client_link;
pub mod explain;
pub mod handles;
pub mod history;
pub mod link;
pub mod messages;
pub mod scheduler;
pub mod service;
pub mod staged_task;
pub mod task_manager;
pub mod task_processor;
pub mod upload;

use crate::config::Config;
use crate::net::{accept_loop, Gate};
use crate::protocol::handshake::Role;
use crate::protocol::secret::Credentials;
use actix::prelude::*;
use scheduler::Scheduler;
use std::net::SocketAddr;
use std::time::Duration;
use task_manager::TaskManager;
use tokio::net::TcpListener;

/// A running supervisor.
pub struct SupervisorHandle {
    pub rpc_addr: SocketAddr,
    pub scheduler: Addr<Scheduler>,
    pub manager: Addr<TaskManager>,
    /// Where uploads are spooled; [`upload::SpoolDir::remove`] once the supervisor stops.
    pub spool: std::sync::Arc<upload::SpoolDir>,
    /// The front door every client request goes through: the native links' and the HTTP
    /// API's.
    pub service: service::Service,
    /// The task stream and memory history the dashboard plots, fed by the heartbeats.
    pub history: history::ClusterHistory,
}

/// Binds `cluster.listen` and starts the supervisor's actors on the current actix system.
/// Workers prove `creds`' cluster secret, clients its client secret (see
/// [`crate::protocol::secret`]). The HTTP API is not the supervisor's: the node starts it
/// over the returned handle ([`crate::node`]).
pub async fn start(config: &Config, creds: &Credentials) -> std::io::Result<SupervisorHandle> {
    let listener = TcpListener::bind(&config.cluster.listen).await?;
    let rpc_addr = listener.local_addr()?;
    let c = &config.cluster;
    let (sc, c2) = (config.scheduling.clone(), c.clone());
    let scheduler = Supervisor::start(move |_| {
        Scheduler::new(
            sc.max_batch,
            sc.worker_prefetch,
            c2.node_timeout_ms,
            c2.heartbeat_interval_ms,
            c2.no_worker_timeout_ms,
            c2.suspect_after_ms,
        )
    });
    let (mc, secret, sh) = (
        config.clone(),
        creds.node_secret(),
        scheduler.clone().into(),
    );
    let manager = Supervisor::start(move |_| TaskManager::new(mc, secret, sh));
    let (s, max_frame) = (scheduler.clone(), c.max_frame_bytes);
    let max_pending = config.limits.max_requests_in_flight_per_connection;
    let spool = upload::SpoolDir::open(&config.data, config.limits.max_spool_bytes);
    let service = service::Service::new(
        manager.clone(),
        spool.clone(),
        config.limits.max_upload_bytes,
    );
    let uploads = client_link::upload::UploadSettings {
        idle: Duration::from_millis(config.limits.upload_idle_timeout_ms),
        piece_bytes: crate::protocol::pieces::part_bytes(max_frame, client_link::upload::MAX_PIECE)
            as u64,
    };
    let gate = Gate {
        what: "supervisor",
        keys: creds.keys(),
        serves: &[Role::Worker, Role::Client],
        handshake_timeout: Duration::from_millis(c.handshake_timeout_ms),
        max_connections: config.limits.max_connections,
        seal: c.seals(&[&c.listen]),
    };
    let link_service = service.clone();
    let history = history::ClusterHistory::new(&config.web, c.heartbeat_interval_ms);
    let link_history = history.clone();
    accept_loop(listener, gate, move |admitted| match admitted.role {
        Role::Worker => {
            link::Link::spawn(admitted, max_frame, s.clone().into(), link_history.clone());
        }
        _ => client_link::ClientLink::spawn(
            admitted,
            max_frame,
            max_pending,
            link_service.clone(),
            uploads.clone(),
        ),
    });
    tracing::info!(%rpc_addr, "supervisor listening");
    Ok(SupervisorHandle {
        rpc_addr,
        scheduler,
        manager,
        spool,
        service,
        history,
    })
}
