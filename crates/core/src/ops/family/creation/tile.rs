//! Tiling of creation ops: one chunk per grid cell, each filled independently. Random chunks
//! share one argument record, the user's seed; each chunk's own seed is derived from it and
//! the chunk's position (its key's index) when it is computed ([`OpArgs::at`]), so the
//! result is the same whatever the execution order or placement, and a graph of millions of
//! random chunks does not hold a 112-byte record per chunk.

use crate::array::{DType, Shape};
use crate::ops::{ChunkSpec, Fill, Op, OpArgs};
use crate::prepare::tile::{offsets, splits_for, Odometer, Tiled, Tiler};

impl Tiler {
    pub(crate) fn tile_creation(
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
                // One record for the op: each chunk's seed comes from its position.
                Fill::Uniform { .. } | Fill::Normal { .. } | Fill::Const { .. } => *fill,
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
                Fill::Range { .. } => self.graph.push_args(OpArgs::Fill {
                    fill: chunk_fill,
                    shape: cshape.clone(),
                }),
                _ => self.graph.intern_args(OpArgs::Fill {
                    fill: chunk_fill,
                    shape: cshape.clone(),
                }),
            };
            let chunk = self.push(key, op, args, cshape, dtype, &[]);
            debug_assert_eq!(self.graph.node(chunk).key.index as u64, linear, "positions");
            chunks.push(chunk);
            linear += 1;
        });
        Tiled { splits, chunks }
    }
}

#[cfg(test)]
mod tests {
    use crate::array::ArrayData;
    use crate::config::TaskConfig;
    use crate::ids::ChunkIdx;
    use crate::ops::{chunk_seed, Fill, Op, OpArgs};
    use crate::tensor::{self, Tensor};

    /// `rand(1000, chunk=10)`: one argument record for the hundred chunks, and each chunk
    /// computed with its own seed, the one derived from its position.
    #[test]
    fn random_chunks_share_one_record_and_compute_with_their_own_seeds() {
        let x = tensor::rand(&[1000], 10, Some(42)).unwrap();
        let g = crate::prepare::tile::tile(&Tensor::graph(&[&x]), &TaskConfig::default()).unwrap();
        let fills = g
            .args
            .iter()
            .filter(|a| matches!(a, OpArgs::Fill { .. }))
            .count();
        assert_eq!((g.len(), fills), (100, 1));
        let mut firsts = Vec::new();
        for i in [0u32, 1, 57, 99] {
            let idx = ChunkIdx(i);
            assert_eq!(
                g.node(idx).key.index,
                i,
                "a chunk's position is its key's index"
            );
            let got = crate::kernels::compute_chunk(&g, idx, &[]).unwrap();
            let own = Fill::Uniform {
                seed: chunk_seed(42, i as u64),
            };
            let args = OpArgs::Fill {
                fill: own,
                shape: g.shape(idx).clone(),
            };
            let want = crate::kernels::apply(Op::Rand, &args, &[], &[]).unwrap();
            assert_eq!(got, want, "chunk {i}");
            let ArrayData::F64(a) = got else {
                unreachable!()
            };
            firsts.push(a[0].to_bits());
        }
        firsts.sort_unstable();
        firsts.dedup();
        assert_eq!(firsts.len(), 4, "chunks differ");
    }
}
