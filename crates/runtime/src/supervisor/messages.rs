//! Every message the supervisor's actors exchange, and the handles they hold of each other.
//!
//! The actors never name each other's types: the scheduler holds a [`LinkHandle`] per worker
//! and a [`TaskHandle`] per task, processors and links hold a [`SchedulerHandle`], each a
//! bundle of `Recipient<M>`s ([`super::handles`], re-exported here). So an actor's whole
//! input is listed here, and reading one actor needs this file, not the other three. Who
//! sends what:
//!
//! ```text
//!  Service ──SubmitTask FindTask──▶ TaskManager ──(creates)──▶ TaskProcessor (one per task)
//!                                ▲  TaskEnded                 │ SubmitReady Release StopTask
//!                                └────────────────────────────┤ PeerUnreachable GetWorkers
//!                                                             ▼
//!  Link (one per worker) ──RegisterWorker Heartbeat──▶    Scheduler
//!        ▲             Finished WorkerGone WorkerDrain       │ Reports WorkerLost FailTask
//!        └───────────── Send Expel ──────────────────────────┤ Redrive ──▶ TaskProcessor
//! ```
//!
//! Clients, native and HTTP alike, reach the TaskManager and the processors through
//! [`super::service::Service`]; the web's status pages and `ares node` send these messages
//! directly.

use super::scheduler::state::ReadySubtask;
use super::service::ServiceError;
use crate::config::TaskConfig;
use crate::protocol::{SubtaskReport, TaskInfo, ToWorker};
use actix::prelude::*;
use ares_core::graph::TileableGraph;
use ares_core::ids::{ChunkIdx, StageId, SubtaskIdx, TaskId, WorkerId};
use ares_core::prepare::WorkerSlots;
use bytes::Bytes;
use std::collections::BTreeMap;
use std::time::Duration;

pub use super::handles::{LinkHandle, Route, SchedulerHandle, TaskHandle};

// ---------------------------------------------------------------- to the Scheduler

/// A worker proved the secret and said hello; `None` when the scheduler cannot take it.
#[derive(Message)]
#[rtype(result = "Option<WorkerId>")]
pub struct RegisterWorker {
    pub link: LinkHandle,
    pub slots: usize,
    pub data_addr: String,
    /// `worker.memory_limit` in bytes (0 = none).
    pub memory_limit: u64,
    /// It runs clients' functions (`map_blocks`).
    pub runs_code: bool,
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct Heartbeat {
    pub worker: WorkerId,
    pub stored_chunks: u64,
    pub stored_bytes: u64,
    pub memory: crate::protocol::MemoryStats,
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct Finished {
    pub worker: WorkerId,
    pub task: TaskId,
    pub reports: Vec<SubtaskReport>,
}

/// A worker's connection closed.
#[derive(Message)]
#[rtype(result = "()")]
pub struct WorkerGone(pub WorkerId);

/// A worker drains after SIGTERM (no new work for it); with `left`, the drain is over and it
/// leaves (its chunks are recomputed from lineage where still needed).
#[derive(Message)]
#[rtype(result = "()")]
pub struct WorkerDrain {
    pub worker: WorkerId,
    pub left: bool,
}

/// A peer did not serve chunks within `worker.fetch_timeout_ms`: it is dead to the cluster
/// (frozen, partitioned or overloaded), so its work and chunks are recomputed elsewhere
/// without waiting for `cluster.node_timeout_ms`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct PeerUnreachable {
    pub worker: WorkerId,
    pub why: String,
}

/// Subtasks of a task that can run; the first submission registers the task.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SubmitReady {
    pub task: TaskId,
    pub processor: TaskHandle,
    pub graph: Bytes,
    pub items: Vec<ReadySubtask>,
}

/// A part that extends a streamed task's graph, for every worker that has (or will get)
/// the task's graph; sent before the part's subtasks are submitted.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ExtendGraph {
    pub task: TaskId,
    pub part: Bytes,
}

/// Chunks to delete, per worker.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Release {
    pub task: TaskId,
    pub chunks: BTreeMap<WorkerId, Vec<ChunkIdx>>,
}

/// Stops a task's queued and running subtasks; with `forget`, workers drop it entirely.
#[derive(Message)]
#[rtype(result = "()")]
pub struct StopTask {
    pub task: TaskId,
    pub forget: bool,
}

/// Live workers with their slots and data-plane addresses.
#[derive(Message)]
#[rtype(result = "Vec<(WorkerSlots, String)>")]
pub struct GetWorkers;

/// Every live worker's `worker.memory_limit` (0 = none), for the refusal at submission of
/// subtasks that fit in none.
#[derive(Message)]
#[rtype(result = "Vec<u64>")]
pub struct MemoryLimits;

#[derive(Message)]
#[rtype(result = "Vec<NodeStatus>")]
pub struct GetClusterStatus;

/// One worker as status pages show it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct NodeStatus {
    pub worker: String,
    pub slots: usize,
    pub running: usize,
    pub queued: usize,
    pub data_addr: String,
    pub stored_chunks: u64,
    pub stored_bytes: u64,
    pub alive: bool,
    /// Memory accounting from the last heartbeat (limit, peak, spilled, pauses).
    pub memory: crate::protocol::MemoryStats,
}

// ---------------------------------------------------------------- to a worker's Link

/// Queues a message on the link.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Send(pub ToWorker);

/// Closes the connection of a worker the scheduler declared dead, telling it why.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Expel(pub String);

// ---------------------------------------------------------------- to a TaskProcessor

#[derive(Message)]
#[rtype(result = "()")]
pub struct Reports {
    pub worker: WorkerId,
    pub reports: Vec<SubtaskReport>,
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct WorkerLost {
    pub worker: WorkerId,
    pub subtasks: Vec<SubtaskIdx>,
    /// Why it counts as lost ("connection closed", "missed its heartbeats", ...).
    pub why: String,
}

/// Submit again, not counted as a retry, these subtasks (`None`: every one submitted and
/// not reported): the scheduler restarted and lost its queues, or the worker holding them
/// is suspect (silent for `cluster.suspect_after_ms`) or draining. The first report wins.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Redrive(pub Option<Vec<SubtaskIdx>>);

/// The task fails with this message if it has not ended: no worker has been live for
/// `cluster.no_worker_timeout_ms`, or the supervisor is shutting down.
/// Answers whether it ended the task (false: it had ended already).
#[derive(Message)]
#[rtype(result = "bool")]
pub struct FailTask(pub String);

#[derive(Message)]
#[rtype(result = "TaskInfo")]
pub struct GetInfo;

/// Answers when the task ends or after the timeout, whichever comes first.
#[derive(Message)]
#[rtype(result = "TaskInfo")]
pub struct WaitDone(pub Duration);

/// Answers once the task's graph is prepared (or the task ended first): `Some(message)` when
/// preparation refused it because a subtask fits in no worker's memory limit, which the
/// submission then returns as its error.
#[derive(Message)]
#[rtype(result = "Option<String>")]
pub struct AwaitPrepared;

/// Cancels a running task; on an ended task, frees its results.
#[derive(Message)]
#[rtype(result = "TaskInfo")]
pub struct Cancel;

/// The result tensors, in the codec's chunk encoding (chunk index = output position).
#[derive(Message)]
#[rtype(result = "Result<Bytes, super::task_processor::result_error::ResultError>")]
pub struct FetchResult;

/// Streamed result fetch (branch io): the layout of result `output` and its chunks at
/// `positions` of the C-order grid (none: the layout alone); see `task_processor::part`.
#[derive(Clone, Message)]
#[rtype(
    result = "Result<crate::protocol::ResultPart, super::task_processor::result_error::ResultError>"
)]
pub struct FetchPart {
    pub output: u32,
    pub positions: Vec<u32>,
    /// Rows `start..end` (first axis) of the one chunk at `positions` only.
    pub rows: Option<(u64, u64)>,
}

/// The task's graphs with per-node status, subtasks listed up to `limit`.
#[derive(Message)]
#[rtype(result = "GraphView")]
pub struct GetGraph {
    pub limit: usize,
}

/// Arguments of an `Op::Fetch` reading this output of this task (with the chunks' real
/// lengths, for a 1-D result), if it succeeded and its results are still held.
#[derive(Clone, Copy, Message)]
#[rtype(result = "Option<ares_core::ops::OpArgs>")]
pub struct GetFetchArgs(pub u32);

impl GetFetchArgs {
    /// The first (or only) result.
    pub const FIRST: GetFetchArgs = GetFetchArgs(0);
}

/// One subtask as status pages show it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SubtaskView {
    pub id: String,
    pub depth: u32,
    pub state: &'static str,
    pub chunks: usize,
    pub worker: Option<String>,
    pub preds: Vec<u32>,
}

/// One chunk of a small task's chunk graph, as the dashboard draws it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ChunkView {
    /// Its op (a FUSE chunk's last step), with the fused steps' names in `label`.
    pub op: &'static str,
    pub family: &'static str,
    pub label: String,
    pub shape: Vec<u64>,
    /// The subtask (index into `subtasks`) that computes it.
    pub subtask: u32,
    /// Chunks (indices into `chunks`) it reads.
    pub inputs: Vec<u32>,
}

/// Subtasks per op kind (the op each subtask is drawn as), as dask's progress bars group
/// tasks by their key's prefix.
#[derive(Clone, Debug, serde::Serialize)]
pub struct OpProgress {
    pub op: &'static str,
    pub family: &'static str,
    pub waiting: usize,
    pub submitted: usize,
    pub done: usize,
}

/// A task's graphs with per-node status: counts per depth and per op always, subtasks and
/// chunks up to a limit.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GraphView {
    pub info: TaskInfo,
    pub tileable: Option<TileableGraph>,
    pub subtasks_total: usize,
    /// `[depth, waiting, submitted, done]` for every depth level.
    pub by_depth: Vec<[usize; 4]>,
    /// Per op, in the order ops first appear in the subtask graph.
    pub by_op: Vec<OpProgress>,
    pub subtasks: Vec<SubtaskView>,
    /// The chunk graph, when the task has at most `limit` subtasks and `4 × limit` chunks.
    pub chunks: Vec<ChunkView>,
}

impl GraphView {
    /// A view with no graph (not prepared yet, or gone).
    pub fn empty(info: TaskInfo) -> Self {
        Self {
            info,
            tileable: None,
            subtasks_total: 0,
            by_depth: Vec::new(),
            by_op: Vec::new(),
            subtasks: Vec::new(),
            chunks: Vec::new(),
        }
    }
}

// ---------------------------------------------------------------- to the TaskManager

/// A task ended (sent by its processor once).
#[derive(Message)]
#[rtype(result = "()")]
pub struct TaskEnded(pub TaskId);

/// Who built a submitted graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A client, over the native protocol or HTTP: a graph holding a form only the supervisor
    /// may build (an upload's spool source) is refused.
    Client,
    /// The supervisor itself: an upload's load into the workers (`super::upload`).
    Supervisor,
    /// The supervisor, for a stage of a task that runs in stages (`super::staged_task`): the
    /// stage is the `stage_id` of its subtasks' ids.
    Stage(StageId),
}

/// Submits a tileable graph to a session.
#[derive(Message)]
#[rtype(result = "Result<TaskId, ServiceError>")]
pub struct SubmitTask {
    pub session: String,
    pub graph: TileableGraph,
    /// Replaces `task.default_config` for this task.
    pub config: Option<TaskConfig>,
    pub fuse_enabled: Option<bool>,
    /// Binds the task's result to this name in the session.
    pub name: Option<String>,
    pub origin: Origin,
    /// The upload spool file an upload's load task reads (`super::upload`): its processor
    /// keeps it until the task is freed, so results lost with a worker are read again from it.
    pub spool: Option<super::upload::Spool>,
}

/// What `ares explain` prints for a client's graph, prepared as a submission to `session`
/// would be now (see `super::explain`); each listing capped at `limit` (0 = all).
#[derive(Message)]
#[rtype(result = "Result<String, super::explain::ExplainError>")]
pub struct ExplainGraph {
    pub session: String,
    pub graph: TileableGraph,
    pub limit: usize,
}

/// The named results of a session: (name, task, processor).
#[derive(Message)]
#[rtype(result = "Vec<(String, TaskId, TaskHandle)>")]
pub struct Names(pub String);

/// Cancels a running task or releases an ended one's results; its name is unbound.
/// `session: None` finds the task in any session (the native protocol has none).
#[derive(Message)]
#[rtype(result = "Result<TaskInfo, ServiceError>")]
pub struct ReleaseTask {
    pub session: Option<String>,
    pub task: TaskId,
}

/// The processor of a task in a session (`None`: in any session).
#[derive(Message)]
#[rtype(result = "Result<TaskHandle, ServiceError>")]
pub struct FindTask {
    pub session: Option<String>,
    pub task: TaskId,
}

/// Creates a session (idempotent); refused when the id is not valid or `web.max_sessions`
/// others exist.
#[derive(Message)]
#[rtype(result = "Result<(), crate::supervisor::task_manager::CreateSessionError>")]
pub struct CreateSession(pub String);

/// Deletes a session: its tasks are cancelled and their data freed. `false` if unknown.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct DeleteSession(pub String);

/// Sessions with their tasks' processors (one session, or all).
#[derive(Message)]
#[rtype(result = "Vec<(String, Vec<TaskHandle>)>")]
pub struct ListSessions(pub Option<String>);

/// SIGTERM: every task that has not ended fails with "supervisor shutting down", so no
/// client waits on a supervisor that is going away. Answers how many it failed.
#[derive(Message)]
#[rtype(result = "usize")]
pub struct ShutDown;
