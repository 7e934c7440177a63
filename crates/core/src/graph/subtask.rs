//! The subtask graph: groups of chunks that run together on one worker.
//!
//! A subtask is a small chunk subgraph; chunks it needs from other subtasks are its inputs
//! (fetched before it runs) and chunks other subtasks or the client need are its outputs
//! (kept after it runs). Everything else it computes is dropped as soon as it finishes.

use crate::error::{AresError, Result};
use crate::graph::{ChunkGraph, Csr};
use crate::ids::{ChunkIdx, StageId, SubtaskId, SubtaskIdx, TaskId, WorkerId};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subtask {
    pub id: SubtaskId,
    /// Longest path from an initial subtask; deeper subtasks are scheduled first.
    pub depth: u32,
    /// Worker chosen by initial assignment (initial subtasks only).
    pub worker: Option<WorkerId>,
}

/// What a worker needs of a task: the chunks, and each subtask's members and kept outputs.
/// Sent once per task and worker, so it leaves out what only the supervisor uses
/// (dependencies, ids, placement).
#[derive(Debug, Serialize)]
pub struct WorkerView<'a> {
    pub chunks: &'a ChunkGraph,
    pub members: &'a Csr,
    pub outputs: &'a Csr,
}

/// The decoded form of a [`WorkerView`].
#[derive(Clone, Debug, Deserialize)]
pub struct WorkerGraph {
    pub chunks: ChunkGraph,
    pub members: Csr,
    pub outputs: Csr,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubtaskGraph {
    pub task: TaskId,
    pub stage: StageId,
    /// The (fused) chunk graph the subtasks are cut from.
    pub chunks: ChunkGraph,
    /// In topological order.
    pub subtasks: Vec<Subtask>,
    /// Chunks of each subtask, in topological order.
    pub members: Csr,
    /// Chunks each subtask reads from other subtasks.
    pub inputs: Csr,
    /// Chunks each subtask must keep: read by other subtasks or part of a result.
    pub outputs: Csr,
    pub preds: Csr,
    pub succs: Csr,
    /// The subtask computing each chunk.
    pub owner: Vec<SubtaskIdx>,
}

impl SubtaskGraph {
    /// Builds subtasks from a coloring: chunks of one color form one subtask. Fails if the
    /// colors form a cycle (a coloring bug, reported rather than executed).
    pub fn from_colors(
        chunks: ChunkGraph,
        colors: &[u32],
        n_colors: usize,
        task: TaskId,
        stage: StageId,
    ) -> Result<Self> {
        let n = chunks.len();
        // Color DAG with deduplicated edges, using a per-color stamp.
        let by_color = Csr::from_edges(n_colors, (0..n as u32).map(|c| (colors[c as usize], c)));
        let mut stamp = vec![u32::MAX; n_colors];
        let mut color_preds = Csr::with_capacity(n_colors, n);
        for k in 0..n_colors {
            let mut row = Vec::new();
            for &c in by_color.row(k) {
                for inp in chunks.inputs(ChunkIdx(c)) {
                    let pk = colors[inp.index()];
                    if pk as usize != k && stamp[pk as usize] != k as u32 {
                        stamp[pk as usize] = k as u32;
                        row.push(pk);
                    }
                }
            }
            color_preds.push_row(row);
        }
        let color_succs = color_preds.transposed(n_colors);

        // Kahn's algorithm, FIFO from colors in index order: deterministic.
        let mut indeg: Vec<u32> = (0..n_colors)
            .map(|k| color_preds.row(k).len() as u32)
            .collect();
        let mut queue: VecDeque<u32> = (0..n_colors as u32)
            .filter(|&k| indeg[k as usize] == 0)
            .collect();
        let mut order = Vec::with_capacity(n_colors);
        while let Some(k) = queue.pop_front() {
            order.push(k);
            for &s in color_succs.row(k as usize) {
                indeg[s as usize] -= 1;
                if indeg[s as usize] == 0 {
                    queue.push_back(s);
                }
            }
        }
        if order.len() != n_colors {
            return Err(AresError::prepare(
                "color",
                format!(
                    "subtask groups form a cycle ({} of {n_colors} ordered)",
                    order.len()
                ),
            ));
        }
        let mut rank = vec![0u32; n_colors];
        for (i, k) in order.iter().enumerate() {
            rank[*k as usize] = i as u32;
        }

        let owner: Vec<SubtaskIdx> = colors
            .iter()
            .map(|k| SubtaskIdx(rank[*k as usize]))
            .collect();
        let mut members = Csr::with_capacity(n_colors, n);
        let mut preds = Csr::with_capacity(n_colors, color_preds.edges());
        for &k in &order {
            members.push_row(by_color.row(k as usize).iter().copied());
            let mut row: Vec<u32> = color_preds
                .row(k as usize)
                .iter()
                .map(|p| rank[*p as usize])
                .collect();
            row.sort_unstable();
            preds.push_row(row);
        }
        let succs = preds.transposed(n_colors);

        let mut subtasks = Vec::with_capacity(n_colors);
        let mut depth = vec![0u32; n_colors];
        for s in 0..n_colors {
            let d = preds
                .row(s)
                .iter()
                .map(|p| depth[*p as usize] + 1)
                .max()
                .unwrap_or(0);
            depth[s] = d;
            let id = SubtaskId::new(task, stage, s as u64).ok_or_else(|| {
                AresError::prepare("color", "too many subtasks for a 48-bit sequence")
            })?;
            subtasks.push(Subtask {
                id,
                depth: d,
                worker: None,
            });
        }

        let (inputs, outputs) = Self::boundaries(&chunks, &owner, &members);
        Ok(Self {
            task,
            stage,
            chunks,
            subtasks,
            members,
            inputs,
            outputs,
            preds,
            succs,
            owner,
        })
    }

    /// Inputs (external chunks read) and outputs (chunks read outside or returned) per subtask.
    fn boundaries(chunks: &ChunkGraph, owner: &[SubtaskIdx], members: &Csr) -> (Csr, Csr) {
        let n_sub = members.rows();
        let mut needed_outside = chunks.result_mask();
        let mut stamp = vec![u32::MAX; chunks.len()];
        let mut inputs = Csr::with_capacity(n_sub, chunks.len());
        for s in 0..n_sub {
            let mut row = Vec::new();
            for &c in members.row(s) {
                for inp in chunks.inputs(ChunkIdx(c)) {
                    if owner[inp.index()].index() != s && stamp[inp.index()] != s as u32 {
                        stamp[inp.index()] = s as u32;
                        needed_outside[inp.index()] = true;
                        row.push(inp.0);
                    }
                }
            }
            inputs.push_row(row);
        }
        let mut outputs = Csr::with_capacity(n_sub, chunks.len() / 2);
        for s in 0..n_sub {
            outputs.push_row(
                members
                    .row(s)
                    .iter()
                    .copied()
                    .filter(|c| needed_outside[*c as usize]),
            );
        }
        (inputs, outputs)
    }

    pub fn len(&self) -> usize {
        self.subtasks.len()
    }

    pub fn worker_view(&self) -> WorkerView<'_> {
        WorkerView {
            chunks: &self.chunks,
            members: &self.members,
            outputs: &self.outputs,
        }
    }

    /// Initial reference count of every chunk: one per subtask reading it, one per result
    /// slot holding it. A chunk can be deleted when its count reaches zero.
    pub fn chunk_references(&self) -> Vec<u32> {
        let mut refs = vec![0u32; self.chunks.len()];
        for c in (0..self.len()).flat_map(|s| self.inputs.row(s)) {
            refs[*c as usize] += 1;
        }
        for c in self.chunks.results.iter().flat_map(|r| &r.chunks) {
            refs[c.index()] += 1;
        }
        refs
    }

    pub fn is_empty(&self) -> bool {
        self.subtasks.is_empty()
    }

    /// Subtasks with no predecessors.
    pub fn initial(&self) -> impl Iterator<Item = SubtaskIdx> + '_ {
        (0..self.len())
            .filter(|s| self.preds.row(*s).is_empty())
            .map(|s| SubtaskIdx(s as u32))
    }

    pub fn members_of(&self, s: SubtaskIdx) -> impl Iterator<Item = ChunkIdx> + '_ {
        self.members.row(s.index()).iter().map(|c| ChunkIdx(*c))
    }
}
