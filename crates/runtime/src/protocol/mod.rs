//! The wire protocol: after the [`handshake`], frames of messages of one direction.
//!
//! Each direction has its own enum ([`FromWorker`], [`ToWorker`], [`ClientRequest`],
//! [`ClientReply`]; the handshake is fixed-size bytes of its own), so a message sent the wrong
//! way cannot even be decoded: every frame is `direction tag | Vec<M>`, checked before the
//! messages are read. One frame can carry RunSubtasks for several tasks, chunk releases and
//! a heartbeat together; each link keeps one outbound queue and drains all of it into one
//! frame per write. The first frame carries a hello with [`PROTOCOL_VERSION`]. Only [`codec`]
//! (and [`data`] for the data plane) know bytes.

pub mod auth;
pub mod codec;
pub mod data;
pub mod framing;
pub mod handshake;
pub mod memory_stats;
pub mod outbound;
pub mod pieces;
pub mod secret;
pub mod secure;
pub mod task_stream;

pub use memory_stats::MemoryStats;

use ares_core::graph::TileableGraph;
use ares_core::ids::{ChunkIdx, SubtaskIdx, TaskId, WorkerId};
use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// Bumped whenever a message changes shape (5: `FetchPart` rows, the heartbeat's
/// `transit_bytes`, data-plane answers in pieces; 6: uploads, `UploadBegin`...; 7: the task
/// graph's node and index arenas as packed records, [`ares_core::graph::packed`]; 8: the
/// heartbeat's `unmanaged_bytes`; 9: a FUSE step's `position`, random fills keep the op's
/// seed; 10: `rand` draws from eight interleaved generators, so nodes of two versions would
/// compute different values for one tensor; 11: an upload's load reads `Format::Spool`;
/// 12: `Explain`; 13: the handshake's seal bytes and encrypted links; 14: heartbeat task-stream entries;
/// 15: they travel as one packed byte string, timed on the worker's clock; 16: the hello's
/// `runs_code`, and `map_blocks` nodes; 17: the six narrow integer dtypes in chunk
/// headers and data; 18: `select_ranks` nodes and their steps' arguments; 19: spans also
/// travel in pieces between heartbeats, `Spans`; 20: `matmul` nodes that generate an
/// operand, `MatmulGenerated`; 21: the projected QR's nodes, `TsqrRows`, and
/// `MatmulGenerated` renamed `Generated`, as a projected QR's leaf generates its operand too).
pub const PROTOCOL_VERSION: u32 = 21;

/// One subtask to run: its index in the task's subtask graph and where its inputs are.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSubtask {
    pub subtask: SubtaskIdx,
    /// Priority on the worker: deeper first.
    pub depth: u32,
    /// For every external input chunk, the worker holding it.
    pub inputs: Vec<(ChunkIdx, WorkerId)>,
}

/// What became of one subtask on a worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubtaskReport {
    pub subtask: SubtaskIdx,
    /// The kept output chunks and their sizes in bytes, or the error.
    pub outcome: Result<Vec<(ChunkIdx, u64)>, SubtaskError>,
}

/// Why a subtask did not finish: the supervisor decides retry-or-fail on the variant, never
/// on the text (which is for humans).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, thiserror::Error)]
pub enum SubtaskError {
    /// An input is not where the supervisor said (released, or its holder is gone): the
    /// subtask runs again once the input is recomputed.
    #[error("fetch failed: {0}")]
    Fetch(String),
    /// The peer holding inputs did not answer within `worker.fetch_timeout_ms`, retries
    /// included (frozen, partitioned, overloaded): the supervisor treats it as dead, so its
    /// chunks are recomputed from lineage elsewhere, and runs the subtask again.
    #[error("peer {worker} unreachable: {message}")]
    PeerUnreachable { worker: WorkerId, message: String },
    /// The kernel failed (or panicked): the task fails with this message.
    #[error("{0}")]
    Failed(String),
    /// The worker did not start it (it is draining after SIGTERM): it runs elsewhere, not
    /// counted as a retry.
    #[error("not run: {0}")]
    NotRun(String),
}

/// A task's state as clients see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    Pending,
    Running,
    Succeeded,
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Succeeded | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskInfo {
    pub task: TaskId,
    pub status: TaskStatus,
    pub progress: f64,
    pub subtasks: usize,
    pub error: Option<String>,
    /// Subtask runs repeated after lost workers or inputs.
    pub retries: u32,
    /// Seconds spent preparing the graph (tile, fuse, color, assign), once done.
    pub prepare_seconds: Option<f64>,
    /// Seconds from submission to the end (or to now).
    pub elapsed: f64,
}

/// A message type with its direction: frames carry [`Direction::TAG`] before their messages,
/// so a frame sent the wrong way (a client sending worker messages) cannot decode at all.
pub trait Direction: Serialize + serde::de::DeserializeOwned {
    const TAG: u8;
    const NAME: &'static str;
    /// A large byte string the message carries and shares with others (a task's graph sent
    /// to every worker, result data): written from where it lies, never copied into a frame
    /// ([`codec::encode_frame_pieces`]).
    fn shared_bytes(&self) -> Option<&Bytes> {
        None
    }
}

/// Worker → supervisor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum FromWorker {
    /// The first message: what the worker offers.
    Hello {
        version: u32,
        slots: u32,
        memory_limit: u64,
        data_addr: String,
        /// Whether it runs clients' functions (`map_blocks`): it can (a worker started
        /// inside Python, `python -m ares worker`) and may (`cluster.allow_code`).
        runs_code: bool,
    },
    /// Liveness, with what the worker holds.
    Heartbeat {
        stored_chunks: u64,
        stored_bytes: u64,
        /// Accounting against `worker.memory_limit`: reserved, peak, spilled, pauses.
        memory: crate::protocol::MemoryStats,
        /// The subtasks that ended since the previous heartbeat, for the dashboard.
        stream: task_stream::StreamReport,
    },
    SubtasksFinished {
        task: TaskId,
        reports: Vec<SubtaskReport>,
    },
    /// SIGTERM: the worker takes no new work and finishes what runs (`worker.drain_timeout_ms`).
    Draining,
    /// The drain is over: every report was sent; the worker exits and its chunks are
    /// recomputed from lineage where still needed.
    Leaving,
    /// A piece of the spans a heartbeat would carry, sent with the reports as soon as it is
    /// [`task_stream::SPAN_PIECE`] long (`spill_at`, `pause_at` and `dropped` are the
    /// heartbeat's: 0 here). A heartbeat of a few megabytes held up the reports queued
    /// behind it on the connection, and the worker ran dry meanwhile.
    Spans { stream: task_stream::StreamReport },
}

/// Supervisor → worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ToWorker {
    Welcome {
        version: u32,
        worker: WorkerId,
    },
    Refused {
        reason: String,
    },
    /// Data-plane addresses of all live workers.
    Peers {
        peers: Vec<(WorkerId, String)>,
    },
    /// A task's subtask graph (codec-encoded once, sent once per worker; raw bytes).
    RegisterTask {
        task: TaskId,
        graph: Bytes,
    },
    RunSubtasks {
        task: TaskId,
        subtasks: Vec<RunSubtask>,
    },
    CancelSubtasks {
        task: TaskId,
        subtasks: Vec<SubtaskIdx>,
    },
    ReleaseChunks {
        task: TaskId,
        chunks: Vec<ChunkIdx>,
    },
    ForgetTask {
        task: TaskId,
    },
    /// Answers each heartbeat: a worker that hears none for `cluster.node_timeout_ms` knows
    /// the supervisor is gone or frozen even when the connection stays open.
    HeartbeatAck,
    /// A part of a streamed task's graph that extends the graph registered (and extended)
    /// before it: a codec-encoded [`ares_core::graph::delta::WorkerDeltaView`], raw bytes.
    ExtendTask {
        task: TaskId,
        graph: Bytes,
    },
}

/// Client → supervisor (request ids pair answers with questions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ClientRequest {
    /// The first message.
    Hello {
        version: u32,
    },
    Submit {
        request: u64,
        graph: TileableGraph,
        fuse_enabled: Option<bool>,
        /// Replaces `task.default_config` for this task.
        config: Option<crate::config::TaskConfig>,
    },
    Wait {
        request: u64,
        task: TaskId,
        timeout_ms: u64,
    },
    GetInfo {
        request: u64,
        task: TaskId,
    },
    Cancel {
        request: u64,
        task: TaskId,
    },
    FetchResult {
        request: u64,
        task: TaskId,
    },
    /// Streamed result fetch (branch io): the layout of result `output` and the chunks at
    /// `positions` of its C-order grid (none: the layout alone), at most `ResultPart::budget`
    /// bytes of them per call. With `rows`, only rows `start..end` (first axis) of the one
    /// chunk at `positions`: a chunk larger than a part comes in row ranges.
    FetchPart {
        request: u64,
        task: TaskId,
        output: u32,
        positions: Vec<u32>,
        rows: Option<(u64, u64)>,
    },
    /// Starts an upload of an `.npy` stream of `bytes` bytes on this connection (one at a
    /// time): its pieces follow, then `UploadEnd`. Tensor `name` of the session `default`
    /// once loaded (none: unnamed, reachable through the answer's `fetch`), chunked by
    /// `chunk` (none: whole rows of about 2^20 elements). See `supervisor::upload`.
    UploadBegin {
        request: u64,
        name: Option<String>,
        chunk: Option<ares_core::ops::ChunkSpec>,
        bytes: u64,
    },
    /// The next `data.len()` bytes of the upload, at `offset` (the bytes sent before);
    /// answered once written, in order.
    UploadPiece {
        request: u64,
        offset: u64,
        data: Bytes,
    },
    /// Every byte was sent: the workers load their chunks; answered with `Loaded`.
    UploadEnd {
        request: u64,
    },
    /// What `ares explain` prints for `graph`, prepared by the supervisor for its live
    /// workers with its `task.default_config` (each listing capped at `limit`, 0 = all);
    /// checked as a submission is, and nothing runs. Answered with `Explained`.
    Explain {
        request: u64,
        graph: TileableGraph,
        limit: u64,
    },
}

/// Where an upload stands, as the answers to its requests say.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum UploadAnswer {
    /// `UploadBegin` accepted: send pieces of at most `piece_bytes` bytes, at most `window`
    /// of them unanswered.
    Ready { piece_bytes: u64, window: u32 },
    /// A piece was written: `received` bytes so far.
    Received { received: u64 },
    /// The workers hold the tensor.
    Loaded(UploadedTensor),
}

/// An uploaded tensor: the task holding it (cancelling that task frees it) and the arguments
/// of an `Op::Fetch` reading it in later graphs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UploadedTensor {
    pub task: TaskId,
    pub name: Option<String>,
    pub fetch: ares_core::ops::OpArgs,
}

/// One part of a streamed result (branch io): its layout, and the requested chunks in the
/// codec's chunk encoding (chunk index = position in the result's grid).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultPart {
    pub shape: Vec<u64>,
    pub dtype: ares_core::array::DType,
    pub splits: Vec<Vec<u64>>,
    /// How many results the task has.
    pub outputs: u32,
    /// Most bytes of chunk data one part may ask for.
    pub budget: u64,
    pub chunks: Bytes,
}

/// Supervisor → client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ClientReply {
    Welcome {
        version: u32,
    },
    Refused {
        reason: String,
    },
    Submitted {
        request: u64,
        task: Result<TaskId, String>,
    },
    Info {
        request: u64,
        info: Result<TaskInfo, String>,
    },
    /// Result tensors in the codec's chunk encoding (raw bytes).
    ResultData {
        request: u64,
        data: Result<Bytes, String>,
    },
    /// The answer to `FetchPart`.
    ResultPart {
        request: u64,
        part: Result<ResultPart, String>,
    },
    /// The answer to `UploadBegin`, `UploadPiece` and `UploadEnd`.
    Upload {
        request: u64,
        answer: Result<UploadAnswer, String>,
    },
    /// The answer to `Explain`: the text, or why the graph was refused or failed to prepare.
    Explained {
        request: u64,
        text: Result<String, String>,
    },
}

impl Direction for FromWorker {
    const TAG: u8 = 0xA1;
    const NAME: &'static str = "worker-to-supervisor";
    /// A heartbeat's spans: written from the worker's span buffer ([`task_stream`]).
    fn shared_bytes(&self) -> Option<&Bytes> {
        match self {
            FromWorker::Heartbeat { stream, .. } | FromWorker::Spans { stream } => {
                Some(stream.spans.bytes())
            }
            _ => None,
        }
    }
}
impl Direction for ToWorker {
    const TAG: u8 = 0xA2;
    const NAME: &'static str = "supervisor-to-worker";
    fn shared_bytes(&self) -> Option<&Bytes> {
        match self {
            ToWorker::RegisterTask { graph, .. } | ToWorker::ExtendTask { graph, .. } => {
                Some(graph)
            }
            _ => None,
        }
    }
}
impl Direction for ClientRequest {
    const TAG: u8 = 0xA3;
    const NAME: &'static str = "client-request";
}
impl Direction for ClientReply {
    const TAG: u8 = 0xA4;
    const NAME: &'static str = "client-reply";
    fn shared_bytes(&self) -> Option<&Bytes> {
        match self {
            ClientReply::ResultData { data: Ok(d), .. } => Some(d),
            ClientReply::ResultPart { part: Ok(p), .. } => Some(&p.chunks),
            _ => None,
        }
    }
}
