//! Tiling of reductions whose partials are records rather than values: `var`/`std`
//! (moments `(n, pivot, offset, M2)`) and `argmin`/`argmax` (`(value, index)` pairs).
//!
//! Each input chunk maps to a record per output position (reduced axes kept as length 1,
//! the fields in a trailing axis), the records of an output chunk merge in a tree of fan-in
//! `combine_size`, and a last step turns the merged record into the result.

use super::tile::{reduced_splits, reduction_groups};
use crate::array::DType;
use crate::ids::{ArgsIdx, ChunkIdx};
use crate::ops::family::reduction::moments::FIELDS;
use crate::ops::infer::reduced_shape;
use crate::ops::{Op, OpArgs};
use crate::prepare::tile::{Tiled, Tiler};
use smallvec::SmallVec;

impl Tiler {
    /// The shared walk: `map(tiler, j, source)` makes the record of the `j`-th source chunk
    /// of a group, records merge with `merge`, and `finish(tiler, merged)` makes the output.
    fn tile_records(
        &mut self,
        input: &Tiled,
        axes: &[usize],
        keepdims: bool,
        mut map: impl FnMut(&mut Self, usize, ChunkIdx) -> ChunkIdx,
        merge: (Op, ArgsIdx),
        mut finish: impl FnMut(&mut Self, ChunkIdx) -> ChunkIdx,
    ) -> Tiled {
        let (sources, group) = reduction_groups(input, axes);
        let mut level_keys = Vec::new();
        let mut chunks = Vec::with_capacity(sources.len() / group.max(1));
        for srcs in sources.chunks(group.max(1)) {
            let records: Vec<ChunkIdx> = srcs
                .iter()
                .enumerate()
                .map(|(j, src)| map(self, j, *src))
                .collect();
            let (shape, dtype) = (
                self.shape_of(records[0]).clone(),
                self.graph.node(records[0]).dtype,
            );
            let merged = self.tree(
                merge.0,
                records,
                &mut level_keys,
                (merge.1, shape.clone()),
                (merge.1, shape),
                dtype,
            );
            chunks.push(finish(self, merged));
        }
        Tiled {
            splits: reduced_splits(input, axes, keepdims),
            chunks,
        }
    }

    /// One-pass variance (see `ops::family::reduction::moments`): moments per chunk, merged with Chan's
    /// formula, then `M2 / (n - ddof)`. The moments are float64 whatever `out_dtype` (float32
    /// for float32 data) the variance has.
    pub(crate) fn tile_variance(
        &mut self,
        axes: &[usize],
        keepdims: bool,
        ddof: u32,
        out_dtype: DType,
        input: &Tiled,
    ) -> Tiled {
        let axes_sv: SmallVec<[usize; 4]> = axes.iter().copied().collect();
        let moments = |keepdims| OpArgs::Moments {
            axes: axes_sv.clone(),
            keepdims,
            ddof,
        };
        let map_args = self.graph.intern_args(moments(true));
        let final_args = self.graph.intern_args(moments(keepdims));
        let none = self.graph.intern_args(OpArgs::None);
        let (map_key, final_key) = (self.key(), self.key());
        let ndim = input.splits.len();
        self.tile_records(
            input,
            axes,
            keepdims,
            |t, _, src| {
                let mut shape = reduced_shape(t.shape_of(src), axes, true);
                shape.push(FIELDS);
                t.push(map_key, Op::Moments, map_args, shape, DType::F64, &[src])
            },
            (Op::MomentsCombine, none),
            |t, merged| {
                let shape = reduced_shape(&t.shape_of(merged)[..ndim], axes, keepdims);
                t.push(
                    final_key,
                    Op::MomentsVar,
                    final_args,
                    shape,
                    out_dtype,
                    &[merged],
                )
            },
        )
    }

    /// `argmin`/`argmax` along `axis` (see `ops::family::reduction::argreduce`): the best `(value, global
    /// index)` per chunk, merged by value, then the index.
    pub(crate) fn tile_argreduce(
        &mut self,
        op: Op,
        axis: usize,
        keepdims: bool,
        input: &Tiled,
    ) -> Tiled {
        let pair_dtype = match self.graph.node(input.chunks[0]).dtype {
            DType::F64 | DType::F32 => DType::F64,
            _ => DType::I64,
        };
        let starts = crate::prepare::tile::offsets(&input.splits[axis]);
        let arg = |offset: usize, keepdims| OpArgs::Arg {
            op,
            axis,
            offset: offset as u64,
            keepdims,
        };
        let merge_args = self.graph.intern_args(arg(0, true));
        let index_args = self.graph.intern_args(arg(0, keepdims));
        let (map_key, index_key) = (self.key(), self.key());
        self.tile_records(
            input,
            &[axis],
            keepdims,
            |t, j, src| {
                let mut shape = t.shape_of(src).clone();
                shape[axis] = 1;
                shape.push(2);
                let args = t.graph.intern_args(arg(starts[j], true));
                t.push(map_key, op, args, shape, pair_dtype, &[src])
            },
            (Op::ArgCombine, merge_args),
            |t, merged| {
                let pairs = t.shape_of(merged);
                let shape = reduced_shape(&pairs[..pairs.len() - 1], &[axis], keepdims);
                t.push(
                    index_key,
                    Op::ArgIndex,
                    index_args,
                    shape,
                    DType::I64,
                    &[merged],
                )
            },
        )
    }
}
