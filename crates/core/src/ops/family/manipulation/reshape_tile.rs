//! Tiling of `reshape`: chunk by chunk when the chunks line up with the new shape, otherwise
//! through whole rows (regrid, flatten, regrid, reshape).

use crate::array::{fmt_shape, DType, Shape};
use crate::error::{AresError, Result};
use crate::ids::ChunkIdx;
use crate::ops::{Op, OpArgs};
use crate::prepare::tile::{split_dim, Odometer, Tiled, Tiler};

impl Tiler {
    /// Reshape chunk by chunk when the chunks line up with the new shape (see
    /// [`Tiler::reshape_aligned`]); otherwise through rows: the input is regridded so each
    /// chunk holds whole rows (all dimensions after the first non-unit one unsplit), flattened,
    /// regridded into runs of whole output rows and reshaped. The regrids are plain
    /// slice-and-assemble rechunks, so a chunk holds at least one row of each shape.
    pub(crate) fn tile_reshape(
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
                true => split_dim(*len, (elems / row).max(1)),
                false => vec![*len],
            })
            .collect();
        let by_rows = self.rechunk_to(input, &by_rows, dtype);
        let flat_shape: Shape = [n].into_iter().collect();
        let flat = self.reshape_aligned(&flat_shape, dtype, &by_rows, in_shape)?;
        let (_, out_row) = row_of(target);
        let run = (elems / out_row).max(1) * out_row;
        let flat = self.rechunk_to(&flat, &[split_dim(n, run)], dtype);
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
