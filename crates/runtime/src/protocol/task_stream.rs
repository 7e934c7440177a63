//! What a worker tells the supervisor about each subtask it ran, for the dashboard's task
//! stream: carried by the heartbeat it sends anyway (no message of its own, no round trip).
//!
//! A span is a few varints (bincode's standard encoding): times are microseconds relative
//! to the heartbeat that carries it, so the supervisor places them on its own clock without
//! trusting the worker's, and the op is its wire id. The worker keeps
//! at most `web.task_stream_capacity` spans between two heartbeats and counts the ones it
//! had to drop; the supervisor never sizes anything by what a worker sent
//! (see `supervisor::history`).

use ares_core::ids::{SubtaskIdx, TaskId};
use ares_core::ops::Op;
use serde::{Deserialize, Serialize};

/// How a subtask's run ended, as the task stream colours it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SpanStatus {
    Succeeded,
    /// The kernel failed or panicked.
    Failed,
    /// An input could not be fetched (lost, or its holder unreachable): it runs again.
    FetchFailed,
}

impl SpanStatus {
    pub fn name(self) -> &'static str {
        match self {
            SpanStatus::Succeeded => "succeeded",
            SpanStatus::Failed => "failed",
            SpanStatus::FetchFailed => "fetch_failed",
        }
    }
}

/// One subtask's run on a compute slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubtaskSpan {
    pub task: TaskId,
    pub subtask: SubtaskIdx,
    /// The slot (compute thread) that ran it, `0..slots`.
    pub slot: u32,
    /// Its depth in the subtask graph (the progress panel groups by it).
    pub depth: u32,
    /// The op of its last chunk (the last step of a fused chunk).
    pub op: Op,
    pub status: SpanStatus,
    /// Microseconds from its start to the heartbeat carrying it.
    pub start_us_ago: u64,
    /// Microseconds it ran on the slot.
    pub run_us: u64,
    /// Microseconds it waited for inputs fetched from peers before it reached the pool (0:
    /// every input was here).
    pub fetch_us: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
}

/// The task-stream part of a heartbeat.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamReport {
    /// Subtasks that ended since the previous heartbeat, oldest first.
    pub spans: Vec<SubtaskSpan>,
    /// Spans the worker did not keep since the previous heartbeat (over its capacity).
    pub dropped: u64,
    /// `worker.memory.spill` and `.pause` of the limit, in bytes (0 = no limit).
    pub spill_at: u64,
    pub pause_at: u64,
}
