//! The worker's core, free of sockets, threads and clocks: which subtasks wait for their
//! remote inputs, which fetches run for them, and when a subtask may go to the compute pool.
//!
//! Compute threads never touch the network. A subtask whose inputs are all on this worker
//! goes to the pool at once (the hot path of trivial subtasks costs nothing here). One with
//! inputs on peers waits in a deepest-first queue until it may fetch: at most `window`
//! subtasks fetch or hold fetched inputs at a time, so prefetching (the supervisor keeps
//! `slots × worker_prefetch` subtasks in flight) never holds more than a few subtasks' inputs.
//! Its fetches (one per peer holding its inputs, one per other task's result it reads) run on
//! the actor's runtime ([`super::fetch`], bounded by `worker.fetch_timeout_ms`); when the
//! last one lands the subtask starts with what they brought. The first failure fails the
//! subtask with its typed error and cancels its other fetches. Cancellation, forgetting a
//! task and draining drop what waits and cancel what fetches.
//!
//! Fetched bytes count against `worker.memory_limit` from before they are asked for: a
//! subtask fetches only once its [`Room`] (the worker's ledger) reserved the bytes of its
//! remote inputs, projected from the graph; bytes that land beyond that reservation (a
//! shuffle piece has no projection) are added as they land. The reservation stays counted
//! (the ledger's `transit_bytes`) until the subtask starts, when it becomes part of the
//! subtask's own lease ([`CoreOut::Start`]'s `transit`), or until it is dropped. Without it a
//! worker held a waiting subtask's fetched inputs (and their frames) outside the accounting,
//! and its RSS passed the limit by more than 200 MB on a rechunk. When the room refuses, the
//! subtask stays first in line and the worker asks again later ([`WorkerCore::retry`]); the
//! room always grants a subtask that would be alone in the window once nothing runs and
//! nothing is left to spill, so a worker never waits for itself.
//!
//! Decisions go to `outbox` ([`CoreOut`]); the actor carries them out. `D` is the fetched
//! data (the worker's `Arc<ArrayData>`; anything in tests).

use crate::depth_queue::DepthQueue;
use crate::protocol::{RunSubtask, SubtaskError};
use ares_core::ids::{ChunkIdx, SubtaskIdx, TaskId, WorkerId};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// One fetch in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FetchId(pub u64);

/// A remote chunk a subtask reads: chunk `source` of task `from`, held by `worker`, used as
/// chunk `member` of the subtask (the same chunk for the task's own inputs; a `FetchChunk`
/// member for another task's result).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Need {
    pub worker: WorkerId,
    pub from: TaskId,
    pub source: ChunkIdx,
    pub member: ChunkIdx,
    /// Its projected bytes (0 when unknown before it exists).
    pub bytes: u64,
}

/// Fetched data's size in memory.
pub trait Held {
    fn held_bytes(&self) -> u64;
}

impl Held for std::sync::Arc<ares_core::array::ArrayData> {
    fn held_bytes(&self) -> u64 {
        self.nbytes() as u64
    }
}

/// Where fetched bytes are reserved (the worker's ledger, a budget in tests).
pub trait Room {
    /// Reserves `bytes` for one subtask's fetches; `alone`: no other subtask fetches or holds
    /// fetched inputs here. False: not now (ask again later).
    fn reserve(&mut self, bytes: u64, alone: bool) -> bool;
    /// Bytes landed beyond what was reserved.
    fn grow(&mut self, bytes: u64);
    /// A subtask that will not start gives its bytes back.
    fn release(&mut self, bytes: u64);
}

/// No limit: every reservation is granted (tests of the other decisions).
#[derive(Debug, Default)]
pub struct Unbounded;

impl Room for Unbounded {
    fn reserve(&mut self, _: u64, _: bool) -> bool {
        true
    }
    fn grow(&mut self, _: u64) {}
    fn release(&mut self, _: u64) {}
}

/// What the worker should do.
#[derive(Debug, PartialEq)]
pub enum CoreOut<D> {
    /// Read `chunks` of task `from` from `worker` for a subtask of `task`; report with
    /// [`WorkerCore::fetched`].
    Fetch {
        id: FetchId,
        task: TaskId,
        worker: WorkerId,
        from: TaskId,
        chunks: Vec<ChunkIdx>,
    },
    /// Drop a fetch in flight (its subtask failed or was cancelled).
    CancelFetch(FetchId),
    /// Run the subtask on the pool with these fetched chunks (by member); `transit` bytes
    /// are counted for them in the room, to be taken into the subtask's lease when it starts
    /// (or released if it does not).
    Start {
        task: TaskId,
        run: RunSubtask,
        fetched: FxHashMap<ChunkIdx, D>,
        transit: u64,
        /// How long its fetches took, from the first sent to the last landed (0: every
        /// input was here), for the dashboard's task stream.
        fetch_us: u64,
    },
    /// Report the subtask failed without running.
    Fail {
        task: TaskId,
        subtask: SubtaskIdx,
        error: SubtaskError,
    },
}

struct Fetching<D> {
    run: RunSubtask,
    /// When its fetches were sent.
    since: std::time::Instant,
    /// Per fetch still out: which member each requested chunk becomes.
    pending: BTreeMap<FetchId, Vec<(ChunkIdx, ChunkIdx)>>,
    fetched: FxHashMap<ChunkIdx, D>,
    /// Bytes counted in the room for this subtask: its reservation, or what landed if more.
    counted: u64,
    landed: u64,
}

type Key = (TaskId, SubtaskIdx);

pub struct WorkerCore<D, R = Unbounded> {
    room: R,
    /// The first waiting subtask was refused room: [`WorkerCore::retry`] asks again.
    blocked: bool,
    window: usize,
    /// Subtasks fetching, or started with fetched inputs and not yet reported.
    in_window: usize,
    waiting: DepthQueue<(TaskId, RunSubtask, Vec<Need>)>,
    fetching: FxHashMap<Key, Fetching<D>>,
    owner: FxHashMap<FetchId, Key>,
    /// Started with fetched inputs: they leave the window when they report.
    started: rustc_hash::FxHashSet<Key>,
    next_fetch: u64,
    /// After SIGTERM: nothing more fetches; subtasks that would are handed back.
    draining: bool,
    pub outbox: Vec<CoreOut<D>>,
}

impl<D: Held> WorkerCore<D> {
    /// At most `window` subtasks fetch or hold fetched inputs at once (at least 1), with no
    /// memory limit.
    pub fn new(window: usize) -> Self {
        Self::with_room(window, Unbounded)
    }
}

impl<D: Held, R: Room> WorkerCore<D, R> {
    /// At most `window` subtasks fetch or hold fetched inputs at once (at least 1), each only
    /// once `room` reserved its remote inputs' bytes.
    pub fn with_room(window: usize, room: R) -> Self {
        Self {
            room,
            blocked: false,
            window: window.max(1),
            in_window: 0,
            waiting: DepthQueue::default(),
            fetching: FxHashMap::default(),
            owner: FxHashMap::default(),
            started: Default::default(),
            next_fetch: 0,
            draining: false,
            outbox: Vec::new(),
        }
    }

    /// A subtask to run; `needs` are its inputs not on this worker.
    pub fn accept(&mut self, task: TaskId, run: RunSubtask, needs: Vec<Need>) {
        if needs.is_empty() {
            let fetched = FxHashMap::default();
            let transit = 0;
            self.outbox.push(CoreOut::Start {
                task,
                run,
                fetched,
                transit,
                fetch_us: 0,
            });
            return;
        }
        if self.draining {
            self.outbox.push(CoreOut::Fail {
                task,
                subtask: run.subtask,
                error: SubtaskError::NotRun("the worker is draining".into()),
            });
            return;
        }
        self.waiting.push(run.depth, (task, run, needs));
        self.fill_window();
    }

    /// True while the first waiting subtask waits for room: call [`WorkerCore::retry`]
    /// after a while (or when memory was freed).
    pub fn blocked(&self) -> bool {
        self.blocked
    }

    /// Asks the room again for the subtasks waiting for it.
    pub fn retry(&mut self) {
        self.fill_window();
    }

    fn fill_window(&mut self) {
        self.blocked = false;
        while self.in_window < self.window && !self.draining {
            let Some((_, _, needs)) = self.waiting.peek() else {
                return;
            };
            let bytes: u64 = needs.iter().map(|n| n.bytes).sum();
            if !self.room.reserve(bytes, self.in_window == 0) {
                self.blocked = true;
                return;
            }
            let (task, run, needs) = self.waiting.pop().expect("peeked");
            self.in_window += 1;
            let mut groups: BTreeMap<(WorkerId, TaskId), Vec<(ChunkIdx, ChunkIdx)>> =
                BTreeMap::new();
            for n in needs {
                groups
                    .entry((n.worker, n.from))
                    .or_default()
                    .push((n.source, n.member));
            }
            let key = (task, run.subtask);
            let mut pending = BTreeMap::new();
            for ((worker, from), pairs) in groups {
                self.next_fetch += 1;
                let id = FetchId(self.next_fetch);
                let chunks = pairs.iter().map(|p| p.0).collect();
                self.owner.insert(id, key);
                pending.insert(id, pairs);
                self.outbox.push(CoreOut::Fetch {
                    id,
                    task,
                    worker,
                    from,
                    chunks,
                });
            }
            let fetched = FxHashMap::default();
            self.fetching.insert(
                key,
                Fetching {
                    run,
                    since: std::time::Instant::now(),
                    pending,
                    fetched,
                    counted: bytes,
                    landed: 0,
                },
            );
        }
    }

    /// A fetch ended: its chunks (by source chunk), or the error its subtask fails with.
    pub fn fetched(&mut self, id: FetchId, result: Result<Vec<(ChunkIdx, D)>, SubtaskError>) {
        let Some(key) = self.owner.remove(&id) else {
            return; // cancelled meanwhile
        };
        let Some(f) = self.fetching.get_mut(&key) else {
            return;
        };
        let pairs = f.pending.remove(&id).unwrap_or_default();
        let error = match result {
            Err(e) => Some(e),
            Ok(data) => {
                f.landed += data.iter().map(|(_, d)| d.held_bytes()).sum::<u64>();
                if f.landed > f.counted {
                    self.room.grow(f.landed - f.counted);
                    f.counted = f.landed;
                }
                let mut by_source: FxHashMap<ChunkIdx, D> = data.into_iter().collect();
                let mut missing = None;
                for (source, member) in pairs {
                    match by_source.remove(&source) {
                        Some(d) => {
                            f.fetched.insert(member, d);
                        }
                        None => missing = Some(source),
                    }
                }
                missing.map(|c| SubtaskError::Fetch(format!("the peer did not send chunk {c}")))
            }
        };
        if let Some(error) = error {
            self.drop_fetching(key);
            self.outbox.push(CoreOut::Fail {
                task: key.0,
                subtask: key.1,
                error,
            });
        } else if f.pending.is_empty() {
            let f = self.fetching.remove(&key).expect("present above");
            self.started.insert(key);
            self.outbox.push(CoreOut::Start {
                task: key.0,
                run: f.run,
                fetched: f.fetched,
                transit: f.counted,
                fetch_us: u64::try_from(f.since.elapsed().as_micros()).unwrap_or(u64::MAX),
            });
        }
        self.fill_window();
    }

    /// Forgets a fetching subtask, cancelling its fetches; frees its place in the window.
    fn drop_fetching(&mut self, key: Key) {
        if let Some(f) = self.fetching.remove(&key) {
            self.room.release(f.counted);
            for id in f.pending.into_keys() {
                self.owner.remove(&id);
                self.outbox.push(CoreOut::CancelFetch(id));
            }
            self.in_window -= 1;
        }
    }

    /// A subtask reported (or was cancelled on the pool): its place in the window frees.
    pub fn reported(&mut self, task: TaskId, subtask: SubtaskIdx) {
        if self.started.remove(&(task, subtask)) {
            self.in_window -= 1;
            self.fill_window();
        }
    }

    /// Drops subtasks that wait or fetch; true for each one that was here (not yet on the
    /// pool), whose cancellation is then complete.
    pub fn cancel(&mut self, task: TaskId, subtask: SubtaskIdx) -> bool {
        let key = (task, subtask);
        let mut found = false;
        self.waiting.retain(|(t, r, _)| {
            let hit = *t == task && r.subtask == subtask;
            found |= hit;
            !hit
        });
        if self.fetching.contains_key(&key) {
            self.drop_fetching(key);
            found = true;
        }
        self.fill_window();
        found
    }

    /// Drops everything of a task (it is forgotten).
    pub fn forget(&mut self, task: TaskId) {
        self.waiting.retain(|(t, _, _)| *t != task);
        let keys: Vec<Key> = self
            .fetching
            .keys()
            .filter(|k| k.0 == task)
            .copied()
            .collect();
        for key in keys {
            self.drop_fetching(key);
        }
        let before = self.started.len();
        self.started.retain(|k| k.0 != task);
        self.in_window -= before - self.started.len();
        self.fill_window();
    }

    /// SIGTERM: every subtask not yet on the pool is handed back (not run).
    pub fn drain(&mut self) {
        let mut back: Vec<Key> = self.fetching.keys().copied().collect();
        back.sort_unstable();
        for key in &back {
            self.drop_fetching(*key);
        }
        back.extend(self.waiting.take_all().map(|(t, r, _)| (t, r.subtask)));
        self.draining = true;
        for (task, subtask) in back {
            let error = SubtaskError::NotRun("the worker is draining".into());
            self.outbox.push(CoreOut::Fail {
                task,
                subtask,
                error,
            });
        }
    }

    /// Where fetched bytes are reserved.
    pub fn room(&self) -> &R {
        &self.room
    }

    /// (waiting, fetching) subtasks, for status and tests.
    pub fn load(&self) -> (usize, usize) {
        (self.waiting.len(), self.fetching.len())
    }
}

#[cfg(test)]
mod tests;
