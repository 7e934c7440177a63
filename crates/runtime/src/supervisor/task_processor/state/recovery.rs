//! Lineage recovery of a task after a worker is lost, as in Mars' legacy scheduler: the
//! chunks only that worker held are forgotten; a finished subtask whose lost output is still
//! needed runs again, and so, transitively, does every finished producer of an input that
//! is no longer available. Subtasks that were running there are re-queued; a subtask past
//! `subtask_max_retries` fails the task with its name, operations and last cause.
//!
//! The same holds after a task succeeded: results are kept on the workers until the task is
//! released, and a result lost with its worker is recomputed from lineage
//! ([`TaskState::reopen_for_lost_results`]) instead of leaving the task with a result no
//! one can read.

use super::*;

impl TaskState {
    /// A worker died (`why`): its chunks are gone and `requeue` (what it ran or had queued)
    /// must run elsewhere.
    pub fn on_worker_lost(&mut self, worker: WorkerId, requeue: &[SubtaskIdx], why: &str) {
        self.forget_locations(worker);
        for s in requeue {
            if self.state[s.index()] == SubState::Submitted {
                self.state[s.index()] = SubState::Waiting;
                self.left_scheduler();
                self.attempts[s.index()] += 1;
                self.retries += 1;
                self.causes.insert(
                    s.0,
                    format!("{worker} was lost while it had the subtask ({why})"),
                );
            }
        }
        self.recover();
    }

    /// A task that succeeded and then lost result chunks with a worker (`on_worker_lost`
    /// forgot them) runs again what recomputes them, as after a loss mid-run; false, and
    /// nothing changes, when the task is still running or every result is held.
    pub fn reopen_for_lost_results(&mut self) -> bool {
        if !self.ended || self.result_locations().iter().all(|(_, w)| w.is_some()) {
            return false;
        }
        self.ended = false;
        self.recover();
        true
    }

    /// The error of a subtask that ran out of retries: which subtask, its operations (a
    /// user's function by its name) and the last cause.
    pub(super) fn retries_exhausted(&self, s: usize) -> String {
        let id = self.graph.subtasks[s].id;
        let chunks = &self.graph.chunks;
        let mut ops: Vec<String> = Vec::new();
        for c in self.graph.members.row(s) {
            match chunks.args_of(ChunkIdx(*c)) {
                ares_core::ops::OpArgs::Fuse(steps) => {
                    ops.extend(steps.iter().map(|step| step.op.name().to_string()))
                }
                // A user's function is named: a crash in it (a C extension's segfault)
                // loses the worker each time.
                ares_core::ops::OpArgs::MapBlocks(call) => {
                    ops.push(format!("map_blocks of {}", call.function.name))
                }
                _ => ops.push(chunks.nodes[*c as usize].op.name().to_string()),
            }
        }
        ops.dedup();
        let cause = self
            .causes
            .get(&(s as u32))
            .map_or("unknown", String::as_str);
        format!(
            "subtask {id} ({}) had to run again {} times, over scheduling.subtask_max_retries = {}; last cause: {cause}",
            ops.join(", "),
            self.attempts[s],
            self.max_retries
        )
    }

    /// Chunks on `worker` are gone (or unreachable).
    pub(super) fn forget_locations(&mut self, worker: WorkerId) {
        for loc in self.location.iter_mut() {
            if matches!(loc, Some((w, _)) if *w == worker) {
                *loc = None;
            }
        }
        // A proxy is only as available as all of its mappers.
        for p in &self.proxies {
            let chunks = &self.graph.chunks;
            if chunks
                .inputs(*p)
                .iter()
                .any(|m| self.location[m.index()].is_none())
            {
                self.location[p.index()] = None;
            }
        }
    }

    /// Re-runs finished producers of every chunk that is needed but no longer exists, then
    /// submits whatever can run.
    pub(super) fn recover(&mut self) {
        if self.ended {
            return;
        }
        // A queued subtask whose inputs went with the worker waits for them again.
        for s in 0..self.graph.len() {
            if self.state[s] == SubState::Ready && !self.inputs_available(s) {
                self.state[s] = SubState::Waiting;
            }
        }
        let mut work: Vec<usize> = (0..self.graph.len())
            .filter(|s| self.state[*s] == SubState::Waiting)
            .collect();
        // Results that were computed and lost need their producers too, and so do chunks
        // held for parts of a growing graph still to come.
        let results = self.graph.chunks.results.iter().flat_map(|r| &r.chunks);
        for c in results.chain(&self.held) {
            let p = self.graph.owner[c.index()].index();
            if self.state[p] == SubState::Done && self.location[c.index()].is_none() {
                work.push(p);
            }
        }
        while let Some(s) = work.pop() {
            if self.state[s] == SubState::Done {
                // Runs again: its inputs are needed again.
                self.state[s] = SubState::Waiting;
                self.done -= 1;
                self.attempts[s] += 1;
                self.retries += 1;
                self.causes
                    .insert(s as u32, "its output was lost with its worker".into());
                if shuffle::is_proxy_subtask(&self.graph.chunks, self.graph.members.row(s)) {
                    // Its hold on the mappers is released with the pieces, never re-taken.
                    for &c in self.graph.members.row(s) {
                        self.location[c as usize] = None;
                        // Its pieces are gone: every mapper runs again (a mapper chunk still
                        // held for another reader is recomputed with them).
                        if self.drained.contains(&c) {
                            for m in self.graph.chunks.inputs(ChunkIdx(c)) {
                                self.location[m.index()] = None;
                            }
                        }
                    }
                } else {
                    for &c in self.graph.inputs.row(s) {
                        self.refs[c as usize] += 1;
                    }
                }
            }
            if self.attempts[s] > self.max_retries {
                let error = self.retries_exhausted(s);
                self.finish(TaskEnd::Failed(error));
                return;
            }
            for &c in self.graph.inputs.row(s) {
                let p = self.graph.owner[c as usize].index();
                if self.location[c as usize].is_none() && self.state[p] == SubState::Done {
                    work.push(p);
                }
            }
        }
        self.submit_ready();
    }
}
