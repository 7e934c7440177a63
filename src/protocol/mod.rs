//! The wire protocol: frames of mixed messages.
//!
//! Every frame is a length-delimited `Vec<Message>`, so one write can carry RunSubtasks for
//! several tasks, chunk releases and a heartbeat together; each link keeps one outbound queue
//! and drains all of it into one frame per write. A connection starts with a hello carrying
//! [`PROTOCOL_VERSION`]; a peer speaking another version is refused. Only [`codec`] knows
//! bytes.

pub mod auth;
pub mod codec;
pub mod data;
pub mod framing;
pub mod handshake;
pub mod outbound;
pub mod secret;

use crate::graph::TileableGraph;
use crate::ids::{ChunkIdx, SubtaskIdx, TaskId, WorkerId};
use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// Bumped whenever a message changes shape.
pub const PROTOCOL_VERSION: u32 = 1;

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
    pub outcome: Result<Vec<(ChunkIdx, u64)>, String>,
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

/// Every message of every link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Message {
    // Handshake.
    HelloWorker {
        version: u32,
        slots: u32,
        memory_limit: u64,
        data_addr: String,
    },
    HelloClient {
        version: u32,
    },
    Welcome {
        version: u32,
        worker: Option<WorkerId>,
    },
    Refused {
        reason: String,
    },

    // Supervisor → worker.
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

    // Worker → supervisor.
    /// Liveness, with what the worker holds.
    Heartbeat {
        stored_chunks: u64,
        stored_bytes: u64,
    },
    SubtasksFinished {
        task: TaskId,
        reports: Vec<SubtaskReport>,
    },

    // Client ↔ supervisor (request ids pair answers with questions).
    Submit {
        request: u64,
        graph: TileableGraph,
        fuse_enabled: Option<bool>,
        /// Replaces `task.default_config` for this task.
        config: Option<crate::config::TaskConfig>,
    },
    Submitted {
        request: u64,
        task: Result<TaskId, String>,
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
    Info {
        request: u64,
        info: Result<TaskInfo, String>,
    },
    Cancel {
        request: u64,
        task: TaskId,
    },
    FetchResult {
        request: u64,
        task: TaskId,
    },
    /// Result tensors in the codec's chunk encoding (raw bytes).
    ResultData {
        request: u64,
        data: Result<Bytes, String>,
    },
}

impl Message {
    /// The variant's name, for errors and logs (never the contents: they may be huge).
    pub fn kind(&self) -> &'static str {
        match self {
            Message::HelloWorker { .. } => "HelloWorker",
            Message::HelloClient { .. } => "HelloClient",
            Message::Welcome { .. } => "Welcome",
            Message::Refused { .. } => "Refused",
            Message::Peers { .. } => "Peers",
            Message::RegisterTask { .. } => "RegisterTask",
            Message::RunSubtasks { .. } => "RunSubtasks",
            Message::CancelSubtasks { .. } => "CancelSubtasks",
            Message::ReleaseChunks { .. } => "ReleaseChunks",
            Message::ForgetTask { .. } => "ForgetTask",
            Message::Heartbeat { .. } => "Heartbeat",
            Message::SubtasksFinished { .. } => "SubtasksFinished",
            Message::Submit { .. } => "Submit",
            Message::Submitted { .. } => "Submitted",
            Message::Wait { .. } => "Wait",
            Message::GetInfo { .. } => "GetInfo",
            Message::Info { .. } => "Info",
            Message::Cancel { .. } => "Cancel",
            Message::FetchResult { .. } => "FetchResult",
            Message::ResultData { .. } => "ResultData",
        }
    }

    /// Whether a client may send this once welcomed.
    pub fn is_client_request(&self) -> bool {
        matches!(
            self,
            Message::Submit { .. }
                | Message::Wait { .. }
                | Message::GetInfo { .. }
                | Message::Cancel { .. }
                | Message::FetchResult { .. }
        )
    }
}
