//! A part of a subtask graph that extends the parts before it: how a large graph reaches the
//! scheduler and the workers while it is still being expanded (streamed preparation,
//! [`crate::prepare::stream`]).
//!
//! A delta holds only what is new: chunk nodes, argument and shape entries, subtasks and
//! their rows. Every index in it is already an index of the whole graph (a new chunk `i` is
//! the graph's chunk `chunk_base + i`, an input may be a chunk of an earlier part), so
//! appending is copying; no index is rewritten. Rows of earlier subtasks never change: a
//! chunk a later part will read is kept by its subtask from the start (it is `held`), which
//! is why parts can run before the graph is complete. Only the supervisor's successor lists
//! grow backwards, rebuilt when a part reads earlier parts.

use crate::error::{AresError, Result};
use crate::graph::{ChunkGraph, Csr, Subtask, SubtaskGraph, WorkerGraph};
use crate::ids::{ChunkIdx, StageId, SubtaskId, SubtaskIdx, TaskId};
use serde::{Deserialize, Serialize};

/// Where a delta starts in the graph it extends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeltaBase {
    pub chunks: u32,
    pub subtasks: u32,
    pub args: u32,
    pub shapes: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphDelta {
    pub base: DeltaBase,
    /// The new nodes (their inputs index the whole graph), and only the new argument and
    /// shape entries; its results are the graph's once `sealed`.
    pub chunks: ChunkGraph,
    pub subtasks: Vec<Subtask>,
    pub members: Csr,
    pub inputs: Csr,
    pub outputs: Csr,
    pub preds: Csr,
    /// New chunks a later part reads: kept (not released) until the graph is sealed.
    pub held: Vec<ChunkIdx>,
    /// The last part: the graph is complete and its results are known.
    pub sealed: bool,
    /// On the first part: about how large the whole graph will be, so the graph it starts
    /// is allocated once instead of growing by copies.
    pub expected: Option<DeltaBase>,
}

/// What a worker needs of a delta (as [`super::WorkerView`] of a whole graph).
#[derive(Debug, Serialize)]
pub struct WorkerDeltaView<'a> {
    pub base: DeltaBase,
    pub chunks: &'a ChunkGraph,
    pub members: &'a Csr,
    pub outputs: &'a Csr,
}

/// The decoded form of a [`WorkerDeltaView`].
#[derive(Debug, Deserialize)]
pub struct WorkerDelta {
    pub base: DeltaBase,
    pub chunks: ChunkGraph,
    pub members: Csr,
    pub outputs: Csr,
}

impl GraphDelta {
    pub fn worker_view(&self) -> WorkerDeltaView<'_> {
        WorkerDeltaView {
            base: self.base,
            chunks: &self.chunks,
            members: &self.members,
            outputs: &self.outputs,
        }
    }

    /// The delta of `part`, a graph prepared alone whose argument and shape tables continue
    /// the whole graph's from `base`: its chunk and subtask indices (and subtask ids) move
    /// past `base`, in place; `held` (indices in `part`) are the chunks later parts read.
    /// Its results only kept chunks in `part`'s passes: they are dropped. Also returns the
    /// tables, whole, for the next part.
    pub fn from_part(
        part: SubtaskGraph,
        base: DeltaBase,
        held: &[ChunkIdx],
    ) -> Result<(Self, ChunkGraph)> {
        let (c0, s0) = (base.chunks, base.subtasks);
        let SubtaskGraph {
            task,
            stage,
            chunks,
            mut subtasks,
            mut members,
            mut inputs,
            mut outputs,
            mut preds,
            ..
        } = part;
        for (i, s) in subtasks.iter_mut().enumerate() {
            s.id = SubtaskId::new(task, stage, s0 as u64 + i as u64)
                .ok_or_else(|| AresError::prepare("stream", "too many subtasks"))?;
        }
        for rows in [&mut members, &mut inputs, &mut outputs] {
            rows.shift_targets(c0);
        }
        preds.shift_targets(s0);
        let (chunks, tables) = chunks.into_tail(base, c0);
        let delta = Self {
            base,
            chunks,
            subtasks,
            members,
            inputs,
            outputs,
            preds,
            held: held.iter().map(|c| ChunkIdx(c.0 + c0)).collect(),
            sealed: false,
            expected: None,
        };
        Ok((delta, tables))
    }

    /// Appends `next`, the delta that starts where this one ends, to this one: one part for
    /// the two (the seal goes out with the last run of regions, so the workers copy their
    /// graph once less).
    pub fn merge(&mut self, next: GraphDelta) -> Result<()> {
        let end = DeltaBase {
            chunks: self.base.chunks + self.chunks.len() as u32,
            subtasks: self.base.subtasks + self.subtasks.len() as u32,
            args: self.base.args + self.chunks.args.len() as u32,
            shapes: self.base.shapes + self.chunks.shapes_len() as u32,
        };
        if next.base != end {
            return Err(AresError::prepare(
                "stream",
                format!(
                    "a part starting at {:?} merged after one ending at {end:?}",
                    next.base
                ),
            ));
        }
        self.chunks.append_nodes(next.chunks);
        self.subtasks.extend(next.subtasks);
        self.members.extend(&next.members);
        self.inputs.extend(&next.inputs);
        self.outputs.extend(&next.outputs);
        self.preds.extend(&next.preds);
        self.held.extend(next.held);
        self.sealed |= next.sealed;
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.subtasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.subtasks.is_empty()
    }

    /// Subtasks of this part whose predecessors are all in earlier parts or none.
    pub fn reads_earlier_parts(&self) -> bool {
        let base = self.base.subtasks;
        (0..self.preds.rows()).any(|s| self.preds.row(s).iter().any(|p| *p < base))
    }
}

fn check_base(what: &str, expected: usize, got: u32) -> Result<()> {
    if expected != got as usize {
        return Err(AresError::prepare(
            "stream",
            format!("a graph part starts at {what} {got}, the graph has {expected}"),
        ));
    }
    Ok(())
}

impl SubtaskGraph {
    /// A graph with no subtasks yet, for parts to extend.
    pub fn empty(task: TaskId, stage: StageId) -> Self {
        let rows = || Csr::with_capacity(0, 0);
        Self {
            task,
            stage,
            chunks: ChunkGraph::default(),
            subtasks: Vec::new(),
            members: rows(),
            inputs: rows(),
            outputs: rows(),
            preds: rows(),
            succs: rows(),
            owner: Vec::new(),
        }
    }

    /// Room for a graph of about `total` chunks and subtasks.
    fn reserve(&mut self, total: DeltaBase) {
        let (chunks, subtasks) = (total.chunks as usize, total.subtasks as usize);
        self.chunks.reserve(chunks);
        self.owner.reserve(chunks.saturating_sub(self.owner.len()));
        self.subtasks
            .reserve(subtasks.saturating_sub(self.subtasks.len()));
        for rows in [&mut self.members, &mut self.outputs] {
            rows.reserve(subtasks, chunks);
        }
        for rows in [&mut self.inputs, &mut self.preds, &mut self.succs] {
            rows.reserve(subtasks, subtasks * 2);
        }
    }

    /// Where the next delta must start.
    pub fn delta_base(&self) -> DeltaBase {
        self.chunks.tail_base(self.len())
    }

    /// Appends `delta`, which must start where this graph ends.
    pub fn append(&mut self, delta: GraphDelta) -> Result<()> {
        let base = self.delta_base();
        check_base("subtask", base.subtasks as usize, delta.base.subtasks)?;
        let reads_back = delta.reads_earlier_parts();
        let sub_base = base.subtasks;
        if let Some(e) = delta.expected {
            self.reserve(e);
        }
        self.chunks.append_tail(delta.base, delta.chunks)?;
        self.owner.resize(self.chunks.len(), SubtaskIdx(u32::MAX));
        for s in 0..delta.members.rows() {
            for &c in delta.members.row(s) {
                self.owner[c as usize] = SubtaskIdx(sub_base + s as u32);
            }
        }
        self.subtasks.extend(delta.subtasks);
        self.members.extend(&delta.members);
        self.inputs.extend(&delta.inputs);
        self.outputs.extend(&delta.outputs);
        self.preds.extend(&delta.preds);
        if reads_back {
            self.succs = self.preds.transposed(self.len());
        } else {
            let n = delta.preds.rows();
            let local = Csr::from_edges(
                n,
                (0..n).flat_map(|s| {
                    let row = delta.preds.row(s);
                    row.iter().map(move |p| (p - sub_base, sub_base + s as u32))
                }),
            );
            self.succs.extend(&local);
        }
        Ok(())
    }
}

impl WorkerGraph {
    /// This graph extended by a worker's share of a delta, which must start where this
    /// graph ends: a copy (others may be reading this one), made with room for the delta so
    /// that it is copied once.
    pub fn extended(&self, delta: WorkerDelta) -> Result<Self> {
        check_base("subtask", self.members.rows(), delta.base.subtasks)?;
        let mut chunks = self.chunks.copy_with_room(&delta.chunks);
        chunks.append_tail(delta.base, delta.chunks)?;
        let mut members = self.members.copy_with_room(&delta.members);
        members.extend(&delta.members);
        let mut outputs = self.outputs.copy_with_room(&delta.outputs);
        outputs.extend(&delta.outputs);
        Ok(Self {
            chunks,
            members,
            outputs,
        })
    }
}

impl ChunkGraph {
    /// This graph's table lengths, as the base of the delta that follows it.
    pub fn tail_base(&self, subtasks: usize) -> DeltaBase {
        DeltaBase {
            chunks: self.nodes.len() as u32,
            subtasks: subtasks as u32,
            args: self.args.len() as u32,
            shapes: self.shapes_len() as u32,
        }
    }

    /// Appends the nodes and table entries of `tail`, which starts at `base`.
    pub fn append_tail(&mut self, base: DeltaBase, tail: ChunkGraph) -> Result<()> {
        check_base("chunk", self.nodes.len(), base.chunks)?;
        check_base("argument", self.args.len(), base.args)?;
        check_base("shape", self.shapes_len(), base.shapes)?;
        let end = base.chunks as usize + tail.nodes.len();
        let args_end = self.args.len() + tail.args.len();
        let shapes_end = self.shapes_len() + tail.shapes_len();
        for (i, node) in tail.nodes.iter().enumerate() {
            let own = base.chunks as usize + i;
            let inputs = tail.inputs(ChunkIdx(i as u32));
            if inputs.iter().any(|c| c.index() >= own)
                || node.args.index() >= args_end
                || node.shape.index() >= shapes_end
            {
                return Err(AresError::prepare(
                    "stream",
                    format!("chunk {own} of a graph part reads past the graph ({end} chunks)"),
                ));
            }
        }
        if tail
            .results
            .iter()
            .any(|r| r.chunks.iter().any(|c| c.index() >= end))
        {
            return Err(AresError::prepare(
                "stream",
                "a result names a chunk past the graph",
            ));
        }
        self.append_nodes(tail);
        Ok(())
    }
}

impl Csr {
    /// Adds `by` to every target.
    pub fn shift_targets(&mut self, by: u32) {
        for t in self.targets_mut() {
            *t += by;
        }
    }

    /// Appends `other`'s rows (their targets unchanged).
    pub fn extend(&mut self, other: &Csr) {
        for r in 0..other.rows() {
            self.push_row(other.row(r).iter().copied());
        }
    }
}
