//! Tiling of the ops built on the shuffle ([`crate::graph::shuffle`]): the dask#3872
//! benchmark graph and sort/argsort.
//!
//! A shuffle is N mapper chunks → one proxy → M reducer chunks: N + M + 1 nodes and N + M
//! edges. Sort of a 1-D tensor in N chunks is parallel sorting by regular sampling (PSRS, as
//! Mars and Arkouda): a sample of every chunk, splitters from the merged samples, a first
//! shuffle into N value ranges (bucket lengths depend on the data), then a second shuffle
//! that cuts the sorted buckets into output chunks of static length, using the bucket
//! lengths the first mappers recorded. About 5N nodes and 8N edges.

use crate::array::{DType, Shape};
use crate::error::{AresError, Result};
use crate::graph::shuffle::MAX_PIECES;
use crate::ids::ChunkIdx;
use crate::ops::{MapKind, Op, OpArgs, ReduceKind};
use crate::prepare::tile::{split_dim, Tiled, Tiler};
use smallvec::smallvec;

/// One reducer to create: what it does, its shape and dtype.
pub(crate) struct ReducerSpec {
    pub kind: ReduceKind,
    pub shape: Shape,
    pub dtype: DType,
}

impl Tiler {
    /// Pushes mappers (kind and inputs each), their proxy and `reducers`; returns the
    /// mapper chunks and the reducer chunks.
    pub(crate) fn push_shuffle(
        &mut self,
        mappers: Vec<(MapKind, Vec<ChunkIdx>)>,
        reducers: Vec<ReducerSpec>,
    ) -> Result<(Vec<ChunkIdx>, Vec<ChunkIdx>)> {
        let (n, m) = (mappers.len() as u64, reducers.len() as u64);
        let pieces = n.saturating_mul(m);
        if self.pieces.saturating_add(pieces) > MAX_PIECES || n > u32::MAX as u64 {
            return Err(AresError::prepare(
                "tile",
                format!(
                    "a shuffle of {n} mappers × {m} reducers needs {pieces} pieces; a graph may \
                     have at most {MAX_PIECES}"
                ),
            ));
        }
        let base = self.pieces as u32;
        self.pieces += pieces;
        let m = m as u32;
        let map_key = self.key();
        let mut mapped = Vec::with_capacity(n as usize);
        for (ordinal, (kind, inputs)) in mappers.into_iter().enumerate() {
            let args = self.graph.push_args(OpArgs::ShuffleMap {
                kind,
                ordinal: ordinal as u32,
                base,
                reducers: m,
            });
            let shape = smallvec![m as usize];
            mapped.push(self.push(map_key, Op::ShuffleMap, args, shape, DType::I64, &inputs));
        }
        let proxy_key = self.key();
        let args = self
            .graph
            .push_args(OpArgs::ShuffleProxy { base, reducers: m });
        let proxy = self.push(
            proxy_key,
            Op::ShuffleProxy,
            args,
            smallvec![0],
            DType::I64,
            &mapped,
        );
        let reduce_key = self.key();
        let reduced = reducers
            .into_iter()
            .enumerate()
            .map(|(index, spec)| {
                let args = self.graph.push_args(OpArgs::ShuffleReduce {
                    kind: spec.kind,
                    index: index as u32,
                });
                self.push(
                    reduce_key,
                    Op::ShuffleReduce,
                    args,
                    spec.shape,
                    spec.dtype,
                    &[proxy],
                )
            })
            .collect();
        Ok((mapped, reduced))
    }

    /// dask#3872: `in_parts` generating mappers, `out_parts` reducers of one `(1, 3)` row.
    pub(crate) fn tile_shuffle_bench(
        &mut self,
        in_parts: u32,
        out_parts: u32,
        rows: u64,
    ) -> Result<Tiled> {
        let mappers = (0..in_parts as u64)
            .map(|seed| (MapKind::BenchGen { rows, seed }, vec![]))
            .collect();
        let reducers = (0..out_parts)
            .map(|_| ReducerSpec {
                kind: ReduceKind::BenchStats,
                shape: smallvec![1, 3],
                dtype: DType::I64,
            })
            .collect();
        let (_, reduced) = self.push_shuffle(mappers, reducers)?;
        Ok(Tiled {
            splits: vec![vec![1; out_parts as usize], vec![3]],
            chunks: reduced,
        })
    }

    /// `sort`/`argsort` along `axis`. An axis in one chunk sorts chunk by chunk; an N-D
    /// tensor whose axis spans chunks is first rechunked so that it is whole
    /// ([`lane_splits`]); a 1-D tensor in several chunks goes through PSRS (ascending only:
    /// `Tensor::sort_along` reverses a descending one).
    pub(crate) fn tile_sort(
        &mut self,
        arg: bool,
        axis: u32,
        descending: bool,
        in_dtype: DType,
        input: &Tiled,
        shape: &Shape,
    ) -> Result<Tiled> {
        let out_dtype = if arg { DType::I64 } else { in_dtype };
        let a = axis as usize;
        let local = |tiler: &mut Self, t: &Tiled| {
            let key = tiler.key();
            let args = tiler.graph.intern_args(OpArgs::Sort {
                arg,
                axis,
                descending,
            });
            let chunks = t
                .chunks
                .iter()
                .map(|c| {
                    let s = tiler.shape_of(*c).clone();
                    tiler.push(key, Op::Sort, args, s, out_dtype, &[*c])
                })
                .collect();
            Tiled {
                splits: t.splits.clone(),
                chunks,
            }
        };
        if input.splits[a].len() == 1 {
            return Ok(local(self, input));
        }
        if shape.len() > 1 {
            let target = lane_splits(&input.splits, shape, a);
            let whole = self.rechunk_to(input, &target, in_dtype);
            return Ok(local(self, &whole));
        }
        if descending {
            return Err(AresError::prepare(
                "tile",
                "a descending sort of a 1-D tensor in several chunks is the reverse of the \
                 ascending one (Tensor::sort_along)",
            ));
        }
        self.tile_psrs(arg, in_dtype, input, shape[0])
    }

    fn tile_psrs(&mut self, arg: bool, dtype: DType, input: &Tiled, n: usize) -> Result<Tiled> {
        let parts = input.chunks.len();
        // Samples and splitters.
        let sample_key = self.key();
        let sample_args = self.graph.intern_args(OpArgs::SortSample {
            count: parts as u32,
        });
        let samples: Vec<ChunkIdx> = input
            .chunks
            .iter()
            .map(|c| {
                self.push(
                    sample_key,
                    Op::SortSample,
                    sample_args,
                    smallvec![parts],
                    dtype,
                    &[*c],
                )
            })
            .collect();
        let split_key = self.key();
        let split_args = self.graph.intern_args(OpArgs::SortSplitters {
            parts: parts as u32,
        });
        let splitters = self.push(
            split_key,
            Op::SortSplitters,
            split_args,
            smallvec![parts - 1],
            dtype,
            &samples,
        );
        // Stage 1: partition by value range; each bucket sorted (length known at run time).
        let mut offset = 0u64;
        let mappers = input
            .chunks
            .iter()
            .zip(&input.splits[0])
            .map(|(c, len)| {
                let kind = MapKind::SortPartition { arg, offset };
                offset += *len as u64;
                (kind, vec![*c, splitters])
            })
            .collect();
        let nominal = n.div_ceil(parts);
        let bucket_dtype = if arg { DType::I64 } else { dtype };
        let reducers = (0..parts)
            .map(|_| ReducerSpec {
                kind: ReduceKind::SortMerge { arg },
                shape: smallvec![nominal * if arg { 2 } else { 1 }],
                dtype: bucket_dtype,
            })
            .collect();
        let (counted, buckets) = self.push_shuffle(mappers, reducers)?;
        // Bucket lengths: the sum of every first mapper's piece lengths.
        let total_key = self.key();
        let total_args = self.graph.intern_args(OpArgs::Combine {
            op: Op::Sum,
            axes: smallvec![],
            keepdims: true,
        });
        let lengths = self.push(
            total_key,
            Op::Combine,
            total_args,
            smallvec![parts],
            DType::I64,
            &counted,
        );
        // Stage 2: cut the sorted buckets into output chunks of static length.
        let chunk = input.splits[0].iter().copied().max().unwrap_or(1).max(1);
        let out_splits = split_dim(n, chunk);
        let mappers = buckets
            .iter()
            .map(|b| {
                let kind = MapKind::Rebalance {
                    chunk: chunk as u64,
                    arg,
                };
                (kind, vec![*b, lengths])
            })
            .collect();
        let reducers = out_splits
            .iter()
            .map(|len| ReducerSpec {
                kind: ReduceKind::Concat { arg },
                shape: smallvec![*len],
                dtype: if arg { DType::I64 } else { dtype },
            })
            .collect();
        let (_, out) = self.push_shuffle(mappers, reducers)?;
        Ok(Tiled {
            splits: vec![out_splits],
            chunks: out,
        })
    }
}

/// The splits that make `axis` one chunk while every chunk stays about as large as the
/// largest chunk of `splits`: the other axes are cut, the last ones first kept whole (the
/// chunk's rows stay contiguous), into as many lanes as that many elements hold.
pub(crate) fn lane_splits(splits: &[Vec<usize>], shape: &[usize], axis: usize) -> Vec<Vec<usize>> {
    let budget: usize = splits
        .iter()
        .map(|s| s.iter().copied().max().unwrap_or(1).max(1))
        .product();
    let mut left = (budget / shape[axis].max(1)).max(1);
    let mut out = vec![Vec::new(); shape.len()];
    for d in (0..shape.len()).rev() {
        if d == axis {
            out[d] = vec![shape[d]];
            continue;
        }
        let chunk = left.min(shape[d]).max(1);
        out[d] = split_dim(shape[d], chunk);
        left = (left / chunk).max(1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::lane_splits;

    #[test]
    fn lanes_keep_the_chunk_size_and_make_the_axis_whole() {
        // The benchmark: (20000, 5000) in (2000, 5000) chunks, sorted along axis 0.
        let s = lane_splits(&[vec![2000; 10], vec![5000]], &[20000, 5000], 0);
        assert_eq!(s, vec![vec![20000], vec![500; 10]]);
        // Along the last axis: rows of whole lanes, as many as fit.
        let s = lane_splits(&[vec![10; 3], vec![4; 5]], &[30, 20], 1);
        assert_eq!(s, vec![vec![2; 15], vec![20]]);
        // A 3-D middle axis longer than the budget: one lane per chunk.
        let s = lane_splits(&[vec![2, 2], vec![3; 3], vec![2, 1]], &[4, 9, 3], 1);
        assert_eq!(s, vec![vec![1; 4], vec![9], vec![1; 3]]);
        // Empty axes stay as they are.
        let s = lane_splits(&[vec![0], vec![3, 3]], &[0, 6], 1);
        assert_eq!(s, vec![vec![0], vec![6]]);
    }
}
