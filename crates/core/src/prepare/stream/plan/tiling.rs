//! The tiling of a [`StreamPlan`]: runs of grid positions, each with its regions' subtrees,
//! and the seal (placeholders for the region roots, the levels above them, the ops on
//! reduction results). Chunk keys as [`crate::prepare::tile::tile`] gives them.

use super::*;

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

impl StreamPlan {
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
        let mut first = start; // this level's first item's position in the level
        for level in 0..self.levels {
            first /= self.combine;
            items = self.combine_level(r, &items, level, first, g);
        }
        debug_assert_eq!(items.len(), 1, "a region is one subtree");
        items[0]
    }

    /// One level of `r`'s tree: `items` combined `combine` at a time, the level's nodes
    /// indexed from `first` on; a group of one goes up as it is (the last, as in `tile`).
    fn combine_level(
        &self,
        r: &Reduction,
        items: &[ChunkIdx],
        level: usize,
        first: usize,
        g: &mut ChunkGraph,
    ) -> Vec<ChunkIdx> {
        let mid = self.combine_args(r, true, g);
        let ones = Shape::from_elem(1, self.grid.len());
        items
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
                g.push(key, Op::Combine, mid, ones.clone(), r.dtype, group)
            })
            .collect()
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
        let last = self.combine_args(r, r.keepdims, g);
        let mut level = self.levels;
        while items.len() > self.combine {
            items = self.combine_level(r, &items, level, 0, g);
            level += 1;
        }
        let key = ChunkKey {
            op: r.level_keys[level],
            index: 0,
        };
        let shape = self.reduced_shape(r);
        g.push(key, Op::Combine, last, shape, r.dtype, &items)
    }
}
