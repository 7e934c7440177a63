//! The chunk graph: the tiled form of one stage.
//!
//! Nodes are appended in topological order; a node's inputs are a range of one shared edge
//! list, its arguments an index into an interned argument table and its shape an index into
//! an interned shape table, so a node is a 28-byte record (a shape inline would be 40 bytes
//! of the 64 it took) and a graph of a million chunks is a handful of allocations.

use crate::array::{DType, Shape};
use crate::graph::Csr;
use crate::ids::{ArgsIdx, ChunkIdx, ChunkKey, OpKey, ShapeIdx};
use crate::ops::{Op, OpArgs};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChunkNode {
    pub key: ChunkKey,
    pub op: Op,
    pub args: ArgsIdx,
    /// See [`ChunkGraph::shape`].
    pub shape: ShapeIdx,
    pub dtype: DType,
    inputs_start: u32,
    inputs_len: u32,
}

impl ChunkNode {
    /// (start, length) of its inputs in the graph's edge list.
    pub(crate) fn input_range(&self) -> (u32, u32) {
        (self.inputs_start, self.inputs_len)
    }

    /// A node read back from the wire ([`super::packed`]).
    pub(crate) fn from_parts(
        key: ChunkKey,
        op: Op,
        args: ArgsIdx,
        shape: ShapeIdx,
        dtype: DType,
        (inputs_start, inputs_len): (u32, u32),
    ) -> Self {
        Self {
            key,
            op,
            args,
            shape,
            dtype,
            inputs_start,
            inputs_len,
        }
    }
}

/// A result tensor of the graph: its chunk grid and how to put it back together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultTensor {
    pub shape: Shape,
    pub dtype: DType,
    /// Chunk lengths per dimension.
    #[serde(with = "super::packed::splits")]
    pub splits: Vec<Vec<usize>>,
    /// The chunk grid in C order.
    #[serde(with = "super::packed::chunk_ids")]
    pub chunks: Vec<ChunkIdx>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChunkGraph {
    #[serde(with = "super::packed::nodes")]
    pub nodes: Vec<ChunkNode>,
    #[serde(with = "super::packed::chunk_ids")]
    edges: Vec<ChunkIdx>,
    pub args: Vec<OpArgs>,
    shapes: Vec<Shape>,
    pub results: Vec<ResultTensor>,
    #[serde(skip)]
    interned: FxHashMap<OpArgs, ArgsIdx>,
    #[serde(skip)]
    shape_ids: FxHashMap<Shape, ShapeIdx>,
    next_op_key: u32,
}

impl ChunkGraph {
    /// Room for `nodes` nodes, twice as many edges, and 1.5 times as many arguments (at most
    /// one per chunk from tiling, and one per fused chain of at least two chunks): untouched
    /// capacity costs address space, not memory, where growing a table of tens of megabytes
    /// copies it into fresh pages.
    pub fn with_capacity(nodes: usize) -> Self {
        Self {
            nodes: Vec::with_capacity(nodes),
            edges: Vec::with_capacity(nodes * 2),
            args: Vec::with_capacity(nodes + nodes / 2),
            ..Self::default()
        }
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn node(&self, idx: ChunkIdx) -> &ChunkNode {
        &self.nodes[idx.index()]
    }

    #[inline]
    pub fn inputs(&self, idx: ChunkIdx) -> &[ChunkIdx] {
        let n = &self.nodes[idx.index()];
        &self.edges[n.inputs_start as usize..(n.inputs_start + n.inputs_len) as usize]
    }

    pub fn args_of(&self, idx: ChunkIdx) -> &OpArgs {
        &self.args[self.nodes[idx.index()].args.index()]
    }

    /// The shape of chunk `idx`.
    #[inline]
    pub fn shape(&self, idx: ChunkIdx) -> &Shape {
        &self.shapes[self.nodes[idx.index()].shape.index()]
    }

    /// The shape of `node` (a node of this graph).
    #[inline]
    pub fn shape_of_node(&self, node: &ChunkNode) -> &Shape {
        &self.shapes[node.shape.index()]
    }

    /// Returns the shared entry for `shape`, adding it on first use (a graph received from a
    /// peer has no lookup table: its shapes are then appended again, never wrong).
    pub fn intern_shape(&mut self, shape: Shape) -> ShapeIdx {
        if let Some(idx) = self.shape_ids.get(&shape) {
            return *idx;
        }
        let idx = ShapeIdx(self.shapes.len() as u32);
        self.shapes.push(shape.clone());
        self.shape_ids.insert(shape, idx);
        idx
    }

    /// A fresh operation key for a group of chunks produced by one operation.
    pub fn new_op_key(&mut self) -> OpKey {
        self.next_op_key += 1;
        OpKey(self.next_op_key - 1)
    }

    /// Returns the shared entry for `args`, adding it on first use.
    pub fn intern_args(&mut self, args: OpArgs) -> ArgsIdx {
        if let Some(idx) = self.interned.get(&args) {
            return *idx;
        }
        let idx = ArgsIdx(self.args.len() as u32);
        self.args.push(args.clone());
        self.interned.insert(args, idx);
        idx
    }

    /// Adds an entry used by a single chunk (no interning lookup).
    pub fn push_args(&mut self, args: OpArgs) -> ArgsIdx {
        self.args.push(args);
        ArgsIdx(self.args.len() as u32 - 1)
    }

    /// Appends a node whose inputs must already be in the graph.
    pub fn push(
        &mut self,
        key: ChunkKey,
        op: Op,
        args: ArgsIdx,
        shape: Shape,
        dtype: DType,
        inputs: &[ChunkIdx],
    ) -> ChunkIdx {
        let idx = ChunkIdx(self.nodes.len() as u32);
        debug_assert!(inputs.iter().all(|i| i.0 < idx.0), "inputs must precede");
        let inputs_start = self.edges.len() as u32;
        self.edges.extend_from_slice(inputs);
        let shape = self.intern_shape(shape);
        let range = (inputs_start, inputs.len() as u32);
        self.nodes
            .push(ChunkNode::from_parts(key, op, args, shape, dtype, range));
        idx
    }

    /// Moves the argument table (and op-key sequence) into a new graph with no nodes: the
    /// starting point of passes that rebuild the node list. `self` keeps its nodes and edges
    /// for reading; its argument lookups must go to the new graph from here on.
    pub fn take_tables(&mut self) -> Self {
        Self {
            nodes: Vec::with_capacity(self.nodes.len()),
            edges: Vec::with_capacity(self.edges.len()),
            args: std::mem::take(&mut self.args),
            // Shapes are few: both graphs keep them, so old nodes still read theirs.
            shapes: self.shapes.clone(),
            results: Vec::new(),
            interned: std::mem::take(&mut self.interned),
            shape_ids: self.shape_ids.clone(),
            next_op_key: self.next_op_key,
        }
    }

    /// How many edges leave each node.
    pub fn consumer_counts(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.nodes.len()];
        for e in &self.edges {
            counts[e.index()] += 1;
        }
        counts
    }

    /// Rewrites the graph in place, in one pass in node order, without a second arena:
    /// `replace[i]` is `None` to drop node `i`, `Some(None)` to keep it, or
    /// `Some(Some((node, alias)))` to put `node` in its place with `i`'s inputs (less those
    /// dropped: it took them in), `alias` being another old node that now also maps to it. Kept nodes and edges only move toward the
    /// front, and an alias must come after `i`. Returns old index → new index (`u32::MAX` for
    /// dropped nodes).
    pub fn compact_in_place(
        &mut self,
        mut replace: impl FnMut(usize, &ChunkNode) -> Option<Option<(ChunkNode, usize)>>,
    ) -> Vec<u32> {
        let n = self.nodes.len();
        let mut map = vec![u32::MAX; n];
        let (mut w, mut e) = (0usize, 0usize);
        for v in 0..n {
            let Some(replacement) = replace(v, &self.nodes[v]) else {
                continue;
            };
            let (start, len) = (
                self.nodes[v].inputs_start as usize,
                self.nodes[v].inputs_len as usize,
            );
            debug_assert!(
                e <= start && w <= v,
                "compaction only moves toward the front"
            );
            // A replacement drops the inputs that were removed: it took them in (a FUSE
            // node's generated operands).
            let replaced = replacement.is_some();
            let mut kept = 0;
            for k in 0..len {
                let to = map[self.edges[start + k].index()];
                debug_assert!(
                    replaced || to != u32::MAX,
                    "an input of a kept node was removed"
                );
                if to != u32::MAX {
                    self.edges[e + kept] = ChunkIdx(to);
                    kept += 1;
                }
            }
            let mut node = match replacement {
                None => self.nodes[v].clone(),
                Some((node, alias)) => {
                    map[alias] = w as u32;
                    node
                }
            };
            node.inputs_start = e as u32;
            node.inputs_len = kept as u32;
            self.nodes[w] = node;
            map[v] = w as u32;
            w += 1;
            e += kept;
        }
        self.nodes.truncate(w);
        self.edges.truncate(e);
        self.results = Self::remap_results(&self.results, |c| ChunkIdx(map[c.index()]));
        map
    }

    /// A node with no inputs yet (for [`ChunkGraph::compact_in_place`] replacements).
    pub fn detached_node(
        key: ChunkKey,
        op: Op,
        args: ArgsIdx,
        shape: ShapeIdx,
        dtype: DType,
    ) -> ChunkNode {
        ChunkNode {
            key,
            op,
            args,
            shape,
            dtype,
            inputs_start: 0,
            inputs_len: 0,
        }
    }

    /// Copies node `idx` of `from` into `self` with its inputs remapped.
    pub fn push_copy(&mut self, from: &ChunkGraph, idx: ChunkIdx, inputs: &[ChunkIdx]) -> ChunkIdx {
        let n = from.node(idx);
        let shape = from.shape(idx).clone();
        self.push(n.key, n.op, n.args, shape, n.dtype, inputs)
    }

    /// Successor lists (distinct consumers appear once per edge).
    pub fn successors(&self) -> Csr {
        Csr::from_edges(
            self.nodes.len(),
            (0..self.nodes.len()).flat_map(move |i| {
                self.inputs(ChunkIdx(i as u32))
                    .iter()
                    .map(move |inp| (inp.0, i as u32))
            }),
        )
    }

    /// Chunks that results refer to, as a bitmap.
    pub fn result_mask(&self) -> Vec<bool> {
        let mut mask = vec![false; self.nodes.len()];
        for r in &self.results {
            for c in &r.chunks {
                mask[c.index()] = true;
            }
        }
        mask
    }

    /// Remaps result chunk indices through `map` (for passes that renumber nodes).
    pub fn remap_results(
        results: &[ResultTensor],
        map: impl Fn(ChunkIdx) -> ChunkIdx,
    ) -> Vec<ResultTensor> {
        results
            .iter()
            .map(|r| ResultTensor {
                chunks: r.chunks.iter().map(|c| map(*c)).collect(),
                ..r.clone()
            })
            .collect()
    }

    /// The op a chunk is drawn as (the dashboard's colours and progress rows): its own, or
    /// for a FUSE chunk its last step's, the op whose result it holds.
    pub fn drawn_op(&self, idx: ChunkIdx) -> Op {
        match (self.node(idx).op, self.args_of(idx)) {
            (Op::Fuse, OpArgs::Fuse(steps)) => steps.last().map_or(Op::Fuse, |s| s.op),
            (op, _) => op,
        }
    }

    /// Human-readable one-line label of a node: `rand k0.3 (100,)` or `FUSE[add, sum]`.
    pub fn label(&self, idx: ChunkIdx) -> String {
        let n = self.node(idx);
        match (&n.op, self.args_of(idx)) {
            (Op::Fuse, OpArgs::Fuse(steps)) => {
                let names: Vec<&str> = steps.iter().map(|s| s.op.name()).collect();
                format!("FUSE[{}]", names.join(", "))
            }
            (op, _) => op.name().to_string(),
        }
    }
}
mod tail;

#[cfg(test)]
mod tests {
    /// The records a graph holds one of per chunk (issue 13: at most 150 bytes of peak RSS
    /// per chunk at 10^7 chunks): a node with its shape interned, and the argument entry that
    /// creation and FUSE chunks push each (file references and slice lists boxed).
    #[test]
    fn per_chunk_records_stay_small() {
        assert!(std::mem::size_of::<super::ChunkNode>() <= 28);
        assert!(std::mem::size_of::<crate::ops::OpArgs>() <= 112);
    }
}
