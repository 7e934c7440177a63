//! Tiling of sources and sinks (`crate::io`). Runs on the supervisor, which checks the paths
//! against its own data roots here: a source's metadata is read again (it must still match
//! what the expression was built with), a sink's file is created before any writer runs.
//! Each source chunk reads its region; each sink chunk writes one input chunk (for Zarr the
//! input is first rechunked to a regular grid, the store's) and yields its byte count, and
//! the counts are summed into the sink's scalar result. Writers write under the sink's
//! partial name; a last `Commit` chunk, which depends on the sum, hence on every write,
//! renames it to the path (a failed task never leaves a complete-looking file there).

use crate::array::{DType, Shape};
use crate::error::{AresError, Result};
use crate::io::{DataRef, Format};
use crate::ops::{ChunkSpec, Op, OpArgs};
use crate::prepare::tile::{offsets, splits_for, Odometer, Tiled, Tiler};

fn io_err(op: Op, e: crate::io::IoError) -> AresError {
    AresError::prepare(op.name(), e.to_string())
}

impl Tiler {
    pub(crate) fn tile_source(
        &mut self,
        op: Op,
        data: &DataRef,
        spec: &ChunkSpec,
    ) -> Result<Tiled> {
        let (_, meta) =
            crate::io::source_meta(data.format, &data.path).map_err(|e| io_err(op, e))?;
        data.check(&meta.shape, meta.dtype)
            .map_err(|e| io_err(op, e))?;
        let splits = splits_for(&data.shape, spec);
        let grid: Shape = splits.iter().map(|s| s.len()).collect();
        let starts: Vec<Vec<usize>> = splits.iter().map(|s| offsets(s)).collect();
        let key = self.key();
        let mut chunks = Vec::with_capacity(grid.iter().product());
        Odometer::for_each(&grid, |idx| {
            let shape: Shape = idx.iter().enumerate().map(|(d, i)| splits[d][*i]).collect();
            let offset: Shape = idx.iter().enumerate().map(|(d, i)| starts[d][*i]).collect();
            let args = self.graph.push_args(OpArgs::Read {
                data: data.clone().into(),
                offset,
                shape: shape.clone(),
            });
            chunks.push(self.push(key, op, args, shape, data.dtype, &[]));
        });
        Ok(Tiled { splits, chunks })
    }

    pub(crate) fn tile_sink(
        &mut self,
        op: Op,
        data: &DataRef,
        store_chunk: &[usize],
        input: &Tiled,
    ) -> Result<Tiled> {
        let input = match data.format {
            Format::Npy | Format::Spool => input.clone(),
            Format::Zarr { .. } => {
                // One store chunk per chunk: a regular grid (all chunks but the last equal).
                let chunk: Shape = if store_chunk.is_empty() {
                    input
                        .splits
                        .iter()
                        .map(|s| s.first().copied().unwrap_or(1).max(1))
                        .collect()
                } else {
                    store_chunk.into()
                };
                let target = splits_for(
                    &data.shape,
                    &ChunkSpec::PerDim(chunk.iter().copied().collect()),
                );
                self.rechunk_to(&input.clone(), &target, data.dtype)
            }
        };
        let store_chunk: Shape = input
            .splits
            .iter()
            .map(|s| s.first().copied().unwrap_or(1).max(1))
            .collect();
        let partial = crate::io::create_sink(data, &store_chunk).map_err(|e| io_err(op, e))?;
        let grid = input.grid();
        let starts: Vec<Vec<usize>> = input.splits.iter().map(|s| offsets(s)).collect();
        let ones: Shape = grid.iter().map(|_| 1).collect();
        let key = self.key();
        let mut written = Vec::with_capacity(input.chunks.len());
        let mut k = 0;
        Odometer::for_each(&grid, |idx| {
            let offset: Shape = idx.iter().enumerate().map(|(d, i)| starts[d][*i]).collect();
            let args = self.graph.push_args(OpArgs::Write {
                data: partial.clone().into(),
                offset,
                index: idx.iter().copied().collect(),
            });
            let src = input.chunks[k];
            written.push(self.push(key, op, args, ones.clone(), DType::I64, &[src]));
            k += 1;
        });
        let counts = Tiled {
            splits: grid.iter().map(|g| vec![1; *g]).collect(),
            chunks: written,
        };
        let total = if grid.is_empty() {
            counts
        } else {
            let axes: Vec<usize> = (0..grid.len()).collect();
            self.tile_reduction(Op::Sum, &axes, false, DType::I64, &counts)
        };
        // Once every chunk is written (the total depends on all of them), the file moves from
        // its partial name to its path.
        let [last] = total.chunks.as_slice() else {
            return Err(AresError::prepare(
                op.name(),
                "a sink's total is not one chunk",
            ));
        };
        let args = self.graph.push_args(OpArgs::Commit {
            data: data.clone().into(),
            partial: partial.path,
        });
        let key = self.key();
        let commit = self.push(key, op, args, Shape::new(), DType::I64, &[*last]);
        Ok(Tiled {
            splits: total.splits,
            chunks: vec![commit],
        })
    }
}
