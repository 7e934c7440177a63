//! Tiling of elementwise ops with numpy broadcasting: the inputs' chunk boundaries are
//! unified per output axis (rechunking an input where needed), and each output chunk applies
//! the op to the matching input chunks; a broadcast (length-1) axis always uses chunk 0.

use crate::array::{DType, Shape};
use crate::ops::{Op, OpArgs};
use crate::prepare::tile::{unify, Odometer, Tiled, Tiler};
use smallvec::SmallVec;

impl Tiler {
    pub(crate) fn tile_elementwise(
        &mut self,
        op: Op,
        args: &OpArgs,
        shape: &Shape,
        dtype: DType,
        inputs: &[&Tiled],
        in_shapes: &[&Shape],
    ) -> Tiled {
        let n = shape.len();
        // Unified splits per output axis, from the inputs that are not broadcast there.
        let splits: Vec<Vec<usize>> = (0..n)
            .map(|d| {
                let candidates: Vec<&[usize]> = inputs
                    .iter()
                    .zip(in_shapes)
                    .filter_map(|(t, s)| {
                        let k = (d + s.len()).checked_sub(n)?;
                        (s[k] == shape[d]).then(|| t.splits[k].as_slice())
                    })
                    .collect();
                unify(&candidates)
            })
            .collect();
        let aligned: Vec<Tiled> = inputs
            .iter()
            .zip(in_shapes)
            .map(|(t, s)| {
                let target: Vec<Vec<usize>> = (0..s.len())
                    .map(|k| {
                        if s[k] == shape[k + n - s.len()] {
                            splits[k + n - s.len()].clone()
                        } else {
                            vec![1]
                        }
                    })
                    .collect();
                self.rechunk_to(t, &target, self.graph.node(t.chunks[0]).dtype)
            })
            .collect();
        let args_idx = self.graph.intern_args(args.clone());
        let key = self.key();
        let grid: Shape = splits.iter().map(|s| s.len()).collect();
        let mut chunks = Vec::with_capacity(grid.iter().product());
        Odometer::for_each(&grid, |o| {
            let ins: SmallVec<[_; 2]> = aligned
                .iter()
                .zip(in_shapes)
                .map(|(t, s)| {
                    let off = n - s.len();
                    let idx: Shape = (0..s.len())
                        .map(|k| {
                            if s[k] == shape[k + off] {
                                o[k + off]
                            } else {
                                0
                            }
                        })
                        .collect();
                    t.at(&idx)
                })
                .collect();
            let cshape: Shape = o.iter().enumerate().map(|(d, i)| splits[d][*i]).collect();
            chunks.push(self.push(key, op, args_idx, cshape, dtype, &ins));
        });
        Tiled { splits, chunks }
    }
}
