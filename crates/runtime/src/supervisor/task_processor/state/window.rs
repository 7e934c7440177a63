//! The window between a task and the scheduler: ready subtasks wait in the task's own queue,
//! four bytes each, and at most `window` of them are handed to the scheduler at a time.
//!
//! Handing over every ready subtask at once gave the scheduler a placement record and a
//! queue entry for each (about 120 bytes) while only `slots × worker_prefetch` per worker can
//! run: the two million initial subtasks of a wide task held 240 MB of the supervisor's peak
//! for nothing. The scheduler still sees far more than the workers can take
//! ([`DEFAULT_WINDOW`]), so it never waits on the task, and it still orders what it has
//! deepest first; the task's queue is ordered the same way, so a deeper subtask that becomes
//! ready passes the waiting initial ones.
//!
//! Initial subtasks are bound to the worker preparation assigned them to, and that
//! assignment hands out contiguous regions. In index order a window would hold one worker's
//! region only and leave the others idle, so a batch is queued interleaved across the
//! workers it is bound to, each in proportion to its share.

use super::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Subtasks a task hands to the scheduler at once: 128 worker slots' worth at the default
/// `scheduling.worker_prefetch` of 512.
pub const DEFAULT_WINDOW: usize = 1 << 16;

impl TaskState {
    /// Queues `subtasks` (whose inputs are all there) as ready.
    pub(super) fn enqueue(&mut self, subtasks: Vec<usize>) {
        for s in self.interleaved(subtasks) {
            self.state[s] = SubState::Ready;
            self.queue.push(self.graph.subtasks[s].depth, s as u32);
        }
    }

    /// Hands ready subtasks to the scheduler, deepest first, until `window` are in flight.
    pub(super) fn fill(&mut self) {
        if self.ended {
            return;
        }
        let mut items = Vec::new();
        let mut lost_inputs = false;
        while self.in_flight < self.window {
            let Some(s) = self.queue.pop() else { break };
            let s = s as usize;
            if self.state[s] != SubState::Ready {
                continue; // queued twice (it became ready again after a loss): taken already
            }
            if !self.inputs_available(s) {
                // Recovery demotes such subtasks before they are taken; never run one blind.
                self.state[s] = SubState::Waiting;
                lost_inputs = true;
                continue;
            }
            self.state[s] = SubState::Submitted;
            self.in_flight += 1;
            items.push(self.ready_item(s));
        }
        if !items.is_empty() {
            self.outbox.push(TaskOut::Submit(items));
        }
        if lost_inputs {
            self.recover();
        }
    }

    /// A subtask handed to the scheduler came back (reported, lost, re-driven). Saturating:
    /// a count gone wrong must never wrap and close the window for good.
    pub(super) fn left_scheduler(&mut self) {
        debug_assert!(self.in_flight > 0, "more subtasks back than handed over");
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// The worker an initial subtask is bound to (none once it ran before).
    pub(super) fn bound_worker(&self, s: usize) -> Option<WorkerId> {
        (self.attempts[s] == 0)
            .then(|| self.graph.subtasks[s].worker)
            .flatten()
    }

    /// `subtasks` with those bound to different workers interleaved, each worker's in its own
    /// order and spread in proportion to its count (unbound ones count as a group of their own).
    fn interleaved(&self, subtasks: Vec<usize>) -> Vec<usize> {
        let mut groups: BTreeMap<Option<WorkerId>, Vec<usize>> = BTreeMap::new();
        for s in subtasks {
            groups.entry(self.bound_worker(s)).or_default().push(s);
        }
        if groups.len() < 2 {
            return groups.into_values().next().unwrap_or_default();
        }
        let groups: Vec<Vec<usize>> = groups.into_values().collect();
        let total: usize = groups.iter().map(Vec::len).sum();
        // Item j of a group of n sits at (j + 1/2) / n of the way: take the smallest next.
        let position = |j: usize, n: usize| (2 * j + 1) as u128 * (1u128 << 64) / (2 * n) as u128;
        let mut next: BinaryHeap<Reverse<(u128, usize)>> = groups
            .iter()
            .enumerate()
            .map(|(g, items)| Reverse((position(0, items.len()), g)))
            .collect();
        let mut taken = vec![0; groups.len()];
        let mut out = Vec::with_capacity(total);
        while let Some(Reverse((_, g))) = next.pop() {
            out.push(groups[g][taken[g]]);
            taken[g] += 1;
            if taken[g] < groups[g].len() {
                next.push(Reverse((position(taken[g], groups[g].len()), g)));
            }
        }
        out
    }
}
