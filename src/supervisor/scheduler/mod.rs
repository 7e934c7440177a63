//! The Scheduler actor: worker membership and heartbeats, and the thin shell that feeds
//! [`state::SchedulerState`] and carries out its decisions on the worker links.
//!
//! Every event is applied to the state, then one `dispatch` runs, so a burst of results
//! coalesces into one scheduling pass and one RunSubtasks per worker and task.

pub mod state;

use super::link::{Link, Send};
use super::task_processor::{TaskProcessor, WorkerLost};
use crate::ids::{ChunkIdx, TaskId, WorkerId};
use crate::prepare::WorkerSlots;
use crate::protocol::{SubtaskReport, ToWorker};
use actix::prelude::*;
use bytes::Bytes;
use state::{ReadySubtask, SchedOut, SchedulerState};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

struct WorkerEntry {
    link: Addr<Link>,
    data_addr: String,
    tasks: HashSet<TaskId>,
    /// (chunks, bytes) held, from the last heartbeat.
    stored: (u64, u64),
}

pub struct Scheduler {
    state: SchedulerState,
    workers: BTreeMap<WorkerId, WorkerEntry>,
    processors: HashMap<TaskId, (Addr<TaskProcessor>, Bytes)>,
    epoch: Instant,
    node_timeout_ms: u64,
    check_every: Duration,
}

impl Scheduler {
    pub fn new(max_batch: usize, prefetch: usize, node_timeout_ms: u64, heartbeat_ms: u64) -> Self {
        Self {
            state: SchedulerState::new(max_batch, prefetch),
            workers: BTreeMap::new(),
            processors: HashMap::new(),
            epoch: Instant::now(),
            node_timeout_ms,
            check_every: Duration::from_millis(heartbeat_ms.max(50)),
        }
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn send(&self, worker: WorkerId, message: ToWorker) {
        if let Some(w) = self.workers.get(&worker) {
            w.link.do_send(Send(message));
        }
    }

    fn broadcast_peers(&self) {
        let peers: Vec<(WorkerId, String)> = self
            .workers
            .iter()
            .map(|(id, w)| (*id, w.data_addr.clone()))
            .collect();
        for id in self.workers.keys() {
            self.send(
                *id,
                ToWorker::Peers {
                    peers: peers.clone(),
                },
            );
        }
    }

    /// Runs a scheduling pass and carries out its decisions.
    fn dispatch(&mut self) {
        self.state.dispatch();
        for out in std::mem::take(&mut self.state.outbox) {
            match out {
                SchedOut::Run {
                    worker,
                    task,
                    subtasks,
                } => {
                    let Some(entry) = self.workers.get_mut(&worker) else {
                        continue;
                    };
                    if entry.tasks.insert(task) {
                        if let Some((_, graph)) = self.processors.get(&task) {
                            entry.link.do_send(Send(ToWorker::RegisterTask {
                                task,
                                graph: graph.clone(),
                            }));
                        }
                    }
                    entry
                        .link
                        .do_send(Send(ToWorker::RunSubtasks { task, subtasks }));
                }
                SchedOut::Cancel {
                    worker,
                    task,
                    subtasks,
                } => self.send(worker, ToWorker::CancelSubtasks { task, subtasks }),
            }
        }
    }

    fn remove_worker(&mut self, worker: WorkerId, why: &str) {
        if self.workers.remove(&worker).is_none() {
            return;
        }
        tracing::warn!(%worker, "worker is dead: {why}");
        let lost = self.state.remove_worker(worker);
        for (task, (processor, _)) in &self.processors {
            let subtasks = lost.get(task).cloned().unwrap_or_default();
            processor.do_send(WorkerLost { worker, subtasks });
        }
        self.broadcast_peers();
        self.dispatch();
    }
}

impl Actor for Scheduler {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(self.check_every, |act, _| {
            for w in act.state.expired(act.now_ms(), act.node_timeout_ms) {
                act.remove_worker(w, "missed its heartbeats");
            }
        });
    }
}

#[derive(Message)]
#[rtype(result = "WorkerId")]
pub struct RegisterWorker {
    pub link: Addr<Link>,
    pub slots: usize,
    pub data_addr: String,
}

impl Handler<RegisterWorker> for Scheduler {
    type Result = MessageResult<RegisterWorker>;
    fn handle(&mut self, m: RegisterWorker, _: &mut Context<Self>) -> Self::Result {
        let id = self.state.add_worker(m.slots, self.now_ms());
        tracing::info!(worker = %id, slots = m.slots, data = %m.data_addr, "worker registered");
        self.workers.insert(
            id,
            WorkerEntry {
                link: m.link,
                data_addr: m.data_addr,
                tasks: HashSet::new(),
                stored: (0, 0),
            },
        );
        self.broadcast_peers();
        self.dispatch();
        MessageResult(id)
    }
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct WorkerGone(pub WorkerId);

impl Handler<WorkerGone> for Scheduler {
    type Result = ();
    fn handle(&mut self, WorkerGone(w): WorkerGone, _: &mut Context<Self>) {
        self.remove_worker(w, "connection closed");
    }
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct Heartbeat {
    pub worker: WorkerId,
    pub stored_chunks: u64,
    pub stored_bytes: u64,
}

impl Handler<Heartbeat> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: Heartbeat, _: &mut Context<Self>) {
        let now = self.now_ms();
        self.state.heartbeat(m.worker, now);
        if let Some(w) = self.workers.get_mut(&m.worker) {
            w.stored = (m.stored_chunks, m.stored_bytes);
        }
    }
}

/// One worker as status pages show it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct NodeStatus {
    pub worker: String,
    pub slots: usize,
    pub running: usize,
    pub queued: usize,
    pub data_addr: String,
    pub stored_chunks: u64,
    pub stored_bytes: u64,
    pub alive: bool,
}

#[derive(Message)]
#[rtype(result = "Vec<NodeStatus>")]
pub struct GetClusterStatus;

impl Handler<GetClusterStatus> for Scheduler {
    type Result = MessageResult<GetClusterStatus>;
    fn handle(&mut self, _: GetClusterStatus, _: &mut Context<Self>) -> Self::Result {
        let slots: BTreeMap<WorkerId, usize> = self.state.workers().collect();
        let nodes = self
            .state
            .load()
            .into_iter()
            .filter_map(|(id, running, queued)| {
                let w = self.workers.get(&id)?;
                Some(NodeStatus {
                    worker: id.to_string(),
                    slots: slots.get(&id).copied().unwrap_or(0),
                    running,
                    queued,
                    data_addr: w.data_addr.clone(),
                    stored_chunks: w.stored.0,
                    stored_bytes: w.stored.1,
                    alive: true,
                })
            })
            .collect();
        MessageResult(nodes)
    }
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct Finished {
    pub worker: WorkerId,
    pub task: TaskId,
    pub reports: Vec<SubtaskReport>,
}

impl Handler<Finished> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: Finished, _: &mut Context<Self>) {
        let now = self.now_ms();
        self.state.heartbeat(m.worker, now);
        self.state
            .finished(m.worker, m.task, m.reports.iter().map(|r| r.subtask));
        if let Some((p, _)) = self.processors.get(&m.task) {
            p.do_send(super::task_processor::Reports {
                worker: m.worker,
                reports: m.reports,
            });
        }
        self.dispatch();
    }
}

/// Subtasks of a task that can run; the first submission registers the task.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SubmitReady {
    pub task: TaskId,
    pub processor: Addr<TaskProcessor>,
    pub graph: Bytes,
    pub items: Vec<ReadySubtask>,
}

impl Handler<SubmitReady> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: SubmitReady, _: &mut Context<Self>) {
        self.processors
            .entry(m.task)
            .or_insert((m.processor, m.graph));
        self.state.enqueue(m.items);
        self.dispatch();
    }
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct Release {
    pub task: TaskId,
    pub chunks: BTreeMap<WorkerId, Vec<ChunkIdx>>,
}

impl Handler<Release> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: Release, _: &mut Context<Self>) {
        for (w, chunks) in m.chunks {
            self.send(
                w,
                ToWorker::ReleaseChunks {
                    task: m.task,
                    chunks,
                },
            );
        }
    }
}

/// Stops a task's queued and running subtasks; with `forget`, workers drop it entirely.
#[derive(Message)]
#[rtype(result = "()")]
pub struct StopTask {
    pub task: TaskId,
    pub forget: bool,
}

impl Handler<StopTask> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: StopTask, _: &mut Context<Self>) {
        self.state.cancel_task(m.task);
        self.dispatch();
        if m.forget {
            self.processors.remove(&m.task);
            for entry in self.workers.values_mut() {
                if entry.tasks.remove(&m.task) {
                    entry
                        .link
                        .do_send(Send(ToWorker::ForgetTask { task: m.task }));
                }
            }
        }
    }
}

#[derive(Message)]
#[rtype(result = "Vec<(WorkerSlots, String)>")]
pub struct GetWorkers;

impl Handler<GetWorkers> for Scheduler {
    type Result = MessageResult<GetWorkers>;
    fn handle(&mut self, _: GetWorkers, _: &mut Context<Self>) -> Self::Result {
        MessageResult(
            self.state
                .workers()
                .filter_map(|(id, slots)| {
                    self.workers
                        .get(&id)
                        .map(|w| (WorkerSlots { worker: id, slots }, w.data_addr.clone()))
                })
                .collect(),
        )
    }
}
