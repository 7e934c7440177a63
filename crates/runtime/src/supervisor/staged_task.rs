//! A task whose graph runs in stages (`ares_core::prepare::stages`): `sum(x[x > 0])`, where
//! what follows a data-dependent length can be tiled only once that length is known.
//!
//! The client sees one task (this actor answers every message a task processor answers).
//! Underneath, each stage is a task of its own in the same session, run by an ordinary
//! [`TaskProcessor`](super::task_processor::TaskProcessor): the stage that computes the
//! data-dependent tensors, then the graph built again on their results (fetches with the
//! real chunk lengths, read from the workers' reports), and so on until the graph has no
//! stage left. Later stages read earlier stages' results as any task reads another's, so a
//! worker lost in a later stage recomputes an earlier stage's chunks from lineage, as for a
//! named result.
//!
//! ```text
//!   client ── task 7 (StagedTask) ──▶ stage task 8: x[mask]          ─┐ real lengths
//!                                 └──▶ stage task 9: fetch(8) * 2, sum ◀┘ (the result)
//! ```
//!
//! Progress counts the subtasks of every stage started so far (a total that grows); the
//! result, its parts and fetch arguments are the last stage's; cancelling cancels the stage
//! running, and freeing frees every stage.

use super::handles::TaskHandle;
use super::messages::{
    AwaitPrepared, Cancel, FailTask, FetchPart, FetchResult, FindTask, GetFetchArgs, GetGraph,
    GetInfo, GraphView, Origin, Redrive, Reports, SubmitTask, TaskEnded, WaitDone, WorkerLost,
};
use super::service::ServiceError;
use super::task_processor::result_error::ResultError;
use crate::config::TaskConfig;
use crate::protocol::{ResultPart, TaskInfo, TaskStatus};
use actix::prelude::*;
use ares_core::graph::TileableGraph;
use ares_core::ids::{StageId, TaskId, TileableIdx};
use ares_core::prepare::stages;
use bytes::Bytes;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How long one wait on a stage lasts before it is asked again.
const STAGE_POLL: Duration = Duration::from_secs(30);

/// Times a stage runs again because results of an earlier stage moved while it ran.
const MAX_STAGE_RETRIES: u32 = 3;

/// The `stage_id` of the `n`th stage submitted (from 1; stage 0 is a task without stages),
/// held at `u16::MAX` past it: ids stay valid, and no real graph has that many stages.
fn stage_number(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// What a staged task needs from the task manager.
pub struct Manager {
    pub submit: Recipient<SubmitTask>,
    pub find: Recipient<FindTask>,
    pub on_end: Recipient<TaskEnded>,
}

/// One stage: its task, what it reported last, and where its results were when the next
/// stage was built on them.
struct Stage {
    handle: TaskHandle,
    info: TaskInfo,
    fetched: Vec<ares_core::ops::OpArgs>,
}

pub struct StagedTask {
    task: TaskId,
    session: String,
    /// What is left to run: the whole graph, with the stages run so far substituted.
    graph: TileableGraph,
    config: Option<TaskConfig>,
    fuse_enabled: Option<bool>,
    manager: Manager,
    stages: Vec<Stage>,
    /// The boundary of the stage running (empty: it is the last).
    boundary: Vec<TileableIdx>,
    status: TaskStatus,
    error: Option<String>,
    /// Stages run again after an earlier stage's results moved (see `retry_or_fail`).
    stage_retries: u32,
    started: Instant,
    ended_at: Option<Instant>,
    ended: watch::Sender<bool>,
}

impl StagedTask {
    pub fn new(
        task: TaskId,
        session: String,
        graph: TileableGraph,
        config: Option<TaskConfig>,
        fuse_enabled: Option<bool>,
        manager: Manager,
    ) -> Self {
        StagedTask {
            task,
            session,
            graph,
            config,
            fuse_enabled,
            manager,
            stages: Vec::new(),
            boundary: Vec::new(),
            status: TaskStatus::Pending,
            error: None,
            stage_retries: 0,
            started: Instant::now(),
            ended_at: None,
            ended: watch::channel(false).0,
        }
    }

    fn running(&self) -> Option<&Stage> {
        self.stages.last().filter(|_| !self.status.is_terminal())
    }

    /// The last stage's task once this task succeeded.
    fn result_stage(&self) -> Option<&TaskHandle> {
        (self.status == TaskStatus::Succeeded)
            .then(|| self.stages.last().map(|s| &s.handle))
            .flatten()
    }

    fn end(&mut self, status: TaskStatus, error: Option<String>) {
        if self.status.is_terminal() {
            return;
        }
        self.status = status;
        self.error = error;
        self.ended_at = Some(Instant::now());
        let _ = self.ended.send(true);
        self.manager.on_end.do_send(TaskEnded(self.task));
        tracing::info!(task = %self.task, ?status, stages = self.stages.len(), "staged task ended");
    }

    fn info(&self) -> TaskInfo {
        let infos: Vec<&TaskInfo> = self.stages.iter().map(|s| &s.info).collect();
        let mut info = summarize(self.task, &infos);
        info.status = match self.status {
            TaskStatus::Pending if !self.stages.is_empty() => TaskStatus::Running,
            s => s,
        };
        info.error = self.error.clone();
        info.elapsed = self
            .ended_at
            .unwrap_or_else(Instant::now)
            .duration_since(self.started)
            .as_secs_f64();
        if info.status == TaskStatus::Succeeded {
            info.progress = 1.0;
        }
        info
    }

    /// Plans and submits the next stage (or the last).
    fn next(&mut self, ctx: &mut Context<Self>) {
        if self.status.is_terminal() {
            return;
        }
        let (graph, boundary) = match stages::next_stage(&self.graph) {
            Ok(Some(stage)) => (stage.graph, stage.boundary),
            Ok(None) => (self.graph.clone(), Vec::new()),
            Err(e) => return self.end(TaskStatus::Failed, Some(e.to_string())),
        };
        self.boundary = boundary;
        let submit = SubmitTask {
            session: self.session.clone(),
            graph,
            config: self.config.clone(),
            fuse_enabled: self.fuse_enabled,
            name: None,
            origin: Origin::Stage(StageId(stage_number(self.stages.len() + 1))),
            spool: None,
        };
        let (submitter, finder) = (self.manager.submit.clone(), self.manager.find.clone());
        let session = self.session.clone();
        let submitted = async move {
            let task = submitter.send(submit).await??;
            let handle = finder
                .send(FindTask {
                    session: Some(session),
                    task,
                })
                .await??;
            Ok::<_, ServiceError>((task, handle))
        };
        ctx.spawn(submitted.into_actor(self).map(|res, act, ctx| match res {
            Ok((task, handle)) => {
                tracing::info!(task = %act.task, stage = act.stages.len() + 1, stage_task = %task, "stage submitted");
                let info = TaskInfo {
                    task,
                    status: TaskStatus::Pending,
                    progress: 0.0,
                    subtasks: 0,
                    error: None,
                    retries: 0,
                    prepare_seconds: None,
                    elapsed: 0.0,
                };
                act.stages.push(Stage {
                    handle,
                    info,
                    fetched: Vec::new(),
                });
                if act.status == TaskStatus::Pending {
                    act.status = TaskStatus::Running;
                }
                act.watch(ctx);
            }
            Err(e) => {
                let stage = act.stages.len() + 1;
                act.end(TaskStatus::Failed, Some(format!("stage {stage}: {e}")));
            }
        }));
    }

    /// Follows the running stage until it ends.
    fn watch(&mut self, ctx: &mut Context<Self>) {
        let Some(stage) = self.running() else { return };
        let wait = stage.handle.send(WaitDone(STAGE_POLL));
        ctx.spawn(wait.into_actor(self).map(|info, act, ctx| {
            let Ok(info) = info else {
                return act.end(
                    TaskStatus::Failed,
                    Some("a stage's processor stopped".into()),
                );
            };
            if let Some(s) = act.stages.last_mut() {
                s.info = info.clone();
            }
            match info.status {
                _ if act.status.is_terminal() => {}
                s if !s.is_terminal() => act.watch(ctx),
                TaskStatus::Succeeded if act.boundary.is_empty() => {
                    act.end(TaskStatus::Succeeded, None)
                }
                TaskStatus::Succeeded => act.go_on(ctx),
                TaskStatus::Failed => act.retry_or_fail(info, ctx),
                status => {
                    let n = act.stages.len();
                    let why = info.error.unwrap_or_else(|| format!("{status:?}"));
                    act.end(status, Some(format!("stage {n}: {why}")));
                }
            }
        }));
    }

    /// A stage failed. If results of an earlier stage moved meanwhile (their worker died
    /// while this stage read them: the earlier stage recomputed them from lineage), the
    /// stage runs again, reading them where they are now (its submission waits for a
    /// recompute under way); otherwise this task fails with the stage's error.
    fn retry_or_fail(&mut self, info: TaskInfo, ctx: &mut Context<Self>) {
        let n = self.stages.len();
        let why = format!(
            "stage {n}: {}",
            info.error.unwrap_or_else(|| "failed".into())
        );
        let earlier: Vec<(TaskHandle, Vec<ares_core::ops::OpArgs>)> = self.stages[..n - 1]
            .iter()
            .map(|s| (s.handle.clone(), s.fetched.clone()))
            .collect();
        if earlier.is_empty() || self.stage_retries >= MAX_STAGE_RETRIES {
            return self.end(TaskStatus::Failed, Some(why));
        }
        let moved = async move {
            for (handle, fetched) in earlier {
                for (i, then) in fetched.iter().enumerate() {
                    let now = handle.send(GetFetchArgs(i as u32)).await.ok().flatten();
                    if now.as_ref() != Some(then) {
                        return true;
                    }
                }
            }
            false
        };
        ctx.spawn(moved.into_actor(self).map(move |moved, act, ctx| {
            if !moved || act.status.is_terminal() {
                return act.end(TaskStatus::Failed, Some(why));
            }
            act.stage_retries += 1;
            tracing::warn!(task = %act.task, stage = n, "results of an earlier stage moved while the stage ran: running it again ({why})");
            act.next(ctx);
        }));
    }

    /// The stage that ended computed the boundary: build the rest on its results.
    fn go_on(&mut self, ctx: &mut Context<Self>) {
        let Some(stage) = self.stages.last() else {
            return;
        };
        let asks: Vec<_> = (0..self.boundary.len() as u32)
            .map(|i| stage.handle.send(GetFetchArgs(i)))
            .collect();
        let layouts = futures_util::future::join_all(asks);
        ctx.spawn(layouts.into_actor(self).map(|answers, act, ctx| {
            let fetched: Option<Vec<_>> = answers.into_iter().map(|a| a.ok().flatten()).collect();
            let Some(fetched) = fetched else {
                let n = act.stages.len();
                return act.end(
                    TaskStatus::Failed,
                    Some(format!("stage {n}: its results are no longer held")),
                );
            };
            if let Some(s) = act.stages.last_mut() {
                s.fetched = fetched.clone();
            }
            match stages::substitute(&act.graph, &act.boundary, fetched) {
                Ok(graph) => {
                    act.graph = graph;
                    act.next(ctx);
                }
                Err(e) => act.end(TaskStatus::Failed, Some(e.to_string())),
            }
        }));
    }
}

/// One task's view of its stages: subtasks, retries and preparation summed; progress over
/// the subtasks known so far (a stage not yet planned adds to the total when it is).
pub fn summarize(task: TaskId, stages: &[&TaskInfo]) -> TaskInfo {
    let subtasks: usize = stages.iter().map(|i| i.subtasks).sum();
    let done: f64 = stages.iter().map(|i| i.progress * i.subtasks as f64).sum();
    let prepare: Vec<f64> = stages.iter().filter_map(|i| i.prepare_seconds).collect();
    TaskInfo {
        task,
        status: TaskStatus::Pending,
        progress: if subtasks == 0 {
            0.0
        } else {
            done / subtasks as f64
        },
        subtasks,
        error: None,
        retries: stages.iter().map(|i| i.retries).sum(),
        prepare_seconds: (!prepare.is_empty()).then(|| prepare.iter().sum()),
        elapsed: 0.0,
    }
}

impl Actor for StagedTask {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.next(ctx);
    }
}

impl From<Addr<StagedTask>> for TaskHandle {
    fn from(a: Addr<StagedTask>) -> Self {
        TaskHandle::of(a)
    }
}

// The scheduler reports to each stage's own processor: these reach a staged task only if
// routed by its id, and have nothing of its own to act on.
impl Handler<Reports> for StagedTask {
    type Result = ();
    fn handle(&mut self, _: Reports, _: &mut Context<Self>) {}
}

impl Handler<WorkerLost> for StagedTask {
    type Result = ();
    fn handle(&mut self, _: WorkerLost, _: &mut Context<Self>) {}
}

impl Handler<Redrive> for StagedTask {
    type Result = ();
    fn handle(&mut self, _: Redrive, _: &mut Context<Self>) {}
}

/// Fails the running stage and this task (no live worker, shutdown).
impl Handler<FailTask> for StagedTask {
    type Result = bool;
    fn handle(&mut self, FailTask(why): FailTask, _: &mut Context<Self>) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        if let Some(s) = self.running() {
            s.handle.do_send(FailTask(why.clone()));
        }
        self.end(TaskStatus::Failed, Some(why));
        true
    }
}

impl Handler<GetInfo> for StagedTask {
    type Result = MessageResult<GetInfo>;
    fn handle(&mut self, _: GetInfo, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.info())
    }
}

impl Handler<WaitDone> for StagedTask {
    type Result = ResponseActFuture<Self, TaskInfo>;
    fn handle(&mut self, WaitDone(timeout): WaitDone, _: &mut Context<Self>) -> Self::Result {
        let mut ended = self.ended.subscribe();
        let wait = async move {
            let _ = tokio::time::timeout(timeout, ended.wait_for(|e| *e)).await;
        };
        Box::pin(wait.into_actor(self).map(|_, act, _| act.info()))
    }
}

/// Submission answers at once: each stage is prepared when it is planned, and a stage that
/// fits in no worker fails this task with the reason.
impl Handler<AwaitPrepared> for StagedTask {
    type Result = Option<String>;
    fn handle(&mut self, _: AwaitPrepared, _: &mut Context<Self>) -> Option<String> {
        None
    }
}

/// Cancels the running stage; on an ended task, frees every stage's results.
impl Handler<Cancel> for StagedTask {
    type Result = MessageResult<Cancel>;
    fn handle(&mut self, _: Cancel, _: &mut Context<Self>) -> Self::Result {
        if self.status.is_terminal() {
            for s in &self.stages {
                s.handle.do_send(Cancel);
            }
        } else {
            if let Some(s) = self.running() {
                s.handle.do_send(Cancel);
            }
            self.end(TaskStatus::Cancelled, None);
        }
        MessageResult(self.info())
    }
}

impl StagedTask {
    /// Asks the last stage for one of its results, once this task succeeded.
    fn ask_result_stage<M, T>(&self, m: M) -> ResponseFuture<Result<T, ResultError>>
    where
        M: Message<Result = Result<T, ResultError>> + Send + 'static,
        T: Send + 'static,
        TaskHandle: super::handles::Route<M>,
    {
        let (task, status) = (self.task, self.status);
        let last = self.result_stage().map(|h| h.send(m));
        Box::pin(async move {
            match last {
                Some(asked) => asked.await.unwrap_or(Err(ResultError::NoneHeld(task))),
                None => Err(ResultError::NotSucceeded { task, status }),
            }
        })
    }
}

impl Handler<FetchResult> for StagedTask {
    type Result = ResponseFuture<Result<Bytes, ResultError>>;
    fn handle(&mut self, m: FetchResult, _: &mut Context<Self>) -> Self::Result {
        self.ask_result_stage(m)
    }
}

impl Handler<FetchPart> for StagedTask {
    type Result = ResponseFuture<Result<ResultPart, ResultError>>;
    fn handle(&mut self, m: FetchPart, _: &mut Context<Self>) -> Self::Result {
        self.ask_result_stage(m)
    }
}

impl Handler<GetFetchArgs> for StagedTask {
    type Result = ResponseFuture<Option<ares_core::ops::OpArgs>>;
    fn handle(&mut self, m: GetFetchArgs, _: &mut Context<Self>) -> Self::Result {
        let last = self.result_stage().map(|h| h.send(m));
        Box::pin(async move {
            match last {
                Some(asked) => asked.await.ok().flatten(),
                None => None,
            }
        })
    }
}

/// The graph of the stage running (or the last), with this task's progress.
impl Handler<GetGraph> for StagedTask {
    type Result = ResponseActFuture<Self, GraphView>;
    fn handle(&mut self, m: GetGraph, _: &mut Context<Self>) -> Self::Result {
        let asked = self.stages.last().map(|s| s.handle.send(m));
        let view = async move {
            match asked {
                Some(a) => a.await.ok(),
                None => None,
            }
        };
        Box::pin(view.into_actor(self).map(|view, act, _| {
            let info = act.info();
            match view {
                Some(v) => GraphView { info, ..v },
                None => GraphView {
                    tileable: Some(act.graph.clone()),
                    ..GraphView::empty(info)
                },
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(progress: f64, subtasks: usize, retries: u32) -> TaskInfo {
        TaskInfo {
            task: TaskId(9),
            status: TaskStatus::Running,
            progress,
            subtasks,
            error: None,
            retries,
            prepare_seconds: Some(0.5),
            elapsed: 3.0,
        }
    }

    #[test]
    fn progress_counts_every_stage_started_so_far() {
        //   stage 1: 100 subtasks, done      stage 2: 300 subtasks, a third done
        let (a, b) = (info(1.0, 100, 1), info(1.0 / 3.0, 300, 2));
        let s = summarize(TaskId(7), &[&a, &b]);
        assert_eq!(s.task, TaskId(7));
        assert_eq!(s.subtasks, 400);
        assert!((s.progress - 0.5).abs() < 1e-12, "{}", s.progress);
        assert_eq!(s.retries, 3);
        assert_eq!(s.prepare_seconds, Some(1.0));
        // Before the first stage is planned: nothing known, nothing done.
        let none = summarize(TaskId(7), &[]);
        assert_eq!((none.subtasks, none.progress), (0, 0.0));
    }
}
