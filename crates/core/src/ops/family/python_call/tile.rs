//! Tiling of `map_blocks`: one chunk per output block, each reading one chunk of every
//! input.
//!
//! An input axis the call maps to an output axis keeps its chunks when it has as many
//! blocks as that output axis (block `k` feeds output block `k`) or one block (broadcast to
//! every output block); an axis it does not map is made one chunk, so the function sees it
//! whole (dask's `concatenate=True`). Every chunk shares one argument entry, the call with
//! the function's bytes: the graph holds them once.

use super::call::BlockCall;
use crate::array::{fmt_shape, DType, Shape};
use crate::error::{AresError, Result};
use crate::ops::{Op, OpArgs};
use crate::prepare::tile::{linear, Odometer, Tiled, Tiler};

impl Tiler {
    pub(crate) fn tile_map_blocks(
        &mut self,
        call: &BlockCall,
        dtype: DType,
        inputs: &[&Tiled],
        in_shapes: &[&Shape],
        in_dtypes: &[DType],
    ) -> Result<Tiled> {
        let grid = call.grid();
        let mut aligned: Vec<Tiled> = Vec::with_capacity(inputs.len());
        for (i, (input, map)) in inputs.iter().zip(&call.inputs).enumerate() {
            let mut target = input.splits.clone();
            for (a, out_axis) in map.iter().enumerate() {
                match out_axis {
                    None => target[a] = vec![in_shapes[i][a]],
                    Some(o) => {
                        let (have, want) = (input.splits[a].len(), grid[*o as usize]);
                        if have != want && have != 1 {
                            return Err(AresError::shape(
                                "map_blocks",
                                format!(
                                    "input {i} (shape {}) has {have} blocks on axis {a} but \
                                     the output has {want} on axis {o}: rechunk the inputs \
                                     to matching chunks",
                                    fmt_shape(in_shapes[i])
                                ),
                            ));
                        }
                    }
                }
            }
            aligned.push(self.rechunk_to(input, &target, in_dtypes[i]));
        }
        let args = self
            .graph
            .push_args(OpArgs::MapBlocks(Box::new(call.clone())));
        let key = self.key();
        let mut chunks = Vec::with_capacity(grid.iter().product());
        let mut ins = Vec::with_capacity(inputs.len());
        Odometer::for_each(&grid, |idx| {
            ins.clear();
            for (t, map) in aligned.iter().zip(&call.inputs) {
                let at: Shape = map
                    .iter()
                    .enumerate()
                    .map(|(a, o)| match o {
                        Some(o) if t.splits[a].len() > 1 => idx[*o as usize],
                        _ => 0,
                    })
                    .collect();
                ins.push(t.chunks[linear(&t.grid(), &at)]);
            }
            let shape: Shape = idx
                .iter()
                .enumerate()
                .map(|(d, k)| call.out_splits[d][*k])
                .collect();
            chunks.push(self.push(key, Op::MapBlocks, args, shape, dtype, &ins));
        });
        Ok(Tiled {
            splits: call.out_splits.clone(),
            chunks,
        })
    }
}
