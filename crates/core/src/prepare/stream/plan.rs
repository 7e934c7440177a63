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
        let mut consumers = vec![0usize; graph.nodes.len()];
        for node in &graph.nodes {
            for i in &node.inputs {
                consumers[i.index()] += 1;
            }
        }
        let mut next_key = 0u32;
        let mut key = || {
            next_key += 1;
            OpKey(next_key - 1)
        };
        let mut aligned = vec![false; graph.nodes.len()];
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
                        || consumers[i] != 0
                        || !graph.outputs.iter().any(|o| o.index() == i)
                    {
                        return None;
                    }
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
        let chunks_per_position = steps.len().max(1);
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
            outputs: graph.outputs.iter().map(|o| o.index()).collect(),
            combine,
            levels,
            region,
            chunks_per_position,
        })
    }

    pub fn outputs(&self) -> usize {
        self.outputs.len()
    }

    pub fn positions(&self) -> usize {
        self.grid.iter().product()
    }

    /// Tiles positions `range` (whole regions, the last may be short) into `g`, an empty
    /// graph holding the tables of the parts before. Returns the chunks later parts need or
    /// the results hold: per output, the region roots of a reduction or the output's chunks.
    pub fn tile_positions(
        &self,
        range: std::ops::Range<usize>,
        g: &mut ChunkGraph,
    ) -> Vec<Vec<ChunkIdx>> {
        let ndim = self.grid.len();
        let mut chunk_at: Vec<Vec<ChunkIdx>> =
            vec![Vec::with_capacity(range.len()); self.steps.len()];
        let mut interned: Vec<Option<ArgsIdx>> = vec![None; self.steps.len()];
        let mut idx: Shape = Shape::from_elem(0, ndim);
        for j in range.clone() {
            let mut rest = j;
            for d in (0..ndim).rev() {
                idx[d] = rest % self.grid[d];
                rest /= self.grid[d];
            }
            let cshape: Shape = (0..ndim).map(|d| self.splits[d][idx[d]]).collect();
            let at = |key: OpKey| ChunkKey {
                op: key,
                index: j as u32,
            };
            for (t, step) in self.steps.iter().enumerate() {
                let chunk = match step {
                    Step::Create {
                        key,
                        op,
                        fill,
                        dtype,
                    } => {
                        let args = match *fill {
                            Fill::Range {
                                start, step, end, ..
                            } => g.push_args(OpArgs::Fill {
                                fill: Fill::Range {
                                    start,
                                    step,
                                    offset: self.starts[0][idx[0]] as u64,
                                    end,
                                },
                                shape: cshape.clone(),
                            }),
                            _ => g.intern_args(OpArgs::Fill {
                                fill: *fill,
                                shape: cshape.clone(),
                            }),
                        };
                        g.push(at(*key), *op, args, cshape.clone(), *dtype, &[])
                    }
                    Step::Elementwise {
                        key,
                        op,
                        args,
                        dtype,
                        inputs,
                    } => {
                        let a = *interned[t].get_or_insert_with(|| g.intern_args(args.clone()));
                        let ins: SmallVec<[ChunkIdx; 3]> = inputs
                            .iter()
                            .map(|i| *chunk_at[*i].last().expect("tiled"))
                            .collect();
                        g.push(at(*key), *op, a, cshape.clone(), *dtype, &ins)
                    }
                    Step::Reduce(r) => {
                        let a = *interned[t].get_or_insert_with(|| {
                            g.intern_args(OpArgs::Reduce {
                                axes: (0..ndim).collect(),
                                keepdims: true,
                            })
                        });
                        let input = *chunk_at[r.input].last().expect("tiled");
                        let shape = reduced_shape(&cshape, &self.all_axes(), true);
                        g.push(at(r.map_key), r.op, a, shape, r.dtype, &[input])
                    }
                };
                chunk_at[t].push(chunk);
            }
        }
        let mut kept = Vec::with_capacity(self.outputs.len());
        for &out in &self.outputs {
            kept.push(match &self.steps[out] {
                Step::Reduce(r) => range
                    .clone()
                    .step_by(self.region)
                    .map(|start| {
                        let end = (start + self.region).min(range.end);
                        let first = start - range.start;
                        let partials = chunk_at[out][first..first + (end - start)].to_vec();
                        self.subtree(r, partials, start, g)
                    })
                    .collect(),
                _ => chunk_at[out].clone(),
            });
        }
        kept
    }

    fn all_axes(&self) -> SmallVec<[usize; 4]> {
        (0..self.grid.len()).collect()
    }

    fn combine_args(&self, r: &Reduction, keepdims: bool, g: &mut ChunkGraph) -> ArgsIdx {
        g.intern_args(OpArgs::Combine {
            op: r.op,
            axes: self.all_axes(),
            keepdims,
        })
    }

    /// The region's levels of `r`'s tree over its `partials` (the first at grid position
    /// `start`): the region's root.
    fn subtree(
        &self,
        r: &Reduction,
        mut items: Vec<ChunkIdx>,
        start: usize,
        g: &mut ChunkGraph,
    ) -> ChunkIdx {
        let mid = self.combine_args(r, true, g);
        let shape = Shape::from_elem(1, self.grid.len());
        let mut first = start; // this level's first item's position in the level
        for level in 0..self.levels {
            first /= self.combine;
            items = items
                .chunks(self.combine)
                .enumerate()
                .map(|(k, group)| {
                    if group.len() == 1 {
                        return group[0];
                    }
                    let key = ChunkKey {
                        op: r.level_keys[level],
                        index: (first + k) as u32,
                    };
                    g.push(key, Op::Combine, mid, shape.clone(), r.dtype, group)
                })
                .collect();
        }
        debug_assert_eq!(items.len(), 1, "a region is one subtree");
        items[0]
    }

    /// Tiles the levels above the regions into `g` (a delta's graph starting at chunk
    /// `base`) from the chunks [`StreamPlan::tile_positions`] kept per output over all
    /// parts (whole-graph indices), and returns the results.
    pub fn tile_top(
        &self,
        kept: &[Vec<ChunkIdx>],
        base: u32,
        g: &mut ChunkGraph,
    ) -> Vec<ResultTensor> {
        let mut results = Vec::new();
        for (k, &out) in self.outputs.iter().enumerate() {
            let (node_shape, chunks) = match &self.steps[out] {
                Step::Reduce(r) => {
                    let root = self.top_tree(r, kept[k].clone(), base, g);
                    (self.reduced_shape(r), vec![root])
                }
                _ => (self.shape(), kept[k].clone()),
            };
            let (splits, dtype) = match &self.steps[out] {
                Step::Reduce(r) => (
                    if r.keepdims {
                        vec![vec![1]; self.grid.len()]
                    } else {
                        Vec::new()
                    },
                    r.dtype,
                ),
                Step::Create { dtype, .. } | Step::Elementwise { dtype, .. } => {
                    (self.splits.clone(), *dtype)
                }
            };
            results.push(ResultTensor {
                shape: node_shape,
                dtype,
                splits,
                chunks,
            });
        }
        results
    }

    fn shape(&self) -> Shape {
        self.splits.iter().map(|s| s.iter().sum()).collect()
    }

    fn reduced_shape(&self, r: &Reduction) -> Shape {
        reduced_shape(&self.shape(), &self.all_axes(), r.keepdims)
    }

    /// Levels `levels..` of `r`'s tree over the region roots, as [`crate::prepare::tile`]'s
    /// `tree` builds them (the root with the final arguments).
    fn top_tree(
        &self,
        r: &Reduction,
        mut items: Vec<ChunkIdx>,
        base: u32,
        g: &mut ChunkGraph,
    ) -> ChunkIdx {
        let mid = self.combine_args(r, true, g);
        let last = self.combine_args(r, r.keepdims, g);
        let ones = Shape::from_elem(1, self.grid.len());
        let mut level = self.levels;
        loop {
            let key = r.level_keys[level];
            if items.len() <= self.combine {
                let key = ChunkKey { op: key, index: 0 };
                return g.push_at(
                    base,
                    key,
                    Op::Combine,
                    last,
                    self.reduced_shape(r),
                    r.dtype,
                    &items,
                );
            }
            items = items
                .chunks(self.combine)
                .enumerate()
                .map(|(k, group)| {
                    if group.len() == 1 {
                        return group[0];
                    }
                    let key = ChunkKey {
                        op: key,
                        index: k as u32,
                    };
                    g.push_at(base, key, Op::Combine, mid, ones.clone(), r.dtype, group)
                })
                .collect();
            level += 1;
        }
    }
}
