//! Sources and sinks: `from_npy`, `from_zarr`, `to_npy`, `to_zarr` (see `crate::io`).
//!
//! Building a source reads the file's metadata here (shape and dtype are needed to check the
//! rest of the expression); its data is read by the workers. A sink's result is the number of
//! bytes written (an int64 scalar); the file is created when the graph is tiled.

use crate::array::Shape;
use crate::error::Result;
use crate::io::{Codec, DataRef, Format};
use crate::ops::{ChunkSpec, Op, OpArgs};
use crate::tensor::Tensor;

fn source(op: Op, format: Format, path: &str, chunk: Option<ChunkSpec>) -> Result<Tensor> {
    let (canonical, meta) = crate::io::source_meta(format, path)?;
    let data = DataRef {
        format,
        path: canonical.to_string_lossy().into_owned(),
        shape: meta.shape,
        dtype: meta.dtype,
    };
    // The store's own grid; an empty axis (a `.npy` of shape (3, 0)) reports a chunk length
    // of 0 there, which splits nothing: 1 is the same grid.
    let chunk = chunk
        .unwrap_or_else(|| ChunkSpec::PerDim(meta.chunk.iter().map(|c| (*c).max(1)).collect()));
    let data = Box::new(data);
    Tensor::new(op, OpArgs::Source { data, chunk }, vec![])
}

/// A `.npy` file under the data roots, read lazily; `chunk` defaults to whole rows of about
/// 2^20 elements.
pub fn from_npy(path: &str, chunk: Option<ChunkSpec>) -> Result<Tensor> {
    source(Op::FromNpy, Format::Npy, path, chunk)
}

/// An upload's spool file at `path` ([`Format::Spool`], outside the data roots), read like
/// `from_npy`. Only the supervisor builds this source, for its uploads; the supervisor
/// refuses it in any graph a client submits.
pub fn from_spool(path: &str, chunk: Option<ChunkSpec>) -> Result<Tensor> {
    source(Op::FromNpy, Format::Spool, path, chunk)
}

/// A Zarr array (v3 or v2) under the data roots, read lazily; `chunk` defaults to the store's
/// chunk grid.
pub fn from_zarr(path: &str, chunk: Option<ChunkSpec>) -> Result<Tensor> {
    let format = Format::Zarr { codec: Codec::None };
    source(Op::FromZarr, format, path, chunk)
}

impl Tensor {
    fn sink(&self, op: Op, format: Format, path: &str, chunk: Shape) -> Result<Tensor> {
        let data = DataRef {
            format,
            path: crate::io::sink_path(path)?,
            shape: self.shape().into(),
            dtype: self.dtype(),
        };
        let data = Box::new(data);
        Tensor::new(op, OpArgs::Sink { data, chunk }, vec![self.clone()])
    }

    /// Writes this tensor to a `.npy` file under the data roots, each chunk in place by the
    /// worker holding it; the result is the number of bytes of data written.
    pub fn to_npy(&self, path: &str) -> Result<Tensor> {
        self.sink(Op::ToNpy, Format::Npy, path, Shape::new())
    }

    /// Writes this tensor as a Zarr v3 array: one store chunk per chunk (`chunk`, else this
    /// tensor's own chunks made regular), compressed with `codec`.
    pub fn to_zarr(&self, path: &str, chunk: Option<ChunkSpec>, codec: Codec) -> Result<Tensor> {
        let format = Format::Zarr { codec };
        match chunk {
            None => self.sink(Op::ToZarr, format, path, Shape::new()),
            Some(spec) => {
                let splits = crate::prepare::tile::splits_for(self.shape(), &spec);
                let grid: Shape = splits
                    .iter()
                    .map(|s| s.first().copied().unwrap_or(1).max(1))
                    .collect();
                let x = self.rechunk(ChunkSpec::PerDim(grid.iter().copied().collect()))?;
                x.sink(Op::ToZarr, format, path, grid)
            }
        }
    }
}
