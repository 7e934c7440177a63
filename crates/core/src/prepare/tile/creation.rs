//! Tiling of creation ops: one chunk per grid cell, each filled independently. Random chunks
//! get their own seed derived from the user seed and the chunk's position, so the result is
//! the same whatever the execution order or placement.

use super::grid::{offsets, splits_for, Odometer};
use super::{Tiled, Tiler};
use crate::array::{DType, Shape};
use crate::ops::{ChunkSpec, Fill, Op, OpArgs};

/// SplitMix64: the per-chunk seed derivation.
pub fn chunk_seed(user_seed: u64, chunk: u64) -> u64 {
    let mut z = user_seed ^ chunk.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Tiler {
    /// Another task's result: one fetch chunk per source chunk, same layout.
    pub(super) fn tile_fetch(
        &mut self,
        task: crate::ids::TaskId,
        splits: &[Vec<usize>],
        chunks: &[(u32, u32)],
        dtype: DType,
    ) -> Tiled {
        let grid: Shape = splits.iter().map(|s| s.len()).collect();
        let key = self.key();
        let mut out = Vec::with_capacity(chunks.len());
        let mut i = 0;
        Odometer::for_each(&grid, |idx| {
            let shape: Shape = idx.iter().enumerate().map(|(d, k)| splits[d][*k]).collect();
            let (chunk, worker) = chunks[i];
            let args = self.graph.push_args(OpArgs::FetchChunk {
                task,
                chunk,
                worker,
            });
            out.push(self.push(key, Op::Fetch, args, shape, dtype, &[]));
            i += 1;
        });
        Tiled {
            splits: splits.to_vec(),
            chunks: out,
        }
    }

    pub(super) fn tile_creation(
        &mut self,
        op: Op,
        fill: &Fill,
        shape: &Shape,
        spec: &ChunkSpec,
        dtype: DType,
    ) -> Tiled {
        let splits = splits_for(shape, spec);
        let grid: Shape = splits.iter().map(|s| s.len()).collect();
        let starts: Vec<Vec<usize>> = splits.iter().map(|s| offsets(s)).collect();
        let key = self.key();
        let mut chunks = Vec::with_capacity(grid.iter().product());
        let mut linear = 0u64;
        Odometer::for_each(&grid, |idx| {
            let cshape: Shape = idx.iter().enumerate().map(|(d, i)| splits[d][*i]).collect();
            let chunk_fill = match *fill {
                Fill::Uniform { seed } => Fill::Uniform {
                    seed: chunk_seed(seed, linear),
                },
                Fill::Normal { seed } => Fill::Normal {
                    seed: chunk_seed(seed, linear),
                },
                Fill::Const { value } => Fill::Const { value },
                Fill::Range {
                    start, step, end, ..
                } => Fill::Range {
                    // Ranges are 1-D: the chunk starts `offset` steps in.
                    start,
                    step,
                    offset: starts[0][idx[0]] as u64,
                    end,
                },
            };
            let args = match chunk_fill {
                Fill::Const { .. } => self.graph.intern_args(OpArgs::Fill {
                    fill: chunk_fill,
                    shape: cshape.clone(),
                }),
                _ => self.graph.push_args(OpArgs::Fill {
                    fill: chunk_fill,
                    shape: cshape.clone(),
                }),
            };
            chunks.push(self.push(key, op, args, cshape, dtype, &[]));
            linear += 1;
        });
        Tiled { splits, chunks }
    }
}
