//! Tiling of shape and indexing ops: slice, transpose and concatenate (reshape has its own
//! file, rechunk is `Tiler::rechunk_to`). Slicing touches only the chunks the slice reaches and reuses a chunk
//! untouched when the slice covers it whole; concatenation re-indexes the input chunks.

use crate::array::{DType, Shape};
use crate::ops::{DimIndex, Op, OpArgs};
use crate::prepare::tile::{offsets, unify, Odometer, Tiled, Tiler};
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
    pub(crate) fn tile_slice(&mut self, dims: &[DimIndex], dtype: DType, input: &Tiled) -> Tiled {
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
                let args = self.graph.intern_args(OpArgs::Slice(local.into()));
                chunks.push(self.push(key, Op::Slice, args, shape, dtype, &[src]));
            }
        });
        Tiled { splits, chunks }
    }

    pub(crate) fn tile_transpose(&mut self, perm: &[usize], dtype: DType, input: &Tiled) -> Tiled {
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

    pub(crate) fn tile_concat(
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
