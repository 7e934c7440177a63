//! Tiling of integer-array indexing (`take`, `x[idx]`; `super::kernels`): rows of a
//! 2-D `(n, R)` tensor at int64 positions, any number of them, through two shuffles.
//!
//! The tensor API reduces every `take` to rows: the axis moved first, the rest flattened.
//! Stage 1 routes the positions (chunks of the index tensor are the mappers) to the row
//! chunks that hold them (one reducer per row chunk collects its requests); it checks every
//! position, so an index out of range fails the task with NumPy's message. Stage 2 runs once
//! per column band of the tensor: each row chunk (a mapper, reading its requests) sends the
//! rows asked for to the output chunks, which place them. Rows and positions are regridded
//! into chunks of uniform length first (a no-op for the usual chunkings), so a position's
//! chunk is a division. About 2 × (row chunks + index chunks) nodes per column band.

use crate::array::{DType, Shape};
use crate::error::Result;
use crate::ids::ChunkIdx;
use crate::ops::family::shuffle::tile::ReducerSpec;
use crate::ops::{MapKind, ReduceKind};
use crate::prepare::tile::{split_dim, Tiled, Tiler};
use smallvec::smallvec;

impl Tiler {
    /// `x` (n, R) at the positions `idx` (L,): the (L, R) rows.
    pub(crate) fn tile_take_rows(
        &mut self,
        axis: u32,
        dtype: DType,
        x: &Tiled,
        idx: &Tiled,
        x_shape: &Shape,
        idx_shape: &Shape,
    ) -> Result<Tiled> {
        let (n, l) = (x_shape[0], idx_shape[0]);
        let row_chunk = x.splits[0].iter().copied().max().unwrap_or(1).max(1);
        let bands = x.splits[1].clone();
        let xs = self.rechunk_to(x, &[split_dim(n, row_chunk), bands.clone()], dtype);
        let out_chunk = idx.splits[0].iter().copied().max().unwrap_or(1).max(1);
        let out_splits = split_dim(l, out_chunk);
        let is = self.rechunk_to(idx, std::slice::from_ref(&out_splits), DType::I64);
        let p = xs.splits[0].len();
        // Stage 1: positions to the row chunks holding them.
        let mut offset = 0u64;
        let mappers = is
            .chunks
            .iter()
            .zip(&out_splits)
            .map(|(c, len)| {
                let kind = MapKind::TakeRoute {
                    len: n as u64,
                    chunk: row_chunk as u64,
                    offset,
                    axis,
                };
                offset += *len as u64;
                (kind, vec![*c])
            })
            .collect();
        let reducers = (0..p)
            .map(|_| ReducerSpec {
                kind: ReduceKind::Concat { arg: false },
                shape: smallvec![2 * l.div_ceil(p)],
                dtype: DType::I64,
            })
            .collect();
        let (_, requests) = self.push_shuffle(mappers, reducers)?;
        // Stage 2, per column band: the rows to the output chunks needing them.
        let nb = bands.len();
        let mut out = vec![ChunkIdx(0); out_splits.len() * nb];
        for (b, width) in bands.iter().enumerate() {
            let mappers = (0..p)
                .map(|r| {
                    let kind = MapKind::TakeServe {
                        out_chunk: out_chunk as u64,
                    };
                    (kind, vec![xs.chunks[r * nb + b], requests[r]])
                })
                .collect();
            let mut start = 0u64;
            let reducers = out_splits
                .iter()
                .map(|rows| {
                    let kind = ReduceKind::TakePlace {
                        dtype,
                        start,
                        rows: *rows as u64,
                        width: *width as u64,
                    };
                    start += *rows as u64;
                    ReducerSpec {
                        kind,
                        shape: smallvec![*rows, *width],
                        dtype,
                    }
                })
                .collect();
            let (_, placed) = self.push_shuffle(mappers, reducers)?;
            for (j, c) in placed.into_iter().enumerate() {
                out[j * nb + b] = c;
            }
        }
        Ok(Tiled {
            splits: vec![out_splits, bands],
            chunks: out,
        })
    }
}
