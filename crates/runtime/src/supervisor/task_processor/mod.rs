//! The TaskProcessor actor, one per task: prepares the graph off the actor thread, then
//! drives [`state::TaskState`]: submits ready subtasks to the scheduler, releases consumed
//! chunks, applies results and worker losses, and answers status, wait, cancel and result
//! fetches.

mod affinity;
pub mod lifecycle;
mod part;
mod preparation;
mod recompute;
pub mod result_error;
pub mod sources;
pub mod state;
mod streaming;
mod views;
mod whole_result;

// Re-exported: the web API's historical paths.
pub use super::messages::{
    AwaitPrepared, Cancel, FailTask, FetchPart, FetchResult, GetFetchArgs, GetGraph, GetInfo,
    GraphView, SubtaskView, WaitDone,
};
use super::messages::{
    PeerUnreachable, Redrive, Release, Reports, SchedulerHandle, StopTask, SubmitReady, TaskEnded,
    TaskHandle, WorkerLost,
};
use crate::config::TaskConfig;
use crate::data_plane;
use crate::guard::{guard, Guarded};
use crate::protocol::TaskInfo;
use crate::supervisor::upload::Spool;
use actix::prelude::*;
use ares_core::graph::TileableGraph;
use ares_core::ids::{StageId, TaskId};
use lifecycle::Lifecycle;
use state::{TaskEnd, TaskOut};
use std::time::Instant;
use tokio::sync::oneshot;

pub struct TaskProcessor {
    task: TaskId,
    /// Its stage, when it is one of a task that runs in stages (else 0).
    stage: StageId,
    /// The submitted graph, kept for status pages.
    graph: TileableGraph,
    config: TaskConfig,
    max_retries: u32,
    /// How to read results from the workers' data planes.
    data: data_plane::DataPlane,
    scheduler: SchedulerHandle,
    /// Told once when the task ends (admission counts and eviction).
    on_end: Recipient<TaskEnded>,
    life: Lifecycle,
    graph_bytes: bytes::Bytes,
    started: Instant,
    ended: Option<Instant>,
    waiters: Vec<oneshot::Sender<()>>,
    /// Submissions waiting for preparation; `None` once it is over (with the refusal, if
    /// the graph did not fit in memory, in `refused`).
    prepared_waiters: Option<Vec<oneshot::Sender<Option<String>>>>,
    refused: Option<String>,
    prepare_seconds: Option<f64>,
    /// The handler panic being restarted from.
    panic: Option<String>,
    /// Retries already counted in `/metrics`.
    retries_counted: u32,
    /// Running again after it succeeded, to recompute results lost with a worker: result
    /// reads wait for that run ([`recompute`]).
    recomputing: bool,
    /// Set when the task ends, so a streamed preparation stops making parts ([`streaming`]).
    stop_streaming: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// What the task holds or reads beyond its graph ([`Holds`]).
    holds: Holds,
}

/// What a task holds or reads beyond its graph.
#[derive(Default)]
pub struct Holds {
    /// An upload's load task: the spool file its graph reads. Kept until the task is freed
    /// (`Cancel` on the ended task, or the processor's end), so results lost with a worker
    /// are recomputed from it; its bytes stay counted in `limits.max_spool_bytes` until then.
    pub spool: Option<Spool>,
    /// The processors of the tasks whose results the graph reads, asked where those results
    /// are now before preparing ([`sources`]).
    pub sources: Vec<(TaskId, Recipient<GetFetchArgs>)>,
}

impl From<Addr<TaskProcessor>> for TaskHandle {
    fn from(a: Addr<TaskProcessor>) -> Self {
        TaskHandle::of(a)
    }
}

impl TaskProcessor {
    pub fn new(
        task: TaskId,
        graph: TileableGraph,
        config: TaskConfig,
        max_retries: u32,
        data: data_plane::DataPlane,
        scheduler: SchedulerHandle,
        on_end: Recipient<TaskEnded>,
    ) -> Self {
        Self {
            task,
            stage: StageId(0),
            graph,
            config,
            max_retries,
            data,
            scheduler,
            on_end,
            life: Lifecycle::Preparing,
            graph_bytes: bytes::Bytes::new(),
            started: Instant::now(),
            ended: None,
            waiters: Vec::new(),
            prepared_waiters: Some(Vec::new()),
            refused: None,
            prepare_seconds: None,
            panic: None,
            retries_counted: 0,
            recomputing: false,
            stop_streaming: Default::default(),
            holds: Holds::default(),
        }
    }

    /// The task is stage `stage` of a task that runs in stages (its subtasks' `stage_id`).
    pub fn in_stage(mut self, stage: StageId) -> Self {
        self.stage = stage;
        self
    }

    /// The task holds or reads `holds` too.
    pub fn holding(mut self, holds: Holds) -> Self {
        self.holds = holds;
        self
    }

    fn info(&self) -> TaskInfo {
        let summary = self.life.summary();
        TaskInfo {
            task: self.task,
            status: self.life.status(),
            progress: summary.progress,
            subtasks: summary.subtasks,
            error: self.life.error(),
            prepare_seconds: self.prepare_seconds,
            retries: summary.retries,
            elapsed: self
                .ended
                .unwrap_or_else(Instant::now)
                .duration_since(self.started)
                .as_secs_f64(),
        }
    }

    /// Preparation is over (or the task ended before it was): answers the submissions
    /// waiting for it.
    fn preparation_over(&mut self) {
        for w in self.prepared_waiters.take().into_iter().flatten() {
            let _ = w.send(self.refused.clone());
        }
    }

    /// Ends the task; false when it had ended already.
    fn end(&mut self, end: TaskEnd) -> bool {
        let failed = end != TaskEnd::Succeeded;
        if !self.life.end(end) {
            return false;
        }
        self.preparation_over();
        self.recomputing = false;
        self.stop_streaming
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.ended = Some(Instant::now());
        if failed {
            self.scheduler.stop.do_send(StopTask {
                task: self.task,
                forget: false,
            });
        }
        for w in self.waiters.drain(..) {
            let _ = w.send(());
        }
        self.on_end.do_send(TaskEnded(self.task));
        tracing::info!(task = %self.task, status = ?self.life.status(), "task ended");
        true
    }

    /// Carries out what the state machine decided.
    fn flush(&mut self, ctx: &mut Context<Self>) {
        let Some(state) = self.life.state_mut() else {
            return;
        };
        let retries = state.retries();
        if retries > self.retries_counted {
            crate::metrics::subtasks_retried((retries - self.retries_counted) as u64);
            self.retries_counted = retries;
        }
        let Some(state) = self.life.state_mut() else {
            return;
        };
        for out in std::mem::take(&mut state.outbox) {
            match out {
                TaskOut::Submit(items) => self.scheduler.submit.do_send(SubmitReady {
                    task: self.task,
                    processor: ctx.address().into(),
                    graph: self.graph_bytes.clone(),
                    items,
                }),
                TaskOut::Release(chunks) => self.scheduler.release.do_send(Release {
                    task: self.task,
                    chunks,
                }),
                TaskOut::PeerUnreachable(worker, why) => self
                    .scheduler
                    .peer_unreachable
                    .do_send(PeerUnreachable { worker, why }),
                TaskOut::Finished(end) => {
                    self.end(end);
                }
            }
        }
    }
}

impl Guarded for TaskProcessor {
    const NAME: &'static str = "TaskProcessor";
    fn panicked(&mut self, message: &'static str, cause: &str) {
        self.panic = Some(format!("while handling {message}: {cause}"));
    }
}

impl Supervised for TaskProcessor {
    /// A task that had ended keeps its end and results (only a cancel changes an ended
    /// task, and a cancel can run again). A task still preparing or running fails: its
    /// subtask states may be half-updated and cannot be trusted, so its chunks are released
    /// and every waiting client hears the error at once.
    fn restarting(&mut self, ctx: &mut Context<Self>) {
        let why = self.panic.take().unwrap_or_else(|| "unknown".into());
        if self.life.is_ended() {
            return;
        }
        tracing::error!(task = %self.task, "task processor restarted {why}: failing the task");
        self.end(TaskEnd::Failed(format!(
            "the task's processor panicked {why}; its state cannot be trusted, so the task fails"
        )));
        if let Some(s) = self.life.state_mut() {
            s.outbox.clear();
            s.release_all();
        }
        self.flush(ctx);
    }
}

impl Actor for TaskProcessor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        if !matches!(self.life, Lifecycle::Preparing) {
            return; // restarted after a panic
        }
        self.prepare_in_background(ctx);
    }
}

impl Handler<AwaitPrepared> for TaskProcessor {
    type Result = ResponseFuture<Option<String>>;
    fn handle(&mut self, _: AwaitPrepared, _: &mut Context<Self>) -> Self::Result {
        let Some(waiters) = &mut self.prepared_waiters else {
            let refused = self.refused.clone();
            return Box::pin(async move { refused });
        };
        let (tx, rx) = oneshot::channel();
        waiters.push(tx);
        Box::pin(async move { rx.await.unwrap_or(None) })
    }
}

impl Handler<Reports> for TaskProcessor {
    type Result = ();
    fn handle(&mut self, m: Reports, ctx: &mut Context<Self>) {
        guard(self, ctx, "Reports", |act, ctx| {
            if let Some(s) = act.life.state_mut() {
                s.on_reports(m.worker, m.reports);
                act.flush(ctx);
            }
        });
    }
}

impl Handler<WorkerLost> for TaskProcessor {
    type Result = ();
    fn handle(&mut self, m: WorkerLost, ctx: &mut Context<Self>) {
        guard(self, ctx, "WorkerLost", |act, ctx| {
            act.lose_worker(m.worker, &m.subtasks, &m.why, ctx);
        });
    }
}

impl Handler<Redrive> for TaskProcessor {
    type Result = ();
    fn handle(&mut self, Redrive(only): Redrive, ctx: &mut Context<Self>) {
        guard(self, ctx, "Redrive", |act, ctx| {
            if let Lifecycle::Running(s) = &mut act.life {
                s.redrive(only.as_deref());
                act.flush(ctx);
            }
        });
    }
}

impl Handler<FailTask> for TaskProcessor {
    type Result = bool;
    fn handle(&mut self, FailTask(error): FailTask, ctx: &mut Context<Self>) -> bool {
        guard(self, ctx, "FailTask", |act, _ctx| {
            act.end(TaskEnd::Failed(error))
        })
        .unwrap_or(false)
    }
}

impl Handler<GetInfo> for TaskProcessor {
    type Result = MessageResult<GetInfo>;
    fn handle(&mut self, _: GetInfo, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "GetInfo", |act, _ctx| -> Self::Result {
            MessageResult(act.info())
        })
        .unwrap_or_else(|| MessageResult(self.info()))
    }
}

impl Handler<WaitDone> for TaskProcessor {
    /// A plain future (not the actor's): it outlives a restart of the processor, whose
    /// waiters are woken when the restart fails the task.
    type Result = ResponseFuture<TaskInfo>;
    fn handle(&mut self, WaitDone(timeout): WaitDone, ctx: &mut Context<Self>) -> Self::Result {
        let (me, info) = (ctx.address(), self.info());
        let rx = guard(self, ctx, "WaitDone", |act, _ctx| {
            let (tx, rx) = oneshot::channel();
            if act.life.is_ended() {
                let _ = tx.send(());
            } else {
                act.waiters.push(tx);
            }
            rx
        });
        Box::pin(async move {
            if let Some(rx) = rx {
                let _ = tokio::time::timeout(timeout, rx).await;
            }
            me.send(GetInfo).await.unwrap_or(info)
        })
    }
}

impl Handler<Cancel> for TaskProcessor {
    type Result = MessageResult<Cancel>;
    fn handle(&mut self, _: Cancel, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "Cancel", |act, ctx| -> Self::Result {
            act.end(TaskEnd::Cancelled);
            if let Some(s) = act.life.state_mut() {
                s.cancel();
            }
            act.flush(ctx);
            act.scheduler.stop.do_send(StopTask {
                task: act.task,
                forget: true,
            });
            // Nothing more will run or be fetched: keep the summary, drop the graphs, and an
            // upload's spool file (nothing recomputes from it any more).
            act.life.release();
            act.graph_bytes = bytes::Bytes::new();
            act.holds = Holds::default();
            MessageResult(act.info())
        })
        .unwrap_or_else(|| MessageResult(self.info()))
    }
}
