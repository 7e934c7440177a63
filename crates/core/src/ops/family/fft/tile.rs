//! Tiling of a transform: the axis rechunked into one chunk (the other axes keep their
//! chunks, as in dask), then one transform per chunk. Refused, naming the chunk's size, when
//! a chunk holding the whole axis would exceed [`super::FFT_CHUNK_BUDGET`].

use super::spec::FftSpec;
use super::FFT_CHUNK_BUDGET;
use crate::array::{fmt_shape, DType, Shape};
use crate::error::{AresError, Result};
use crate::ops::{Op, OpArgs};
use crate::prepare::tile::{Odometer, Tiled, Tiler};

/// The bytes of the largest chunk a transform of `shape` along `spec.axis` makes, given the
/// other axes' chunk lengths `splits` and the result's dtype `out`.
fn largest_chunk(spec: &FftSpec, splits: &[Vec<usize>], shape: &[usize], out: DType) -> u64 {
    let across: u64 = splits
        .iter()
        .enumerate()
        .filter(|(d, _)| *d != spec.axis)
        .map(|(_, s)| s.iter().copied().max().unwrap_or(0) as u64)
        .product();
    let along = shape[spec.axis].max(spec.n).max(spec.out_len()) as u64;
    across
        .saturating_mul(along)
        .saturating_mul(out.to_complex().itemsize() as u64)
}

impl Tiler {
    pub(crate) fn tile_fft(
        &mut self,
        spec: &FftSpec,
        args: &OpArgs,
        dtype: DType,
        x: &Tiled,
        in_shape: &Shape,
    ) -> Result<Tiled> {
        let axis = spec.axis;
        let bytes = largest_chunk(spec, &x.splits, in_shape, dtype);
        if bytes > FFT_CHUNK_BUDGET {
            let mut chunk: Vec<usize> = x
                .splits
                .iter()
                .map(|s| s.iter().copied().max().unwrap_or(0))
                .collect();
            chunk[axis] = in_shape[axis].max(spec.n);
            return Err(AresError::arg(
                spec.name(),
                format!(
                    "the transform along axis {axis} needs that axis whole in one chunk: chunks \
                     of {} are {} MiB, over the {} MiB one chunk may hold; rechunk the other \
                     axes smaller",
                    fmt_shape(&chunk),
                    bytes >> 20,
                    FFT_CHUNK_BUDGET >> 20
                ),
            ));
        }
        let mut whole = x.splits.clone();
        whole[axis] = vec![in_shape[axis]];
        let in_dtype = self.graph.node(x.chunks[0]).dtype;
        let x = self.rechunk_to(x, &whole, in_dtype);
        let mut splits = whole;
        splits[axis] = vec![spec.out_len()];
        let key = self.key();
        let args = self.graph.intern_args(args.clone());
        let grid: Shape = splits.iter().map(|s| s.len()).collect();
        let mut chunks = Vec::with_capacity(x.chunks.len());
        let mut k = 0;
        Odometer::for_each(&grid, |idx| {
            let shape: Shape = idx.iter().enumerate().map(|(d, j)| splits[d][*j]).collect();
            chunks.push(self.push(key, Op::Fft, args, shape, dtype, &[x.chunks[k]]));
            k += 1;
        });
        Ok(Tiled { splits, chunks })
    }
}
