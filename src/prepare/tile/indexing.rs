//! Tiling of shape and indexing ops: slice, transpose, concatenate and reshape (rechunk is
//! `Tiler::rechunk_to`). Slicing touches only the chunks the slice reaches and reuses a chunk
//! untouched when the slice covers it whole; concatenation re-indexes the input chunks.

use super::grid::{offsets, unify, Odometer};
use super::{Tiled, Tiler};
use crate::array::{fmt_shape, DType, Shape};
use crate::error::{AresError, Result};
use crate::ids::ChunkIdx;
use crate::ops::{DimIndex, Op, OpArgs};
use smallvec::SmallVec;

/// The chunks a slice of one dimension touches, in output order, with the local index.
fn slice_pieces(splits: &[usize], idx: DimIndex) -> Vec<(usize, DimIndex)> {
    let offs = offsets(splits);
    match idx {
        DimIndex::Index(i) => {
            let k = offs.partition_point(|o| *o <= i) - 1;
            vec![(k, DimIndex::Index(i - offs[k]))]
        }
        DimIndex::Range { len: 0, .. } => vec![(
            0,
            DimIndex::Range {
                start: 0,
                step: 1,
                len: 0,
            },
        )],
        DimIndex::Range { start, step, len } => {
            let s = step.unsigned_abs();
            let mut out = Vec::new();
            let mut visit = |k: usize| {
                let (lo, hi) = (offs[k], offs[k + 1]);
                let (t_min, t_end) = if step > 0 {
                    let t_min = if lo <= start {
                        0
                    } else {
                        (lo - start).div_ceil(s)
                    };
                    let t_end = if hi <= start {
                        0
                    } else {
                        len.min((hi - start).div_ceil(s))
                    };
                    (t_min, t_end)
                } else {
                    let t_min = if start >= hi { (start - hi) / s + 1 } else { 0 };
                    let t_end = if start >= lo {
                        len.min((start - lo) / s + 1)
                    } else {
                        0
                    };
                    (t_min, t_end)
                };
                if t_end > t_min {
                    let first = if step > 0 {
                        start + s * t_min
                    } else {
                        start - s * t_min
                    };
                    out.push((
                        k,
                        DimIndex::Range {
                            start: first - lo,
                            step,
                            len: t_end - t_min,
                        },
                    ));
                }
            };
            if step > 0 {
                (0..splits.len()).for_each(&mut visit);
            } else {
                (0..splits.len()).rev().for_each(&mut visit);
            }
            out
        }
    }
}

impl Tiler {
    pub(super) fn tile_slice(&mut self, dims: &[DimIndex], dtype: DType, input: &Tiled) -> Tiled {
        let per_dim: Vec<Vec<(usize, DimIndex)>> = dims
            .iter()
            .zip(&input.splits)
            .map(|(d, s)| slice_pieces(s, *d))
            .collect();
        let kept: Vec<usize> = (0..dims.len())
            .filter(|d| matches!(dims[*d], DimIndex::Range { .. }))
            .collect();
        let splits: Vec<Vec<usize>> = kept
            .iter()
            .map(|d| {
                per_dim[*d]
                    .iter()
                    .map(|(_, l)| {
                        if let DimIndex::Range { len, .. } = l {
                            *len
                        } else {
                            1
                        }
                    })
                    .collect()
            })
            .collect();
        let grid: Shape = splits.iter().map(|s| s.len()).collect();
        let key = self.key();
        let mut chunks = Vec::with_capacity(grid.iter().product());
        Odometer::for_each(&grid, |o| {
            let mut src_idx = Shape::from_elem(0, dims.len());
            let mut local: SmallVec<[DimIndex; 4]> = SmallVec::with_capacity(dims.len());
            let mut k = 0;
            for d in 0..dims.len() {
                let piece = if matches!(dims[d], DimIndex::Range { .. }) {
                    k += 1;
                    per_dim[d][o[k - 1]]
                } else {
                    per_dim[d][0]
                };
                src_idx[d] = piece.0;
                local.push(piece.1);
            }
            let src = input.at(&src_idx);
            let src_shape = self.shape_of(src).clone();
            let whole = local.iter().zip(&src_shape).all(|(l, n)| {
                *l == DimIndex::Range {
                    start: 0,
                    step: 1,
                    len: *n,
                }
            });
            if whole {
                chunks.push(src);
            } else {
                let shape: Shape = local
                    .iter()
                    .filter_map(|l| {
                        if let DimIndex::Range { len, .. } = l {
                            Some(*len)
                        } else {
                            None
                        }
                    })
                    .collect();
                let args = self.graph.intern_args(OpArgs::Slice(local));
                chunks.push(self.push(key, Op::Slice, args, shape, dtype, &[src]));
            }
        });
        Tiled { splits, chunks }
    }

    pub(super) fn tile_transpose(&mut self, perm: &[usize], dtype: DType, input: &Tiled) -> Tiled {
        let splits: Vec<Vec<usize>> = perm.iter().map(|p| input.splits[*p].clone()).collect();
        let grid: Shape = splits.iter().map(|s| s.len()).collect();
        let args = self
            .graph
            .intern_args(OpArgs::Transpose(perm.iter().copied().collect()));
        let key = self.key();
        let mut chunks = Vec::with_capacity(input.chunks.len());
        Odometer::for_each(&grid, |o| {
            let mut idx = Shape::from_elem(0, perm.len());
            for (d, p) in perm.iter().enumerate() {
                idx[*p] = o[d];
            }
            let src = input.at(&idx);
            let shape: Shape = perm.iter().map(|p| self.shape_of(src)[*p]).collect();
            chunks.push(self.push(key, Op::Transpose, args, shape, dtype, &[src]));
        });
        Tiled { splits, chunks }
    }

    pub(super) fn tile_concat(
        &mut self,
        axis: usize,
        dtype: DType,
        inputs: &[&Tiled],
        in_shapes: &[&Shape],
    ) -> Tiled {
        let ndim = in_shapes[0].len();
        let common: Vec<Vec<usize>> = (0..ndim)
            .map(|d| {
                if d == axis {
                    vec![]
                } else {
                    unify(
                        &inputs
                            .iter()
                            .map(|t| t.splits[d].as_slice())
                            .collect::<Vec<_>>(),
                    )
                }
            })
            .collect();
        let cast_args = self.graph.intern_args(OpArgs::Cast { dtype });
        let mut aligned = Vec::with_capacity(inputs.len());
        for t in inputs {
            let target: Vec<Vec<usize>> = (0..ndim)
                .map(|d| {
                    if d == axis {
                        t.splits[d].clone()
                    } else {
                        common[d].clone()
                    }
                })
                .collect();
            let in_dtype = self.graph.node(t.chunks[0]).dtype;
            let mut r = self.rechunk_to(t, &target, in_dtype);
            if in_dtype != dtype {
                let key = self.key();
                r.chunks = r
                    .chunks
                    .iter()
                    .map(|c| {
                        let shape = self.shape_of(*c).clone();
                        self.push(key, Op::AsType, cast_args, shape, dtype, &[*c])
                    })
                    .collect();
            }
            aligned.push(r);
        }
        // Position along the axis -> (input, local chunk index).
        let along: Vec<(usize, usize)> = aligned
            .iter()
            .enumerate()
            .flat_map(|(i, t)| (0..t.splits[axis].len()).map(move |j| (i, j)))
            .collect();
        let mut splits = common;
        splits[axis] = aligned
            .iter()
            .flat_map(|t| t.splits[axis].iter().copied())
            .collect();
        let grid: Shape = splits.iter().map(|s| s.len()).collect();
        let mut chunks = Vec::with_capacity(grid.iter().product());
        Odometer::for_each(&grid, |o| {
            let (i, j) = along[o[axis]];
            let mut idx: Shape = o.into();
            idx[axis] = j;
            chunks.push(aligned[i].at(&idx));
        });
        Tiled { splits, chunks }
    }

    /// Reshape chunk by chunk when the chunks line up with the new shape (see
    /// [`Tiler::reshape_aligned`]); otherwise through rows: the input is regridded so each
    /// chunk holds whole rows (all dimensions after the first non-unit one unsplit), flattened,
    /// regridded into runs of whole output rows and reshaped. The regrids are plain
    /// slice-and-assemble rechunks, so a chunk holds at least one row of each shape.
    pub(super) fn tile_reshape(
        &mut self,
        target: &Shape,
        dtype: DType,
        input: &Tiled,
        in_shape: &Shape,
    ) -> Result<Tiled> {
        // One chunk, or no elements at all (then every chunk is empty, and the first one,
        // reshaped, is the whole result).
        if input.chunks.len() == 1 || in_shape.contains(&0) {
            let key = self.key();
            let args = self.graph.intern_args(OpArgs::Reshape(target.clone()));
            let c = self.push(
                key,
                Op::Reshape,
                args,
                target.clone(),
                dtype,
                &[input.chunks[0]],
            );
            return Ok(Tiled {
                splits: target.iter().map(|d| vec![*d]).collect(),
                chunks: vec![c],
            });
        }
        if let Ok(t) = self.reshape_aligned(target, dtype, input, in_shape) {
            return Ok(t);
        }
        let n: usize = in_shape.iter().product();
        let elems = input
            .splits
            .iter()
            .map(|s| s.iter().copied().max().unwrap_or(1))
            .product::<usize>()
            .max(1);
        // Rows of a shape: the elements after its first dimension longer than 1.
        let row_of = |shape: &[usize]| -> (usize, usize) {
            let first = shape.iter().position(|d| *d != 1).unwrap_or(0);
            let row = shape
                .get(first + 1..)
                .map_or(1, |r| r.iter().product::<usize>());
            (first, row.max(1))
        };
        let (first, row) = row_of(in_shape);
        let by_rows: Vec<Vec<usize>> = in_shape
            .iter()
            .enumerate()
            .map(|(d, len)| match d == first {
                true => super::grid::split_dim(*len, (elems / row).max(1)),
                false => vec![*len],
            })
            .collect();
        let by_rows = self.rechunk_to(input, &by_rows, dtype);
        let flat_shape: Shape = [n].into_iter().collect();
        let flat = self.reshape_aligned(&flat_shape, dtype, &by_rows, in_shape)?;
        let (_, out_row) = row_of(target);
        let run = (elems / out_row).max(1) * out_row;
        let flat = self.rechunk_to(&flat, &[super::grid::split_dim(n, run)], dtype);
        self.reshape_aligned(target, dtype, &flat, &flat_shape)
    }

    /// Reshape chunk by chunk. Dimensions are grouped so that each group of input dims and
    /// of output dims holds the same elements; within a group only the leading dimension may
    /// be split on either side, and each input chunk must map to whole output rows. Nothing
    /// is added to the graph unless every chunk lines up.
    fn reshape_aligned(
        &mut self,
        target: &Shape,
        dtype: DType,
        input: &Tiled,
        in_shape: &Shape,
    ) -> Result<Tiled> {
        let fail = |why: &str| {
            AresError::prepare(
                "tile",
                format!(
                    "reshape {} -> {} is not chunk-aligned ({why}); rechunk the input first",
                    fmt_shape(in_shape),
                    fmt_shape(target)
                ),
            )
        };
        let ins: Vec<usize> = (0..in_shape.len()).filter(|d| in_shape[*d] != 1).collect();
        let outs: Vec<usize> = (0..target.len()).filter(|d| target[*d] != 1).collect();
        let mut splits: Vec<Vec<usize>> = target.iter().map(|d| vec![*d]).collect();
        let mut lead_pairs: Vec<(usize, usize)> = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < ins.len() && j < outs.len() {
            let (gi, gj) = (i, j);
            let (mut pi, mut pj) = (in_shape[ins[i]], target[outs[j]]);
            i += 1;
            j += 1;
            while pi != pj {
                if pi < pj {
                    pi *= in_shape[ins[i]];
                    i += 1;
                } else {
                    pj *= target[outs[j]];
                    j += 1;
                }
            }
            if ins[gi + 1..i].iter().any(|d| input.splits[*d].len() != 1) {
                return Err(fail("an inner dimension of a merged group is split"));
            }
            let inner_in: usize = ins[gi + 1..i].iter().map(|d| in_shape[*d]).product();
            let inner_out: usize = outs[gj + 1..j].iter().map(|d| target[*d]).product();
            let lead: Vec<usize> = input.splits[ins[gi]]
                .iter()
                .map(|s| {
                    let elems = s * inner_in;
                    elems.is_multiple_of(inner_out).then_some(elems / inner_out)
                })
                .collect::<Option<_>>()
                .ok_or_else(|| fail("a chunk does not hold whole rows of the new shape"))?;
            splits[outs[gj]] = lead;
            lead_pairs.push((ins[gi], outs[gj]));
        }
        let grid: Shape = splits.iter().map(|s| s.len()).collect();
        let mut pieces = Vec::with_capacity(input.chunks.len());
        let mut lined_up = true;
        Odometer::for_each(&grid, |o| {
            let mut idx = Shape::from_elem(0, in_shape.len());
            for (di, dout) in &lead_pairs {
                idx[*di] = o[*dout];
            }
            let shape: Shape = o.iter().enumerate().map(|(d, k)| splits[d][*k]).collect();
            let src: ChunkIdx = input.at(&idx);
            lined_up &=
                self.shape_of(src).iter().product::<usize>() == shape.iter().product::<usize>();
            pieces.push((src, shape));
        });
        if !lined_up {
            return Err(fail("chunk sizes do not line up"));
        }
        let key = self.key();
        let chunks = pieces
            .into_iter()
            .map(|(src, shape)| {
                let args = self.graph.intern_args(OpArgs::Reshape(shape.clone()));
                self.push(key, Op::Reshape, args, shape, dtype, &[src])
            })
            .collect();
        Ok(Tiled { splits, chunks })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_pieces_forward_with_step() {
        // |0 1 2 3|4 5 6 7|8 9|  [1:9:3] -> 1, 4, 7
        let p = slice_pieces(
            &[4, 4, 2],
            DimIndex::Range {
                start: 1,
                step: 3,
                len: 3,
            },
        );
        assert_eq!(
            p,
            vec![
                (
                    0,
                    DimIndex::Range {
                        start: 1,
                        step: 3,
                        len: 1
                    }
                ),
                (
                    1,
                    DimIndex::Range {
                        start: 0,
                        step: 3,
                        len: 2
                    }
                )
            ]
        );
    }

    #[test]
    fn slice_pieces_reversed() {
        // [::-1] of |0 1 2 3|4 5 6 7|8 9| visits chunk 2 first.
        let p = slice_pieces(
            &[4, 4, 2],
            DimIndex::Range {
                start: 9,
                step: -1,
                len: 10,
            },
        );
        assert_eq!(
            p[0],
            (
                2,
                DimIndex::Range {
                    start: 1,
                    step: -1,
                    len: 2
                }
            )
        );
        assert_eq!(
            p[2],
            (
                0,
                DimIndex::Range {
                    start: 3,
                    step: -1,
                    len: 4
                }
            )
        );
    }

    #[test]
    fn slice_pieces_index() {
        assert_eq!(
            slice_pieces(&[4, 4, 2], DimIndex::Index(5)),
            vec![(1, DimIndex::Index(1))]
        );
    }
}
