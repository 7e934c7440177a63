//! The worker node: registers with the supervisor, heartbeats, runs subtasks on a compute
//! pool ([`pool`], never on the actor thread), keeps their outputs, serves chunks to peers, and reports
//! results in batches.

pub mod pool;
pub mod storage;
pub mod transfer;

use crate::config::Config;
use crate::executor::run_subtask;
use crate::graph::WorkerGraph;
use crate::ids::{ChunkIdx, SubtaskIdx, TaskId, WorkerId};
use crate::protocol::handshake::Role;
use crate::protocol::outbound::{Flush, Outbound};
use crate::protocol::secret::Credentials;
use crate::protocol::{
    auth, codec, FromWorker, RunSubtask, SubtaskReport, ToWorker, PROTOCOL_VERSION,
};
use crate::supervisor::task_processor::state::FETCH_ERROR_PREFIX;
use actix::prelude::*;
use bytes::BytesMut;
use dashmap::{DashMap, DashSet};
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use storage::Storage;
use tokio::net::TcpStream;
use tokio_util::codec::FramedRead;

/// Shared with compute threads.
struct Shared {
    /// Reports of finished subtasks, drained by the actor in batches.
    finished: Mutex<Vec<(TaskId, SubtaskReport)>>,
    /// True while a drain is already on its way to the actor: no need to wake it again.
    drain_pending: AtomicBool,
    storage: Arc<Storage>,
    peers: DashMap<WorkerId, String>,
    connections: transfer::Connections,
    cancelled: DashSet<(TaskId, SubtaskIdx)>,
    max_frame: usize,
}

pub struct Worker {
    out: Outbound<FromWorker>,
    me: Option<WorkerId>,
    slots: usize,
    memory_limit: u64,
    data_addr: SocketAddr,
    heartbeat: Duration,
    graphs: HashMap<TaskId, Arc<WorkerGraph>>,
    shared: Arc<Shared>,
    pool: pool::ComputePool,
    reports: BTreeMap<TaskId, Vec<SubtaskReport>>,
    lost_supervisor: bool,
}

/// Collects what the compute threads finished since the last drain.
#[derive(Message)]
#[rtype(result = "()")]
struct Drain;

/// Reports what a worker holds, for tests and status.
#[derive(Message)]
#[rtype(result = "StorageReport")]
pub struct StorageStats;

#[derive(Clone, Copy, Debug, MessageResponse)]
pub struct StorageReport {
    pub worker: Option<WorkerId>,
    pub chunks: usize,
    pub bytes: usize,
}

impl Actor for Worker {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let hello = FromWorker::Hello {
            version: PROTOCOL_VERSION,
            slots: self.slots as u32,
            memory_limit: self.memory_limit,
            data_addr: self.data_addr.to_string(),
        };
        self.out.push(hello, ctx);
        ctx.run_interval(self.heartbeat, |act, ctx| {
            let storage = &act.shared.storage;
            let beat = FromWorker::Heartbeat {
                stored_chunks: storage.len() as u64,
                stored_bytes: storage.bytes() as u64,
            };
            act.out.push(beat, ctx)
        });
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        if self.lost_supervisor {
            tracing::warn!(worker = ?self.me, "lost the supervisor; worker stops");
            System::current().stop_with_code(1);
        }
    }
}

impl actix::io::WriteHandler<std::io::Error> for Worker {}

impl Handler<Flush> for Worker {
    type Result = ();
    fn handle(&mut self, _: Flush, ctx: &mut Context<Self>) {
        for (task, reports) in std::mem::take(&mut self.reports) {
            self.out
                .push(FromWorker::SubtasksFinished { task, reports }, ctx);
        }
        if let Err(e) = self.out.flush() {
            tracing::error!("cannot encode a frame: {e}");
            ctx.stop();
        }
    }
}

impl Handler<Drain> for Worker {
    type Result = ();
    fn handle(&mut self, _: Drain, ctx: &mut Context<Self>) {
        self.shared.drain_pending.store(false, Ordering::Release);
        let finished = std::mem::take(
            &mut *self
                .shared
                .finished
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        if finished.is_empty() {
            return;
        }
        if self.reports.is_empty() {
            ctx.notify(Flush);
        }
        for (task, report) in finished {
            self.reports.entry(task).or_default().push(report);
        }
    }
}

impl Handler<StorageStats> for Worker {
    type Result = StorageReport;
    fn handle(&mut self, _: StorageStats, _: &mut Context<Self>) -> StorageReport {
        StorageReport {
            worker: self.me,
            chunks: self.shared.storage.len(),
            bytes: self.shared.storage.bytes(),
        }
    }
}

impl StreamHandler<Result<BytesMut, std::io::Error>> for Worker {
    fn handle(&mut self, frame: Result<BytesMut, std::io::Error>, ctx: &mut Context<Self>) {
        let messages = match frame
            .map_err(|e| e.to_string())
            .and_then(|f| codec::decode_frame::<ToWorker>(&f).map_err(|e| e.to_string()))
        {
            Ok(m) => m,
            Err(e) => {
                tracing::error!("bad frame from the supervisor: {e}");
                ctx.stop();
                return;
            }
        };
        for m in messages {
            self.on_message(m, ctx);
        }
    }

    fn finished(&mut self, ctx: &mut Context<Self>) {
        self.lost_supervisor = true;
        ctx.stop();
    }
}

impl Worker {
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
                self.shared.peers.clear();
                for (id, addr) in peers {
                    self.shared.peers.insert(id, addr);
                }
            }
            ToWorker::RegisterTask { task, graph } => match codec::decode::<WorkerGraph>(&graph) {
                Ok(g) => {
                    self.graphs.insert(task, Arc::new(g));
                }
                Err(e) => tracing::error!(%task, "cannot decode the task's graph: {e}"),
            },
            ToWorker::RunSubtasks { task, subtasks } => self.run(task, subtasks, ctx),
            ToWorker::CancelSubtasks { task, subtasks } => {
                for s in subtasks {
                    self.shared.cancelled.insert((task, s));
                }
            }
            ToWorker::ReleaseChunks { task, chunks } => {
                for c in chunks {
                    self.shared.storage.remove(task, c);
                }
            }
            ToWorker::ForgetTask { task } => {
                self.graphs.remove(&task);
                self.shared.storage.remove_task(task);
                self.shared.cancelled.retain(|(t, _)| *t != task);
            }
        }
    }

    fn run(&mut self, task: TaskId, subtasks: Vec<RunSubtask>, ctx: &mut Context<Self>) {
        let Some(graph) = self.graphs.get(&task).cloned() else {
            for r in subtasks {
                let report = SubtaskReport {
                    subtask: r.subtask,
                    outcome: Err(format!(
                        "{FETCH_ERROR_PREFIX}graph of {task} not registered"
                    )),
                };
                self.reports.entry(task).or_default().push(report);
            }
            ctx.notify(Flush);
            return;
        };
        let me = self.me.unwrap_or(WorkerId(u32::MAX));
        let addr = ctx.address();
        let jobs = subtasks.into_iter().map(|run| {
            let (graph, shared, addr) = (graph.clone(), self.shared.clone(), addr.clone());
            let depth = run.depth;
            let work: pool::Work = Box::new(move || {
                if let Some(report) = execute_one(&graph, task, run, me, &shared) {
                    shared
                        .finished
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((task, report));
                    if !shared.drain_pending.swap(true, Ordering::AcqRel) {
                        addr.do_send(Drain);
                    }
                }
            });
            (depth, work)
        });
        self.pool.submit_all(jobs);
    }
}

/// Fetches inputs (local first, then batched per peer), computes, stores the outputs.
fn execute_one(
    graph: &WorkerGraph,
    task: TaskId,
    run: RunSubtask,
    me: WorkerId,
    shared: &Shared,
) -> Option<SubtaskReport> {
    let s = run.subtask;
    if shared.cancelled.remove(&(task, s)).is_some() {
        return None;
    }
    // A panic anywhere in fetching or computing is this subtask's error, never a lost report.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut fetched: FxHashMap<ChunkIdx, Arc<crate::array::ArrayData>> = FxHashMap::default();
        let mut remote: BTreeMap<WorkerId, Vec<ChunkIdx>> = BTreeMap::new();
        for (c, w) in &run.inputs {
            match shared.storage.get(task, *c) {
                Some(d) => {
                    fetched.insert(*c, d);
                }
                None if *w == me => {
                    return Err(format!("{FETCH_ERROR_PREFIX}chunk {c} is no longer here"))
                }
                None => remote.entry(*w).or_default().push(*c),
            }
        }
        // Members reading another task's result: from this worker or the one holding it.
        let mut remote_fetch: BTreeMap<(WorkerId, TaskId), Vec<(ChunkIdx, ChunkIdx)>> =
            BTreeMap::new();
        for &m in graph.members.row(s.index()) {
            let idx = ChunkIdx(m);
            if let crate::ops::OpArgs::FetchChunk {
                task: src,
                chunk,
                worker,
            } = graph.chunks.args_of(idx)
            {
                match shared.storage.get(*src, ChunkIdx(*chunk)) {
                    Some(d) => {
                        fetched.insert(idx, d);
                    }
                    None => remote_fetch
                        .entry((WorkerId(*worker), *src))
                        .or_default()
                        .push((ChunkIdx(*chunk), idx)),
                }
            }
        }
        for ((w, src), pairs) in remote_fetch {
            let addr = shared
                .peers
                .get(&w)
                .map(|a| a.clone())
                .ok_or_else(|| format!("result of {src} was on {w}, which is gone"))?;
            let wanted: Vec<ChunkIdx> = pairs.iter().map(|p| p.0).collect();
            let data = shared
                .connections
                .fetch(&addr, src, &wanted, shared.max_frame)
                .map_err(|e| format!("cannot read the result of {src} from {w}: {e}"))?;
            let by_source: FxHashMap<ChunkIdx, crate::array::ArrayData> =
                data.into_iter().collect();
            for (source, member) in pairs {
                let d = by_source
                    .get(&source)
                    .cloned()
                    .ok_or_else(|| format!("{w} did not send chunk {source} of {src}"))?;
                fetched.insert(member, Arc::new(d));
            }
        }
        for (w, chunks) in remote {
            let addr = shared
                .peers
                .get(&w)
                .map(|a| a.clone())
                .ok_or_else(|| format!("{FETCH_ERROR_PREFIX}no address for {w}"))?;
            let data = shared
                .connections
                .fetch(&addr, task, &chunks, shared.max_frame)
                .map_err(|e| format!("{FETCH_ERROR_PREFIX}{w} at {addr}: {e}"))?;
            for (c, d) in data {
                fetched.insert(c, Arc::new(d));
            }
        }
        let (members, outputs) = (graph.members.row(s.index()), graph.outputs.row(s.index()));
        let outputs =
            run_subtask(&graph.chunks, members, outputs, &fetched).map_err(|e| e.to_string())?;
        Ok(outputs
            .into_iter()
            .map(|(c, d)| {
                let size = d.nbytes() as u64;
                shared.storage.put(task, c, d);
                (c, size)
            })
            .collect())
    }))
    .unwrap_or_else(|panic| {
        Err(format!(
            "panicked: {}",
            crate::prepare::panic_message(panic.as_ref())
        ))
    });
    if shared.cancelled.remove(&(task, s)).is_some() {
        return None;
    }
    Some(SubtaskReport {
        subtask: s,
        outcome,
    })
}

/// Connects to the supervisor (retrying for up to `wait`) and starts a worker on the current
/// actix system. Returns the worker's address and its data-plane address.
pub async fn start(
    config: &Config,
    creds: &Credentials,
    supervisor: &str,
    wait: Duration,
) -> std::io::Result<(Addr<Worker>, SocketAddr)> {
    let max_frame = config.cluster.max_frame_bytes;
    let storage = Arc::new(Storage::default());
    let gate = transfer::gate(creds.keys(), config);
    let data_addr =
        transfer::serve(&config.worker.data_listen, storage.clone(), max_frame, gate).await?;
    let deadline = tokio::time::Instant::now() + wait;
    let mut stream = loop {
        match TcpStream::connect(supervisor).await {
            Ok(s) => break s,
            Err(e) if tokio::time::Instant::now() >= deadline => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    stream.set_nodelay(true)?;
    let timeout = Duration::from_millis(config.cluster.handshake_timeout_ms);
    auth::connect_async(&mut stream, Role::Worker, &creds.node_secret(), timeout)
        .await
        .map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!("supervisor at {supervisor}: {e}"),
            )
        })?;
    // Bound to all interfaces: advertise the address this host reaches the supervisor from,
    // which its peers can reach too (containers, multi-homed hosts).
    let data_addr = if data_addr.ip().is_unspecified() {
        SocketAddr::new(stream.local_addr()?.ip(), data_addr.port())
    } else {
        data_addr
    };
    let slots = config.worker.effective_slots();
    let pool = pool::ComputePool::new(slots)?;
    let shared = Arc::new(Shared {
        finished: Mutex::new(Vec::new()),
        drain_pending: AtomicBool::new(false),
        storage,
        peers: DashMap::new(),
        connections: transfer::Connections::new(creds.node_secret()),
        cancelled: DashSet::new(),
        max_frame,
    });
    let heartbeat = Duration::from_millis(config.cluster.heartbeat_interval_ms);
    let memory_limit = config.worker.memory_limit;
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
            shared,
            pool,
            reports: BTreeMap::new(),
            lost_supervisor: false,
        }
    });
    Ok((addr, data_addr))
}
