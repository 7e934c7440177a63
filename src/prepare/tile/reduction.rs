//! Tiling of reductions and matmul.
//!
//! A reduction maps every input chunk to a partial result (reduced axes kept as length 1),
//! then combines the partials of each output chunk in a tree of fan-in `combine_size`; only
//! the last level drops the reduced axes when `keepdims` is false. A single partial needs no
//! tree. Matmul multiplies block pairs along the shared axis and sums the partial products
//! in the same kind of tree (`tree_add`).

use super::grid::{unify, Odometer};
use super::{Tiled, Tiler};
use crate::array::{DType, Shape};
use crate::ids::{ArgsIdx, ChunkIdx, OpKey};
use crate::ops::{DimIndex, Op, OpArgs};
use crate::tensor::infer::reduced_shape;
use smallvec::SmallVec;

impl Tiler {
    pub(super) fn tile_reduction(
        &mut self,
        op: Op,
        axes: &[usize],
        keepdims: bool,
        dtype: DType,
        input: &Tiled,
    ) -> Tiled {
        let ndim = input.splits.len();
        let axes_sv: SmallVec<[usize; 4]> = axes.iter().copied().collect();
        let in_grid = input.grid();
        let kept: Vec<usize> = (0..ndim).filter(|d| !axes.contains(d)).collect();
        let group_grid: Shape = axes.iter().map(|a| in_grid[*a]).collect();
        let single = group_grid.iter().product::<usize>() == 1;

        let map_keep = self.graph.intern_args(OpArgs::Reduce {
            axes: axes_sv.clone(),
            keepdims: keepdims || !single,
        });
        let mid = self.graph.intern_args(OpArgs::Combine {
            op,
            axes: axes_sv.clone(),
            keepdims: true,
        });
        let last = self.graph.intern_args(OpArgs::Combine {
            op,
            axes: axes_sv.clone(),
            keepdims,
        });
        let map_key = self.key();
        let mut level_keys = Vec::new();

        let out_grid: Shape = kept.iter().map(|d| in_grid[*d]).collect();
        let mut chunks = Vec::with_capacity(out_grid.iter().product());
        Odometer::for_each(&out_grid, |o| {
            let mut partials = Vec::with_capacity(group_grid.iter().product());
            Odometer::for_each(&group_grid, |g| {
                let mut idx: Shape = Shape::from_elem(0, ndim);
                for (k, d) in kept.iter().enumerate() {
                    idx[*d] = o[k];
                }
                for (k, a) in axes.iter().enumerate() {
                    idx[*a] = g[k];
                }
                let src = input.at(&idx);
                let shape = reduced_shape(self.shape_of(src), axes, keepdims || !single);
                partials.push(self.push(map_key, op, map_keep, shape, dtype, &[src]));
            });
            if single {
                chunks.push(partials[0]);
            } else {
                let shape = self.shape_of(partials[0]).clone();
                let final_shape = reduced_shape(&shape, axes, keepdims);
                chunks.push(self.tree(
                    Op::Combine,
                    partials,
                    &mut level_keys,
                    (mid, shape),
                    (last, final_shape),
                    dtype,
                ));
            }
        });

        let splits = (0..ndim)
            .filter_map(|d| match (axes.contains(&d), keepdims) {
                (false, _) => Some(input.splits[d].clone()),
                (true, true) => Some(vec![1]),
                (true, false) => None,
            })
            .collect();
        Tiled { splits, chunks }
    }

    /// `argmin`/`argmax` along `axis`: each chunk maps to its best `(value, global index)`
    /// pairs (see `kernels::argreduce`), the pairs of an output chunk merge in a tree, and a
    /// last step keeps the index.
    pub(super) fn tile_argreduce(
        &mut self,
        op: Op,
        axis: usize,
        keepdims: bool,
        input: &Tiled,
    ) -> Tiled {
        let in_dtype = self.graph.node(input.chunks[0]).dtype;
        let pair_dtype = if in_dtype == DType::F64 {
            DType::F64
        } else {
            DType::I64
        };
        let starts = super::grid::offsets(&input.splits[axis]);
        let grid = input.grid();
        let arg = |offset: usize, keepdims| OpArgs::Arg {
            op,
            axis,
            offset: offset as u64,
            keepdims,
        };
        let combine_args = self.graph.intern_args(arg(0, true));
        let index_args = self.graph.intern_args(arg(0, keepdims));
        let (map_key, index_key) = (self.key(), self.key());
        let mut level_keys = Vec::new();
        let mut lines = grid.clone();
        lines[axis] = 1;
        let mut chunks = Vec::with_capacity(lines.iter().product());
        Odometer::for_each(&lines, |o| {
            let partials: Vec<ChunkIdx> = (0..grid[axis])
                .map(|j| {
                    let mut idx: Shape = o.into();
                    idx[axis] = j;
                    let src = input.at(&idx);
                    let mut shape = self.shape_of(src).clone();
                    shape[axis] = 1;
                    shape.push(2);
                    let args = self.graph.intern_args(arg(starts[j], true));
                    self.push(map_key, op, args, shape, pair_dtype, &[src])
                })
                .collect();
            let shape = self.shape_of(partials[0]).clone();
            let merged = self.tree(
                Op::ArgCombine,
                partials,
                &mut level_keys,
                (combine_args, shape.clone()),
                (combine_args, shape.clone()),
                pair_dtype,
            );
            let out_shape = reduced_shape(&shape[..shape.len() - 1], &[axis], keepdims);
            chunks.push(self.push(
                index_key,
                Op::ArgIndex,
                index_args,
                out_shape,
                DType::I64,
                &[merged],
            ));
        });
        let splits = (0..grid.len())
            .filter_map(|d| match (d == axis, keepdims) {
                (false, _) => Some(input.splits[d].clone()),
                (true, true) => Some(vec![1]),
                (true, false) => None,
            })
            .collect();
        Tiled { splits, chunks }
    }

    /// A running total along `axis`: each chunk scans locally, then adds (or multiplies by)
    /// the last slice of the previous output chunk along the axis, a chain of `k` steps for
    /// `k` chunks on the axis. The carry is a length-1 slice that broadcasts.
    pub(super) fn tile_scan(&mut self, op: Op, axis: usize, dtype: DType, input: &Tiled) -> Tiled {
        let grid = input.grid();
        let scan_args = self.graph.intern_args(OpArgs::Scan { axis });
        let none = self.graph.intern_args(OpArgs::None);
        let combine = if op == Op::CumSum { Op::Add } else { Op::Mul };
        let (scan_key, carry_key, combine_key) = (self.key(), self.key(), self.key());
        let mut chunks = vec![ChunkIdx(0); grid.iter().product()];
        let mut lines = grid.clone();
        lines[axis] = 1;
        Odometer::for_each(&lines, |o| {
            let mut prev: Option<ChunkIdx> = None;
            for j in 0..grid[axis] {
                let mut idx: Shape = o.into();
                idx[axis] = j;
                let src = input.at(&idx);
                let shape = self.shape_of(src).clone();
                let local = self.push(scan_key, op, scan_args, shape.clone(), dtype, &[src]);
                let out = match prev {
                    None => local,
                    Some(p) => {
                        let prev_shape = self.shape_of(p).clone();
                        let last: SmallVec<[DimIndex; 4]> = prev_shape
                            .iter()
                            .enumerate()
                            .map(|(d, n)| DimIndex::Range {
                                start: if d == axis { n.saturating_sub(1) } else { 0 },
                                step: 1,
                                len: if d == axis { (*n).min(1) } else { *n },
                            })
                            .collect();
                        let mut carry_shape = prev_shape;
                        carry_shape[axis] = carry_shape[axis].min(1);
                        let args = self.graph.intern_args(OpArgs::Slice(last));
                        let carry = self.push(carry_key, Op::Slice, args, carry_shape, dtype, &[p]);
                        self.push(combine_key, combine, none, shape, dtype, &[local, carry])
                    }
                };
                chunks[super::grid::linear(&grid, &idx)] = out;
                prev = Some(out);
            }
        });
        Tiled {
            splits: input.splits.clone(),
            chunks,
        }
    }

    /// One-pass variance: each input chunk maps to its moments `(n, mean, M2)` per output
    /// position, the moments of an output chunk merge in a tree, and a last step turns them
    /// into `M2 / (n - ddof)` (see `kernels::moments`).
    pub(super) fn tile_variance(
        &mut self,
        axes: &[usize],
        keepdims: bool,
        ddof: u32,
        input: &Tiled,
    ) -> Tiled {
        let ndim = input.splits.len();
        let axes: SmallVec<[usize; 4]> = axes.iter().copied().collect();
        let in_grid = input.grid();
        let kept: Vec<usize> = (0..ndim).filter(|d| !axes.contains(d)).collect();
        let group_grid: Shape = axes.iter().map(|a| in_grid[*a]).collect();
        let moments = |keepdims| OpArgs::Moments {
            axes: axes.clone(),
            keepdims,
            ddof,
        };
        let map_args = self.graph.intern_args(moments(true));
        let final_args = self.graph.intern_args(moments(keepdims));
        let none = self.graph.intern_args(OpArgs::None);
        let (map_key, final_key) = (self.key(), self.key());
        let mut level_keys = Vec::new();
        let out_grid: Shape = kept.iter().map(|d| in_grid[*d]).collect();
        let mut chunks = Vec::with_capacity(out_grid.iter().product());
        Odometer::for_each(&out_grid, |o| {
            let mut partials = Vec::with_capacity(group_grid.iter().product());
            Odometer::for_each(&group_grid, |g| {
                let mut idx: Shape = Shape::from_elem(0, ndim);
                for (k, d) in kept.iter().enumerate() {
                    idx[*d] = o[k];
                }
                for (k, a) in axes.iter().enumerate() {
                    idx[*a] = g[k];
                }
                let src = input.at(&idx);
                let mut shape = reduced_shape(self.shape_of(src), &axes, true);
                shape.push(crate::kernels::moments::FIELDS);
                partials.push(self.push(map_key, Op::Moments, map_args, shape, DType::F64, &[src]));
            });
            let shape = self.shape_of(partials[0]).clone();
            let merged = self.tree(
                Op::MomentsCombine,
                partials,
                &mut level_keys,
                (none, shape.clone()),
                (none, shape.clone()),
                DType::F64,
            );
            let out_shape = reduced_shape(&shape[..ndim], &axes, keepdims);
            chunks.push(self.push(
                final_key,
                Op::MomentsVar,
                final_args,
                out_shape,
                DType::F64,
                &[merged],
            ));
        });
        let splits = (0..ndim)
            .filter_map(|d| match (axes.contains(&d), keepdims) {
                (false, _) => Some(input.splits[d].clone()),
                (true, true) => Some(vec![1]),
                (true, false) => None,
            })
            .collect();
        Tiled { splits, chunks }
    }

    /// Combines `items` in a tree of fan-in `combine_size`. Intermediate levels use `mid`
    /// arguments and shape, the root `last`. One op key per level, shared by all trees of
    /// the same tiled operation through `level_keys`.
    pub(super) fn tree(
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

    pub(super) fn tile_matmul(&mut self, dtype: DType, a: &Tiled, b: &Tiled) -> Tiled {
        let k = unify(&[&a.splits[1], &b.splits[0]]);
        let a = self.rechunk_to(
            a,
            &[a.splits[0].clone(), k.clone()],
            self.graph.node(a.chunks[0]).dtype,
        );
        let b = self.rechunk_to(
            b,
            &[k.clone(), b.splits[1].clone()],
            self.graph.node(b.chunks[0]).dtype,
        );
        let none = self.graph.intern_args(OpArgs::None);
        let key = self.key();
        let mut level_keys = Vec::new();
        let mut chunks = Vec::with_capacity(a.splits[0].len() * b.splits[1].len());
        for i in 0..a.splits[0].len() {
            for j in 0..b.splits[1].len() {
                let shape: Shape = [a.splits[0][i], b.splits[1][j]].into_iter().collect();
                let partials: Vec<ChunkIdx> = (0..k.len())
                    .map(|p| {
                        let ins = [a.at(&[i, p]), b.at(&[p, j])];
                        self.push(key, Op::Matmul, none, shape.clone(), dtype, &ins)
                    })
                    .collect();
                chunks.push(self.tree(
                    Op::TreeAdd,
                    partials,
                    &mut level_keys,
                    (none, shape.clone()),
                    (none, shape),
                    dtype,
                ));
            }
        }
        Tiled {
            splits: vec![a.splits[0].clone(), b.splits[1].clone()],
            chunks,
        }
    }
}
