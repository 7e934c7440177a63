//! The TaskProcessor actor, one per task: prepares the graph off the actor thread, then
//! drives [`state::TaskState`]: submits ready subtasks to the scheduler, releases consumed
//! chunks, applies results and worker losses, and answers status, wait, cancel and result
//! fetches.

pub mod state;
mod views;

pub use views::{GetFetchArgs, GetGraph, GraphView, SubtaskView};

use super::scheduler::{
    GetWorkers, MemoryLimits, PeerUnreachable, Release, Scheduler, StopTask, SubmitReady,
};
use super::task_manager::TaskEnded;
use crate::config::TaskConfig;
use crate::graph::TileableGraph;
use crate::ids::{ChunkIdx, SubtaskIdx, TaskId, WorkerId};
use crate::prepare::{prepare, uniform_cluster};
use crate::protocol::{codec, SubtaskReport, TaskInfo, TaskStatus};
use crate::worker::transfer;
use actix::prelude::*;
use state::{TaskEnd, TaskOut, TaskState};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

pub struct TaskProcessor {
    task: TaskId,
    graph: Option<TileableGraph>,
    config: TaskConfig,
    max_retries: u32,
    /// How to read results from the workers' data planes.
    data: transfer::DataPlane,
    scheduler: Addr<Scheduler>,
    /// Told once when the task ends (admission counts and eviction).
    on_end: Recipient<TaskEnded>,
    state: Option<TaskState>,
    graph_bytes: bytes::Bytes,
    status: TaskStatus,
    error: Option<String>,
    started: Instant,
    ended: Option<Instant>,
    waiters: Vec<oneshot::Sender<()>>,
    prepare_seconds: Option<f64>,
    /// Summary kept once the state is dropped (after the client released the task).
    released: Option<(usize, f64, u32)>,
}

impl TaskProcessor {
    pub fn new(
        task: TaskId,
        graph: TileableGraph,
        config: TaskConfig,
        max_retries: u32,
        data: transfer::DataPlane,
        scheduler: Addr<Scheduler>,
        on_end: Recipient<TaskEnded>,
    ) -> Self {
        Self {
            task,
            graph: Some(graph),
            config,
            max_retries,
            data,
            scheduler,
            on_end,
            state: None,
            graph_bytes: bytes::Bytes::new(),
            status: TaskStatus::Pending,
            error: None,
            started: Instant::now(),
            ended: None,
            waiters: Vec::new(),
            released: None,
            prepare_seconds: None,
        }
    }

    fn info(&self) -> TaskInfo {
        TaskInfo {
            task: self.task,
            status: self.status,
            progress: self
                .state
                .as_ref()
                .map_or(self.released.map_or(0.0, |r| r.1), |s| s.progress()),
            subtasks: self
                .state
                .as_ref()
                .map_or(self.released.map_or(0, |r| r.0), |s| s.graph.len()),
            error: self.error.clone(),
            prepare_seconds: self.prepare_seconds,
            retries: self
                .state
                .as_ref()
                .map_or(self.released.map_or(0, |r| r.2), |s| s.retries()),
            elapsed: self
                .ended
                .unwrap_or_else(Instant::now)
                .duration_since(self.started)
                .as_secs_f64(),
        }
    }

    fn end(&mut self, status: TaskStatus, error: Option<String>) {
        if self.status.is_terminal() {
            return;
        }
        self.status = status;
        self.error = error;
        self.ended = Some(Instant::now());
        if status != TaskStatus::Succeeded {
            self.scheduler.do_send(StopTask {
                task: self.task,
                forget: false,
            });
        }
        for w in self.waiters.drain(..) {
            let _ = w.send(());
        }
        self.on_end.do_send(TaskEnded(self.task));
        tracing::info!(task = %self.task, ?status, "task ended");
    }

    /// Carries out what the state machine decided.
    fn flush(&mut self, ctx: &mut Context<Self>) {
        let Some(state) = self.state.as_mut() else {
            return;
        };
        for out in std::mem::take(&mut state.outbox) {
            match out {
                TaskOut::Submit(items) => self.scheduler.do_send(SubmitReady {
                    task: self.task,
                    processor: ctx.address(),
                    graph: self.graph_bytes.clone(),
                    items,
                }),
                TaskOut::Release(chunks) => self.scheduler.do_send(Release {
                    task: self.task,
                    chunks,
                }),
                TaskOut::PeerUnreachable(worker, why) => {
                    self.scheduler.do_send(PeerUnreachable { worker, why })
                }
                TaskOut::Finished(TaskEnd::Succeeded) => self.end(TaskStatus::Succeeded, None),
                TaskOut::Finished(TaskEnd::Cancelled) => self.end(TaskStatus::Cancelled, None),
                TaskOut::Finished(TaskEnd::Failed(e)) => self.end(TaskStatus::Failed, Some(e)),
            }
        }
    }
}

impl Actor for TaskProcessor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let graph = self.graph.clone().expect("graph present until started");
        let (config, task, scheduler) = (self.config.clone(), self.task, self.scheduler.clone());
        let prepared = async move {
            let workers: Vec<_> = scheduler
                .send(GetWorkers)
                .await
                .unwrap_or_default()
                .into_iter()
                .map(|(w, _)| w)
                .collect();
            let limits = scheduler.send(MemoryLimits).await.unwrap_or_default();
            let workers = if workers.is_empty() {
                uniform_cluster(1, 1)
            } else {
                workers
            };
            tokio::task::spawn_blocking(move || -> Result<_, String> {
                let start = std::time::Instant::now();
                let p = prepare(&graph, &config, &workers, task).map_err(|e| e.to_string())?;
                crate::worker::memory::check_fits(&p.subtasks, &limits)?;
                let bytes = codec::encode(&p.subtasks.worker_view()).map_err(|e| e.to_string())?;
                Ok((p.subtasks, bytes, start.elapsed().as_secs_f64()))
            })
            .await
            .map_err(|e| format!("preparation panicked: {e}"))?
        };
        ctx.spawn(
            prepared
                .into_actor(self)
                .map(|result, act, ctx| match result {
                    Ok((graph, bytes, seconds)) => {
                        act.prepare_seconds = Some(seconds);
                        act.graph_bytes = bytes.into();
                        let mut state = TaskState::new(Arc::new(graph), act.max_retries);
                        state.start();
                        act.state = Some(state);
                        if act.status == TaskStatus::Pending {
                            act.status = TaskStatus::Running;
                            act.flush(ctx);
                        }
                    }
                    Err(e) => act.end(TaskStatus::Failed, Some(e)),
                }),
        );
    }
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct Reports {
    pub worker: WorkerId,
    pub reports: Vec<SubtaskReport>,
}

impl Handler<Reports> for TaskProcessor {
    type Result = ();
    fn handle(&mut self, m: Reports, ctx: &mut Context<Self>) {
        if let Some(s) = self.state.as_mut() {
            s.on_reports(m.worker, m.reports);
            self.flush(ctx);
        }
    }
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct WorkerLost {
    pub worker: WorkerId,
    pub subtasks: Vec<SubtaskIdx>,
    /// Why it counts as lost ("connection closed", "missed its heartbeats", ...).
    pub why: String,
}

impl Handler<WorkerLost> for TaskProcessor {
    type Result = ();
    fn handle(&mut self, m: WorkerLost, ctx: &mut Context<Self>) {
        if let Some(s) = self.state.as_mut() {
            s.on_worker_lost(m.worker, &m.subtasks, &m.why);
            self.flush(ctx);
        }
    }
}

/// The task fails with this message if it has not ended: no worker has been live for
/// `cluster.no_worker_timeout_ms`, or the supervisor is shutting down.
#[derive(Message)]
#[rtype(result = "()")]
pub struct FailTask(pub String);

impl Handler<FailTask> for TaskProcessor {
    type Result = ();
    fn handle(&mut self, FailTask(error): FailTask, _: &mut Context<Self>) {
        self.end(TaskStatus::Failed, Some(error));
    }
}

#[derive(Message)]
#[rtype(result = "TaskInfo")]
pub struct GetInfo;

impl Handler<GetInfo> for TaskProcessor {
    type Result = MessageResult<GetInfo>;
    fn handle(&mut self, _: GetInfo, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.info())
    }
}

/// Answers when the task ends or after `timeout`, whichever comes first.
#[derive(Message)]
#[rtype(result = "TaskInfo")]
pub struct WaitDone(pub Duration);

impl Handler<WaitDone> for TaskProcessor {
    type Result = ResponseActFuture<Self, TaskInfo>;
    fn handle(&mut self, WaitDone(timeout): WaitDone, _: &mut Context<Self>) -> Self::Result {
        let (tx, rx) = oneshot::channel();
        if self.status.is_terminal() {
            let _ = tx.send(());
        } else {
            self.waiters.push(tx);
        }
        Box::pin(
            async move { tokio::time::timeout(timeout, rx).await }
                .into_actor(self)
                .map(|_, act, _| act.info()),
        )
    }
}

/// Cancels a running task; on an ended task, frees its results.
#[derive(Message)]
#[rtype(result = "TaskInfo")]
pub struct Cancel;

impl Handler<Cancel> for TaskProcessor {
    type Result = MessageResult<Cancel>;
    fn handle(&mut self, _: Cancel, ctx: &mut Context<Self>) -> Self::Result {
        if !self.status.is_terminal() {
            self.end(TaskStatus::Cancelled, None);
        }
        if let Some(s) = self.state.as_mut() {
            s.cancel();
        }
        self.flush(ctx);
        self.scheduler.do_send(StopTask {
            task: self.task,
            forget: true,
        });
        // Nothing more will run or be fetched: keep the summary, drop the graphs.
        if let Some(s) = self.state.take() {
            self.released = Some((s.graph.len(), s.progress(), s.retries()));
        }
        self.graph_bytes = bytes::Bytes::new();
        MessageResult(self.info())
    }
}

/// The result tensors, in the codec's chunk encoding (chunk index = output position).
#[derive(Message)]
#[rtype(result = "Result<bytes::Bytes, String>")]
pub struct FetchResult;

impl Handler<FetchResult> for TaskProcessor {
    type Result = ResponseActFuture<Self, Result<bytes::Bytes, String>>;
    fn handle(&mut self, _: FetchResult, _: &mut Context<Self>) -> Self::Result {
        let ready = match (&self.status, &self.state) {
            (TaskStatus::Succeeded, Some(s)) => Ok((s.graph.clone(), s.result_locations())),
            (status, _) => Err(format!("{} has no result ({status:?})", self.task)),
        };
        let (scheduler, task, data) = (self.scheduler.clone(), self.task, self.data.clone());
        Box::pin(
            async move {
                let (graph, locations) = ready?;
                let addrs: BTreeMap<WorkerId, String> = scheduler
                    .send(GetWorkers)
                    .await
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(w, a)| (w.worker, a))
                    .collect();
                tokio::task::spawn_blocking(move || {
                    let mut by_worker: BTreeMap<WorkerId, Vec<ChunkIdx>> = BTreeMap::new();
                    for (c, w) in locations {
                        by_worker
                            .entry(w.ok_or_else(|| format!("result chunk {c} is lost"))?)
                            .or_default()
                            .push(c);
                    }
                    let mut store = vec![None; graph.chunks.len()];
                    for (w, chunks) in by_worker {
                        let addr = addrs
                            .get(&w)
                            .ok_or_else(|| format!("{w} holding results is gone"))?;
                        for (c, data) in transfer::fetch(addr, &data, task, &chunks)
                            .map_err(|e| format!("reading results from {w}: {e}"))?
                        {
                            store[c.index()] = Some(Arc::new(data));
                        }
                    }
                    let tensors = graph
                        .chunks
                        .results
                        .iter()
                        .map(|r| {
                            crate::executor::assemble(&graph.chunks, r, &store)
                                .map_err(|e| e.to_string())
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    let refs: Vec<(ChunkIdx, &crate::array::ArrayData)> = tensors
                        .iter()
                        .enumerate()
                        .map(|(i, t)| (ChunkIdx(i as u32), t))
                        .collect();
                    codec::encode_chunks(&refs)
                        .map(bytes::Bytes::from)
                        .map_err(|e| e.to_string())
                })
                .await
                .map_err(|e| e.to_string())?
            }
            .into_actor(self),
        )
    }
}
