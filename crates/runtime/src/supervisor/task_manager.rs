//! The TaskManager actor: sessions and their tasks. It starts one TaskProcessor per task and
//! routes questions to it. Bad graphs are refused here, before anything is scheduled. Clients
//! reach it through `super::service`; tasks submitted over the native protocol belong to the
//! session `default`.
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
    AwaitPrepared, Cancel, FailTask, GetInfo, SchedulerHandle, TaskEnded, TaskHandle,
};
pub use super::messages::{
    CreateSession, DeleteSession, ExplainGraph, FindTask, ListSessions, Names, Origin, ReleaseTask,
    ShutDown, SubmitTask,
};
use super::service::{ServiceError, RESTARTING};
use super::task_processor::{Holds, TaskProcessor};
use crate::config::Config;
use crate::guard::{guard, Guarded};
use crate::protocol::secret::Secret;
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
        let refused = |e: &dyn std::fmt::Display| ExplainError::Refused(e.to_string());
        self.admission.admit_size(&graph).map_err(|e| refused(&e))?;
        super::admission::client_graph(&graph, self.config.cluster.allow_code)
            .map_err(|e| refused(&e))?;
        graph.validate().map_err(|e| refused(&e))?;
        self.admission
            .admit_chunks(&graph)
            .map_err(|e| refused(&e))?;
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

    fn submit(&mut self, m: SubmitTask, ctx: &mut Context<Self>) -> Result<TaskId, ServiceError> {
        if !self.sessions.contains_key(&m.session) {
            return Err(ServiceError::UnknownSession(m.session));
        }
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
            super::admission::client_graph(&graph, self.config.cluster.allow_code)?;
        }
        if let Some(n) = name.as_ref().filter(|n| !valid_result_name(n)) {
            return Err(ServiceError::BadResultName(n.clone()));
        }
        let mut config = config.unwrap_or_else(|| self.config.task.default_config.clone());
        if let Some(f) = fuse_enabled {
            config.fuse_enabled = f;
        }
        graph
            .validate()
            .and_then(|_| config.validate())
            .map_err(|e| ServiceError::BadGraph(e.to_string()))?;
        self.admission.admit_chunks(&graph)?;
        // A graph that goes on from a data-dependent length runs in stages, each a task.
        let staged = ares_core::prepare::stages::next_stage(&graph)
            .map_err(|e| ServiceError::BadGraph(e.to_string()))?
            .is_some();
        let task = TaskId(self.next);
        self.next += 1;
        let upload = spool.is_some();
        let stage = match origin {
            Origin::Stage(s) => s,
            Origin::Client | Origin::Supervisor => ares_core::ids::StageId(0),
        };
        let handle: TaskHandle = if staged {
            let me = ctx.address();
            let manager = super::staged_task::Manager {
                submit: me.clone().recipient(),
                find: me.clone().recipient(),
                on_end: me.recipient(),
            };
            let (s, cfg) = (session.to_string(), Some(config));
            super::staged_task::StagedTask::new(task, s, graph, cfg, fuse_enabled, manager)
                .start()
                .into()
        } else {
            let c = &self.config;
            let data = crate::data_plane::DataPlane {
                secret: self.node_secret.clone(),
                seal: c.cluster.seals(&[&c.cluster.listen]),
                max_frame: c.cluster.max_frame_bytes,
                timeout: Duration::from_millis(c.worker.fetch_timeout_ms),
            };
            let (retries, scheduler) = (c.scheduling.subtask_max_retries, self.scheduler.clone());
            let on_end = ctx.address().recipient();
            let sources = super::task_processor::sources::read_tasks(&graph)
                .into_iter()
                .filter_map(|t| self.tasks.get(&t).map(|(_, p)| (t, p.fetch_args.clone())))
                .collect();
            let holds = Holds { spool, sources };
            Supervisor::start(move |_| {
                TaskProcessor::new(task, graph, config, retries, data, scheduler, on_end)
                    .holding(holds)
                    .in_stage(stage)
            })
            .into()
        };
        let entry = self.sessions.get_mut(session).expect("checked above");
        self.admission.started(task, session);
        entry.tasks.push(task);
        if upload {
            entry.uploads.insert(task);
        }
        let superseded = name.and_then(|n| entry.names.insert(n, task));
        self.tasks.insert(task, (session.to_string(), handle));
        if let Some(old) = superseded {
            self.free_superseded(session, old);
        }
        tracing::info!(%task, session, staged, "task submitted");
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
        submitted: Result<TaskId, ServiceError>,
    ) -> impl std::future::Future<Output = Result<TaskId, ServiceError>> + 'static {
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
                Some(why) => Err(ServiceError::DoesNotFit(why)),
                None => Ok(task),
            }
        }
    }
}

impl Handler<SubmitTask> for TaskManager {
    type Result = ResponseFuture<Result<TaskId, ServiceError>>;
    fn handle(&mut self, m: SubmitTask, ctx: &mut Context<Self>) -> Self::Result {
        let submitted = guard(self, ctx, "SubmitTask", |act, ctx| act.submit(m, ctx))
            .unwrap_or(Err(ServiceError::Restarting));
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
