//! Tiling of `select_ranks` (see the module doc of [`super`]): per chunk a sample, one
//! brackets node, per chunk counts, their sum, per chunk a gather, one picker. About 4N + 3
//! nodes for N chunks; every node but the picker's inputs is small or one chunk's.

use super::{SelectStep, SAMPLE};
use crate::array::DType;
use crate::ids::ChunkIdx;
use crate::ops::{Op, OpArgs};
use crate::prepare::tile::{Tiled, Tiler};
use smallvec::smallvec;

impl Tiler {
    /// The values at `ranks` of the 1-D `input` (`n` values of `dtype`) sorted, NaN last.
    pub(crate) fn tile_select_ranks(
        &mut self,
        ranks: &[u64],
        dtype: DType,
        input: &Tiled,
        n: usize,
    ) -> Tiled {
        let lens = &input.splits[0];
        let r = ranks.len();
        let step =
            |tiler: &mut Self, step: SelectStep| tiler.graph.intern_args(OpArgs::SelectStep(step));
        let out = if input.chunks.len() == 1 {
            let key = self.key();
            let args = step(
                self,
                SelectStep::Whole {
                    ranks: ranks.to_vec(),
                },
            );
            self.push(
                key,
                Op::SelectRanks,
                args,
                smallvec![r],
                dtype,
                &input.chunks,
            )
        } else {
            self.tile_selection(ranks, dtype, input, n, lens)
        };
        Tiled {
            splits: vec![vec![r]],
            chunks: vec![out],
        }
    }

    fn tile_selection(
        &mut self,
        ranks: &[u64],
        dtype: DType,
        input: &Tiled,
        n: usize,
        lens: &[usize],
    ) -> ChunkIdx {
        let (wide, total) = (dtype.wide(), SAMPLE.min(n).max(1));
        let sample_key = self.key();
        let samples: Vec<ChunkIdx> = input
            .chunks
            .iter()
            .zip(lens)
            .enumerate()
            .map(|(i, (c, len))| {
                let count = (*len as u128 * total as u128).div_ceil(n.max(1) as u128) as usize;
                let args = self.graph.push_args(OpArgs::SelectStep(SelectStep::Sample {
                    count: count as u32,
                    seed: i as u64,
                }));
                self.push(
                    sample_key,
                    Op::SelectRanks,
                    args,
                    smallvec![count],
                    dtype,
                    &[*c],
                )
            })
            .collect();
        let (n64, ranks) = (n as u64, ranks.to_vec());
        let one = |tiler: &mut Self, s: SelectStep, len: usize, d: DType, i: &[ChunkIdx]| {
            let key = tiler.key();
            let args = tiler.graph.intern_args(OpArgs::SelectStep(s));
            tiler.push(key, Op::SelectRanks, args, smallvec![len], d, i)
        };
        // At most one bracket per rank, in the wide dtype (its open ends are the dtype's
        // extremes, which a narrower dtype may not hold).
        let brackets = one(
            self,
            SelectStep::Brackets {
                n: n64,
                ranks: ranks.clone(),
            },
            2 * ranks.len(),
            wide,
            &samples,
        );
        let count_key = self.key();
        let count_args = self
            .graph
            .intern_args(OpArgs::SelectStep(SelectStep::Count));
        let width = 4 * ranks.len() + 1;
        let counts: Vec<ChunkIdx> = input
            .chunks
            .iter()
            .map(|c| {
                let inputs = [*c, brackets];
                let shape = smallvec![width];
                self.push(
                    count_key,
                    Op::SelectRanks,
                    count_args,
                    shape,
                    DType::I64,
                    &inputs,
                )
            })
            .collect();
        let sum_args = self.graph.intern_args(OpArgs::Combine {
            op: Op::Sum,
            axes: smallvec![],
            keepdims: true,
        });
        let sum_key = self.key();
        let totals = self.push(
            sum_key,
            Op::Combine,
            sum_args,
            smallvec![width],
            DType::I64,
            &counts,
        );
        // A gathered piece's length depends on the data; its bound is the chunk's.
        let gather_key = self.key();
        let gather_args = self
            .graph
            .intern_args(OpArgs::SelectStep(SelectStep::Gather {
                n: n64,
                ranks: ranks.clone(),
            }));
        let mut picked = vec![brackets, totals];
        for (c, len) in input.chunks.iter().zip(lens) {
            let inputs = [*c, brackets, totals];
            let shape = smallvec![*len];
            picked.push(self.push(
                gather_key,
                Op::SelectRanks,
                gather_args,
                shape,
                dtype,
                &inputs,
            ));
        }
        let r = ranks.len();
        one(self, SelectStep::Pick { n: n64, ranks }, r, dtype, &picked)
    }
}
