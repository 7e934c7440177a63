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

/// A result as the seal tiles it: its chunks are the seal's own (before it is cut into a
/// part) or, for an aligned output, already the whole graph's.
pub struct SealResult {
    pub tensor: ResultTensor,
    pub local: bool,
}

impl SealResult {
    fn local(shape: Shape, dtype: DType, chunk: ChunkIdx) -> Self {
        Self {
            tensor: ResultTensor {
                splits: shape.iter().map(|n| vec![*n]).collect(),
                shape,
                dtype,
                chunks: vec![chunk],
            },
            local: true,
        }
    }
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

    /// Tiles positions `range` (whole regions, the last may be short) into `g`, an empty
    /// graph holding the tables of the parts before. Returns the chunks the seal reads or
    /// the results hold, per kept step: a reduction's region roots, an output's chunks.
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
                    Step::Top { .. } => continue, // in the seal
                };
                chunk_at[t].push(chunk);
            }
        }
        let mut kept = Vec::with_capacity(self.kept.len());
        for &out in &self.kept {
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

    /// Tiles the seal into `g`, an empty graph holding the tables: first a placeholder for
    /// every region root (standing for the chunk an earlier part made), then the combine
    /// levels above the regions and the ops on reduction results. `kept` is what
    /// [`StreamPlan::tile_positions`] returned over all runs, joined per kept step
    /// (whole-graph indices). Returns the chunks the placeholders stand for and, per output,
    /// its result: of `g`'s chunks, or (an aligned output's) of the whole graph's.
    pub fn tile_seal(
        &self,
        kept: &[Vec<ChunkIdx>],
        g: &mut ChunkGraph,
    ) -> (Vec<ChunkIdx>, Vec<SealResult>) {
        let mut stands_for = Vec::new();
        let mut chunk_of: Vec<Option<ChunkIdx>> = vec![None; self.steps.len()];
        let ones = Shape::from_elem(1, self.grid.len());
        // All placeholders first: the seal's first chunks, dropped when it is cut.
        let mut placeholders = Vec::new();
        for (k, &t) in self.kept.iter().enumerate() {
            let Step::Reduce(r) = &self.steps[t] else {
                continue;
            };
            let mid = self.combine_args(r, true, g);
            let roots: Vec<ChunkIdx> = kept[k]
                .iter()
                .enumerate()
                .map(|(i, root)| {
                    stands_for.push(*root);
                    let key = ChunkKey {
                        op: r.map_key,
                        index: i as u32,
                    };
                    g.push(key, Op::Combine, mid, ones.clone(), r.dtype, &[])
                })
                .collect();
            placeholders.push((t, r, roots));
        }
        for (t, r, roots) in placeholders {
            chunk_of[t] = Some(self.top_tree(r, roots, g));
        }
        for (t, step) in self.steps.iter().enumerate() {
            if let Step::Top {
                key,
                op,
                args,
                shape,
                dtype,
                inputs,
            } = step
            {
                let a = g.intern_args(args.clone());
                let ins: SmallVec<[ChunkIdx; 3]> = inputs
                    .iter()
                    .map(|i| chunk_of[*i].expect("tiled"))
                    .collect();
                let key = ChunkKey { op: *key, index: 0 };
                chunk_of[t] = Some(g.push(key, *op, a, shape.clone(), *dtype, &ins));
            }
        }
        let results = self
            .outputs
            .iter()
            .map(|&out| match &self.steps[out] {
                Step::Reduce(r) => SealResult::local(
                    self.reduced_shape(r),
                    r.dtype,
                    chunk_of[out].expect("tiled"),
                ),
                Step::Top { shape, dtype, .. } => {
                    SealResult::local(shape.clone(), *dtype, chunk_of[out].expect("tiled"))
                }
                Step::Create { dtype, .. } | Step::Elementwise { dtype, .. } => {
                    let k = self.kept.iter().position(|t| *t == out).expect("kept");
                    SealResult {
                        tensor: ResultTensor {
                            shape: self.shape(),
                            dtype: *dtype,
                            splits: self.splits.clone(),
                            chunks: kept[k].clone(),
                        },
                        local: false,
                    }
                }
            })
            .collect();
        (stands_for, results)
    }

    fn shape(&self) -> Shape {
        self.splits.iter().map(|s| s.iter().sum()).collect()
    }

    fn reduced_shape(&self, r: &Reduction) -> Shape {
        reduced_shape(&self.shape(), &self.all_axes(), r.keepdims)
    }

    /// Levels `levels..` of `r`'s tree over the region roots, as [`crate::prepare::tile`]'s
    /// `tree` builds them (the root with the final arguments).
    fn top_tree(&self, r: &Reduction, mut items: Vec<ChunkIdx>, g: &mut ChunkGraph) -> ChunkIdx {
        let mid = self.combine_args(r, true, g);
        let last = self.combine_args(r, r.keepdims, g);
        let ones = Shape::from_elem(1, self.grid.len());
        let mut level = self.levels;
        loop {
            let key = r.level_keys[level];
            if items.len() <= self.combine {
                let key = ChunkKey { op: key, index: 0 };
                return g.push(
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
                    g.push(key, Op::Combine, mid, ones.clone(), r.dtype, group)
                })
                .collect();
            level += 1;
        }
    }
}
