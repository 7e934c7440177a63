//! [`ServiceError`]: why a client's request to the supervisor failed, one variant per kind of
//! problem, so each front end decides on the variant and never on the text: the web API maps
//! it once to an HTTP status (`crate::web`), the native protocol once to its error reply, a
//! string on the wire (`super::super::client_link`). The text is what users have always read;
//! tests match it.

use crate::supervisor::admission::AdmissionError;
use crate::supervisor::explain::ExplainError;
use crate::supervisor::task_manager::CreateSessionError;
use crate::supervisor::upload::UploadError;
use ares_core::ids::TaskId;

/// What a request to a supervisor actor answers while that actor restarts after a panic.
pub const RESTARTING: &str = "the task manager is restarting after a panic; retry";

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("unknown session {0:?}")]
    UnknownSession(String),
    /// No such task, or not in the session named (`None`: the native protocol, which reaches
    /// a task of any session by its id).
    #[error("{}", unknown_task(*.task, .session.as_deref()))]
    UnknownTask {
        task: TaskId,
        session: Option<String>,
    },
    #[error("no tensor {name:?} in session {session:?}")]
    UnknownTensor { session: String, name: String },
    /// The submission breaks a limit (`limits.*`) or holds a form only the supervisor builds.
    #[error(transparent)]
    OverLimit(#[from] AdmissionError),
    #[error("invalid result name {0:?}: use an identifier of up to 64 characters")]
    BadResultName(String),
    #[error("invalid tensor name {0:?}: use [A-Za-z_][A-Za-z0-9_]*, at most 64 characters")]
    BadTensorName(String),
    /// The graph or its task config is invalid (the core's message).
    #[error("{0}")]
    BadGraph(String),
    /// A subtask of the prepared graph fits in no worker's `worker.memory_limit`.
    #[error("{0}")]
    DoesNotFit(String),
    /// The graph cannot be explained (a limit, invalid, or too long an explanation).
    #[error("{0}")]
    NotExplained(String),
    #[error(transparent)]
    Session(#[from] CreateSessionError),
    /// The task has no result to read (not succeeded, freed, a lost chunk, a failed read).
    #[error("{0}")]
    NoResult(#[from] crate::supervisor::task_processor::result_error::ResultError),
    #[error(transparent)]
    Upload(#[from] UploadError),
    /// The supervisor cannot do it now (no live worker, too many explains, a timeout).
    #[error("{0}")]
    Busy(String),
    #[error("{RESTARTING}")]
    Restarting,
    /// A supervisor actor did not answer (stopped, or its mailbox closed).
    #[error("supervisor actor unavailable: {0}")]
    ActorGone(#[from] actix::MailboxError),
}

fn unknown_task(task: TaskId, session: Option<&str>) -> String {
    match session {
        Some(s) => format!("no task {} in session {s:?}", task.0),
        None => format!("unknown task {task}"),
    }
}

impl From<ExplainError> for ServiceError {
    fn from(e: ExplainError) -> Self {
        match e {
            ExplainError::UnknownSession(s) => ServiceError::UnknownSession(s),
            ExplainError::Refused(why) => ServiceError::NotExplained(why),
            ExplainError::Unavailable(why) => ServiceError::Busy(why),
        }
    }
}
