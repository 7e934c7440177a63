//! The client side of the TaskAPI: one trait, [`TaskApi`], implemented over the native
//! protocol by [`NativeClient`] and over HTTP by [`WebTaskApi`], and one loop over it,
//! [`run()`] (submit, wait, fetch, free), that `ares run`, [`Session`] and the Python engine
//! share.

mod native;
mod run;
mod session;
mod stream;
pub mod tls;
mod upload;
mod web;

pub use native::NativeClient;
pub use run::{persist, run, Drive, Ran};
pub use session::{execute_on, Session};
pub use web::WebTaskApi;

use crate::config::TaskConfig;
use crate::protocol::codec::CodecError;
use crate::protocol::{TaskInfo, TaskStatus};
use ares_core::array::ArrayData;
use ares_core::graph::TileableGraph;
use ares_core::ids::TaskId;
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ApiError {
    #[error("cannot reach the supervisor at {addr}: {source}")]
    Connect {
        addr: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Codec(#[from] CodecError),
    #[error("refused: {0}")]
    Refused(String),
    /// The supervisor refused or failed a request about a task (its error text).
    #[error("{0}")]
    Task(String),
    /// A task a run waited for was cancelled.
    #[error("{task} was cancelled")]
    Cancelled { task: TaskId },
    /// A task a run waited for failed.
    #[error("{task} failed: {}", error.as_deref().unwrap_or_default())]
    TaskFailed {
        task: TaskId,
        status: TaskStatus,
        error: Option<String>,
    },
    #[error("unexpected answer: {0}")]
    Unexpected(String),
    /// The supervisor refused or failed an upload (too large, not an `.npy`, a failed load).
    #[error("upload: {0}")]
    Upload(String),
    /// A CA file that cannot be used, or a server certificate that is not trusted.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    #[error("HTTP {status}: {error}: {detail}")]
    Http {
        status: u16,
        error: String,
        detail: String,
    },
}

pub type ApiResult<T> = Result<T, ApiError>;

/// What a client can ask of the task service.
pub trait TaskApi {
    /// Submits a graph; `extra_config` replaces the supervisor's `task.default_config` for
    /// this task, `fuse_enabled` overrides its fusion switch.
    fn submit_with_config(
        &mut self,
        graph: &TileableGraph,
        fuse_enabled: Option<bool>,
        extra_config: Option<TaskConfig>,
    ) -> ApiResult<TaskId>;
    fn submit_tileable_graph(
        &mut self,
        graph: &TileableGraph,
        fuse_enabled: Option<bool>,
    ) -> ApiResult<TaskId> {
        self.submit_with_config(graph, fuse_enabled, None)
    }
    /// Waits up to `timeout` for the task to end; returns its state either way.
    fn wait_task(&mut self, task: TaskId, timeout: Duration) -> ApiResult<TaskInfo>;
    fn get_task_result(&mut self, task: TaskId) -> ApiResult<TaskInfo>;
    fn get_task_progress(&mut self, task: TaskId) -> ApiResult<f64> {
        Ok(self.get_task_result(task)?.progress)
    }
    /// Cancels a running task; on an ended task, frees its results on the workers.
    fn cancel_task(&mut self, task: TaskId) -> ApiResult<TaskInfo>;
    fn fetch(&mut self, task: TaskId) -> ApiResult<Vec<ArrayData>>;
    /// The `outputs` results of a task (the native protocol fetches them all at once, the
    /// web API one per request).
    fn fetch_outputs(&mut self, task: TaskId, outputs: usize) -> ApiResult<Vec<ArrayData>> {
        let _ = outputs;
        self.fetch(task)
    }
    /// What `ares explain` prints for `graph`, prepared by the supervisor for its live
    /// workers and slots with its `task.default_config` (each listing capped at `limit`,
    /// 0 = all); checked as a submission, and nothing runs.
    fn explain(&mut self, graph: &TileableGraph, limit: usize) -> ApiResult<String>;
}

/// Connects with the client the address asks for: `http://HOST:PORT` or `https://HOST:PORT`
/// → HTTP (bearer token from `ARES_TOKEN` if set; TLS trust as [`tls`] says), else the native
/// protocol (client secret from the environment).
pub fn connect(addr: &str, wait: Duration) -> ApiResult<Box<dyn TaskApi>> {
    let creds = crate::protocol::secret::Credentials::load(&Default::default())
        .map_err(|e| ApiError::Refused(e.to_string()))?;
    connect_with(addr, wait, &creds.client_secret(), None)
}

/// [`connect`], proving `secret` on the native protocol, and trusting the PEM file
/// `ca_file` too over `https://` (refused for any other address).
pub fn connect_with(
    addr: &str,
    wait: Duration,
    secret: &crate::protocol::secret::Secret,
    ca_file: Option<&std::path::Path>,
) -> ApiResult<Box<dyn TaskApi>> {
    if addr.starts_with("http://") || addr.starts_with("https://") {
        let token = std::env::var("ARES_TOKEN").ok().filter(|t| !t.is_empty());
        Ok(Box::new(WebTaskApi::connect_with_ca(
            addr,
            web::DEFAULT_SESSION_FOR_RUN,
            token,
            ca_file,
            wait,
        )?))
    } else if let Some(path) = ca_file {
        Err(ApiError::Refused(format!(
            "a CA file ({}) is for an https:// supervisor, not {addr}",
            path.display()
        )))
    } else {
        Ok(Box::new(NativeClient::connect_with(addr, wait, secret)?))
    }
}
