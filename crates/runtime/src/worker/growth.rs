//! A streamed task's graph grows on the worker part by part (`ToWorker::ExtendTask`), off
//! the actor thread: copying the graph so far and decoding a part of millions of chunks
//! takes a while, and the worker keeps running the subtasks of the parts it has meanwhile.
//! Subtasks of a part still being added wait for it, in order; parts are added one after
//! the other in the order they came.

use super::{shared_graph, storage, Worker};
use crate::protocol::RunSubtask;
use actix::prelude::*;
use ares_core::ids::TaskId;
use bytes::Bytes;
use std::collections::VecDeque;

/// A task whose graph is being extended.
#[derive(Default)]
pub(super) struct Growing {
    /// Parts not yet added, in order (the first is being added).
    parts: VecDeque<Bytes>,
    /// Subtasks of parts not yet added, in the order they came.
    runs: Vec<RunSubtask>,
}

impl Worker {
    /// A part of `task`'s graph came: added now, or after the parts before it.
    pub(super) fn extend_graph(&mut self, task: TaskId, part: Bytes, ctx: &mut Context<Self>) {
        if !self.graphs.contains_key(&task) {
            tracing::error!(%task, "a part of the graph of a task never registered");
            return;
        }
        let growing = self.growing.entry(task).or_default();
        growing.parts.push_back(part);
        if growing.parts.len() == 1 {
            self.add_next_part(task, ctx);
        }
    }

    /// Adds the first waiting part of `task` on a blocking thread.
    fn add_next_part(&mut self, task: TaskId, ctx: &mut Context<Self>) {
        let (Some(graph), Some(part)) = (
            self.graphs.get(&task).cloned(),
            self.growing
                .get(&task)
                .and_then(|g| g.parts.front().cloned()),
        ) else {
            return;
        };
        let share = storage::live().len() > 1;
        let grown =
            tokio::task::spawn_blocking(move || shared_graph::extend(task, &graph, &part, share));
        ctx.spawn(grown.into_actor(self).map(move |grown, act, ctx| {
            let Some(growing) = act.growing.get_mut(&task) else {
                return; // forgotten meanwhile
            };
            growing.parts.pop_front();
            match grown.map_err(|e| e.to_string()).and_then(|g| g) {
                Ok(g) => {
                    act.graphs.insert(task, g);
                }
                Err(e) => tracing::error!(%task, "cannot extend the task's graph: {e}"),
            }
            if growing.parts.is_empty() {
                let runs = std::mem::take(&mut growing.runs);
                act.growing.remove(&task);
                act.run(task, runs, ctx);
            } else {
                act.add_next_part(task, ctx);
            }
        }));
    }

    /// Of `subtasks`, those of parts not yet added wait (returned: none); the rest run.
    pub(super) fn hold_until_added(
        &mut self,
        task: TaskId,
        subtasks: Vec<RunSubtask>,
    ) -> Vec<RunSubtask> {
        let Some(growing) = self.growing.get_mut(&task) else {
            return subtasks;
        };
        let known = self.graphs.get(&task).map_or(0, |g| g.members.rows());
        let (now, later): (Vec<_>, Vec<_>) = subtasks
            .into_iter()
            .partition(|r| r.subtask.index() < known);
        growing.runs.extend(later);
        now
    }
}
