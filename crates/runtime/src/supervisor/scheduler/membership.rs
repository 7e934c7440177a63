//! The Scheduler's membership side: workers registering, beating, draining, going away or
//! becoming unreachable, a dead worker's removal (its work re-queued through each task's
//! processor), the no-worker deadline, and the views of the cluster other actors ask for.
//! Task-side messages (submissions, results, releases, stops) stay in the parent module.

use super::{Scheduler, WorkerEntry};
use crate::guard::guard;
use crate::metrics;
use crate::protocol::MemoryStats;
use crate::supervisor::messages::{
    Expel, FailTask, GetClusterStatus, GetWorkers, Heartbeat, MemoryLimits, NodeStatus,
    PeerUnreachable, RegisterWorker, SchedulerHandle, WorkerDrain, WorkerGone, WorkerLost,
};
use actix::prelude::*;
use ares_core::ids::WorkerId;
use ares_core::prepare::WorkerSlots;
use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

impl Scheduler {
    pub(super) fn remove_worker(&mut self, worker: WorkerId, why: &str) {
        let Some(entry) = self.workers.remove(&worker) else {
            return;
        };
        // Whatever it still sends is stale (its work is re-queued): close its connection.
        entry
            .link
            .expel
            .do_send(Expel(format!("declared dead: {why}")));
        tracing::warn!(%worker, "worker is dead: {why}");
        let lost = self.state.remove_worker(worker);
        metrics::set_workers_live(self.workers.len());
        metrics::forget_worker(&worker.to_string());
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

    /// Fails the tasks that have waited `no_worker_timeout` with no live worker.
    pub(super) fn fail_without_workers(&mut self) {
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

impl Handler<RegisterWorker> for Scheduler {
    type Result = Option<WorkerId>;
    fn handle(&mut self, m: RegisterWorker, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "RegisterWorker", |act, _ctx| {
            let id = act.state.add_worker(m.slots, act.now_ms());
            act.state.set_memory_limit(id, m.memory_limit);
            act.state.set_runs_code(id, m.runs_code);
            tracing::info!(worker = %id, slots = m.slots, data = %m.data_addr, runs_code = m.runs_code, "worker registered");
            act.no_worker_since = None;
            act.told_no_workers.clear();
            act.workers.insert(
                id,
                WorkerEntry {
                    link: m.link,
                    slots: m.slots,
                    data_addr: m.data_addr,
                    tasks: HashSet::new(),
                    stored: (0, 0),
                    memory_limit: m.memory_limit,
                    runs_code: m.runs_code,
                    memory: MemoryStats::default(),
                },
            );
            metrics::set_workers_live(act.workers.len());
            act.broadcast_peers();
            act.dispatch();
            Some(id)
        })
        .flatten()
    }
}

impl Handler<PeerUnreachable> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: PeerUnreachable, ctx: &mut Context<Self>) {
        guard(self, ctx, "PeerUnreachable", |act, _ctx| {
            act.remove_worker(
                m.worker,
                &format!("a peer could not fetch from it: {}", m.why),
            );
        });
    }
}

impl Handler<WorkerDrain> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: WorkerDrain, ctx: &mut Context<Self>) {
        guard(self, ctx, "WorkerDrain", |act, _ctx| {
            if m.left {
                act.remove_worker(m.worker, "drained after SIGTERM and left");
            } else {
                tracing::info!(worker = %m.worker, "worker draining (SIGTERM): no new work for it");
                let requeue = act.state.set_draining(m.worker);
                act.redrive(requeue);
                act.dispatch();
            }
        });
    }
}

impl Handler<WorkerGone> for Scheduler {
    type Result = ();
    fn handle(&mut self, WorkerGone(w): WorkerGone, ctx: &mut Context<Self>) {
        guard(self, ctx, "WorkerGone", |act, _ctx| {
            act.remove_worker(w, "connection closed");
        });
    }
}

impl Handler<Heartbeat> for Scheduler {
    type Result = ();
    fn handle(&mut self, m: Heartbeat, ctx: &mut Context<Self>) {
        guard(self, ctx, "Heartbeat", |act, _ctx| {
            let now = act.now_ms();
            act.state.heartbeat(m.worker, now);
            if let Some(w) = act.workers.get_mut(&m.worker) {
                w.stored = (m.stored_chunks, m.stored_bytes);
                w.memory = m.memory;
                metrics::set_worker_held(&m.worker.to_string(), m.stored_bytes);
            }
        });
    }
}

impl Handler<GetClusterStatus> for Scheduler {
    type Result = MessageResult<GetClusterStatus>;
    fn handle(&mut self, _: GetClusterStatus, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "GetClusterStatus", |act, _ctx| {
            let slots: BTreeMap<WorkerId, usize> = act.state.workers().collect();
            let nodes = act
                .state
                .load()
                .into_iter()
                .filter_map(|(id, running, queued)| {
                    let w = act.workers.get(&id)?;
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
        })
        .unwrap_or(MessageResult(Vec::new()))
    }
}

impl Handler<GetWorkers> for Scheduler {
    type Result = MessageResult<GetWorkers>;
    fn handle(&mut self, _: GetWorkers, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "GetWorkers", |act, _ctx| {
            MessageResult(
                act.state
                    .workers()
                    .filter_map(|(id, slots)| {
                        act.workers
                            .get(&id)
                            .map(|w| (WorkerSlots { worker: id, slots }, w.data_addr.clone()))
                    })
                    .collect(),
            )
        })
        .unwrap_or(MessageResult(Vec::new()))
    }
}

impl From<Addr<Scheduler>> for SchedulerHandle {
    fn from(a: Addr<Scheduler>) -> Self {
        SchedulerHandle {
            register: a.clone().recipient(),
            heartbeat: a.clone().recipient(),
            finished: a.clone().recipient(),
            gone: a.clone().recipient(),
            drain: a.clone().recipient(),
            peer_unreachable: a.clone().recipient(),
            submit: a.clone().recipient(),
            extend: a.clone().recipient(),
            release: a.clone().recipient(),
            stop: a.clone().recipient(),
            workers: a.clone().recipient(),
            memory_limits: a.recipient(),
        }
    }
}

impl Handler<MemoryLimits> for Scheduler {
    type Result = MessageResult<MemoryLimits>;
    fn handle(&mut self, _: MemoryLimits, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.state.memory_limits())
    }
}
