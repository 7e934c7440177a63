//! Read-only views of a task for status pages and later tasks: its graphs with per-subtask
//! status, and the fetch arguments that let another task read its result.

use super::state;
use super::TaskProcessor;
use crate::graph::TileableGraph;
use crate::protocol::{TaskInfo, TaskStatus};
use actix::prelude::*;

/// One subtask as status pages show it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SubtaskView {
    pub id: String,
    pub depth: u32,
    pub state: &'static str,
    pub chunks: usize,
    pub worker: Option<String>,
    pub preds: Vec<u32>,
}

/// A task's graphs with per-node status: counts per depth always, subtasks up to a limit.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GraphView {
    pub info: TaskInfo,
    pub tileable: Option<TileableGraph>,
    pub subtasks_total: usize,
    /// `[depth, waiting, submitted, done]` for every depth level.
    pub by_depth: Vec<[usize; 4]>,
    pub subtasks: Vec<SubtaskView>,
}

#[derive(Message)]
#[rtype(result = "GraphView")]
pub struct GetGraph {
    pub limit: usize,
}

impl Handler<GetGraph> for TaskProcessor {
    type Result = MessageResult<GetGraph>;
    fn handle(&mut self, m: GetGraph, _: &mut Context<Self>) -> Self::Result {
        let mut view = GraphView {
            info: self.info(),
            tileable: self.graph.clone(),
            subtasks_total: 0,
            by_depth: Vec::new(),
            subtasks: Vec::new(),
        };
        if let Some(st) = &self.state {
            let g = &st.graph;
            view.subtasks_total = g.len();
            for (s, state) in st.states().iter().enumerate() {
                let depth = g.subtasks[s].depth as usize;
                if view.by_depth.len() <= depth {
                    view.by_depth.resize_with(depth + 1, || [0; 4]);
                }
                let row = &mut view.by_depth[depth];
                row[0] = depth;
                row[1 + *state as usize] += 1;
                if s < m.limit {
                    view.subtasks.push(SubtaskView {
                        id: g.subtasks[s].id.to_string(),
                        depth: depth as u32,
                        state: match state {
                            state::SubState::Waiting => "waiting",
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
    }
}

/// Arguments of an `Op::Fetch` reading output `0` of this task, if it succeeded and its
/// results are still held.
#[derive(Message)]
#[rtype(result = "Option<crate::ops::OpArgs>")]
pub struct GetFetchArgs;

impl Handler<GetFetchArgs> for TaskProcessor {
    type Result = Option<crate::ops::OpArgs>;
    fn handle(&mut self, _: GetFetchArgs, _: &mut Context<Self>) -> Self::Result {
        if self.status != TaskStatus::Succeeded {
            return None;
        }
        let (result, chunks) = self.state.as_ref()?.result_layout(0)?;
        Some(crate::ops::OpArgs::FetchResult {
            task: self.task,
            output: 0,
            shape: result.shape,
            dtype: result.dtype,
            splits: result.splits,
            chunks,
        })
    }
}
