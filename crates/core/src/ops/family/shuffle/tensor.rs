//! Operations built on the shuffle (issue 11): sort, argsort and the dask#3872 benchmark
//! graph. Their tileable nodes are O(1) in the number of partitions; the supervisor expands
//! them ([`crate::prepare::tile`]).

use crate::error::Result;
use crate::ops::{Op, OpArgs};
use crate::tensor::Tensor;

impl Tensor {
    /// Sorted along the last axis (NaN last, as NumPy).
    pub fn sort(&self) -> Result<Tensor> {
        Tensor::new(Op::Sort, OpArgs::Sort { arg: false }, vec![self.clone()])
    }

    /// Positions that sort the last axis; ties keep their order (NumPy's `kind='stable'`).
    pub fn argsort(&self) -> Result<Tensor> {
        Tensor::new(Op::Sort, OpArgs::Sort { arg: true }, vec![self.clone()])
    }
}

/// dask#3872's all-to-all shuffle: `in_parts` mappers of `rows` random int64 each (seed =
/// mapper index), split by `value % out_parts`; an `(out_parts, 3)` int64 result whose row `r`
/// is reducer `r`'s `(count, sum, Σ i·sorted[i] mod 2^61)`.
pub fn shuffle_bench(in_parts: u32, out_parts: u32, rows: u64) -> Result<Tensor> {
    Tensor::new(
        Op::ShuffleBench,
        OpArgs::ShuffleBench {
            in_parts,
            out_parts,
            rows,
        },
        vec![],
    )
}
