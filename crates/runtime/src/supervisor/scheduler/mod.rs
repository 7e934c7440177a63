//! The Scheduler actor: worker membership and heartbeats ([`membership`]), and the thin
//! shell that feeds [`state::SchedulerState`] and carries out its decisions on the worker
//! links.
//!
//! Every event is applied to the state, then one `dispatch` runs, so a burst of results
//! coalesces into one scheduling pass and one RunSubtasks per worker and task.
//!
//! Supervised: a panic in a handler restarts the actor (see [`crate::guard`]). What survives
//! is membership: the links (worker ids, slots, addresses, which tasks each was told about)
//! and the processors of running tasks. The queues and in-flight sets are dropped, since a
//! half-done handler may have left them inconsistent, and re-derived from the processors:
//! each is told to [`Redrive`], re-submitting every subtask submitted and not yet reported.
//! A subtask that was already running still reports and is accepted; its duplicate run is
//! ignored (at worst it runs twice).
//!
//! No wait is unbounded: with no live worker for `cluster.no_worker_timeout_ms` (counted from
//! the later of the last worker's loss and the task's first submission), every task with work
//! left fails with "no live workers for N s" instead of waiting for a worker that may never
//! come. A worker that registers in time resets the clock and takes the queued work.

mod membership;
pub mod state;

// Re-exported: the web API's historical path.
use super::messages::{
    ExtendGraph, Finished, LinkHandle, Redrive, Release, Reports, Send, StopTask, SubmitReady,
    TaskHandle,
};
pub use super::messages::{GetClusterStatus, NodeStatus};
use crate::guard::{guard, Guarded};
use crate::metrics;
use crate::protocol::MemoryStats;
use crate::protocol::SubtaskError;
use crate::protocol::ToWorker;
use actix::prelude::*;
use ares_core::ids::{TaskId, WorkerId};
use bytes::Bytes;
use state::{SchedOut, SchedulerState};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

struct WorkerEntry {
    link: LinkHandle,
    slots: usize,
    data_addr: String,
    tasks: HashSet<TaskId>,
    /// (chunks, bytes) held, from the last heartbeat.
    stored: (u64, u64),
    /// `worker.memory_limit` from its hello, and its accounting from the last heartbeat.
    memory_limit: u64,
    /// It runs clients' functions (its hello's `runs_code`).
    runs_code: bool,
    memory: MemoryStats,
}

impl WorkerEntry {
    /// Sends the worker `task`'s graph, once per task: its first part and the parts that
    /// extend it so far (a streamed graph, [`ExtendGraph`]).
    fn register(&mut self, task: TaskId, parts: &[Bytes]) {
        let Some((first, rest)) = parts.split_first() else {
            return;
        };
        if self.tasks.insert(task) {
            self.link.send.do_send(Send(ToWorker::RegisterTask {
                task,
                graph: first.clone(),
            }));
            for part in rest {
                self.link.send.do_send(Send(ToWorker::ExtendTask {
                    task,
                    graph: part.clone(),
                }));
            }
        }
    }
}

pub struct Scheduler {
    state: SchedulerState,
    workers: BTreeMap<WorkerId, WorkerEntry>,
    /// Per running task: its processor, its graph's parts (one unless streamed), and when it
    /// was submitted.
    processors: HashMap<TaskId, (TaskHandle, Vec<Bytes>, Instant)>,
    epoch: Instant,
    node_timeout_ms: u64,
    suspect_after_ms: u64,
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
        suspect_after_ms: u64,
    ) -> Self {
        Self {
            suspect_after_ms,
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
            w.link.send.do_send(Send(message));
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

    /// Sends a newly registered task's graph to every worker at once, before any of its
    /// subtasks is ready: each worker decodes it while the task's state is still being
    /// built. A worker that joins later gets it with its first subtasks (`dispatch`).
    fn register_everywhere(&mut self, task: TaskId, parts: &[Bytes]) {
        for entry in self.workers.values_mut() {
            entry.register(task, parts);
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
                    match self.processors.get(&task) {
                        Some((_, graph, _)) => entry.register(task, graph),
                        None => {
                            entry.tasks.insert(task);
                        }
                    }
                    entry
                        .link
                        .send
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

    /// Has each task submit these subtasks again (not counted as retries).
    fn redrive(&self, subtasks: BTreeMap<TaskId, Vec<ares_core::ids::SubtaskIdx>>) {
        for (task, list) in subtasks {
            if let Some((p, _, _)) = self.processors.get(&task) {
                p.do_send(Redrive(Some(list)));
            }
        }
    }
}

impl Actor for Scheduler {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(self.check_every, |act, ctx| {
            guard(act, ctx, "tick", |act, _| {
                let now = act.now_ms();
                for w in act.state.expired(now, act.node_timeout_ms) {
                    act.remove_worker(w, "missed its heartbeats");
                }
                act.state
                    .mark_silent(now, 3 * act.check_every.as_millis() as u64);
                let suspect = act.state.suspects(now, act.suspect_after_ms);
                if !suspect.is_empty() {
                    let n: usize = suspect.values().map(Vec::len).sum();
                    tracing::warn!(
                        "{n} subtasks of silent workers run again elsewhere (cluster.suspect_after_ms)"
                    );
                    act.redrive(suspect);
                    act.dispatch();
                }
                act.fail_without_workers();
            });
        });
    }
}

impl Guarded for Scheduler {
    const NAME: &'static str = "Scheduler";
    fn panicked(&mut self, _: &'static str, _: &str) {}
}

impl Supervised for Scheduler {
    /// Keeps membership, drops queues and in-flight sets, and has every processor re-drive
    /// what it had submitted (see the module doc).
    fn restarting(&mut self, _: &mut Context<Self>) {
        let workers: Vec<(WorkerId, usize)> =
            self.workers.iter().map(|(id, w)| (*id, w.slots)).collect();
        self.state.restart(&workers, self.now_ms());
        for (id, w) in &self.workers {
            self.state.set_memory_limit(*id, w.memory_limit);
            self.state.set_runs_code(*id, w.runs_code);
        }
        tracing::warn!(
            workers = workers.len(),
            tasks = self.processors.len(),
            "scheduler restarted: its queues are re-driven by the tasks"
        );
        for (processor, _, _) in self.processors.values() {
            processor.do_send(Redrive(None));
        }
    }
}

impl Handler<Finished> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: Finished, ctx: &mut Context<Self>) {
        guard(self, ctx, "Finished", |act, _ctx| {
            if !act.workers.contains_key(&m.worker) {
                return; // declared dead: its subtasks were re-queued
            }
            let now = act.now_ms();
            let failed = m
                .reports
                .iter()
                .filter(|r| matches!(r.outcome, Err(SubtaskError::Failed(_))))
                .count();
            let ran = m.reports.iter().filter(|r| r.outcome.is_ok()).count();
            metrics::subtasks_reported(ran as u64, failed as u64);
            for r in &m.reports {
                if let Err(SubtaskError::PeerUnreachable { .. }) = r.outcome {
                    metrics::fetch_timeout();
                }
            }
            act.state.heartbeat(m.worker, now);
            act.state
                .finished(m.worker, m.task, m.reports.iter().map(|r| r.subtask));
            if let Some((p, _, _)) = act.processors.get(&m.task) {
                p.do_send(Reports {
                    worker: m.worker,
                    reports: m.reports,
                });
            }
            act.dispatch();
        });
    }
}

impl Handler<SubmitReady> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: SubmitReady, ctx: &mut Context<Self>) {
        guard(self, ctx, "SubmitReady", |act, _ctx| {
            if !act.processors.contains_key(&m.task) {
                let parts = vec![m.graph];
                act.register_everywhere(m.task, &parts);
                act.processors
                    .insert(m.task, (m.processor, parts, Instant::now()));
            }
            act.state.enqueue(m.items);
            act.dispatch();
        });
    }
}

impl Handler<ExtendGraph> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: ExtendGraph, ctx: &mut Context<Self>) {
        guard(self, ctx, "ExtendGraph", |act, _ctx| {
            let Some((_, parts, _)) = act.processors.get_mut(&m.task) else {
                return; // ended meanwhile
            };
            parts.push(m.part.clone());
            for entry in act.workers.values().filter(|e| e.tasks.contains(&m.task)) {
                entry.link.send.do_send(Send(ToWorker::ExtendTask {
                    task: m.task,
                    graph: m.part.clone(),
                }));
            }
        });
    }
}

impl Handler<Release> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: Release, ctx: &mut Context<Self>) {
        guard(self, ctx, "Release", |act, _ctx| {
            for (w, chunks) in m.chunks {
                act.send(
                    w,
                    ToWorker::ReleaseChunks {
                        task: m.task,
                        chunks,
                    },
                );
            }
        });
    }
}

impl Handler<StopTask> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: StopTask, ctx: &mut Context<Self>) {
        guard(self, ctx, "StopTask", |act, _ctx| {
            act.state.cancel_task(m.task);
            act.dispatch();
            if m.forget {
                act.processors.remove(&m.task);
                act.told_no_workers.remove(&m.task);
                for entry in act.workers.values_mut() {
                    if entry.tasks.remove(&m.task) {
                        entry
                            .link
                            .send
                            .do_send(Send(ToWorker::ForgetTask { task: m.task }));
                    }
                }
            }
        });
    }
}
