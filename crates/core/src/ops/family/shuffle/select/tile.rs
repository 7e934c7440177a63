//! Tiling of the operations whose result depends on the values (`super::tensor`):
//! `unique` through a shuffle, `x[mask]` chunk by chunk, `searchsorted` through two shuffles
//! routing each value to the chunk of the sorted operand it falls into (`super::search`).
//!
//! `unique` is PSRS without the second shuffle: a sample of every chunk (from a strided
//! subsample, so the chunk is not sorted twice), splitters, then
//! mappers that keep their chunk's distinct values (fewer bytes to move when values repeat)
//! and split them by value range, and one reducer per range that merges its pieces. Equal
//! values always reach the same reducer, so the reducers' outputs, in order, are the
//! answer. Their lengths are known only at run time: the declared chunk lengths are an even
//! split of the input's size (an upper bound in total), and results of data-dependent
//! length are assembled by concatenation (`crate::executor::assemble`).

use crate::array::{DType, Shape};
use crate::error::Result;
use crate::ids::ChunkIdx;
use crate::ops::family::shuffle::tile::ReducerSpec;
use crate::ops::{DimIndex, MapKind, Op, OpArgs, ReduceKind};
use crate::prepare::tile::{unify, Tiled, Tiler};
use smallvec::{smallvec, SmallVec};

/// `n` split into `parts` lengths as evenly as possible (the declared lengths of chunks
/// whose real lengths depend on the data).
fn even(n: usize, parts: usize) -> Vec<usize> {
    let p = parts.max(1);
    (0..p).map(|r| n * (r + 1) / p - n * r / p).collect()
}

impl Tiler {
    /// Splitters of a PSRS-like shuffle over `input`'s chunks (`None` for one chunk).
    fn splitters_of(&mut self, dtype: DType, input: &Tiled) -> Option<ChunkIdx> {
        let parts = input.chunks.len();
        if parts < 2 {
            return None;
        }
        let sample_key = self.key();
        let sample_args = self.graph.intern_args(OpArgs::StridedSample {
            count: parts as u32,
        });
        let samples: Vec<ChunkIdx> = input
            .chunks
            .iter()
            .map(|c| {
                let shape = smallvec![parts];
                self.push(sample_key, Op::SortSample, sample_args, shape, dtype, &[*c])
            })
            .collect();
        let split_key = self.key();
        let split_args = self.graph.intern_args(OpArgs::SortSplitters {
            parts: parts as u32,
        });
        Some(self.push(
            split_key,
            Op::SortSplitters,
            split_args,
            smallvec![parts - 1],
            dtype,
            &samples,
        ))
    }

    /// `unique` of any tensor: (key, count) pairs when `counts`, else the values.
    pub(crate) fn tile_unique(
        &mut self,
        counts: bool,
        dtype: DType,
        input: &Tiled,
        size: usize,
    ) -> Result<Tiled> {
        let splitters = self.splitters_of(dtype, input);
        let mappers = input
            .chunks
            .iter()
            .map(|c| {
                let inputs = match splitters {
                    Some(s) => vec![*c, s],
                    None => vec![*c],
                };
                (MapKind::UniquePartition { counts }, inputs)
            })
            .collect();
        let width = if counts { 2 } else { 1 };
        let lens: Vec<usize> = even(size * width, input.chunks.len());
        let reducers = lens
            .iter()
            .map(|len| ReducerSpec {
                kind: ReduceKind::UniqueMerge { counts },
                shape: smallvec![*len],
                dtype: if counts { DType::I64 } else { dtype },
            })
            .collect();
        let (_, chunks) = self.push_shuffle(mappers, reducers)?;
        Ok(Tiled {
            splits: vec![lens],
            chunks,
        })
    }

    /// Values or counts of `unique`'s pairs, chunk by chunk.
    pub(crate) fn tile_unique_pick(&mut self, args: &OpArgs, input: &Tiled) -> Tiled {
        let (counts, dtype) = match args {
            OpArgs::UniquePick { counts, dtype } => (*counts, *dtype),
            _ => (true, DType::I64),
        };
        let key = self.key();
        let a = self.graph.intern_args(args.clone());
        let out = if counts { DType::I64 } else { dtype };
        let lens: Vec<usize> = input.splits[0].iter().map(|l| l / 2).collect();
        let chunks = input
            .chunks
            .iter()
            .zip(&lens)
            .map(|(c, l)| self.push(key, Op::UniquePick, a, smallvec![*l], out, &[*c]))
            .collect();
        Tiled {
            splits: vec![lens],
            chunks,
        }
    }

    /// `x[mask]`: both regridded into bands of whole rows along the first axis (so the
    /// chunks' selections, in order, are in C order), then selected band by band.
    pub(crate) fn tile_mask_select(
        &mut self,
        dtype: DType,
        x: &Tiled,
        mask: &Tiled,
        shape: &Shape,
    ) -> Tiled {
        let mut target: Vec<Vec<usize>> = shape.iter().map(|d| vec![*d]).collect();
        if let Some(first) = target.first_mut() {
            *first = unify(&[&x.splits[0], &mask.splits[0]]);
        }
        let xs = self.rechunk_to(x, &target, dtype);
        let ms = self.rechunk_to(mask, &target, DType::Bool);
        let key = self.key();
        let a = self.graph.intern_args(OpArgs::MaskSelect);
        let mut lens = Vec::with_capacity(xs.chunks.len());
        let chunks = xs
            .chunks
            .iter()
            .zip(&ms.chunks)
            .map(|(c, m)| {
                let len: usize = self.shape_of(*c).iter().product();
                lens.push(len);
                self.push(key, Op::MaskSelect, a, smallvec![len], dtype, &[*c, *m])
            })
            .collect();
        Tiled {
            splits: vec![lens],
            chunks,
        }
    }

    /// `searchsorted` of `v` (any shape) in the sorted 1-D `a`. `a` in one non-empty chunk
    /// (or none): each chunk of `v` searched in it. Otherwise in O(chunks) subtasks
    /// (`super::search`): the boundaries of `a`'s chunks gathered into one small chunk, each
    /// value routed to the chunk of `a` it falls into, answered there and placed back.
    pub(crate) fn tile_searchsorted(&mut self, right: bool, a: &Tiled, v: &Tiled) -> Result<Tiled> {
        let mut offset = 0u64;
        let mut live = Vec::new();
        for (c, len) in a.chunks.iter().zip(&a.splits[0]) {
            if *len > 0 {
                live.push((*c, *len, offset));
            }
            offset += *len as u64;
        }
        if live.len() <= 1 {
            let sorted = live.first().map_or(a.chunks[0], |l| l.0);
            let key = self.key();
            let args = self.graph.intern_args(OpArgs::SearchSorted { right });
            let chunks = v
                .chunks
                .iter()
                .map(|vc| {
                    let shape = self.shape_of(*vc).clone();
                    self.push(
                        key,
                        Op::SearchSorted,
                        args,
                        shape,
                        DType::I64,
                        &[sorted, *vc],
                    )
                })
                .collect();
            return Ok(Tiled {
                splits: v.splits.clone(),
                chunks,
            });
        }
        let dtype = self.graph.node(live[0].0).dtype;
        // The last element of every live chunk but the last, in one chunk.
        let slice_key = self.key();
        let lasts: Vec<ChunkIdx> = live[..live.len() - 1]
            .iter()
            .map(|(c, len, _)| {
                let dims: SmallVec<[DimIndex; 4]> = smallvec![DimIndex::Range {
                    start: len - 1,
                    step: 1,
                    len: 1,
                }];
                let args = self.graph.intern_args(OpArgs::Slice(Box::new(dims)));
                self.push(slice_key, Op::Slice, args, smallvec![1], dtype, &[*c])
            })
            .collect();
        let bounds = if lasts.len() == 1 {
            lasts[0]
        } else {
            let key = self.key();
            let n = lasts.len();
            let args = self
                .graph
                .intern_args(OpArgs::Assemble { grid: smallvec![n] });
            self.push(key, Op::Assemble, args, smallvec![n], dtype, &lasts)
        };
        // Stage 1: values to the chunk of `a` they fall into.
        let total: usize = v
            .chunks
            .iter()
            .map(|c| self.shape_of(*c).iter().product::<usize>())
            .sum();
        let k = live.len();
        let mappers = v
            .chunks
            .iter()
            .map(|c| (MapKind::SearchRoute { right }, vec![*c, bounds]))
            .collect();
        let reducers = (0..k)
            .map(|_| ReducerSpec {
                kind: ReduceKind::Concat { arg: false },
                shape: smallvec![3 * total.div_ceil(k)],
                dtype: DType::I64,
            })
            .collect();
        let (_, requests) = self.push_shuffle(mappers, reducers)?;
        // Stage 2: each chunk of `a` answers its requests to the values' chunks.
        let mappers = live
            .iter()
            .zip(&requests)
            .map(|((c, _, offset), r)| {
                let kind = MapKind::SearchServe {
                    right,
                    offset: *offset,
                };
                (kind, vec![*c, *r])
            })
            .collect();
        let shapes: Vec<Shape> = v.chunks.iter().map(|c| self.shape_of(*c).clone()).collect();
        let reducers = shapes
            .iter()
            .map(|s| {
                let len = s.iter().product::<usize>();
                ReducerSpec {
                    kind: ReduceKind::SearchPlace { len: len as u64 },
                    shape: smallvec![len],
                    dtype: DType::I64,
                }
            })
            .collect();
        let (_, placed) = self.push_shuffle(mappers, reducers)?;
        // Values chunks of another shape than 1-D get theirs back.
        let reshape_key = self.key();
        let chunks = placed
            .into_iter()
            .zip(shapes)
            .map(|(c, s)| {
                if s.len() == 1 {
                    c
                } else {
                    let args = self.graph.intern_args(OpArgs::Reshape(s.clone()));
                    self.push(reshape_key, Op::Reshape, args, s, DType::I64, &[c])
                }
            })
            .collect();
        Ok(Tiled {
            splits: v.splits.clone(),
            chunks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::even;

    #[test]
    fn even_splits_add_up() {
        assert_eq!(even(9, 4), vec![2, 2, 2, 3]);
        assert_eq!(even(0, 3), vec![0, 0, 0]);
        assert_eq!(even(5, 0), vec![5]);
    }
}
