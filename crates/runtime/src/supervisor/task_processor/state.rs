//! One task's execution logic, free of actors and sockets.
//!
//! Tracks every subtask (waiting, ready, submitted, done), where each kept chunk lives and how
//! many unfinished consumers still need it. Ready subtasks reach the scheduler through a
//! window ([`window`]), not all at once. A chunk is released on its worker as soon as its last
//! consumer finishes; result chunks are held until the task is forgotten.
//!
//! When a worker dies, the chunks only it held are lost and lineage recovery re-runs what is
//! still needed ([`recovery`]). Each re-run counts against `subtask_max_retries`. A kernel
//! error fails the task with the kernel's message.
//!
//! Outcomes are typed ([`SubtaskError`]): a fetch failure re-queues the subtask; a peer that
//! did not answer within `worker.fetch_timeout_ms` is also dropped from this task's chunk
//! locations at once (its chunks are recomputed elsewhere, without waiting for
//! `node_timeout_ms`) and reported ([`TaskOut::PeerUnreachable`]) so the scheduler stops
//! using it.

use crate::protocol::{SubtaskError, SubtaskReport};
use crate::supervisor::scheduler::state::ReadySubtask;
use ares_core::graph::{shuffle, SubtaskGraph};
use ares_core::ids::{ChunkIdx, SubtaskIdx, WorkerId};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubState {
    /// Some input is missing.
    Waiting,
    Submitted,
    Done,
    /// Its inputs are there; queued here until the window lets it go to the scheduler.
    Ready,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TaskOut {
    Submit(Vec<ReadySubtask>),
    /// Chunks to delete, per worker.
    Release(BTreeMap<WorkerId, Vec<ChunkIdx>>),
    /// A worker did not serve inputs within the fetch timeout: treat it as dead.
    PeerUnreachable(WorkerId, String),
    /// The task ended.
    Finished(TaskEnd),
}

/// How a task ended: decided on the variant, never on the message's text.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskEnd {
    /// Every subtask finished.
    Succeeded,
    /// The message says which subtask and why.
    Failed(String),
    Cancelled,
}

pub struct TaskState {
    pub graph: Arc<SubtaskGraph>,
    state: Vec<SubState>,
    location: Vec<Option<(WorkerId, u64)>>,
    refs: Vec<u32>,
    attempts: Vec<u32>,
    /// The sum of `attempts`, kept as they grow: read after every report batch.
    retries: u32,
    /// Why a subtask last had to run again (for the error once its retries run out): only
    /// the few that did, not a slot per subtask.
    causes: rustc_hash::FxHashMap<u32, String>,
    done: usize,
    max_retries: u32,
    ended: bool,
    pub outbox: Vec<TaskOut>,
    /// Shuffle proxies ([`shuffle`]): virtual chunks, located while all their mappers are.
    proxies: Vec<ChunkIdx>,
    /// Proxies whose pieces were released (after their last reducer): running such a proxy
    /// again needs every one of its mappers again.
    drained: rustc_hash::FxHashSet<u32>,
    /// Ready subtasks not yet handed to the scheduler, deepest first ([`window`]).
    queue: crate::depth_queue::DepthQueue<u32>,
    /// Subtasks handed to the scheduler and not yet reported.
    in_flight: usize,
    /// Most subtasks handed to the scheduler at once.
    window: usize,
    /// The whole graph is here (false while a streamed graph still grows: [`growth`]).
    sealed: bool,
    /// Chunks later parts of a growing graph read, held until the seal.
    held: Vec<ChunkIdx>,
    /// How many subtasks a growing graph is expected to have in all.
    expected_subtasks: usize,
    /// Some chunk calls a user's function (`map_blocks`): only then does a ready subtask
    /// look at its members for one (a streamed graph's later parts never hold one).
    calls_code: bool,
}

/// Where a completed proxy "is": nowhere, it holds no data.
const PROXY_HOME: WorkerId = WorkerId(u32::MAX);

impl TaskState {
    pub fn new(graph: Arc<SubtaskGraph>, max_retries: u32) -> Self {
        let n_chunks = graph.chunks.len();
        let refs = graph.chunk_references();
        Self {
            state: vec![SubState::Waiting; graph.len()],
            location: vec![None; n_chunks],
            refs,
            attempts: vec![0; graph.len()],
            retries: 0,
            causes: Default::default(),
            done: 0,
            max_retries,
            ended: false,
            outbox: Vec::new(),
            proxies: shuffle::proxies(&graph.chunks),
            drained: Default::default(),
            queue: Default::default(),
            in_flight: 0,
            window: DEFAULT_WINDOW,
            sealed: true,
            held: Vec::new(),
            expected_subtasks: 0,
            calls_code: graph
                .chunks
                .args
                .iter()
                .any(|a| matches!(a, ares_core::ops::OpArgs::MapBlocks(_))),
            graph,
        }
    }

    /// At most `window` subtasks handed to the scheduler at once (at least one).
    pub fn with_window(mut self, window: usize) -> Self {
        self.window = window.max(1);
        self
    }

    /// Done over all subtasks (of a growing graph: over those expected when it is whole,
    /// so progress does not fall back as parts come).
    pub fn progress(&self) -> f64 {
        let total = if self.sealed {
            self.graph.len()
        } else {
            self.graph.len().max(self.expected_subtasks)
        };
        if total == 0 {
            1.0
        } else {
            self.done as f64 / total as f64
        }
    }

    /// Runs repeated after lost workers or inputs, over all subtasks.
    pub fn retries(&self) -> u32 {
        self.retries
    }

    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// Submits the subtasks that can run now (the initial ones at first).
    pub fn start(&mut self) {
        self.submit_ready();
        self.finish_if_complete();
    }

    fn inputs_available(&self, s: usize) -> bool {
        self.graph
            .inputs
            .row(s)
            .iter()
            .all(|c| self.location[*c as usize].is_some())
    }

    fn submit_ready(&mut self) {
        let ready: Vec<usize> = (0..self.graph.len())
            .filter(|s| self.state[*s] == SubState::Waiting && self.inputs_available(*s))
            .collect();
        self.submit(ready);
    }

    /// `subtasks` can run: proxies complete at once, the others are queued, and the window
    /// is filled.
    fn submit(&mut self, subtasks: Vec<usize>) {
        if self.ended {
            return;
        }
        let (proxies, subtasks): (Vec<usize>, Vec<usize>) = subtasks.into_iter().partition(|s| {
            shuffle::is_proxy_subtask(&self.graph.chunks, self.graph.members.row(*s))
        });
        if !proxies.is_empty() {
            self.complete_proxies(proxies);
        }
        self.enqueue(subtasks);
        self.fill();
    }

    /// A proxy subtask completes as soon as its mappers are done, without a worker; its
    /// reducers may then run.
    fn complete_proxies(&mut self, proxies: Vec<usize>) {
        let mut ready = Vec::new();
        for s in proxies {
            self.state[s] = SubState::Done;
            self.done += 1;
            for &c in self.graph.members.row(s) {
                self.location[c as usize] = Some((PROXY_HOME, 0));
                self.drained.remove(&c);
            }
            ready.extend(
                self.graph
                    .succs
                    .row(s)
                    .iter()
                    .map(|t| *t as usize)
                    .filter(|t| self.state[*t] == SubState::Waiting && self.inputs_available(*t)),
            );
        }
        ready.sort_unstable();
        ready.dedup();
        self.submit(ready);
    }

    /// Every reducer of `proxy` finished: its mappers' pieces are released, and the mappers'
    /// chunks once nothing else reads them.
    fn release_proxy(&mut self, proxy: ChunkIdx, release: &mut BTreeMap<WorkerId, Vec<ChunkIdx>>) {
        self.location[proxy.index()] = None;
        self.drained.insert(proxy.0);
        let chunks = &self.graph.chunks;
        for &m in chunks.inputs(proxy) {
            let Some((w, _)) = self.location[m.index()] else {
                continue;
            };
            release
                .entry(w)
                .or_default()
                .extend(shuffle::mapper_pieces(chunks, m));
            self.refs[m.index()] = self.refs[m.index()].saturating_sub(1);
            if self.refs[m.index()] == 0 {
                self.location[m.index()] = None;
                release.entry(w).or_default().push(m);
            }
        }
    }

    fn finish(&mut self, result: TaskEnd) {
        if !self.ended {
            self.ended = true;
            self.outbox.push(TaskOut::Finished(result));
        }
    }

    pub fn on_reports(&mut self, worker: WorkerId, reports: Vec<SubtaskReport>) {
        let mut release: BTreeMap<WorkerId, Vec<ChunkIdx>> = BTreeMap::new();
        let mut newly_ready = Vec::new();
        let mut retry = false;
        for report in reports {
            let s = report.subtask.index();
            if self.ended || s >= self.state.len() || self.state[s] != SubState::Submitted {
                continue; // stale: cancelled, re-queued elsewhere, or a duplicate
            }
            self.left_scheduler();
            match report.outcome {
                Ok(outputs) => {
                    self.state[s] = SubState::Done;
                    self.done += 1;
                    for (c, size) in outputs {
                        if c.index() < self.location.len() {
                            self.location[c.index()] = Some((worker, size));
                        }
                    }
                    let graph = self.graph.clone();
                    for &c in graph.inputs.row(s) {
                        self.refs[c as usize] -= 1;
                        if self.refs[c as usize] == 0 {
                            if shuffle::is_proxy(&self.graph.chunks, ChunkIdx(c)) {
                                self.release_proxy(ChunkIdx(c), &mut release);
                            } else if let Some((w, _)) = self.location[c as usize].take() {
                                release.entry(w).or_default().push(ChunkIdx(c));
                            }
                        }
                    }
                    for &t in self.graph.succs.row(s) {
                        if self.state[t as usize] == SubState::Waiting
                            && self.inputs_available(t as usize)
                        {
                            newly_ready.push(t as usize);
                        }
                    }
                }
                Err(e @ SubtaskError::Fetch(_)) => {
                    self.causes.insert(s as u32, e.to_string());
                    self.state[s] = SubState::Waiting;
                    self.attempts[s] += 1;
                    self.retries += 1;
                    retry = true;
                }
                Err(SubtaskError::PeerUnreachable {
                    worker: peer,
                    message,
                }) => {
                    self.forget_locations(peer);
                    self.outbox.push(TaskOut::PeerUnreachable(peer, message));
                    self.state[s] = SubState::Waiting;
                    self.attempts[s] += 1;
                    self.retries += 1;
                    retry = true;
                }
                Err(SubtaskError::NotRun(_)) => {
                    // A draining worker handed it back: again, not counted as a retry.
                    self.state[s] = SubState::Waiting;
                    retry = true;
                }
                Err(SubtaskError::Failed(msg)) => {
                    let id = self.graph.subtasks[s].id;
                    self.finish(TaskEnd::Failed(format!("subtask {id} failed: {msg}")));
                }
            }
        }
        if !release.is_empty() {
            self.outbox.push(TaskOut::Release(release));
        }
        newly_ready.sort_unstable();
        newly_ready.dedup();
        self.submit(newly_ready);
        if retry {
            self.recover();
        }
        self.fill();
        self.finish_if_complete();
    }

    /// The scheduler restarted and lost its queues: every subtask submitted and not yet
    /// reported is submitted again (not counted as a retry). A report from the earlier
    /// dispatch is still accepted while the subtask is submitted; its duplicate is stale.
    /// `only` limits it to those subtasks (a suspect or draining worker's).
    pub fn redrive(&mut self, only: Option<&[SubtaskIdx]>) {
        if self.ended {
            return;
        }
        let submitted: Vec<usize> = match only {
            Some(list) => list
                .iter()
                .map(|s| s.index())
                .filter(|s| *s < self.state.len())
                .collect(),
            None => (0..self.graph.len()).collect(),
        };
        for s in submitted {
            if self.state[s] != SubState::Submitted {
                continue;
            }
            // Ready again at once if its inputs are all there; else recovered below.
            self.state[s] = SubState::Waiting;
            self.left_scheduler();
        }
        self.recover();
    }

    /// Stops the task: every kept chunk is released.
    pub fn cancel(&mut self) {
        self.finish(TaskEnd::Cancelled);
        self.release_all();
    }

    /// Releases every chunk still held (results included).
    pub fn release_all(&mut self) {
        let mut release: BTreeMap<WorkerId, Vec<ChunkIdx>> = BTreeMap::new();
        for (c, loc) in self.location.iter_mut().enumerate() {
            if let Some((w, _)) = loc.take().filter(|(w, _)| *w != PROXY_HOME) {
                release.entry(w).or_default().push(ChunkIdx(c as u32));
            }
        }
        if !release.is_empty() {
            self.outbox.push(TaskOut::Release(release));
        }
    }

    pub fn states(&self) -> &[SubState] {
        &self.state
    }

    pub fn state_of(&self, s: SubtaskIdx) -> SubState {
        self.state[s.index()]
    }
}

mod growth;

mod recovery;

mod ready;

mod results;

mod window;
pub use window::DEFAULT_WINDOW;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod growth_tests;
