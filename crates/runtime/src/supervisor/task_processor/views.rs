//! Read-only views of a task for status pages and later tasks: its graphs with per-subtask
//! status, and the fetch arguments that let another task read its result.

use super::super::messages::{
    ChunkView, GetFetchArgs, GetGraph, GraphView, OpProgress, SubtaskView,
};
use super::state;
use super::TaskProcessor;
use crate::guard::guard;
use crate::protocol::TaskStatus;
use actix::prelude::*;
use ares_core::graph::SubtaskGraph;
use ares_core::ids::ChunkIdx;
use ares_core::ops::registry::family_of;
use ares_core::ops::Op;
use std::collections::HashMap;

impl Handler<GetGraph> for TaskProcessor {
    type Result = MessageResult<GetGraph>;
    fn handle(&mut self, m: GetGraph, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "GetGraph", |act, _ctx| -> Self::Result {
            let mut view = GraphView::empty(act.info());
            view.tileable = Some(act.graph.clone());
            if let Some(st) = act.life.state() {
                fill(&mut view, &st.graph, st.states(), m.limit);
            }
            MessageResult(view)
        })
        .unwrap_or_else(|| MessageResult(GraphView::empty(self.info())))
    }
}

/// Counts per depth and per op over every subtask; subtasks up to `limit`, and the chunk
/// graph when the task is small (at most `limit` subtasks and `4 × limit` chunks).
fn fill(view: &mut GraphView, g: &SubtaskGraph, states: &[state::SubState], limit: usize) {
    view.subtasks_total = g.len();
    let mut op_rows: HashMap<Op, usize> = HashMap::new();
    for (s, state) in states.iter().enumerate() {
        let column = match state {
            state::SubState::Waiting | state::SubState::Ready => 0,
            state::SubState::Submitted => 1,
            state::SubState::Done => 2,
        };
        let depth = g.subtasks[s].depth as usize;
        if view.by_depth.len() <= depth {
            view.by_depth.resize_with(depth + 1, || [0; 4]);
        }
        let row = &mut view.by_depth[depth];
        row[0] = depth;
        row[column + 1] += 1;
        let op = match g.members.row(s).last() {
            Some(&last) => g.chunks.drawn_op(ChunkIdx(last)),
            None => Op::Fuse,
        };
        let at = *op_rows.entry(op).or_insert_with(|| {
            view.by_op.push(OpProgress {
                op: op.name(),
                family: family_of(op).name(),
                waiting: 0,
                submitted: 0,
                done: 0,
            });
            view.by_op.len() - 1
        });
        let p = &mut view.by_op[at];
        *[&mut p.waiting, &mut p.submitted, &mut p.done][column] += 1;
        if s < limit {
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
    if g.len() <= limit && g.chunks.len() <= limit.saturating_mul(4) {
        view.chunks = (0..g.chunks.len())
            .map(|c| {
                let idx = ChunkIdx(c as u32);
                let op = g.chunks.drawn_op(idx);
                ChunkView {
                    op: op.name(),
                    family: family_of(op).name(),
                    label: g.chunks.label(idx),
                    shape: g.chunks.shape(idx).iter().map(|&d| d as u64).collect(),
                    subtask: g.owner[c].0,
                    inputs: g.chunks.inputs(idx).iter().map(|i| i.0).collect(),
                }
            })
            .collect();
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
