//! The worker node: registers with the supervisor, heartbeats, runs subtasks on a compute
//! pool ([`pool`], never on the actor thread), keeps their outputs, serves chunks to peers, and reports
//! results in batches.
//!
//! The supervisor link is watched both ways: the supervisor answers every heartbeat
//! ([`ToWorker::HeartbeatAck`]), and a worker that hears nothing from it for
//! `cluster.node_timeout_ms` (a frozen supervisor sends no FIN), whose connection fails, or
//! that the supervisor expels (declared dead), stops with [`REJOIN_EXIT`], busy or not.
//! `ares node` then starts the worker afresh in the same process — nothing of the old one
//! survives: chunks, graphs and ids belonged to a registration the supervisor has written
//! off, and a restarted supervisor reuses task ids — and it tries to rejoin for up to
//! `cluster.node_timeout_ms`, else exits non-zero for its process manager.
//!
//! The parts: [`state`] is the pure core deciding which subtasks fetch remote inputs and when
//! they go to the pool; [`dispatch`] carries its decisions out; [`fetch`] reads peers' data
//! planes as futures on this actor's runtime, bounded by `worker.fetch_timeout_ms` and
//! cancelled by dropping them; [`execute`] runs one subtask on a compute thread ([`pool`]),
//! which never touches the network; [`storage`] over [`memory`] holds the chunks, accounts
//! their bytes and spills; [`transfer`] serves chunks to peers.
//!
//! A task the supervisor forgets (after a cancel, at once) leaves nothing running in the
//! worker's way: `cancelled` marks it ended for its subtasks still on the pool, the pool
//! drops its queued jobs and hands the slots of its running ones to new threads
//! ([`pool::ComputePool::abandon`]), so the next task's subtasks start at once.

mod cancelled;
mod connect;
mod dispatch;
mod drain;
mod execute;
pub mod fetch;
mod growth;
mod key_hash;
pub mod memory;
pub mod monitor;
pub mod pool;
mod shared_graph;
pub mod spans;
pub mod spill;
pub mod state;
pub mod storage;
pub mod transfer;

pub use drain::DrainAndLeave;

use crate::config::Config;
use crate::guard::{guard, Guarded};
use crate::protocol::outbound::{Flush, Outbound};
use crate::protocol::secret::Credentials;
use crate::protocol::{codec, FromWorker, SubtaskReport, ToWorker, PROTOCOL_VERSION};
use actix::prelude::*;
use ares_core::graph::WorkerGraph;
use ares_core::ids::{TaskId, WorkerId};
use bytes::BytesMut;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use storage::Storage;
use tokio_util::codec::FramedRead;

/// The system's exit code when a registered worker lost its supervisor: `ares node` then
/// starts the worker afresh (new state, same process) and rejoins for up to
/// `cluster.node_timeout_ms`, else exits non-zero.
pub const REJOIN_EXIT: i32 = 3;

/// Subtasks per compute slot that may fetch or hold fetched inputs at once: one running,
/// one whose inputs arrive meanwhile.
const FETCH_WINDOW_PER_SLOT: usize = 2;

/// Shared with compute threads.
struct Shared {
    /// Reports of finished subtasks, drained by the actor in batches.
    finished: Mutex<Vec<(TaskId, SubtaskReport)>>,
    /// True while a drain is already on its way to the actor: no need to wake it again.
    drain_pending: AtomicBool,
    storage: Arc<Storage>,
    /// SIGTERM: subtasks not yet started are handed back ([`SubtaskError::NotRun`]).
    draining: AtomicBool,
    /// Subtasks handed to the pool and not yet reported.
    in_pool: AtomicUsize,
    /// What ran since the last heartbeat, for the dashboard's task stream ([`spans`]).
    spans: Mutex<spans::SpanBuffer>,
    /// `cluster.allow_code`: whether this worker runs clients' functions (`map_blocks`).
    allow_code: bool,
    /// The clock compute threads time spans on; `None` when `web.task_stream_capacity` is 0
    /// (no span is recorded).
    span_clock: Option<spans::SpanClock>,
}

pub struct Worker {
    out: Outbound<FromWorker>,
    me: Option<WorkerId>,
    slots: usize,
    memory_limit: u64,
    data_addr: SocketAddr,
    heartbeat: Duration,
    graphs: HashMap<TaskId, Arc<WorkerGraph>>,
    /// Per task with subtasks on the pool (or cancelled): what they check before and after
    /// they run ([`cancelled`]). Ended and dropped when the task is forgotten.
    cancelled: HashMap<TaskId, Arc<cancelled::Cancelled>>,
    /// Streamed tasks whose graph is being extended ([`growth`]).
    growing: HashMap<TaskId, growth::Growing>,
    shared: Arc<Shared>,
    pool: pool::ComputePool,
    /// Subtasks waiting for or fetching remote inputs; the fetches in flight.
    core: state::WorkerCore<Arc<ares_core::array::ArrayData>, dispatch::StorageRoom>,
    /// A retry of the fetches refused room is scheduled.
    room_retry: bool,
    fetcher: Arc<dyn fetch::PeerFetch>,
    fetches: HashMap<state::FetchId, dispatch::InFlight>,
    peers: HashMap<WorkerId, String>,
    reports: BTreeMap<TaskId, Vec<SubtaskReport>>,
    lost_supervisor: bool,
    /// When the supervisor last sent anything (heartbeat acks included).
    last_heard: std::time::Instant,
    /// Silence from the supervisor after which it counts as gone.
    supervisor_timeout: Duration,
    /// The drain after SIGTERM is over: the link closing is expected.
    leaving: bool,
    /// `worker.memory.spill` and `.pause` in bytes (0 = no limit), for the dashboard.
    thresholds: (u64, u64),
}

/// Reports what a worker holds, for tests and status.
#[derive(Message)]
#[rtype(result = "StorageReport")]
pub struct StorageStats;

#[derive(Clone, Copy, Debug, MessageResponse)]
pub struct StorageReport {
    pub worker: Option<WorkerId>,
    pub chunks: usize,
    pub bytes: usize,
    pub memory: memory::MemoryStats,
}

impl Actor for Worker {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let hello = FromWorker::Hello {
            version: PROTOCOL_VERSION,
            slots: self.slots as u32,
            memory_limit: self.memory_limit,
            data_addr: self.data_addr.to_string(),
            runs_code: self.shared.allow_code && ares_core::ops::family::python_call::has_runner(),
        };
        self.out.push(hello, ctx);
        ctx.run_interval(self.heartbeat, |act, ctx| {
            guard(act, ctx, "tick", Self::tick);
        });
    }

    /// Whenever the supervisor link is unusable (closed, reset, silent, corrupt, refused) the
    /// worker is useless: the process exits non-zero. (A signal stops the actor too; that
    /// exit keeps the system's code. So does a worker draining on SIGTERM whose supervisor
    /// went first, as when a whole cluster is stopped: it must not try to rejoin.)
    fn stopped(&mut self, _: &mut Context<Self>) {
        let draining = self.shared.draining.load(Ordering::Acquire);
        if self.lost_supervisor && !self.leaving && !draining {
            tracing::warn!(worker = ?self.me, "lost the supervisor; worker stops");
            // A registered worker may rejoin afresh; one refused before that may not.
            let code = if self.me.is_some() { REJOIN_EXIT } else { 1 };
            System::current().stop_with_code(code);
        }
    }
}

impl Guarded for Worker {
    const NAME: &'static str = "Worker";
    /// Its graphs, queue and reports may be half-updated: the worker starts afresh in the
    /// same process (as after losing its supervisor) and registers again, and the
    /// supervisor recomputes what it held from lineage.
    fn panicked(&mut self, _: &'static str, _: &str) {
        self.lost_supervisor = true;
    }
}

/// A worker that goes (signal, lost supervisor, rejoin) removes its spill files at once,
/// even while a compute thread still holds the store.
impl Drop for Worker {
    fn drop(&mut self) {
        self.shared.storage.close();
    }
}

impl actix::io::WriteHandler<std::io::Error> for Worker {
    fn error(&mut self, e: std::io::Error, _: &mut Context<Self>) -> Running {
        tracing::error!("cannot write to the supervisor: {e}");
        self.lost_supervisor = true;
        Running::Stop
    }
}

impl Handler<Flush> for Worker {
    type Result = ();
    fn handle(&mut self, _: Flush, ctx: &mut Context<Self>) {
        guard(self, ctx, "Flush", |act, ctx| {
            for (task, reports) in std::mem::take(&mut act.reports) {
                act.out
                    .push(FromWorker::SubtasksFinished { task, reports }, ctx);
            }
            if let Err(e) = act.out.flush() {
                tracing::error!("cannot encode a frame: {e}");
                act.lost_supervisor = true;
                ctx.stop();
            }
        });
    }
}

impl Handler<StorageStats> for Worker {
    type Result = StorageReport;
    fn handle(&mut self, _: StorageStats, ctx: &mut Context<Self>) -> StorageReport {
        guard(self, ctx, "StorageStats", |act, _ctx| StorageReport {
            worker: act.me,
            chunks: act.shared.storage.len(),
            bytes: act.shared.storage.bytes(),
            memory: act.shared.storage.stats(),
        })
        .unwrap_or(StorageReport {
            worker: None,
            chunks: 0,
            bytes: 0,
            memory: memory::MemoryStats::default(),
        })
    }
}

impl StreamHandler<Result<BytesMut, std::io::Error>> for Worker {
    fn handle(&mut self, frame: Result<BytesMut, std::io::Error>, ctx: &mut Context<Self>) {
        guard(self, ctx, "frame", |act, ctx| {
            act.last_heard = std::time::Instant::now();
            let messages = match frame
                .map_err(|e| e.to_string())
                .and_then(|f| codec::decode_frame::<ToWorker>(&f).map_err(|e| e.to_string()))
            {
                Ok(m) => m,
                Err(e) => {
                    tracing::error!("bad frame from the supervisor: {e}");
                    act.lost_supervisor = true;
                    ctx.stop();
                    return;
                }
            };
            for m in messages {
                act.on_message(m, ctx);
            }
        });
    }

    fn finished(&mut self, ctx: &mut Context<Self>) {
        self.lost_supervisor = true;
        ctx.stop();
    }
}

impl Worker {
    /// Every heartbeat period: gives up on a silent supervisor, else sends a heartbeat.
    fn tick(&mut self, ctx: &mut Context<Self>) {
        let silent = self.last_heard.elapsed();
        if silent > self.supervisor_timeout {
            tracing::warn!(
                "no answer from the supervisor for {} ms (cluster.node_timeout_ms)",
                silent.as_millis()
            );
            self.lost_supervisor = true;
            ctx.stop();
            return;
        }
        let storage = &self.shared.storage;
        let mut stream = (self.shared.spans.lock())
            .unwrap_or_else(|p| p.into_inner())
            .take();
        (stream.spill_at, stream.pause_at) = self.thresholds;
        let beat = FromWorker::Heartbeat {
            stored_chunks: storage.len() as u64,
            stored_bytes: storage.bytes() as u64,
            memory: storage.stats(),
            stream,
        };
        self.out.push(beat, ctx)
    }

    fn on_message(&mut self, m: ToWorker, ctx: &mut Context<Self>) {
        match m {
            ToWorker::Welcome { worker, .. } => {
                self.me = Some(worker);
                tracing::info!(?worker, data = %self.data_addr, "registered");
            }
            ToWorker::Refused { reason } => {
                tracing::error!("supervisor refused this worker: {reason}");
                self.lost_supervisor = true;
                ctx.stop();
            }
            ToWorker::Peers { peers } => {
                (self.shared.spans.lock())
                    .unwrap_or_else(|p| p.into_inner())
                    .share_among(peers.len());
                self.peers = peers.into_iter().collect();
                self.fail_fetches_from_gone_peers(ctx);
            }
            ToWorker::RegisterTask { task, graph } => {
                match shared_graph::decode(task, &graph, storage::live().len() > 1) {
                    Ok(g) => {
                        self.graphs.insert(task, g);
                    }
                    Err(e) => tracing::error!(%task, "cannot decode the task's graph: {e}"),
                }
            }
            ToWorker::ExtendTask { task, graph } => self.extend_graph(task, graph, ctx),
            ToWorker::RunSubtasks { task, subtasks } => self.run(task, subtasks, ctx),
            ToWorker::CancelSubtasks { task, subtasks } => {
                for s in subtasks {
                    // Not waiting or fetching here: on the pool, which skips it.
                    if !self.core.cancel(task, s) {
                        self.cancelled.entry(task).or_default().cancel(s);
                        self.core.reported(task, s);
                    }
                }
                self.carry_out(ctx);
            }
            ToWorker::ReleaseChunks { task, chunks } => self.shared.storage.remove(task, &chunks),
            ToWorker::HeartbeatAck => {}
            ToWorker::ForgetTask { task } => self.forget(task, ctx),
        }
    }
}

impl Worker {
    /// The supervisor is done with `task` (it ended, was cancelled or evicted): nothing of it
    /// runs or stays here. Its subtasks waiting for inputs are dropped, those queued on the
    /// pool too, and those still running finish off the pool's slots and keep nothing (see
    /// [`cancelled`] and [`pool::ComputePool::abandon`]): the next task's subtasks start at
    /// once instead of after them. Then its chunks go.
    fn forget(&mut self, task: TaskId, ctx: &mut Context<Self>) {
        self.core.forget(task);
        self.carry_out(ctx);
        if let Some(c) = self.cancelled.remove(&task) {
            c.end();
        }
        let dropped = self.pool.discard(task);
        let abandoned = self.pool.abandon(task);
        if dropped + abandoned > 0 {
            tracing::debug!(%task, dropped, abandoned, "the forgotten task's jobs left the pool");
        }
        self.graphs.remove(&task);
        self.growing.remove(&task);
        self.shared.storage.remove_task(task);
    }
}

/// Connects to the supervisor (retrying for up to `wait`) and starts a worker on the current
/// actix system. Returns the worker's address and its data-plane address.
pub async fn start(
    config: &Config,
    creds: &Credentials,
    supervisor: &str,
    wait: Duration,
    stop: &crate::shutdown::Shutdown,
) -> std::io::Result<(Addr<Worker>, SocketAddr)> {
    let max_frame = config.cluster.max_frame_bytes;
    let storage = storage::open(&config.worker)?;
    let memory_limit = storage.stats().limit;
    // Encrypted links (`cluster.encrypt`): asked for by this worker's data plane, its
    // fetches and its link to the supervisor alike.
    let seal = config
        .cluster
        .seals(&[&config.worker.data_listen, supervisor]);
    let gate = transfer::gate(creds.keys(), config, seal);
    let data_addr =
        transfer::serve(&config.worker.data_listen, storage.clone(), max_frame, gate).await?;
    let stream = connect::supervisor(supervisor, creds, seal, config, wait, stop).await?;
    // Bound to all interfaces: advertise the address this host reaches the supervisor from,
    // which its peers can reach too (containers, multi-homed hosts).
    let data_addr = if data_addr.ip().is_unspecified() {
        SocketAddr::new(stream.local_addr()?.ip(), data_addr.port())
    } else {
        data_addr
    };
    let slots = config.worker.effective_slots();
    let pool = pool::ComputePool::new(slots)?;
    let span_buffer = spans::SpanBuffer::new(config.web.task_stream_capacity);
    let span_clock = span_buffer.enabled().then(|| span_buffer.clock());
    let shared = Arc::new(Shared {
        finished: Mutex::new(Vec::new()),
        drain_pending: AtomicBool::new(false),
        storage,
        draining: AtomicBool::new(false),
        in_pool: AtomicUsize::new(0),
        spans: Mutex::new(span_buffer),
        span_clock,
        allow_code: config.cluster.allow_code,
    });
    let fraction = |f: f64| (memory_limit as f64 * f) as u64;
    let thresholds = (
        fraction(config.worker.memory.spill),
        fraction(config.worker.memory.pause),
    );
    let fetch_timeout = Duration::from_millis(config.worker.fetch_timeout_ms);
    let fetcher = Arc::new(fetch::TcpFetch::new(
        creds.node_secret(),
        seal,
        fetch_timeout,
        max_frame,
    ));
    let heartbeat = Duration::from_millis(config.cluster.heartbeat_interval_ms);
    let supervisor_timeout = Duration::from_millis(config.cluster.node_timeout_ms);
    // Not under actix::Supervisor: a worker's restart is a fresh start of the whole worker
    // in the same process (`ares node`), which a guarded panic triggers (see `Guarded`).
    let room = shared.storage.clone();
    let addr = Worker::create(move |ctx| {
        let (read, write) = stream.into_split();
        let limit = codec::FrameLimit::new(max_frame);
        ctx.add_stream(FramedRead::new(read, codec::Framing::new(limit.clone())));
        Worker {
            out: Outbound::new(write, limit, ctx),
            me: None,
            slots,
            memory_limit,
            data_addr,
            heartbeat,
            graphs: HashMap::new(),
            cancelled: HashMap::new(),
            growing: HashMap::new(),
            shared,
            pool,
            core: state::WorkerCore::with_room(
                FETCH_WINDOW_PER_SLOT * slots,
                dispatch::StorageRoom(room),
            ),
            room_retry: false,
            fetcher,
            fetches: HashMap::new(),
            peers: HashMap::new(),
            reports: BTreeMap::new(),
            lost_supervisor: false,
            last_heard: std::time::Instant::now(),
            supervisor_timeout,
            leaving: false,
            thresholds,
        }
    });
    Ok((addr, data_addr))
}
