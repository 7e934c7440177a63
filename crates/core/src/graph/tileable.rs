//! The tileable graph: one node per user-level operation, independent of chunk counts.
//!
//! This is what a client submits: a few KB even for a job of millions of chunks, since the
//! chunking is an argument of the creation ops, expanded only by `prepare::tile`.

use crate::array::{fmt_shape, DType, Shape};
use crate::error::{AresError, Result};
use crate::ids::TileableIdx;
use crate::ops::{Op, OpArgs};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TileableNode {
    pub op: Op,
    pub args: OpArgs,
    pub inputs: SmallVec<[TileableIdx; 2]>,
    pub shape: Shape,
    pub dtype: DType,
}

/// Nodes in topological order; `outputs` are the tensors the client wants back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TileableGraph {
    pub nodes: Vec<TileableNode>,
    pub outputs: Vec<TileableIdx>,
}

impl TileableGraph {
    pub fn push(&mut self, node: TileableNode) -> TileableIdx {
        self.nodes.push(node);
        TileableIdx(self.nodes.len() as u32 - 1)
    }

    pub fn node(&self, idx: TileableIdx) -> &TileableNode {
        &self.nodes[idx.index()]
    }

    /// Checks the invariants a graph from outside (JSON, network) must hold: inputs precede
    /// their consumers, outputs exist, and every node's shape and dtype are what its op and
    /// inputs imply (re-derived with the same rules the tensor API uses).
    pub fn validate(&self) -> Result<()> {
        if self.outputs.is_empty() {
            return Err(AresError::MalformedGraph("the graph has no outputs".into()));
        }
        for (i, node) in self.nodes.iter().enumerate() {
            for input in &node.inputs {
                if input.index() >= i {
                    return Err(AresError::MalformedGraph(format!(
                        "node t{i} ({}) uses {input}, which does not precede it",
                        node.op
                    )));
                }
            }
            let inputs: Vec<(&Shape, DType)> = node
                .inputs
                .iter()
                .map(|t| (&self.nodes[t.index()].shape, self.nodes[t.index()].dtype))
                .collect();
            let (shape, dtype) = crate::ops::infer::infer(node.op, &node.args, &inputs)
                .map_err(|e| AresError::MalformedGraph(format!("node t{i}: {e}")))?;
            if shape != node.shape || dtype != node.dtype {
                return Err(AresError::MalformedGraph(format!(
                    "node t{i} ({}) declares {} {} but its inputs give {} {}",
                    node.op,
                    fmt_shape(&node.shape),
                    node.dtype,
                    fmt_shape(&shape),
                    dtype
                )));
            }
        }
        for out in &self.outputs {
            if out.index() >= self.nodes.len() {
                return Err(AresError::MalformedGraph(format!(
                    "output {out} does not exist ({} nodes)",
                    self.nodes.len()
                )));
            }
        }
        Ok(())
    }
}
