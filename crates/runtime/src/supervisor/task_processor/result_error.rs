//! Why a result read failed: the task has no such result, a holder is gone or did not answer,
//! or the chunks could not be assembled or encoded. One enum for the whole read and the
//! streamed parts, so the front door ([`crate::supervisor::service`]) gets a typed error and
//! a holder that did not answer in time is known by its variant (its results are then
//! recomputed: `recompute.rs`).

use crate::data_plane::FetchError;
use crate::protocol::TaskStatus;
use ares_core::ids::{ChunkIdx, TaskId, WorkerId};

#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    #[error("{task} has no result ({status:?})")]
    NotSucceeded { task: TaskId, status: TaskStatus },
    #[error("task {0} holds no result")]
    NoneHeld(TaskId),
    #[error("{task} has {count} result(s), no result {output}")]
    NoSuchOutput {
        task: TaskId,
        count: usize,
        output: u32,
    },
    #[error("{task} result {output} has {count} chunks, no chunk {position}")]
    NoSuchChunk {
        task: TaskId,
        output: u32,
        count: usize,
        position: u32,
    },
    #[error("{task} result {output}: a chunk is lost")]
    LengthLost { task: TaskId, output: u32 },
    #[error("rows {start}..{end} of {chunks} chunk(s) of {rows} rows: ask for rows of one chunk")]
    BadRows {
        start: u64,
        end: u64,
        chunks: usize,
        rows: u64,
    },
    #[error("the chunks asked for exceed the part budget of {0} bytes")]
    OverBudget(u64),
    #[error("result chunk {0} is lost")]
    Lost(ChunkIdx),
    #[error("result chunk {0} was not sent")]
    NotSent(ChunkIdx),
    #[error("{0} holding results is gone")]
    HolderGone(WorkerId),
    #[error("reading results from {worker}: {source}")]
    Reading {
        worker: WorkerId,
        source: FetchError,
    },
    #[error("{0}")]
    Assemble(#[from] ares_core::AresError),
    #[error("{0}")]
    Encode(#[from] crate::protocol::codec::CodecError),
    #[error("the result read stopped: {0}")]
    Stopped(#[from] tokio::task::JoinError),
    /// The processor went away while the read waited for a recomputation.
    #[error("the task's processor is gone: {0}")]
    ProcessorGone(#[from] actix::MailboxError),
    #[error("the task's processor is restarting after a panic; retry")]
    Restarting,
}

impl ResultError {
    /// The holder that did not answer within the fetch timeout, if that is why.
    pub fn unreachable(&self) -> Option<WorkerId> {
        match self {
            ResultError::Reading {
                worker,
                source: FetchError::Unreachable(_),
            } => Some(*worker),
            _ => None,
        }
    }
}
