//! Preparation of a task's graph, off the actor thread: the workers and their memory limits
//! are asked first, then `prepare` and the memory check run on a blocking thread, and the
//! prepared graph (or the refusal) comes back to the actor, which starts the task's state.

use super::state::{TaskEnd, TaskState};
use super::TaskProcessor;
use crate::prepare::{prepare, uniform_cluster};
use crate::protocol::codec;
use crate::supervisor::messages::{GetWorkers, MemoryLimits};
use actix::prelude::*;
use std::sync::Arc;

impl TaskProcessor {
    /// Prepares the graph in the background; the task starts when it is ready.
    pub(super) fn prepare_in_background(&mut self, ctx: &mut Context<Self>) {
        let graph = self.graph.clone();
        let (config, task) = (self.config.clone(), self.task);
        let scheduler = self.scheduler.workers.clone();
        let memory_limits = self.scheduler.memory_limits.clone();
        let prepared = async move {
            let workers: Vec<_> = scheduler
                .send(GetWorkers)
                .await
                .unwrap_or_default()
                .into_iter()
                .map(|(w, _)| w)
                .collect();
            let limits = memory_limits.send(MemoryLimits).await.unwrap_or_default();
            let workers = if workers.is_empty() {
                uniform_cluster(1, 1)
            } else {
                workers
            };
            tokio::task::spawn_blocking(move || -> Result<_, (String, bool)> {
                let start = std::time::Instant::now();
                let failed = |e: String| (e, false);
                let p =
                    prepare(&graph, &config, &workers, task).map_err(|e| failed(e.to_string()))?;
                crate::worker::memory::check_fits(&p.subtasks, &limits).map_err(|e| (e, true))?;
                let bytes =
                    codec::encode(&p.subtasks.worker_view()).map_err(|e| failed(e.to_string()))?;
                let (graph, seconds) = (p.subtasks, start.elapsed().as_secs_f64());
                drop(p.tileable);
                // The passes' intermediate graphs are freed now, on this thread; left to the
                // allocator's purge delay they would still be resident when the task starts,
                // the supervisor's peak.
                crate::allocator::return_freed_pages();
                Ok((graph, bytes, seconds))
            })
            .await
            .map_err(|e| (format!("preparation panicked: {e}"), false))?
        };
        ctx.spawn(
            prepared
                .into_actor(self)
                .map(|result, act, ctx| match result {
                    Ok((graph, bytes, seconds)) => {
                        act.prepare_seconds = Some(seconds);
                        act.graph_bytes = bytes.into();
                        let mut state = TaskState::new(Arc::new(graph), act.max_retries);
                        state.start();
                        if act.life.prepared(state) {
                            act.preparation_over();
                            act.flush(ctx);
                        }
                    }
                    // Refused for memory: the submission answers with the message.
                    Err((e, refused)) => {
                        if refused {
                            act.refused = Some(e.clone());
                        }
                        act.end(TaskEnd::Failed(e));
                    }
                }),
        );
    }
}
