//! Preparation of a task's graph, off the actor thread: the workers and their memory limits
//! are asked first (the smallest limit is the coloring's `memory_budget`), then `prepare`
//! and the memory check run on a blocking thread, and the prepared graph (or the refusal)
//! comes back to the actor. The actor has the graph sent to
//! the workers and the task's state built on a blocking thread at the same time, then starts
//! the state.
//!
//! A large graph of the streamed kind ([`ares_core::prepare::stream`]) comes back part by part
//! instead ([`PartReady`]): the first part starts the task, each next one extends the
//! workers' graphs (through the scheduler, before its subtasks) and the task's state, so
//! subtasks run while the rest of the graph is still being expanded.

use super::state::{TaskEnd, TaskState};
use super::streaming::StreamTo;
use super::TaskProcessor;
use crate::protocol::codec;
use crate::supervisor::messages::{GetWorkers, MemoryLimits, SubmitReady};
use actix::prelude::*;
use ares_core::graph::SubtaskGraph;
use ares_core::prepare::{prepare_stage, uniform_cluster};
use std::sync::Arc;
use std::time::Instant;

/// How a preparation ended on its thread: a whole graph for the actor, or a streamed one
/// whose parts went to the actor as they came.
enum Prepared {
    Whole(Box<SubtaskGraph>, Vec<u8>, f64),
    Streamed,
}

/// Why a preparation failed, and whether it is a refusal for memory.
pub(super) type Failure = (String, bool);

/// Chunks after tiling from which preparation hands its freed memory back to the OS at once
/// (hundreds of megabytes of intermediate graphs).
pub(super) const RETURN_PAGES_FROM_CHUNKS: usize = 1_000_000;

impl TaskProcessor {
    /// Prepares the graph in the background, its reads of other tasks' results pointed at
    /// where those are now ([`super::sources`]); the task starts when it is ready.
    pub(super) fn prepare_in_background(&mut self, ctx: &mut Context<Self>) {
        let mut graph = self.graph.clone();
        let sources = std::mem::take(&mut self.holds.sources);
        let (config, task, stage) = (self.config.clone(), self.task, self.stage);
        let scheduler = self.scheduler.workers.clone();
        let memory_limits = self.scheduler.memory_limits.clone();
        let (me, stop) = (ctx.address(), self.stop_streaming.clone());
        let prepared = async move {
            if !sources.is_empty() {
                let reads = super::sources::read_outputs(&graph);
                let current = super::sources::current(sources, &reads).await;
                let moved = super::sources::refresh(&mut graph, &current);
                if moved > 0 {
                    tracing::info!(%task, moved, "reads of results recomputed on other workers follow them");
                }
            }
            if let Some(gone) = super::sources::unplaced(&graph) {
                return Err((gone, false));
            }
            let workers: Vec<_> = scheduler
                .send(GetWorkers)
                .await
                .unwrap_or_default()
                .into_iter()
                .map(|(w, _)| w)
                .collect();
            let limits = memory_limits.send(MemoryLimits).await.unwrap_or_default();
            let config = ares_core::config::TaskConfig {
                memory_budget: crate::footprint::budget(&limits),
                ..config
            };
            let workers = if workers.is_empty() {
                uniform_cluster(1, 1)
            } else {
                workers
            };
            tokio::task::spawn_blocking(move || -> Result<Prepared, Failure> {
                let start = Instant::now();
                let failed = |e: String| (e, false);
                let streamed = StreamTo {
                    me,
                    stop,
                    limits: &limits,
                    start,
                };
                if streamed.run(&graph, &config, &workers, (task, stage))? {
                    return Ok(Prepared::Streamed);
                }
                let p = prepare_stage(&graph, &config, &workers, task, stage)
                    .map_err(|e| failed(e.to_string()))?;
                crate::footprint::check_fits(&p.subtasks, &limits)
                    .map_err(|e| (e.to_string(), true))?;
                let bytes =
                    codec::encode(&p.subtasks.worker_view()).map_err(|e| failed(e.to_string()))?;
                let (graph, seconds) = (p.subtasks, start.elapsed().as_secs_f64());
                drop(p.tileable);
                // The passes' intermediate graphs of a large task are freed now, on this
                // thread; left to the allocator's purge delay they would still be resident
                // when the task starts, the supervisor's peak. A smaller task keeps them for
                // reuse: returned pages are zeroed again by the kernel when the task's state
                // and the next task touch them.
                if p.tiled_chunks >= RETURN_PAGES_FROM_CHUNKS {
                    crate::allocator::return_freed_pages();
                }
                Ok(Prepared::Whole(Box::new(graph), bytes, seconds))
            })
            .await
            .map_err(|e| (format!("preparation panicked: {e}"), false))?
        };
        ctx.spawn(
            prepared
                .into_actor(self)
                .map(|result, act, ctx| match result {
                    Ok(Prepared::Whole(graph, bytes, seconds)) => {
                        act.start_prepared(*graph, bytes, seconds, ctx)
                    }
                    Ok(Prepared::Streamed) => {}
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

    /// The graph is prepared: the scheduler registers the task and sends the graph to every
    /// worker now, so the workers decode it while this task's state is built on a blocking
    /// thread (for 200,000 subtasks, tens of milliseconds each, which would otherwise run one
    /// after the other); then the state starts and its first subtasks go out.
    fn start_prepared(
        &mut self,
        graph: SubtaskGraph,
        bytes: Vec<u8>,
        seconds: f64,
        ctx: &mut Context<Self>,
    ) {
        if self.life.is_ended() {
            return; // cancelled while it was prepared
        }
        self.prepare_seconds = Some(seconds);
        self.graph_bytes = bytes.into();
        self.scheduler.submit.do_send(SubmitReady {
            task: self.task,
            processor: ctx.address().into(),
            graph: self.graph_bytes.clone(),
            items: Vec::new(),
        });
        let max_retries = self.max_retries;
        let state = tokio::task::spawn_blocking(move || {
            let mut state = TaskState::new(Arc::new(graph), max_retries);
            state.start();
            state
        });
        ctx.spawn(state.into_actor(self).map(|state, act, ctx| match state {
            Ok(state) => {
                if act.life.prepared(state) {
                    act.preparation_over();
                    act.flush(ctx);
                }
            }
            Err(e) => {
                act.end(TaskEnd::Failed(format!(
                    "building the task's state panicked: {e}"
                )));
            }
        }));
    }
}
