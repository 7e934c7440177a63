//! The streamed side of preparation ([`ares_core::prepare::stream`]): on the preparation thread,
//! each part is checked against the workers' memory, encoded and sent to the processor as
//! soon as it is ready ([`StreamTo`]); on the actor, the first part starts the task and
//! each next one extends the workers' graphs (through the scheduler, ahead of the part's
//! subtasks) and the task's state ([`PartReady`]).

use super::preparation::Failure;
use super::state::{TaskEnd, TaskState};
use super::{guard, TaskProcessor};
use crate::config::TaskConfig;
use crate::protocol::codec;
use crate::supervisor::messages::{ExtendGraph, SubmitReady};
use actix::prelude::*;
use ares_core::graph::{GraphDelta, TileableGraph, WorkerView};
use ares_core::ids::{StageId, TaskId};
use ares_core::prepare::stream::{prepare_streamed, stream_plan};
use ares_core::prepare::WorkerSlots;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A part of a streamed graph, ready: the part, its encoded worker view and the seconds
/// since preparation began.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct PartReady {
    delta: GraphDelta,
    bytes: Vec<u8>,
    seconds: f64,
}

/// Where a streamed preparation sends its parts.
pub(super) struct StreamTo<'a> {
    pub me: Addr<TaskProcessor>,
    /// Set when the task ends: no more parts are made.
    pub stop: Arc<AtomicBool>,
    pub limits: &'a [u64],
    pub start: Instant,
}

impl StreamTo<'_> {
    /// Streams `graph` if it is of the streamed kind and large enough; false (nothing sent)
    /// when it is to be prepared whole.
    pub fn run(
        &self,
        graph: &TileableGraph,
        config: &TaskConfig,
        workers: &[WorkerSlots],
        at: (TaskId, StageId),
    ) -> Result<bool, Failure> {
        let failed = |e: String| (e, false);
        let Some(plan) = stream_plan(graph, config).map_err(|e| failed(e.to_string()))? else {
            return Ok(false);
        };
        let mut refused = None;
        let mut first = true;
        let check = |part: &ares_core::graph::SubtaskGraph| {
            crate::footprint::check_fits(part, self.limits).map_err(|e| {
                let e = e.to_string();
                refused = Some(e.clone());
                ares_core::error::AresError::prepare("memory", e)
            })
        };
        let report = prepare_streamed(&plan, config, workers, at, check, |delta| {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(false);
            }
            // The first part is a whole graph to the workers; the next ones extend it.
            let bytes = if std::mem::take(&mut first) {
                codec::encode(&WorkerView {
                    chunks: &delta.chunks,
                    members: &delta.members,
                    outputs: &delta.outputs,
                })
            } else {
                codec::encode(&delta.worker_view())
            };
            let bytes =
                bytes.map_err(|e| ares_core::error::AresError::prepare("encode", e.to_string()))?;
            let seconds = self.start.elapsed().as_secs_f64();
            let large = delta.chunks.len() >= super::preparation::RETURN_PAGES_FROM_CHUNKS;
            self.me.do_send(PartReady {
                delta,
                bytes,
                seconds,
            });
            // The passes' intermediate graphs of a large part are freed by now, on this
            // thread: handed back at once, or they stay resident while the actor appends
            // the part into fresh pages of its own.
            if large {
                crate::allocator::return_freed_pages();
            }
            Ok(true)
        });
        match (report, refused) {
            (Ok(report), _) => {
                tracing::info!(task = %at.0, ?report, "streamed preparation done");
                Ok(true)
            }
            (Err(e), None) => Err(failed(e.to_string())),
            (Err(_), Some(why)) => Err((why, true)),
        }
    }
}

impl Handler<PartReady> for TaskProcessor {
    type Result = ();
    fn handle(&mut self, m: PartReady, ctx: &mut Context<Self>) {
        guard(self, ctx, "PartReady", |act, ctx| {
            if act.life.is_ended() {
                return; // cancelled or failed meanwhile: the rest is not needed
            }
            let Some(state) = act.life.state_mut() else {
                return act.start_streamed(m, ctx);
            };
            act.scheduler.extend.do_send(ExtendGraph {
                task: act.task,
                part: m.bytes.into(),
            });
            if let Err(e) = state.extend(m.delta) {
                act.end(TaskEnd::Failed(format!("streamed preparation: {e}")));
                return;
            }
            act.flush(ctx);
        });
    }
}

impl TaskProcessor {
    /// The first part: registers the task with the scheduler (and so the workers) and
    /// starts its state, built here (a first part is small).
    fn start_streamed(&mut self, m: PartReady, ctx: &mut Context<Self>) {
        self.prepare_seconds = Some(m.seconds);
        self.graph_bytes = m.bytes.into();
        self.scheduler.submit.do_send(SubmitReady {
            task: self.task,
            processor: ctx.address().into(),
            graph: self.graph_bytes.clone(),
            items: Vec::new(),
        });
        match TaskState::streamed(m.delta, self.max_retries) {
            Ok(mut state) => {
                state.start();
                if self.life.prepared(state) {
                    self.preparation_over();
                    self.flush(ctx);
                }
            }
            Err(e) => {
                self.end(TaskEnd::Failed(format!("streamed preparation: {e}")));
            }
        }
    }
}
