//! The TaskManager actor: sessions and their tasks. It starts one TaskProcessor per task and
//! routes questions to it. Bad graphs are refused here, before anything is scheduled. Tasks
//! submitted over the native protocol belong to the session `default`.
//!
//! A task may be given a name in its session; once it succeeds, later tasks of the session
//! read its result by that name (from the workers holding it) until it is released or the
//! session is deleted.

use super::admission::Admission;
use super::explain::{ExplainError, Explains, EXPLAIN_TIMEOUT};
use sessions::Session;
pub use sessions::{valid_result_name, valid_session_id};
// Re-exported: the web API's and `ares node`'s historical paths.
use super::messages::{
    AwaitPrepared, Cancel, FailTask, FetchPart, FetchResult, FromClient, GetInfo, SchedulerHandle,
    TaskEnded, TaskHandle, WaitDone,
};
pub use super::messages::{
    CreateSession, DeleteSession, ExplainGraph, FindTask, ListSessions, Names, Origin, ReleaseTask,
    ShutDown, SubmitError, SubmitTask,
};
use super::task_processor::{Holds, TaskProcessor};
use crate::config::Config;
use crate::guard::{guard, Guarded};
use crate::protocol::secret::Secret;
use crate::protocol::{ClientReply, ClientRequest, TaskInfo};
use actix::prelude::*;
use ares_core::graph::TileableGraph;
use ares_core::ids::TaskId;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// The session of tasks submitted over the native protocol.
pub const DEFAULT_SESSION: &str = "default";

mod sessions;
pub use sessions::CreateSessionError;

pub struct TaskManager {
    config: Config,
    /// Proved to workers' data planes when fetching results.
    node_secret: Secret,
    scheduler: SchedulerHandle,
    tasks: HashMap<TaskId, (String, TaskHandle)>,
    sessions: BTreeMap<String, Session>,
    next: u32,
    admission: Admission,
    /// Explains being prepared (see `super::explain`).
    explains: Explains,
}

impl Handler<TaskEnded> for TaskManager {
    type Result = ();
    fn handle(&mut self, TaskEnded(task): TaskEnded, ctx: &mut Context<Self>) {
        guard(self, ctx, "TaskEnded", |act, _ctx| {
            let named = |t: TaskId| {
                act.tasks.get(&t).is_some_and(|(s, _)| {
                    act.sessions
                        .get(s)
                        .is_some_and(|s| s.names.values().any(|n| *n == t))
                })
            };
            let evict = act.admission.ended(task, named);
            for t in evict {
                if let Some((session, p)) = act.tasks.remove(&t) {
                    if let Some(s) = act.sessions.get_mut(&session) {
                        s.tasks.retain(|x| *x != t);
                        s.uploads.remove(&t);
                    }
                    // Frees its results on the workers; the processor stops once unreferenced.
                    p.do_send(Cancel);
                    tracing::info!(task = %t, "evicted (task.keep_finished)");
                }
            }
        });
    }
}

impl TaskManager {
    pub fn new(config: Config, node_secret: Secret, scheduler: SchedulerHandle) -> Self {
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
            explains: Explains::default(),
        }
    }

    /// Checks a client's graph as a submission to `session` is checked, then answers with
    /// its explanation, prepared off the actor thread for the live workers and
    /// `task.default_config` (see `super::explain`).
    fn explain(
        &mut self,
        session: &str,
        graph: TileableGraph,
        limit: usize,
    ) -> Result<
        impl std::future::Future<Output = Result<String, ExplainError>> + 'static,
        ExplainError,
    > {
        if !self.sessions.contains_key(session) {
            return Err(ExplainError::UnknownSession(session.to_string()));
        }
        let refused = ExplainError::Refused;
        self.admission.admit_size(&graph).map_err(refused)?;
        super::admission::client_graph(&graph).map_err(refused)?;
        graph.validate().map_err(|e| refused(e.to_string()))?;
        self.admission.admit_chunks(&graph).map_err(refused)?;
        let slot = self.explains.take()?;
        let config = self.config.task.default_config.clone();
        let max_bytes = self.config.cluster.max_frame_bytes / 2;
        let workers = self.scheduler.workers.clone();
        let prepared = async move {
            let workers: Vec<_> = workers
                .send(super::messages::GetWorkers)
                .await
                .map_err(|e| ExplainError::Unavailable(format!("scheduler unavailable: {e}")))?
                .into_iter()
                .map(|(w, _)| w)
                .collect();
            tokio::task::spawn_blocking(move || {
                let _slot = slot;
                super::explain::prepare_text(&graph, &config, &workers, limit, max_bytes)
            })
            .await
            .map_err(|e| ExplainError::Unavailable(format!("the preparation panicked: {e}")))?
        };
        Ok(async move {
            tokio::time::timeout(EXPLAIN_TIMEOUT, prepared)
                .await
                .unwrap_or_else(|_| {
                    Err(ExplainError::Unavailable(format!(
                        "the explanation was not ready after {} s",
                        EXPLAIN_TIMEOUT.as_secs()
                    )))
                })
        })
    }

    fn submit(&mut self, m: SubmitTask, ctx: &mut Context<Self>) -> Result<TaskId, SubmitError> {
        if !self.sessions.contains_key(&m.session) {
            return Err(SubmitError::UnknownSession(m.session));
        }
        self.admit(m, ctx).map_err(SubmitError::Refused)
    }

    fn admit(&mut self, m: SubmitTask, ctx: &mut Context<Self>) -> Result<TaskId, String> {
        let SubmitTask {
            session,
            graph,
            config,
            fuse_enabled,
            name,
            origin,
            spool,
        } = m;
        let session = session.as_str();
        self.touch(session);
        self.admission.admit(session, &graph)?;
        if origin == Origin::Client {
            super::admission::client_graph(&graph)?;
        }
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
        let data = crate::data_plane::DataPlane {
            secret: self.node_secret.clone(),
            max_frame: c.cluster.max_frame_bytes,
            timeout: Duration::from_millis(c.worker.fetch_timeout_ms),
        };
        let (retries, scheduler) = (c.scheduling.subtask_max_retries, self.scheduler.clone());
        let on_end = ctx.address().recipient();
        let sources = super::task_processor::sources::read_tasks(&graph)
            .into_iter()
            .filter_map(|t| self.tasks.get(&t).map(|(_, p)| (t, p.fetch_args.clone())))
            .collect();
        let upload = spool.is_some();
        let holds = Holds { spool, sources };
        let processor: TaskHandle = Supervisor::start(move |_| {
            TaskProcessor::new(task, graph, config, retries, data, scheduler, on_end).holding(holds)
        })
        .into();
        self.admission.started(task, session);
        entry.tasks.push(task);
        if upload {
            entry.uploads.insert(task);
        }
        let superseded = name.and_then(|n| entry.names.insert(n, task));
        self.tasks.insert(task, (session.to_string(), processor));
        if let Some(old) = superseded {
            self.free_superseded(session, old);
        }
        tracing::info!(%task, session, "task submitted");
        Ok(task)
    }
}

impl Actor for TaskManager {
    type Context = Context<Self>;

    /// Sweeps idle sessions (`web.session_idle_timeout_ms`) a few times per timeout.
    fn started(&mut self, ctx: &mut Context<Self>) {
        let idle = Duration::from_millis(self.config.web.session_idle_timeout_ms);
        let every = (idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(60));
        ctx.run_interval(every, move |act, ctx| {
            guard(act, ctx, "ExpireSessions", |act, _| {
                act.expire_sessions(idle)
            });
        });
    }
}

/// The answer to a request whose handler panicked.
const RESTARTING: &str = "the task manager is restarting after a panic; retry";

fn restarting_reply(m: &ClientRequest) -> ClientReply {
    match *m {
        ClientRequest::Submit { request, .. } => ClientReply::Submitted {
            request,
            task: Err(RESTARTING.into()),
        },
        ClientRequest::GetInfo { request, .. }
        | ClientRequest::Wait { request, .. }
        | ClientRequest::Cancel { request, .. } => ClientReply::Info {
            request,
            info: Err(RESTARTING.into()),
        },
        ClientRequest::FetchResult { request, .. } => ClientReply::ResultData {
            request,
            data: Err(RESTARTING.into()),
        },
        ClientRequest::FetchPart { request, .. } => ClientReply::ResultPart {
            request,
            part: Err(RESTARTING.into()),
        },
        ClientRequest::UploadBegin { request, .. }
        | ClientRequest::UploadPiece { request, .. }
        | ClientRequest::UploadEnd { request } => ClientReply::Upload {
            request,
            answer: Err(RESTARTING.into()),
        },
        ClientRequest::Explain { request, .. } => ClientReply::Explained {
            request,
            text: Err(RESTARTING.into()),
        },
        ClientRequest::Hello { .. } => ClientReply::Refused {
            reason: RESTARTING.into(),
        },
    }
}

impl Guarded for TaskManager {
    const NAME: &'static str = "TaskManager";
    fn panicked(&mut self, _: &'static str, _: &str) {}
}

impl Supervised for TaskManager {
    /// Sessions, names and task processors survive (each processor is its own actor, and a
    /// half-done handler leaves at worst a task without a session entry); the admission
    /// counts are rebuilt from the processors' statuses before any other message is handled.
    fn restarting(&mut self, ctx: &mut Context<Self>) {
        let tasks: Vec<(TaskId, String, TaskHandle)> = self
            .tasks
            .iter()
            .map(|(t, (s, p))| (*t, s.clone(), p.clone()))
            .collect();
        tracing::warn!(
            tasks = tasks.len(),
            "task manager restarted: recounting tasks"
        );
        self.admission = Admission::new(self.config.limits.clone(), self.config.task.keep_finished);
        let statuses = futures_util::future::join_all(
            tasks
                .into_iter()
                .map(|(t, session, p)| async move { (t, session, p.send(GetInfo).await) }),
        );
        ctx.wait(statuses.into_actor(self).map(|statuses, act, _| {
            for (task, session, info) in statuses {
                act.admission.started(task, &session);
                // A processor that does not answer is gone: count it as ended.
                if info.map_or(true, |i| i.status.is_terminal()) {
                    act.admission.ended(task, |_| true);
                }
            }
        }));
    }
}

impl TaskManager {
    /// The submission's answer once the task's graph is prepared: a task with a subtask that
    /// fits in no worker's memory limit is refused with the numbers (it stays listed as
    /// failed), every other outcome gives its id (a failure of another kind shows as the
    /// task's status).
    fn when_prepared(
        &self,
        submitted: Result<TaskId, SubmitError>,
    ) -> impl std::future::Future<Output = Result<TaskId, SubmitError>> + 'static {
        let processor = submitted
            .as_ref()
            .ok()
            .and_then(|t| self.tasks.get(t))
            .map(|(_, p)| p.clone());
        async move {
            let task = submitted?;
            let refused = match processor {
                Some(p) => p.send(AwaitPrepared).await.unwrap_or(None),
                None => None,
            };
            match refused {
                Some(why) => Err(SubmitError::Refused(why)),
                None => Ok(task),
            }
        }
    }
}

impl Handler<SubmitTask> for TaskManager {
    type Result = ResponseFuture<Result<TaskId, SubmitError>>;
    fn handle(&mut self, m: SubmitTask, ctx: &mut Context<Self>) -> Self::Result {
        let submitted = guard(self, ctx, "SubmitTask", |act, ctx| act.submit(m, ctx))
            .unwrap_or_else(|| Err(SubmitError::Refused(RESTARTING.into())));
        Box::pin(self.when_prepared(submitted))
    }
}

impl Handler<ExplainGraph> for TaskManager {
    type Result = ResponseFuture<Result<String, ExplainError>>;
    fn handle(&mut self, m: ExplainGraph, ctx: &mut Context<Self>) -> Self::Result {
        let explained = guard(self, ctx, "ExplainGraph", |act, _| {
            act.touch(&m.session);
            act.explain(&m.session, m.graph, m.limit)
                .map(|f| -> Self::Result { Box::pin(f) })
        });
        match explained {
            Some(Ok(f)) => f,
            Some(Err(e)) => Box::pin(async move { Err(e) }),
            None => Box::pin(async { Err(ExplainError::Unavailable(RESTARTING.into())) }),
        }
    }
}

impl Handler<ShutDown> for TaskManager {
    type Result = ResponseFuture<usize>;
    fn handle(&mut self, _: ShutDown, _ctx: &mut Context<Self>) -> Self::Result {
        let asks: Vec<_> = self
            .tasks
            .values()
            .map(|(_, p)| p.fail.send(FailTask("supervisor shutting down".into())))
            .collect();
        let answers = futures_util::future::join_all(asks);
        Box::pin(async move { answers.await.into_iter().filter(|a| a == &Ok(true)).count() })
    }
}

fn info_reply(request: u64, info: Result<TaskInfo, String>) -> ClientReply {
    ClientReply::Info { request, info }
}

impl Handler<FromClient> for TaskManager {
    type Result = ResponseFuture<ClientReply>;

    fn handle(&mut self, FromClient(m): FromClient, ctx: &mut Context<Self>) -> Self::Result {
        let refusal = restarting_reply(&m);
        guard(self, ctx, "FromClient", |act, ctx| -> Self::Result {
            let find = |task: TaskId| {
                act.tasks
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
                    let m = SubmitTask {
                        session: DEFAULT_SESSION.to_string(),
                        graph,
                        config,
                        fuse_enabled,
                        name: None,
                        origin: Origin::Client,
                        spool: None,
                    };
                    let submitted = act.submit(m, ctx);
                    let prepared = act.when_prepared(submitted);
                    Box::pin(async move {
                        let task = prepared.await.map_err(|e| e.to_string());
                        ClientReply::Submitted { request, task }
                    })
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
                            async { p?.send(WaitDone(wait)).await.map_err(|e| e.to_string()) }
                                .await,
                        )
                    })
                }
                ClientRequest::Cancel { request, task } => {
                    let p = find(task);
                    // As the web API's DELETE: a cancelled task's name (an upload's) goes too.
                    for s in act.sessions.values_mut() {
                        s.names.retain(|_, t| *t != task);
                    }
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
                    rows,
                } => {
                    let p = find(task);
                    Box::pin(async move {
                        let fetch = FetchPart {
                            output,
                            positions,
                            rows,
                        };
                        let part = async { p?.send(fetch).await.map_err(|e| e.to_string())? }.await;
                        ClientReply::ResultPart { request, part }
                    })
                }
                ClientRequest::Explain {
                    request,
                    graph,
                    limit,
                } => {
                    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
                    let explained = act.explain(DEFAULT_SESSION, graph, limit);
                    Box::pin(async move {
                        let text = match explained {
                            Ok(text) => text.await,
                            Err(e) => Err(e),
                        };
                        ClientReply::Explained {
                            request,
                            text: text.map_err(|e| e.to_string()),
                        }
                    })
                }
                ClientRequest::Hello { .. } => Box::pin(async {
                    ClientReply::Refused {
                        reason: "a second hello".into(),
                    }
                }),
                // The client's link handles uploads (it owns their spool files).
                ClientRequest::UploadBegin { request, .. }
                | ClientRequest::UploadPiece { request, .. }
                | ClientRequest::UploadEnd { request } => Box::pin(async move {
                    ClientReply::Upload {
                        request,
                        answer: Err("uploads go through a client connection".into()),
                    }
                }),
            }
        })
        .unwrap_or_else(|| Box::pin(async move { refusal }))
    }
}
