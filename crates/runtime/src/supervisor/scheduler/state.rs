//! The scheduler's logic, free of actors, sockets and clocks (time is passed in).
//!
//! One queue per worker ordered by `(depth, sequence)` ([`DepthQueue`]): deeper subtasks
//! first, since finishing them frees intermediate data early, and among equals the earlier
//! enqueued.
//! A subtask goes to the worker preparation assigned it to if that worker is alive. Otherwise
//! it goes to the worker holding most of its input bytes, unless that worker is saturated
//! while another one idles; among workers holding as many, to the one its siblings' outputs
//! are on (so their consumer reads them there), then to the least loaded. A worker gets at
//! most `slots × prefetch` subtasks in flight: it queues them deepest-first and runs at most
//! `slots` at once, so trivial subtasks do not each wait for a round trip (Mars issue #2631:
//! queueing on workers). A subtask calling a client's function (`map_blocks`) goes only to
//! workers that run code (their hello's `runs_code`). Decisions
//! are written to `outbox`; one `dispatch` after a batch of events coalesces them into one
//! RunSubtasks per worker and task.

use crate::depth_queue::DepthQueue;
use crate::protocol::RunSubtask;
use ares_core::ids::{ChunkIdx, SubtaskIdx, TaskId, WorkerId};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// A subtask whose inputs are all available.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadySubtask {
    pub task: TaskId,
    pub subtask: SubtaskIdx,
    pub depth: u32,
    /// Worker chosen by initial assignment.
    pub preferred: Option<WorkerId>,
    /// Every input chunk, the worker holding it and its size.
    pub inputs: Vec<(ChunkIdx, WorkerId, u64)>,
    /// The worker holding most of what its consumers read from its siblings (set when its
    /// inputs are on several workers): among workers holding as many input bytes, it goes
    /// there, so the consumer finds its inputs together.
    pub siblings: Option<WorkerId>,
    /// Projected bytes while it runs (inputs, chunks computed, scratch).
    pub memory: u64,
    /// It calls a client's function (`map_blocks`): only workers that run code take it.
    pub needs_code: bool,
}

#[derive(Debug, PartialEq, Eq)]
struct Queued {
    task: TaskId,
    run: RunSubtask,
    memory: u64,
}

#[derive(Debug)]
struct WorkerState {
    slots: usize,
    /// Subtasks that may be in flight on the worker: slots × prefetch.
    capacity: usize,
    /// In flight, with each one's projected memory.
    running: FxHashMap<(TaskId, SubtaskIdx), u64>,
    queue: DepthQueue<Queued>,
    /// `worker.memory_limit` (0 = none) and the projected memory of what is in flight: no
    /// subtask starts that would take the sum over the limit, unless nothing is in flight.
    memory_limit: u64,
    projected: u64,
    last_seen_ms: u64,
    /// Silent for a few heartbeats (frozen, overloaded): given no new work while another
    /// worker answers; cleared by its next heartbeat.
    silent: bool,
    /// Suspect (silent for `suspect_after_ms`): its work was handed to others once; cleared
    /// by its next heartbeat.
    suspect: bool,
    /// Draining after SIGTERM: never given work again.
    draining: bool,
    /// Runs clients' functions: the only workers given subtasks that call them.
    runs_code: bool,
}

impl WorkerState {
    fn new(slots: usize, prefetch: usize, now_ms: u64) -> Self {
        Self {
            slots: slots.max(1),
            capacity: slots.max(1) * prefetch,
            running: FxHashMap::default(),
            queue: DepthQueue::default(),
            memory_limit: 0,
            projected: 0,
            last_seen_ms: now_ms,
            silent: false,
            suspect: false,
            draining: false,
            runs_code: false,
        }
    }
    fn load(&self) -> f64 {
        (self.running.len() + self.queue.len()) as f64 / self.slots as f64
    }
    fn idle(&self) -> bool {
        self.running.len() < self.slots && self.queue.is_empty()
    }
    fn saturated(&self) -> bool {
        self.running.len() >= self.capacity
    }
    fn fits(&self, memory: u64) -> bool {
        self.memory_limit == 0
            || self.running.is_empty()
            || self.projected + memory <= self.memory_limit
    }
    fn ended(&mut self, key: (TaskId, SubtaskIdx)) {
        if let Some(m) = self.running.remove(&key) {
            self.projected -= m.min(self.projected);
        }
    }
}

/// What the scheduler decided.
#[derive(Clone, Debug, PartialEq)]
pub enum SchedOut {
    Run {
        worker: WorkerId,
        task: TaskId,
        subtasks: Vec<RunSubtask>,
    },
    Cancel {
        worker: WorkerId,
        task: TaskId,
        subtasks: Vec<SubtaskIdx>,
    },
}

#[derive(Debug, Default)]
pub struct SchedulerState {
    workers: BTreeMap<WorkerId, WorkerState>,
    /// Subtasks waiting for any worker to exist.
    unplaced: Vec<ReadySubtask>,
    next_worker: u32,
    max_batch: usize,
    prefetch: usize,
    pub outbox: Vec<SchedOut>,
}

impl SchedulerState {
    /// `prefetch`: subtasks in flight per slot (1 = only what can run right away).
    pub fn new(max_batch: usize, prefetch: usize) -> Self {
        Self {
            max_batch: max_batch.max(1),
            prefetch: prefetch.max(1),
            ..Self::default()
        }
    }

    fn place(&self, item: &ReadySubtask) -> Option<WorkerId> {
        // Silent workers are candidates only when every worker is silent; draining ones
        // never are.
        let all_silent = self.workers.values().all(|w| w.silent || w.draining);
        // A subtask calling a client's function goes only where code runs; with no such
        // worker, to any: it fails there at once, naming `python -m ares worker`, instead
        // of waiting for a worker that may never come.
        let code_ok = !item.needs_code || self.workers.values().all(|w| !w.runs_code);
        let usable = |id: &WorkerId| {
            self.workers.get(id).is_some_and(|w| {
                !w.draining && (all_silent || !w.silent) && (code_ok || w.runs_code)
            })
        };
        if let Some(p) = item.preferred.filter(usable) {
            return Some(p);
        }
        let least_loaded = || {
            self.workers
                .iter()
                .filter(|(id, _)| usable(id))
                .min_by(|a, b| a.1.load().total_cmp(&b.1.load()))
                .map(|(id, _)| *id)
        };
        let mut bytes: FxHashMap<WorkerId, u64> = FxHashMap::default();
        for (_, w, size) in &item.inputs {
            if usable(w) {
                *bytes.entry(*w).or_default() += size;
            }
        }
        let best = bytes
            .iter()
            .max_by(|a, b| {
                a.1.cmp(b.1)
                    .then_with(|| (item.siblings == Some(*a.0)).cmp(&(item.siblings == Some(*b.0))))
                    .then_with(|| {
                        self.workers[b.0]
                            .load()
                            .total_cmp(&self.workers[a.0].load())
                    })
                    .then(b.0.cmp(a.0))
            })
            .map(|(w, _)| *w);
        match best {
            Some(w) if self.workers[&w].saturated() => self
                .workers
                .iter()
                .find(|(id, s)| s.idle() && usable(id))
                .map(|(id, _)| *id)
                .or(Some(w)),
            Some(w) => Some(w),
            None => least_loaded(),
        }
    }

    pub fn enqueue(&mut self, items: Vec<ReadySubtask>) {
        for item in items {
            let Some(worker) = self.place(&item) else {
                self.unplaced.push(item);
                continue;
            };
            let run = RunSubtask {
                subtask: item.subtask,
                depth: item.depth,
                inputs: item.inputs.iter().map(|(c, w, _)| (*c, *w)).collect(),
            };
            let queued = Queued {
                task: item.task,
                run,
                memory: item.memory,
            };
            self.workers
                .get_mut(&worker)
                .expect("placed on a live worker")
                .queue
                .push(item.depth, queued);
        }
    }

    /// Starts queued subtasks wherever slots are free.
    pub fn dispatch(&mut self) {
        for (id, w) in self.workers.iter_mut() {
            let mut batches: BTreeMap<TaskId, Vec<RunSubtask>> = BTreeMap::new();
            while w.running.len() < w.capacity {
                if !w.queue.peek().is_some_and(|q| w.fits(q.memory)) {
                    break;
                }
                let Some(q) = w.queue.pop() else { break };
                w.projected += q.memory;
                w.running.insert((q.task, q.run.subtask), q.memory);
                batches.entry(q.task).or_default().push(q.run);
            }
            for (task, runs) in batches {
                for chunk in runs.chunks(self.max_batch) {
                    self.outbox.push(SchedOut::Run {
                        worker: *id,
                        task,
                        subtasks: chunk.to_vec(),
                    });
                }
            }
        }
    }

    pub fn finished(
        &mut self,
        worker: WorkerId,
        task: TaskId,
        subtasks: impl IntoIterator<Item = SubtaskIdx>,
    ) {
        if let Some(w) = self.workers.get_mut(&worker) {
            for s in subtasks {
                w.ended((task, s));
            }
        }
    }

    /// Drops a task's queued subtasks and cancels its running ones.
    pub fn cancel_task(&mut self, task: TaskId) {
        self.unplaced.retain(|r| r.task != task);
        for (id, w) in self.workers.iter_mut() {
            w.queue.retain(|q| q.task != task);
            let running: Vec<SubtaskIdx> = w
                .running
                .keys()
                .filter(|(t, _)| *t == task)
                .map(|(_, s)| *s)
                .collect();
            if !running.is_empty() {
                for s in &running {
                    w.ended((task, *s));
                }
                self.outbox.push(SchedOut::Cancel {
                    worker: *id,
                    task,
                    subtasks: running,
                });
            }
        }
    }

    /// (running, queued) per worker, for status pages and tests.
    pub fn load(&self) -> Vec<(WorkerId, usize, usize)> {
        self.workers
            .iter()
            .map(|(id, w)| (*id, w.running.len(), w.queue.len()))
            .collect()
    }
}

mod membership;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod memory_tests;
