//! Which graphs stream, and their tiling region by region.
//!
//! A graph streams when every tileable is a creation or an elementwise op on one common
//! chunk grid (no broadcasting, no rechunking), and every reduction reduces such a tensor
//! over all its axes and is a result. Those are the graphs whose chunk count grows with the
//! data (`sum(ones(10**8, chunk=10))`), and their chunk graph splits into regions: a run of
//! grid positions holds every chunk at those positions and, per reduction, the complete
//! subtree of the combine tree above its partials (a region is `combine_size^levels`
//! positions). Nothing in a region reads another region; only the combine levels above the
//! regions (the top, tiled last) read the regions' roots.
//!
//! Chunk keys are the ones [`crate::prepare::tile::tile`] gives (op keys in the same order,
//! each op's chunks indexed by position, each tree level's nodes in order), so a random
//! chunk gets the same seed and the chunks are the same, only emitted in another order.

use crate::array::{DType, Shape};
use crate::graph::{ChunkGraph, ResultTensor, TileableGraph};
use crate::ids::{ArgsIdx, ChunkIdx, ChunkKey, OpKey};
use crate::ops::infer::reduced_shape;
use crate::ops::{Family, Fill, Op, OpArgs};
use crate::prepare::tile::{offsets, splits_for};
use smallvec::SmallVec;

enum Step {
    Create {
        key: OpKey,
        op: Op,
        fill: Fill,
        dtype: DType,
    },
    Elementwise {
        key: OpKey,
        op: Op,
        args: OpArgs,
        dtype: DType,
        inputs: SmallVec<[usize; 3]>,
    },
    Reduce(Reduction),
    /// An elementwise op on reduction results (or on other such ops): one chunk, in the
    /// seal (`mean` is a sum and a division).
    Top {
        key: OpKey,
        op: Op,
        args: OpArgs,
        shape: Shape,
        dtype: DType,
        inputs: SmallVec<[usize; 3]>,
    },
}

struct Reduction {
    input: usize,
    op: Op,
    keepdims: bool,
    dtype: DType,
    map_key: OpKey,
    /// One per tree level, the root's last.
    level_keys: Vec<OpKey>,
}

/// A streamable graph's tiling plan.
pub struct StreamPlan {
    splits: Vec<Vec<usize>>,
    starts: Vec<Vec<usize>>,
    grid: Shape,
    /// Per tileable node: its step (all nodes are planned).
    steps: Vec<Step>,
    outputs: Vec<usize>,
    /// The steps whose chunks the runs keep, in order: reductions (their region roots, read
    /// by the seal) and aligned outputs (results).
    kept: Vec<usize>,
    combine: usize,
    /// Tree levels inside a region (0 without reductions).
    pub levels: usize,
    /// Grid positions per region: `combine^levels`, or 1 without reductions.
    pub region: usize,
    /// Chunks per position, before fusion.
    pub chunks_per_position: usize,
}

/// The levels of a combine tree over `items` partials with fan-in `combine` (the root is the
/// last level).
fn tree_levels(mut items: usize, combine: usize) -> usize {
    let mut levels = 1;
    while items > combine {
        items = items.div_ceil(combine);
        levels += 1;
    }
    levels
}

impl StreamPlan {
    /// The plan of `graph`, or `None` if it does not stream (see the module doc). Regions
    /// hold at most `region_chunks` chunks (at least one position).
    pub fn new(graph: &TileableGraph, combine: usize, region_chunks: usize) -> Option<Self> {
        let mut grid_splits: Option<Vec<Vec<usize>>> = None;
        let mut shape: Option<&Shape> = None;
        let mut next_key = 0u32;
        let mut key = || {
            next_key += 1;
            OpKey(next_key - 1)
        };
        let mut aligned = vec![false; graph.nodes.len()];
        // Reductions and the ops on their results: one chunk each, tiled in the seal.
        let mut reduced = vec![false; graph.nodes.len()];
        let mut steps = Vec::with_capacity(graph.nodes.len());
        let mut reductions = Vec::new();
        for (i, node) in graph.nodes.iter().enumerate() {
            let step = match (node.op.family(), &node.args) {
                (
                    Family::Creation,
                    OpArgs::Create {
                        fill,
                        shape: s,
                        chunk,
                    },
                ) => {
                    let splits = splits_for(s, chunk);
                    if *grid_splits.get_or_insert_with(|| splits.clone()) != splits
                        || *shape.get_or_insert(&node.shape) != &node.shape
                    {
                        return None;
                    }
                    aligned[i] = true;
                    Step::Create {
                        key: key(),
                        op: node.op,
                        fill: *fill,
                        dtype: node.dtype,
                    }
                }
                (Family::Unary | Family::Binary | Family::Ternary, args)
                    if !node.inputs.is_empty()
                        && node.inputs.iter().all(|t| reduced[t.index()]) =>
                {
                    reduced[i] = true;
                    Step::Top {
                        key: key(),
                        op: node.op,
                        args: args.clone(),
                        shape: node.shape.clone(),
                        dtype: node.dtype,
                        inputs: node.inputs.iter().map(|t| t.index()).collect(),
                    }
                }
                (Family::Unary | Family::Binary | Family::Ternary, args) => {
                    let same = node
                        .inputs
                        .iter()
                        .all(|t| aligned[t.index()] && graph.node(*t).shape == node.shape);
                    if !same || node.inputs.is_empty() {
                        return None;
                    }
                    aligned[i] = true;
                    Step::Elementwise {
                        key: key(),
                        op: node.op,
                        args: args.clone(),
                        dtype: node.dtype,
                        inputs: node.inputs.iter().map(|t| t.index()).collect(),
                    }
                }
                (Family::Reduction, OpArgs::Reduce { axes, keepdims }) => {
                    let input = node.inputs.first()?.index();
                    let ndim = graph.node(node.inputs[0]).shape.len();
                    let all: Vec<usize> = (0..ndim).collect();
                    if !aligned[input]
                        || node.inputs.len() != 1
                        || axes.as_slice() != all.as_slice()
                    {
                        return None;
                    }
                    reduced[i] = true;
                    reductions.push(i);
                    Step::Reduce(Reduction {
                        input,
                        op: node.op,
                        keepdims: *keepdims,
                        dtype: node.dtype,
                        map_key: key(),
                        level_keys: Vec::new(), // one per level, set below
                    })
                }
                _ => return None,
            };
            // Keys are taken in tiling order: a reduction's levels right after its map.
            let step = match step {
                Step::Reduce(mut r) => {
                    let positions: usize = grid_splits.as_ref()?.iter().map(|s| s.len()).product();
                    if positions < 2 {
                        return None; // a lone partial needs no tree
                    }
                    r.level_keys = (0..tree_levels(positions, combine))
                        .map(|_| key())
                        .collect();
                    Step::Reduce(r)
                }
                s => s,
            };
            steps.push(step);
        }
        let splits = grid_splits?;
        let grid: Shape = splits.iter().map(|s| s.len()).collect();
        let positions: usize = grid.iter().product();
        let per_position = |s: &&Step| !matches!(s, Step::Top { .. });
        let chunks_per_position = steps.iter().filter(per_position).count().max(1);
        let outputs: Vec<usize> = graph.outputs.iter().map(|o| o.index()).collect();
        // Kept from the runs: every reduction's region roots, every aligned output's chunks.
        let kept = (0..steps.len())
            .filter(|t| match &steps[*t] {
                Step::Reduce(_) => true,
                Step::Top { .. } => false,
                _ => outputs.contains(t),
            })
            .collect();
        let region_positions = region_chunks / chunks_per_position;
        // Levels inside a region: the largest whose subtree fits `region_positions` and
        // still leaves the root above the regions (`combine^levels < positions`).
        let (levels, region) = if reductions.is_empty() {
            (0, region_positions.clamp(1, positions.max(1)))
        } else {
            let mut levels = 0;
            let mut region = 1usize;
            while region * combine <= region_positions && region * combine < positions {
                region *= combine;
                levels += 1;
            }
            (levels, region)
        };
        Some(Self {
            starts: splits.iter().map(|s| offsets(s)).collect(),
            splits,
            grid,
            steps,
            outputs,
            kept,
            combine,
            levels,
            region,
            chunks_per_position,
        })
    }

    /// How many lists [`StreamPlan::tile_positions`] returns.
    pub fn kept_lists(&self) -> usize {
        self.kept.len()
    }

    pub fn positions(&self) -> usize {
        self.grid.iter().product()
    }
}

mod tiling;
pub use tiling::SealResult;
