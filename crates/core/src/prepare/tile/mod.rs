//! Tiling: tileables → chunks.
//!
//! Each tileable node is expanded, in topological order, into a grid of chunk nodes by its
//! op family's rule (one file per family here; the reduction and creation families tile in
//! their own folders, `ops/family/*/tile.rs`). A tiled tensor is its per-dimension chunk lengths
//! (`splits`) and its chunk grid in C order. Chunks of one operation share one op key; the
//! chunk key is that key plus a running index.

mod grid;

use crate::array::{DType, Shape};
use crate::config::TaskConfig;
use crate::error::{AresError, Result};
use crate::graph::{ChunkGraph, ResultTensor, TileableGraph};
use crate::ids::{ArgsIdx, ChunkIdx, ChunkKey, OpKey};
use crate::ops::{Family, Op, OpArgs};

pub use crate::ops::chunk_seed;
pub(crate) use grid::{linear, unify};
pub use grid::{offsets, split_dim, splits_for, Odometer};

/// A tiled tensor: chunk lengths per dimension and the chunk grid in C order.
#[derive(Clone, Debug, PartialEq)]
pub struct Tiled {
    pub splits: Vec<Vec<usize>>,
    pub chunks: Vec<ChunkIdx>,
}

impl Tiled {
    pub fn grid(&self) -> Shape {
        self.splits.iter().map(|s| s.len()).collect()
    }

    /// Chunk at a multi-index of the grid.
    pub fn at(&self, idx: &[usize]) -> ChunkIdx {
        self.chunks[grid::linear(&self.grid(), idx)]
    }
}

/// Tiles a whole tileable graph into one chunk graph: one stage, every chunk's shape known.
/// A graph that goes on from a data-dependent length is refused: tiled with its bound it
/// would compute wrong numbers; it runs in stages (`prepare::stages`), each tiled here.
pub fn tile(graph: &TileableGraph, config: &TaskConfig) -> Result<ChunkGraph> {
    if let Some(stage) = super::stages::next_stage(graph)? {
        let node = graph.node(stage.boundary[0]);
        return Err(AresError::Prepare {
            pass: "tile",
            detail: format!(
                "the length of t{} ({}) depends on the data and other ops go on from it: the \
                 graph runs in stages, which a supervisor does (`ares run`, `ar.compute`); \
                 compute that tensor first to plan the rest",
                stage.boundary[0].0, node.op
            ),
        });
    }
    let mut tiler = Tiler::new(config.combine_size, estimate_chunks(graph));
    let mut tiled: Vec<Option<Tiled>> = vec![None; graph.nodes.len()];
    // Drop a tileable's grid once its last consumer has been tiled.
    let mut uses = vec![0u32; graph.nodes.len()];
    for node in &graph.nodes {
        for i in &node.inputs {
            uses[i.index()] += 1;
        }
    }
    for out in &graph.outputs {
        uses[out.index()] += 1;
    }
    for (i, node) in graph.nodes.iter().enumerate() {
        let inputs: Vec<&Tiled> = node
            .inputs
            .iter()
            .map(|t| tiled[t.index()].as_ref().expect("inputs are tiled first"))
            .collect();
        let in_shapes: Vec<&Shape> = node.inputs.iter().map(|t| &graph.node(*t).shape).collect();
        let t = tiler.tile_node(
            node.op,
            &node.args,
            &node.shape,
            node.dtype,
            &inputs,
            &in_shapes,
        )?;
        tiled[i] = Some(t);
        for inp in &node.inputs {
            uses[inp.index()] -= 1;
            if uses[inp.index()] == 0 {
                tiled[inp.index()] = None;
            }
        }
    }
    let mut chunks = tiler.graph;
    for out in &graph.outputs {
        let node = graph.node(*out);
        let t = tiled[out.index()].clone().expect("outputs are kept");
        chunks.results.push(ResultTensor {
            shape: node.shape.clone(),
            dtype: node.dtype,
            splits: t.splits,
            chunks: t.chunks,
        });
    }
    Ok(chunks)
}

/// A rough upper estimate of the chunks tiling will create, so the arena is allocated once
/// instead of doubling its way up (each doubling touches fresh pages).
fn estimate_chunks(graph: &TileableGraph) -> usize {
    let mut est: Vec<usize> = Vec::with_capacity(graph.nodes.len());
    for node in &graph.nodes {
        let max_in = node
            .inputs
            .iter()
            .map(|i| est[i.index()])
            .max()
            .unwrap_or(1);
        let grid = |spec| {
            grid::splits_for(&node.shape, spec)
                .iter()
                .map(|s| s.len())
                .product::<usize>()
        };
        let e = match &node.args {
            OpArgs::Create { chunk, .. } => grid(chunk),
            OpArgs::Source { chunk, .. } => grid(chunk),
            OpArgs::Rechunk(chunk) => grid(chunk).max(max_in),
            OpArgs::Concat { .. } => node.inputs.iter().map(|i| est[i.index()]).sum(),
            OpArgs::Reduce { .. } => max_in + max_in / 3,
            OpArgs::ShuffleBench {
                in_parts,
                out_parts,
                ..
            } => *in_parts as usize + *out_parts as usize + 1,
            OpArgs::MapBlocks(call) => call.grid().iter().product::<usize>().max(max_in),
            OpArgs::Sort { .. } => max_in * 5 + 4,
            OpArgs::Unique { .. } => max_in * 4 + 4,
            OpArgs::MaskSelect => max_in * 4,
            OpArgs::SelectRanks { .. } => max_in * 4 + 4,
            OpArgs::TakeRows { .. } => {
                node.inputs.iter().map(|i| est[i.index()]).sum::<usize>() * 6 + 4
            }
            // Slices and boundaries per sorted chunk, two shuffles (`select::search`).
            OpArgs::SearchSorted { .. } => {
                node.inputs.iter().map(|i| est[i.index()]).sum::<usize>() * 4 + 4
            }
            _ if node.op.family() == Family::Linalg => {
                node.inputs.iter().map(|i| est[i.index()]).product()
            }
            _ => max_in,
        };
        est.push(e.max(1));
    }
    // Rechunks for broadcasting and slicing add some; untouched capacity costs no memory.
    (est.iter().sum::<usize>() * 5 / 4).min(1 << 24)
}

/// Builds the chunk graph; the family rules call its `push`.
pub(crate) struct Tiler {
    pub graph: ChunkGraph,
    /// Next chunk index per op key.
    next_index: Vec<u32>,
    pub combine_size: usize,
    /// Shuffle pieces allocated so far (the next shuffle's first piece key).
    pub pieces: u64,
}

impl Tiler {
    fn new(combine_size: usize, capacity: usize) -> Self {
        Self {
            graph: ChunkGraph::with_capacity(capacity),
            next_index: Vec::new(),
            combine_size,
            pieces: 0,
        }
    }

    pub fn key(&mut self) -> OpKey {
        let key = self.graph.new_op_key();
        self.next_index.push(0);
        key
    }

    pub fn push(
        &mut self,
        key: OpKey,
        op: Op,
        args: ArgsIdx,
        shape: Shape,
        dtype: DType,
        inputs: &[ChunkIdx],
    ) -> ChunkIdx {
        let index = &mut self.next_index[key.index()];
        let chunk_key = ChunkKey {
            op: key,
            index: *index,
        };
        *index += 1;
        self.graph.push(chunk_key, op, args, shape, dtype, inputs)
    }

    pub fn shape_of(&self, c: ChunkIdx) -> &Shape {
        self.graph.shape(c)
    }

    /// Combines `items` in a tree of fan-in `combine_size`. Intermediate levels use `mid`
    /// arguments and shape, the root `last`. One op key per level, shared by all trees of
    /// the same tiled operation through `level_keys`.
    pub fn tree(
        &mut self,
        op: Op,
        mut items: Vec<ChunkIdx>,
        level_keys: &mut Vec<OpKey>,
        mid: (ArgsIdx, Shape),
        last: (ArgsIdx, Shape),
        dtype: DType,
    ) -> ChunkIdx {
        let fan_in = self.combine_size;
        if items.len() == 1 {
            debug_assert_eq!(
                mid.1, last.1,
                "a lone item is only the root when shapes agree"
            );
            return items[0];
        }
        let mut level = 0;
        loop {
            if level_keys.len() <= level {
                let key = self.key();
                level_keys.push(key);
            }
            let key = level_keys[level];
            if items.len() <= fan_in {
                return self.push(key, op, last.0, last.1.clone(), dtype, &items);
            }
            items = items
                .chunks(fan_in)
                .map(|group| {
                    if group.len() == 1 {
                        group[0]
                    } else {
                        self.push(key, op, mid.0, mid.1.clone(), dtype, group)
                    }
                })
                .collect();
            level += 1;
        }
    }

    /// Another task's result: one fetch chunk per source chunk, same layout.
    fn tile_fetch(
        &mut self,
        task: crate::ids::TaskId,
        splits: &[Vec<usize>],
        chunks: &[(u32, u32)],
        dtype: DType,
    ) -> Tiled {
        let grid: Shape = splits.iter().map(|s| s.len()).collect();
        let key = self.key();
        let mut out = Vec::with_capacity(chunks.len());
        let mut i = 0;
        Odometer::for_each(&grid, |idx| {
            let shape: Shape = idx.iter().enumerate().map(|(d, k)| splits[d][*k]).collect();
            let (chunk, worker) = chunks[i];
            let args = self.graph.push_args(OpArgs::FetchChunk {
                task,
                chunk,
                worker,
            });
            out.push(self.push(key, Op::Fetch, args, shape, dtype, &[]));
            i += 1;
        });
        Tiled {
            splits: splits.to_vec(),
            chunks: out,
        }
    }

    fn tile_node(
        &mut self,
        op: Op,
        args: &OpArgs,
        shape: &Shape,
        dtype: DType,
        inputs: &[&Tiled],
        in_shapes: &[&Shape],
    ) -> Result<Tiled> {
        match (op.family(), args) {
            (Family::Creation, OpArgs::Create { fill, shape, chunk }) => {
                Ok(self.tile_creation(op, fill, shape, chunk, dtype))
            }
            (Family::Reduction, OpArgs::Arg { axis, keepdims, .. }) => {
                Ok(self.tile_argreduce(op, *axis, *keepdims, inputs[0]))
            }
            (Family::Scan, OpArgs::Scan { axis }) => {
                Ok(self.tile_scan(op, *axis, dtype, inputs[0]))
            }
            (Family::Unary | Family::Binary | Family::Ternary, _) => {
                Ok(self.tile_elementwise(op, args, shape, dtype, inputs, in_shapes))
            }
            (
                Family::Reduction,
                OpArgs::Moments {
                    axes,
                    keepdims,
                    ddof,
                },
            ) => Ok(self.tile_variance(axes, *keepdims, *ddof, dtype, inputs[0])),
            (Family::Reduction, OpArgs::Reduce { axes, keepdims }) => {
                Ok(self.tile_reduction(op, axes, *keepdims, dtype, inputs[0]))
            }
            (Family::UserCode, OpArgs::MapBlocks(call)) => {
                let in_dtypes: Vec<DType> = inputs
                    .iter()
                    .map(|t| self.graph.node(t.chunks[0]).dtype)
                    .collect();
                self.tile_map_blocks(call, dtype, inputs, in_shapes, &in_dtypes)
            }
            (Family::Linalg, _) if op != Op::Matmul => {
                self.tile_linalg(op, args, shape, inputs, in_shapes)
            }
            (Family::Fft, OpArgs::Fft(spec)) => {
                self.tile_fft(spec, args, dtype, inputs[0], in_shapes[0])
            }
            (Family::Linalg, _) if inputs.len() == 2 => Ok(self.tile_matmul(
                dtype,
                shape,
                (inputs[0], in_shapes[0]),
                (inputs[1], in_shapes[1]),
            )),
            (
                Family::Fetch,
                OpArgs::FetchResult {
                    task,
                    splits,
                    chunks,
                    ..
                },
            ) => Ok(self.tile_fetch(*task, splits, chunks, dtype)),
            (Family::Io, OpArgs::Source { data, chunk }) => self.tile_source(op, data, chunk),
            (Family::Io, OpArgs::Sink { data, chunk }) => {
                self.tile_sink(op, data, chunk, inputs[0])
            }
            (_, OpArgs::Slice(dims)) => Ok(self.tile_slice(dims, dtype, inputs[0])),
            (_, OpArgs::Transpose(perm)) => Ok(self.tile_transpose(perm, dtype, inputs[0])),
            (_, OpArgs::Concat { axis }) => Ok(self.tile_concat(*axis, dtype, inputs, in_shapes)),
            (_, OpArgs::Rechunk(spec)) => {
                Ok(self.rechunk_to(inputs[0], &splits_for(shape, spec), dtype))
            }
            (_, OpArgs::Reshape(target)) => {
                self.tile_reshape(target, dtype, inputs[0], in_shapes[0])
            }
            // Shuffle (issue 11).
            (
                _,
                OpArgs::ShuffleBench {
                    in_parts,
                    out_parts,
                    rows,
                },
            ) => self.tile_shuffle_bench(*in_parts, *out_parts, *rows),
            (
                _,
                OpArgs::Sort {
                    arg,
                    axis,
                    descending,
                },
            ) if op == Op::Sort && inputs.len() == 1 => {
                let in_dtype = self.graph.node(inputs[0].chunks[0]).dtype;
                self.tile_sort(*arg, *axis, *descending, in_dtype, inputs[0], in_shapes[0])
            }
            (_, OpArgs::Unique { counts }) if inputs.len() == 1 => {
                let in_dtype = self.graph.node(inputs[0].chunks[0]).dtype;
                let size = in_shapes[0].iter().product();
                self.tile_unique(*counts, in_dtype, inputs[0], size)
            }
            (_, OpArgs::UniquePick { .. }) if inputs.len() == 1 => {
                Ok(self.tile_unique_pick(args, inputs[0]))
            }
            (_, OpArgs::MaskSelect) if op == Op::MaskSelect && inputs.len() == 2 => {
                Ok(self.tile_mask_select(dtype, inputs[0], inputs[1], in_shapes[0]))
            }
            (_, OpArgs::TakeRows { axis }) if inputs.len() == 2 => self.tile_take_rows(
                *axis,
                dtype,
                inputs[0],
                inputs[1],
                in_shapes[0],
                in_shapes[1],
            ),
            (_, OpArgs::SelectRanks { ranks }) if inputs.len() == 1 => {
                let in_dtype = self.graph.node(inputs[0].chunks[0]).dtype;
                let n = in_shapes[0].iter().product();
                Ok(self.tile_select_ranks(ranks, in_dtype, inputs[0], n))
            }
            (_, OpArgs::SearchSorted { right }) if inputs.len() == 2 => {
                self.tile_searchsorted(*right, inputs[0], inputs[1])
            }
            _ => Err(AresError::prepare(
                "tile",
                format!("{op} with arguments {args:?} cannot be tiled"),
            )),
        }
    }
}
