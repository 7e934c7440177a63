//! Read-only views of a task for status pages and later tasks: its graphs with per-subtask
//! status, and the fetch arguments that let another task read its result.

use super::super::messages::{GetFetchArgs, GetGraph, GraphView, SubtaskView};
use super::state;
use super::TaskProcessor;
use crate::guard::guard;
use crate::protocol::TaskStatus;
use actix::prelude::*;

impl Handler<GetGraph> for TaskProcessor {
    type Result = MessageResult<GetGraph>;
    fn handle(&mut self, m: GetGraph, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "GetGraph", |act, _ctx| -> Self::Result {
            let mut view = GraphView {
                info: act.info(),
                tileable: Some(act.graph.clone()),
                subtasks_total: 0,
                by_depth: Vec::new(),
                subtasks: Vec::new(),
            };
            if let Some(st) = act.life.state() {
                let g = &st.graph;
                view.subtasks_total = g.len();
                for (s, state) in st.states().iter().enumerate() {
                    let depth = g.subtasks[s].depth as usize;
                    if view.by_depth.len() <= depth {
                        view.by_depth.resize_with(depth + 1, || [0; 4]);
                    }
                    let row = &mut view.by_depth[depth];
                    row[0] = depth;
                    row[match state {
                        state::SubState::Waiting | state::SubState::Ready => 1,
                        state::SubState::Submitted => 2,
                        state::SubState::Done => 3,
                    }] += 1;
                    if s < m.limit {
                        view.subtasks.push(SubtaskView {
                            id: g.subtasks[s].id.to_string(),
                            depth: depth as u32,
                            state: match state {
                                state::SubState::Waiting => "waiting",
                                state::SubState::Ready => "ready",
                                state::SubState::Submitted => "submitted",
                                state::SubState::Done => "done",
                            },
                            chunks: g.members.row(s).len(),
                            worker: g.subtasks[s].worker.map(|w| w.to_string()),
                            preds: g.preds.row(s).to_vec(),
                        });
                    }
                }
            }
            MessageResult(view)
        })
        .unwrap_or_else(|| {
            MessageResult(GraphView {
                info: self.info(),
                tileable: None,
                subtasks_total: 0,
                by_depth: Vec::new(),
                subtasks: Vec::new(),
            })
        })
    }
}

/// Arguments of an `Op::Fetch` reading output `0` of this task, if it succeeded and its
/// results are still held.
impl Handler<GetFetchArgs> for TaskProcessor {
    type Result = ResponseActFuture<Self, Option<ares_core::ops::OpArgs>>;
    fn handle(&mut self, m: GetFetchArgs, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "GetFetchArgs", |act, ctx| -> Self::Result {
            if let Some(later) = act.after_recompute(ctx, m, |_| None) {
                return later;
            }
            let layout = match (act.life.status(), act.life.state()) {
                (TaskStatus::Succeeded, Some(s)) => s.result_layout(m.0 as usize),
                _ => None,
            };
            let args = layout.map(|(result, chunks)| ares_core::ops::OpArgs::FetchResult {
                task: act.task,
                output: m.0,
                shape: result.shape,
                dtype: result.dtype,
                splits: result.splits,
                chunks,
            });
            Box::pin(fut::ready(args))
        })
        .unwrap_or_else(|| Box::pin(fut::ready(None)))
    }
}
