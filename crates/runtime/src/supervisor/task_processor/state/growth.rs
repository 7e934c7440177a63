//! A streamed task's graph grows while it runs ([`ares_core::prepare::stream`]): each part
//! ([`GraphDelta`]) is appended to the graph, its subtasks wait for their inputs like any
//! other, and the task cannot succeed before the last part, the seal, came.
//!
//! Chunks a later part reads are held (one reference each) from the part that makes them
//! until the seal, whose subtasks and results then hold them: without the hold, a region
//! root whose part had finished would be released before the seal that reads it arrived.
//! A held chunk lost with its worker is recomputed at once, as a lost result is.

use super::*;
use ares_core::graph::GraphDelta;

/// Why a part of a streamed graph cannot be appended.
#[derive(Debug, thiserror::Error)]
pub enum GrowthError {
    #[error("the first part of a streamed graph has no subtasks")]
    EmptyFirstPart,
    #[error("a part of the graph came after its last part")]
    AfterSeal,
    #[error("{0}")]
    Append(#[from] ares_core::AresError),
}

impl TaskState {
    /// The state of a streamed task, from its first part; the rest comes with
    /// [`TaskState::extend`].
    pub fn streamed(first: GraphDelta, max_retries: u32) -> Result<Self, GrowthError> {
        let task = first.subtasks.first().map(|s| s.id.task);
        let task = task.ok_or(GrowthError::EmptyFirstPart)?;
        let empty = ares_core::graph::SubtaskGraph::empty(task, ares_core::ids::StageId(0));
        let mut state = Self::new(Arc::new(empty), max_retries);
        state.sealed = false;
        state.extend(first)?;
        Ok(state)
    }

    /// Whether the whole graph is here.
    pub fn is_sealed(&self) -> bool {
        self.sealed
    }

    /// Appends a part of the graph (see the module doc); its ready subtasks are queued.
    pub fn extend(&mut self, delta: GraphDelta) -> Result<(), GrowthError> {
        if self.sealed {
            return Err(GrowthError::AfterSeal);
        }
        let first_new = self.graph.len();
        let (held, sealed) = (delta.held.clone(), delta.sealed);
        if let Some(e) = delta.expected {
            self.expected_subtasks = e.subtasks as usize;
            let (subtasks, chunks) = (e.subtasks as usize, e.chunks as usize);
            self.state
                .reserve(subtasks.saturating_sub(self.state.len()));
            self.attempts
                .reserve(subtasks.saturating_sub(self.attempts.len()));
            self.location
                .reserve(chunks.saturating_sub(self.location.len()));
            self.refs.reserve(chunks.saturating_sub(self.refs.len()));
        }
        Arc::make_mut(&mut self.graph).append(delta)?;
        let (n, chunks) = (self.graph.len(), self.graph.chunks.len());
        self.state.resize(n, SubState::Waiting);
        self.attempts.resize(n, 0);
        self.location.resize(chunks, None);
        self.refs.resize(chunks, 0);
        for s in first_new..n {
            for &c in self.graph.inputs.row(s) {
                self.refs[c as usize] += 1;
            }
        }
        for c in &held {
            self.refs[c.index()] += 1;
        }
        self.held.extend(held);
        if sealed {
            self.sealed = true;
            let graph = self.graph.clone();
            for c in graph.chunks.results.iter().flat_map(|r| &r.chunks) {
                self.refs[c.index()] += 1;
            }
            // Every held chunk is now read by the seal or a result: never down to zero.
            for c in std::mem::take(&mut self.held) {
                self.refs[c.index()] = self.refs[c.index()].saturating_sub(1);
            }
        }
        if graph_has_proxies(&self.graph, first_new) {
            self.proxies = shuffle::proxies(&self.graph.chunks);
        }
        // Submits what can run. An input lost since its part ran (a held chunk on a worker
        // that died, not yet recomputed) has its producer run again: a scan of the whole
        // graph, only then.
        let lost_input = (first_new..n).any(|s| {
            self.graph.inputs.row(s).iter().any(|c| {
                let p = self.graph.owner[*c as usize].index();
                p < first_new
                    && self.location[*c as usize].is_none()
                    && self.state[p] == SubState::Done
            })
        });
        if lost_input {
            self.recover();
        } else {
            let ready: Vec<usize> = (first_new..n)
                .filter(|s| self.inputs_available(*s))
                .collect();
            self.submit(ready);
        }
        self.finish_if_complete();
        Ok(())
    }

    /// Succeeds once every subtask of the whole graph is done.
    pub(super) fn finish_if_complete(&mut self) {
        if self.sealed && self.done == self.graph.len() {
            self.finish(TaskEnd::Succeeded);
        }
    }
}

/// Whether subtasks from `first` on hold a shuffle proxy.
fn graph_has_proxies(graph: &ares_core::graph::SubtaskGraph, first: usize) -> bool {
    (first..graph.len()).any(|s| shuffle::is_proxy_subtask(&graph.chunks, graph.members.row(s)))
}
