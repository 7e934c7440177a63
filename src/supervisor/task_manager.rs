//! The TaskManager actor: sessions and their tasks. It starts one TaskProcessor per task and
//! routes questions to it. Bad graphs are refused here, before anything is scheduled. Tasks
//! submitted over the native protocol belong to the session `default`.
//!
//! A task may be given a name in its session; once it succeeds, later tasks of the session
//! read its result by that name (from the workers holding it) until it is released or the
//! session is deleted.

use super::admission::Admission;
use super::scheduler::Scheduler;
use super::task_processor::{
    Cancel, FailTask, FetchPart, FetchResult, GetInfo, TaskProcessor, WaitDone,
};
use crate::config::{Config, TaskConfig};
use crate::graph::TileableGraph;
use crate::ids::TaskId;
use crate::protocol::secret::Secret;
use crate::protocol::{ClientReply, ClientRequest, TaskInfo};
use actix::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// Why a submission was refused: callers decide on the variant (HTTP 404 or 400), never on
/// the text.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error("unknown session {0:?}")]
    UnknownSession(String),
    /// A limit, a bad name, an invalid graph or config: the message says which.
    #[error("{0}")]
    Refused(String),
}

/// The session of tasks submitted over the native protocol.
pub const DEFAULT_SESSION: &str = "default";

#[derive(Default)]
struct Session {
    tasks: Vec<TaskId>,
    /// Result names bound to tasks.
    names: BTreeMap<String, TaskId>,
}

/// Result names are identifiers of the expression language.
pub fn valid_result_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 64
}

/// Session ids are 1-64 characters of `[A-Za-z0-9_.-]` starting with a letter, digit or
/// `_` (so never `.`, `..` or a hidden name).
pub fn valid_session_id(id: &str) -> bool {
    id.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

pub struct TaskManager {
    config: Config,
    /// Proved to workers' data planes when fetching results.
    node_secret: Secret,
    scheduler: Addr<Scheduler>,
    tasks: HashMap<TaskId, (String, Addr<TaskProcessor>)>,
    sessions: BTreeMap<String, Session>,
    next: u32,
    admission: Admission,
}

/// A task ended (sent by its processor once).
#[derive(Message)]
#[rtype(result = "()")]
pub struct TaskEnded(pub TaskId);

impl Handler<TaskEnded> for TaskManager {
    type Result = ();
    fn handle(&mut self, TaskEnded(task): TaskEnded, _: &mut Context<Self>) {
        let named = |t: TaskId| {
            self.tasks.get(&t).is_some_and(|(s, _)| {
                self.sessions
                    .get(s)
                    .is_some_and(|s| s.names.values().any(|n| *n == t))
            })
        };
        let evict = self.admission.ended(task, named);
        for t in evict {
            if let Some((session, p)) = self.tasks.remove(&t) {
                if let Some(s) = self.sessions.get_mut(&session) {
                    s.tasks.retain(|x| *x != t);
                }
                // Frees its results on the workers; the processor stops once unreferenced.
                p.do_send(Cancel);
                tracing::info!(task = %t, "evicted (task.keep_finished)");
            }
        }
    }
}

impl TaskManager {
    pub fn new(config: Config, node_secret: Secret, scheduler: Addr<Scheduler>) -> Self {
        let sessions = BTreeMap::from([(DEFAULT_SESSION.to_string(), Session::default())]);
        let admission = Admission::new(config.limits.clone(), config.task.keep_finished);
        Self {
            admission,
            config,
            node_secret,
            scheduler,
            tasks: HashMap::new(),
            sessions,
            next: 1,
        }
    }

    fn submit(
        &mut self,
        session: &str,
        graph: TileableGraph,
        config: Option<TaskConfig>,
        fuse_enabled: Option<bool>,
        name: Option<String>,
        ctx: &mut Context<Self>,
    ) -> Result<TaskId, SubmitError> {
        if !self.sessions.contains_key(session) {
            return Err(SubmitError::UnknownSession(session.to_string()));
        }
        self.admit(session, graph, config, fuse_enabled, name, ctx)
            .map_err(SubmitError::Refused)
    }

    fn admit(
        &mut self,
        session: &str,
        graph: TileableGraph,
        config: Option<TaskConfig>,
        fuse_enabled: Option<bool>,
        name: Option<String>,
        ctx: &mut Context<Self>,
    ) -> Result<TaskId, String> {
        self.admission.admit(session, &graph)?;
        if let Some(n) = &name {
            if !valid_result_name(n) {
                return Err(format!(
                    "invalid result name {n:?}: use an identifier of up to 64 characters"
                ));
            }
        }
        let mut config = config.unwrap_or_else(|| self.config.task.default_config.clone());
        if let Some(f) = fuse_enabled {
            config.fuse_enabled = f;
        }
        graph
            .validate()
            .and_then(|_| config.validate())
            .map_err(|e| e.to_string())?;
        self.admission.admit_chunks(&graph)?;
        let entry = self.sessions.get_mut(session).expect("checked above");
        let task = TaskId(self.next);
        self.next += 1;
        let c = &self.config;
        let processor = TaskProcessor::new(
            task,
            graph,
            config,
            c.scheduling.subtask_max_retries,
            crate::worker::transfer::DataPlane {
                secret: self.node_secret.clone(),
                max_frame: c.cluster.max_frame_bytes,
                timeout: Duration::from_millis(c.worker.fetch_timeout_ms),
            },
            self.scheduler.clone(),
            ctx.address().recipient(),
        )
        .start();
        self.admission.started(task, session);
        entry.tasks.push(task);
        if let Some(n) = name {
            entry.names.insert(n, task);
        }
        self.tasks.insert(task, (session.to_string(), processor));
        tracing::info!(%task, session, "task submitted");
        Ok(task)
    }
}

impl Actor for TaskManager {
    type Context = Context<Self>;
}

/// Submits a tileable graph to a session.
#[derive(Message)]
#[rtype(result = "Result<TaskId, SubmitError>")]
pub struct SubmitTask {
    pub session: String,
    pub graph: TileableGraph,
    /// Replaces `task.default_config` for this task.
    pub config: Option<TaskConfig>,
    pub fuse_enabled: Option<bool>,
    /// Binds the task's result to this name in the session.
    pub name: Option<String>,
}

impl Handler<SubmitTask> for TaskManager {
    type Result = Result<TaskId, SubmitError>;
    fn handle(&mut self, m: SubmitTask, ctx: &mut Context<Self>) -> Self::Result {
        self.submit(&m.session, m.graph, m.config, m.fuse_enabled, m.name, ctx)
    }
}

/// The named results of a session: (name, task, processor).
#[derive(Message)]
#[rtype(result = "Vec<(String, TaskId, Addr<TaskProcessor>)>")]
pub struct Names(pub String);

impl Handler<Names> for TaskManager {
    type Result = MessageResult<Names>;
    fn handle(&mut self, Names(session): Names, _: &mut Context<Self>) -> Self::Result {
        let names = self.sessions.get(&session).map(|s| &s.names);
        let list = names
            .into_iter()
            .flatten()
            .filter_map(|(n, t)| self.tasks.get(t).map(|(_, p)| (n.clone(), *t, p.clone())))
            .collect();
        MessageResult(list)
    }
}

/// Cancels a running task or releases an ended one's results; its name is unbound.
#[derive(Message)]
#[rtype(result = "Option<Addr<TaskProcessor>>")]
pub struct ReleaseTask {
    pub session: String,
    pub task: TaskId,
}

impl Handler<ReleaseTask> for TaskManager {
    type Result = Option<Addr<TaskProcessor>>;
    fn handle(&mut self, m: ReleaseTask, _: &mut Context<Self>) -> Self::Result {
        let (session, p) = self.tasks.get(&m.task).filter(|(s, _)| *s == m.session)?;
        if let Some(s) = self.sessions.get_mut(session) {
            s.names.retain(|_, t| *t != m.task);
        }
        Some(p.clone())
    }
}

/// The processor of a task in a session (`None` when either is unknown).
#[derive(Message)]
#[rtype(result = "Option<Addr<TaskProcessor>>")]
pub struct FindTask {
    pub session: String,
    pub task: TaskId,
}

impl Handler<FindTask> for TaskManager {
    type Result = Option<Addr<TaskProcessor>>;
    fn handle(&mut self, m: FindTask, _: &mut Context<Self>) -> Self::Result {
        self.tasks
            .get(&m.task)
            .filter(|(s, _)| *s == m.session)
            .map(|(_, p)| p.clone())
    }
}

/// Creates a session (idempotent); `false` when the id is not valid.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct CreateSession(pub String);

impl Handler<CreateSession> for TaskManager {
    type Result = bool;
    fn handle(&mut self, CreateSession(id): CreateSession, _: &mut Context<Self>) -> bool {
        if !valid_session_id(&id) {
            return false;
        }
        self.sessions.entry(id).or_default();
        true
    }
}

/// Deletes a session: its tasks are cancelled and their data freed. `false` if unknown.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct DeleteSession(pub String);

impl Handler<DeleteSession> for TaskManager {
    type Result = bool;
    fn handle(&mut self, DeleteSession(id): DeleteSession, _: &mut Context<Self>) -> bool {
        let Some(session) = self.sessions.remove(&id) else {
            return false;
        };
        for t in session.tasks {
            self.admission.forget(t);
            if let Some((_, p)) = self.tasks.remove(&t) {
                p.do_send(Cancel);
            }
        }
        if id == DEFAULT_SESSION {
            self.sessions.insert(id, Session::default());
        }
        true
    }
}

/// Sessions with their tasks' processors (one session, or all).
#[derive(Message)]
#[rtype(result = "Vec<(String, Vec<Addr<TaskProcessor>>)>")]
pub struct ListSessions(pub Option<String>);

impl Handler<ListSessions> for TaskManager {
    type Result = MessageResult<ListSessions>;
    fn handle(&mut self, m: ListSessions, _: &mut Context<Self>) -> Self::Result {
        let list = self
            .sessions
            .iter()
            .filter(|(id, _)| m.0.as_ref().is_none_or(|want| want == *id))
            .map(|(id, s)| {
                (
                    id.clone(),
                    s.tasks
                        .iter()
                        .filter_map(|t| self.tasks.get(t).map(|(_, p)| p.clone()))
                        .collect(),
                )
            })
            .collect();
        MessageResult(list)
    }
}

/// SIGTERM: every task that has not ended fails with "supervisor shutting down", so no
/// client waits on a supervisor that is going away.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ShutDown;

impl Handler<ShutDown> for TaskManager {
    type Result = ();
    fn handle(&mut self, _: ShutDown, _: &mut Context<Self>) {
        for (_, p) in self.tasks.values() {
            p.do_send(FailTask("supervisor shutting down".into()));
        }
    }
}

/// A native-protocol client request; the answer is the reply message.
#[derive(Message)]
#[rtype(result = "ClientReply")]
pub struct FromClient(pub ClientRequest);

fn info_reply(request: u64, info: Result<TaskInfo, String>) -> ClientReply {
    ClientReply::Info { request, info }
}

impl Handler<FromClient> for TaskManager {
    type Result = ResponseFuture<ClientReply>;

    fn handle(&mut self, FromClient(m): FromClient, ctx: &mut Context<Self>) -> Self::Result {
        let find = |task: TaskId| {
            self.tasks
                .get(&task)
                .map(|(_, p)| p.clone())
                .ok_or_else(|| format!("unknown task {task}"))
        };
        match m {
            ClientRequest::Submit {
                request,
                graph,
                fuse_enabled,
                config,
            } => {
                let task = self
                    .submit(DEFAULT_SESSION, graph, config, fuse_enabled, None, ctx)
                    .map_err(|e| e.to_string());
                Box::pin(async move { ClientReply::Submitted { request, task } })
            }
            ClientRequest::GetInfo { request, task } => {
                let p = find(task);
                Box::pin(async move {
                    info_reply(
                        request,
                        async { p?.send(GetInfo).await.map_err(|e| e.to_string()) }.await,
                    )
                })
            }
            ClientRequest::Wait {
                request,
                task,
                timeout_ms,
            } => {
                let (p, wait) = (find(task), Duration::from_millis(timeout_ms.min(3_600_000)));
                Box::pin(async move {
                    info_reply(
                        request,
                        async { p?.send(WaitDone(wait)).await.map_err(|e| e.to_string()) }.await,
                    )
                })
            }
            ClientRequest::Cancel { request, task } => {
                let p = find(task);
                Box::pin(async move {
                    info_reply(
                        request,
                        async { p?.send(Cancel).await.map_err(|e| e.to_string()) }.await,
                    )
                })
            }
            ClientRequest::FetchResult { request, task } => {
                let p = find(task);
                Box::pin(async move {
                    let data =
                        async { p?.send(FetchResult).await.map_err(|e| e.to_string())? }.await;
                    ClientReply::ResultData { request, data }
                })
            }
            ClientRequest::FetchPart {
                request,
                task,
                output,
                positions,
            } => {
                let p = find(task);
                Box::pin(async move {
                    let fetch = FetchPart { output, positions };
                    let part = async { p?.send(fetch).await.map_err(|e| e.to_string())? }.await;
                    ClientReply::ResultPart { request, part }
                })
            }
            ClientRequest::Hello { .. } => Box::pin(async {
                ClientReply::Refused {
                    reason: "a second hello".into(),
                }
            }),
        }
    }
}
