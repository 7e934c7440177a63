//! The Scheduler actor: worker membership and heartbeats, and the thin shell that feeds
//! [`state::SchedulerState`] and carries out its decisions on the worker links.
//!
//! Every event is applied to the state, then one `dispatch` runs, so a burst of results
//! coalesces into one scheduling pass and one RunSubtasks per worker and task.
//!
//! No wait is unbounded: with no live worker for `cluster.no_worker_timeout_ms` (counted from
//! the later of the last worker's loss and the task's first submission), every task with work
//! left fails with "no live workers for N s" instead of waiting for a worker that may never
//! come. A worker that registers in time resets the clock and takes the queued work.

pub mod state;

use super::link::{Expel, Link, Send};
use super::task_processor::{FailTask, TaskProcessor, WorkerLost};
use crate::ids::{ChunkIdx, TaskId, WorkerId};
use crate::prepare::WorkerSlots;
use crate::protocol::{SubtaskReport, ToWorker};
use crate::worker::memory::MemoryStats;
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
    memory: MemoryStats,
}

pub struct Scheduler {
    state: SchedulerState,
    workers: BTreeMap<WorkerId, WorkerEntry>,
    processors: HashMap<TaskId, (Addr<TaskProcessor>, Bytes, Instant)>,
    epoch: Instant,
    node_timeout_ms: u64,
    check_every: Duration,
    no_worker_timeout: Duration,
    /// Since when no worker has been live (`None` while one is).
    no_worker_since: Option<Instant>,
    /// Tasks already told that no worker is live (cleared when one registers).
    told_no_workers: HashSet<TaskId>,
}

impl Scheduler {
    pub fn new(
        max_batch: usize,
        prefetch: usize,
        node_timeout_ms: u64,
        heartbeat_ms: u64,
        no_worker_timeout_ms: u64,
    ) -> Self {
        Self {
            no_worker_timeout: Duration::from_millis(no_worker_timeout_ms),
            no_worker_since: Some(Instant::now()),
            told_no_workers: HashSet::new(),
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
                        if let Some((_, graph, _)) = self.processors.get(&task) {
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
        let Some(entry) = self.workers.remove(&worker) else {
            return;
        };
        // Whatever it still sends is stale (its work is re-queued): close its connection.
        entry.link.do_send(Expel(format!("declared dead: {why}")));
        tracing::warn!(%worker, "worker is dead: {why}");
        let lost = self.state.remove_worker(worker);
        if self.workers.is_empty() {
            self.no_worker_since = Some(Instant::now());
        }
        for (task, (processor, _, _)) in &self.processors {
            let subtasks = lost.get(task).cloned().unwrap_or_default();
            processor.do_send(WorkerLost {
                worker,
                subtasks,
                why: why.to_string(),
            });
        }
        self.broadcast_peers();
        self.dispatch();
    }
}

impl Actor for Scheduler {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(self.check_every, |act, _| {
            let now = act.now_ms();
            for w in act.state.expired(now, act.node_timeout_ms) {
                act.remove_worker(w, "missed its heartbeats");
            }
            act.state
                .mark_silent(now, 3 * act.check_every.as_millis() as u64);
            act.fail_without_workers();
        });
    }
}

impl Scheduler {
    /// Fails the tasks that have waited `no_worker_timeout` with no live worker.
    fn fail_without_workers(&mut self) {
        let Some(since) = self.no_worker_since else {
            return;
        };
        let limit = self.no_worker_timeout;
        let error = format!(
            "no live workers for {} s",
            limit.as_millis() as f64 / 1000.0
        );
        for (task, (processor, _, submitted)) in &self.processors {
            if since.max(*submitted).elapsed() >= limit && self.told_no_workers.insert(*task) {
                tracing::warn!(%task, "{error}");
                processor.do_send(FailTask(error.clone()));
            }
        }
    }
}

#[derive(Message)]
#[rtype(result = "WorkerId")]
pub struct RegisterWorker {
    pub link: Addr<Link>,
    pub slots: usize,
    pub data_addr: String,
    /// `worker.memory_limit` in bytes (0 = none).
    pub memory_limit: u64,
}

impl Handler<RegisterWorker> for Scheduler {
    type Result = MessageResult<RegisterWorker>;
    fn handle(&mut self, m: RegisterWorker, _: &mut Context<Self>) -> Self::Result {
        let id = self.state.add_worker(m.slots, self.now_ms());
        self.state.set_memory_limit(id, m.memory_limit);
        tracing::info!(worker = %id, slots = m.slots, data = %m.data_addr, "worker registered");
        self.no_worker_since = None;
        self.told_no_workers.clear();
        self.workers.insert(
            id,
            WorkerEntry {
                link: m.link,
                data_addr: m.data_addr,
                tasks: HashSet::new(),
                stored: (0, 0),
                memory: MemoryStats::default(),
            },
        );
        self.broadcast_peers();
        self.dispatch();
        MessageResult(id)
    }
}

/// A peer did not serve chunks within `worker.fetch_timeout_ms`: it is dead to the cluster
/// (frozen, partitioned or overloaded), so its work and chunks are recomputed elsewhere
/// without waiting for `cluster.node_timeout_ms`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct PeerUnreachable {
    pub worker: WorkerId,
    pub why: String,
}

impl Handler<PeerUnreachable> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: PeerUnreachable, _: &mut Context<Self>) {
        self.remove_worker(
            m.worker,
            &format!("a peer could not fetch from it: {}", m.why),
        );
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
    pub memory: MemoryStats,
}

impl Handler<Heartbeat> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: Heartbeat, _: &mut Context<Self>) {
        let now = self.now_ms();
        self.state.heartbeat(m.worker, now);
        if let Some(w) = self.workers.get_mut(&m.worker) {
            w.stored = (m.stored_chunks, m.stored_bytes);
            w.memory = m.memory;
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
    /// Memory accounting from the last heartbeat (limit, peak, spilled, pauses).
    pub memory: MemoryStats,
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
                    memory: w.memory,
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
        if !self.workers.contains_key(&m.worker) {
            return; // declared dead: its subtasks were re-queued
        }
        let now = self.now_ms();
        self.state.heartbeat(m.worker, now);
        self.state
            .finished(m.worker, m.task, m.reports.iter().map(|r| r.subtask));
        if let Some((p, _, _)) = self.processors.get(&m.task) {
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
            .or_insert((m.processor, m.graph, Instant::now()));
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
            self.told_no_workers.remove(&m.task);
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

/// Every live worker's `worker.memory_limit` (0 = none), for the refusal at submission of
/// subtasks that fit in none.
#[derive(Message)]
#[rtype(result = "Vec<u64>")]
pub struct MemoryLimits;

impl Handler<MemoryLimits> for Scheduler {
    type Result = MessageResult<MemoryLimits>;
    fn handle(&mut self, _: MemoryLimits, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.state.memory_limits())
    }
}
