//! The supervisor's one front door: every client request, over the native protocol
//! (`super::client_link`) or HTTP (`crate::web`), is one call here: submit, wait, fetch,
//! cancel (free), upload, explain, and the session and tensor look-ups. Both front ends used
//! to turn their requests into actor messages each in its own way (the native protocol in a
//! TaskManager handler of its own, the web in its routes), so a rule such as "a cancelled
//! task's name goes too", or the deadline of a wait, lived twice and drifted. Here each rule
//! lives once, and each failure is a [`ServiceError`] variant that the front ends map to
//! their own answer (an HTTP status, the protocol's error string).
//!
//! ```text
//!  ClientLink (native) ─┐                     ┌─▶ TaskManager ──▶ TaskProcessor (one per task)
//!                       ├─▶ Service ──────────┤
//!  web routes (HTTP) ───┘   (this file)       └─▶ SpoolDir (uploads, see `super::upload`)
//! ```
//!
//! A request names the session it acts in; the native protocol has none (its tasks are in
//! `default`) and reaches a task of any session by id: its calls pass `None`.

mod error;

pub use error::{ServiceError, RESTARTING};

use super::messages::{
    ExplainGraph, FetchPart, FetchResult, FindTask, GetInfo, ListSessions, Names, Origin,
    ReleaseTask, SubmitTask, TaskHandle, WaitDone,
};
use super::task_manager::{valid_result_name, TaskManager};
use super::upload::{Loaded, Spool, SpoolDir, UploadError};
use crate::protocol::{ResultPart, TaskInfo};
use actix::Addr;
use ares_core::config::TaskConfig;
use ares_core::graph::TileableGraph;
use ares_core::ids::TaskId;
use ares_core::ops::ChunkSpec;
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;

/// The longest one wait may block: a client waits longer in several calls.
pub const MAX_WAIT: Duration = Duration::from_secs(3600);

/// The front door (see the module docs): cheap to clone, one per connection or route.
#[derive(Clone)]
pub struct Service {
    manager: Addr<TaskManager>,
    spool: Arc<SpoolDir>,
    /// `limits.max_upload_bytes`: the largest tensor upload.
    max_upload_bytes: u64,
}

type Answer<T> = Result<T, ServiceError>;

impl Service {
    pub fn new(manager: Addr<TaskManager>, spool: Arc<SpoolDir>, max_upload_bytes: u64) -> Self {
        Self {
            manager,
            spool,
            max_upload_bytes,
        }
    }

    /// Submits a client's graph to `session`; answers once it is prepared (a subtask that
    /// fits in no worker is refused then). `config` replaces `task.default_config`, `name`
    /// binds the result in the session.
    pub async fn submit(
        &self,
        session: &str,
        graph: TileableGraph,
        config: Option<TaskConfig>,
        fuse_enabled: Option<bool>,
        name: Option<String>,
    ) -> Answer<TaskId> {
        let submit = SubmitTask {
            session: session.to_string(),
            graph,
            config,
            fuse_enabled,
            name,
            origin: Origin::Client,
            spool: None,
        };
        self.manager.send(submit).await?
    }

    /// The processor of `task` in `session` (`None`: in any session).
    pub async fn find(&self, session: Option<&str>, task: TaskId) -> Answer<TaskHandle> {
        let find = FindTask {
            session: session.map(str::to_string),
            task,
        };
        self.manager.send(find).await?
    }

    pub async fn info(&self, session: Option<&str>, task: TaskId) -> Answer<TaskInfo> {
        Ok(self.find(session, task).await?.send(GetInfo).await?)
    }

    /// The task's state once it ended, or after `timeout` (at most [`MAX_WAIT`]).
    pub async fn wait(
        &self,
        session: Option<&str>,
        task: TaskId,
        timeout: Duration,
    ) -> Answer<TaskInfo> {
        let p = self.find(session, task).await?;
        Ok(p.send(WaitDone(timeout.min(MAX_WAIT))).await?)
    }

    /// Every result of a succeeded task in one answer, in the codec's chunk encoding.
    pub async fn fetch(&self, session: Option<&str>, task: TaskId) -> Answer<Bytes> {
        let p = self.find(session, task).await?;
        p.send(FetchResult).await?.map_err(ServiceError::NoResult)
    }

    /// A part of one result (see `task_processor::part`).
    pub async fn fetch_part(
        &self,
        session: Option<&str>,
        task: TaskId,
        part: FetchPart,
    ) -> Answer<ResultPart> {
        let p = self.find(session, task).await?;
        p.send(part).await?.map_err(ServiceError::NoResult)
    }

    /// Cancels a running task, or frees an ended one's results; its name is unbound.
    pub async fn cancel(&self, session: Option<&str>, task: TaskId) -> Answer<TaskInfo> {
        let release = ReleaseTask {
            session: session.map(str::to_string),
            task,
        };
        self.manager.send(release).await?
    }

    /// [`Service::cancel`] without waiting for the answer: for a client gone away.
    pub fn free(&self, session: Option<&str>, task: TaskId) {
        self.manager.do_send(ReleaseTask {
            session: session.map(str::to_string),
            task,
        });
    }

    /// What `ares explain` prints for `graph`, checked and prepared as a submission to
    /// `session` would be.
    pub async fn explain(
        &self,
        session: &str,
        graph: TileableGraph,
        limit: usize,
    ) -> Answer<String> {
        let explain = ExplainGraph {
            session: session.to_string(),
            graph,
            limit,
        };
        Ok(self.manager.send(explain).await??)
    }

    /// The processors of `session`'s tasks; refused if the session does not exist.
    pub async fn session_tasks(&self, session: &str) -> Answer<Vec<TaskHandle>> {
        let sessions = self
            .manager
            .send(ListSessions(Some(session.to_string())))
            .await?;
        match sessions.into_iter().next() {
            Some((_, tasks)) => Ok(tasks),
            None => Err(ServiceError::UnknownSession(session.to_string())),
        }
    }

    /// The named results of `session`: (name, task, processor).
    pub async fn names(&self, session: &str) -> Answer<Vec<(String, TaskId, TaskHandle)>> {
        Ok(self.manager.send(Names(session.to_string())).await?)
    }

    /// The processor of the task whose result is named `name` in `session`.
    pub async fn named(&self, session: &str, name: &str) -> Answer<TaskHandle> {
        let names = self.names(session).await?;
        let found = names.into_iter().find(|(n, _, _)| n == name);
        found
            .map(|(_, _, p)| p)
            .ok_or_else(|| ServiceError::UnknownTensor {
                session: session.to_string(),
                name: name.to_string(),
            })
    }

    /// `limits.max_upload_bytes`.
    pub fn max_upload_bytes(&self) -> u64 {
        self.max_upload_bytes
    }

    /// Checks an upload before anything is spooled: its name, and its declared size if
    /// known (against `limits.max_upload_bytes`).
    pub fn check_upload(&self, name: Option<&str>, bytes: Option<u64>) -> Answer<()> {
        if let Some(n) = name.filter(|n| !valid_result_name(n)) {
            return Err(ServiceError::BadTensorName(n.to_string()));
        }
        self.check_upload_size(bytes.unwrap_or(0))
    }

    /// Refuses an upload of `bytes` (declared, or received so far) over the limit.
    pub fn check_upload_size(&self, bytes: u64) -> Answer<()> {
        let limit = self.max_upload_bytes;
        if bytes > limit {
            return Err(UploadError::TooLarge { bytes, limit }.into());
        }
        Ok(())
    }

    /// A new spool file for an upload (see [`SpoolDir::file`]).
    pub fn spool(&self, tag: &str, reserve: u64) -> Answer<(Spool, std::fs::File)> {
        Ok(self.spool.file(tag, reserve)?)
    }

    /// Has the workers load a spooled upload as tensor `name` of `session` (see
    /// `super::upload`).
    pub async fn upload(
        &self,
        session: &str,
        name: Option<String>,
        spool: Spool,
        chunk: Option<ChunkSpec>,
        received: u64,
    ) -> Answer<Loaded> {
        super::upload::load(self, session, name, spool, chunk, received).await
    }

    /// Submits an upload's load task (built by the supervisor: it may read a spool file).
    pub(super) async fn submit_load(
        &self,
        session: &str,
        graph: TileableGraph,
        name: Option<String>,
        spool: Spool,
    ) -> Answer<TaskId> {
        let submit = SubmitTask {
            session: session.to_string(),
            graph,
            config: None,
            fuse_enabled: None,
            name,
            origin: Origin::Supervisor,
            spool: Some(spool),
        };
        self.manager.send(submit).await?
    }
}
