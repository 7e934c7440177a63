//! The scheduler state's membership side: workers joining, beating, falling silent,
//! draining and leaving, with what each leaves behind to run elsewhere. As in the actor
//! (`scheduler/membership.rs`), the task side (placing, dispatching, finishing) stays in
//! the parent.

use super::{SchedulerState, WorkerState};
use ares_core::ids::{SubtaskIdx, TaskId, WorkerId};
use std::collections::BTreeMap;

impl SchedulerState {
    pub fn add_worker(&mut self, slots: usize, now_ms: u64) -> WorkerId {
        let id = WorkerId(self.next_worker);
        self.next_worker += 1;
        self.workers
            .insert(id, WorkerState::new(slots, self.prefetch, now_ms));
        let waiting = std::mem::take(&mut self.unplaced);
        self.enqueue(waiting);
        id
    }

    /// After a restart of the scheduler: `workers` (id, slots) with nothing queued or in
    /// flight, every other worker and every unplaced subtask forgotten (the tasks re-submit
    /// them). Ids keep counting from where they were.
    pub fn restart(&mut self, workers: &[(WorkerId, usize)], now_ms: u64) {
        self.unplaced.clear();
        self.outbox.clear();
        self.workers.clear();
        for (id, slots) in workers {
            self.workers
                .insert(*id, WorkerState::new(*slots, self.prefetch, now_ms));
            self.next_worker = self.next_worker.max(id.0 + 1);
        }
    }

    /// Sets a worker's `worker.memory_limit` (bytes, 0 = none).
    pub fn set_memory_limit(&mut self, worker: WorkerId, limit: u64) {
        if let Some(w) = self.workers.get_mut(&worker) {
            w.memory_limit = limit;
        }
    }

    /// Whether a worker runs clients' functions (`map_blocks`).
    pub fn set_runs_code(&mut self, worker: WorkerId, runs_code: bool) {
        if let Some(w) = self.workers.get_mut(&worker) {
            w.runs_code = runs_code;
        }
    }

    /// Every worker's memory limit (0 = none).
    pub fn memory_limits(&self) -> Vec<u64> {
        self.workers.values().map(|w| w.memory_limit).collect()
    }

    pub fn workers(&self) -> impl Iterator<Item = (WorkerId, usize)> + '_ {
        self.workers.iter().map(|(id, w)| (*id, w.slots))
    }

    pub fn heartbeat(&mut self, worker: WorkerId, now_ms: u64) {
        if let Some(w) = self.workers.get_mut(&worker) {
            w.last_seen_ms = now_ms;
            w.silent = false;
            w.suspect = false;
        }
    }

    /// Marks workers silent for longer than `after_ms` (a few heartbeats): new subtasks go
    /// elsewhere while any other worker answers, so a frozen worker collects no new work
    /// while `node_timeout_ms` runs.
    pub fn mark_silent(&mut self, now_ms: u64, after_ms: u64) {
        for w in self.workers.values_mut() {
            w.silent = now_ms.saturating_sub(w.last_seen_ms) > after_ms;
        }
    }

    /// Workers silent for longer than `after_ms` become suspect, once per silence: what they
    /// run or have queued is returned (per task) to run again elsewhere, and forgotten here,
    /// so a frozen worker's in-flight subtask waits `after_ms`, not `node_timeout_ms`.
    /// When every worker is silent, the silence is more likely the supervisor's own (it was
    /// frozen or starved): nothing is suspect then.
    pub fn suspects(&mut self, now_ms: u64, after_ms: u64) -> BTreeMap<TaskId, Vec<SubtaskIdx>> {
        let mut out: BTreeMap<TaskId, Vec<SubtaskIdx>> = BTreeMap::new();
        let quiet = |w: &WorkerState| now_ms.saturating_sub(w.last_seen_ms) > after_ms;
        if self.workers.values().all(quiet) {
            return out;
        }
        for w in self.workers.values_mut() {
            if w.suspect || now_ms.saturating_sub(w.last_seen_ms) <= after_ms {
                continue;
            }
            w.suspect = true;
            w.projected = 0;
            for ((task, s), _) in w.running.drain() {
                out.entry(task).or_default().push(s);
            }
            for q in w.queue.take_all() {
                out.entry(q.task).or_default().push(q.run.subtask);
            }
        }
        out
    }

    /// The worker drains after SIGTERM: it gets no more work; what it had queued here (not
    /// yet sent) is returned per task to run elsewhere.
    pub fn set_draining(&mut self, worker: WorkerId) -> BTreeMap<TaskId, Vec<SubtaskIdx>> {
        let mut out: BTreeMap<TaskId, Vec<SubtaskIdx>> = BTreeMap::new();
        if let Some(w) = self.workers.get_mut(&worker) {
            w.draining = true;
            for q in w.queue.take_all() {
                out.entry(q.task).or_default().push(q.run.subtask);
            }
        }
        out
    }

    /// Workers silent for longer than `timeout_ms`.
    pub fn expired(&self, now_ms: u64, timeout_ms: u64) -> Vec<WorkerId> {
        self.workers
            .iter()
            .filter(|(_, w)| now_ms.saturating_sub(w.last_seen_ms) > timeout_ms)
            .map(|(id, _)| *id)
            .collect()
    }

    /// Removes a worker; returns what it was running or had queued, per task.
    pub fn remove_worker(&mut self, worker: WorkerId) -> BTreeMap<TaskId, Vec<SubtaskIdx>> {
        let mut lost: BTreeMap<TaskId, Vec<SubtaskIdx>> = BTreeMap::new();
        if let Some(mut w) = self.workers.remove(&worker) {
            for (task, s) in w.running.into_keys() {
                lost.entry(task).or_default().push(s);
            }
            for q in w.queue.take_all() {
                lost.entry(q.task).or_default().push(q.run.subtask);
            }
        }
        for v in lost.values_mut() {
            v.sort_unstable();
        }
        lost
    }
}
