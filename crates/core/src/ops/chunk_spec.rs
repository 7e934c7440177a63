//! Checks of a `chunk=` specification against the shape it splits: uniform, per dimension,
//! or every chunk length (dask's explicit `chunks=`).

use crate::array::fmt_shape;
use crate::error::{AresError, Result};

pub fn check_chunk_spec(
    op: &'static str,
    chunk: &crate::ops::ChunkSpec,
    shape: &[usize],
) -> Result<()> {
    use crate::ops::ChunkSpec;
    let ndim = shape.len();
    let entries = |n: usize| {
        AresError::arg(
            op,
            format!("chunk size has {n} entries for a tensor of {ndim} dimensions"),
        )
    };
    match chunk {
        ChunkSpec::Uniform(0) => Err(AresError::arg(op, "chunk size must be at least 1")),
        ChunkSpec::PerDim(v) if v.len() != ndim => Err(entries(v.len())),
        ChunkSpec::PerDim(v) if v.contains(&0) => {
            Err(AresError::arg(op, "chunk sizes must be at least 1"))
        }
        ChunkSpec::Explicit(dims) if dims.len() != ndim => Err(entries(dims.len())),
        ChunkSpec::Explicit(dims) => {
            for (d, (lens, n)) in dims.iter().zip(shape).enumerate() {
                let empty_dim = *n == 0 && lens.as_slice() == [0];
                if !empty_dim && (lens.contains(&0) || lens.iter().sum::<usize>() != *n) {
                    return Err(AresError::arg(
                        op,
                        format!(
                            "chunks {} of axis {d} must be positive and add up to its length {n}",
                            fmt_shape(lens)
                        ),
                    ));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
