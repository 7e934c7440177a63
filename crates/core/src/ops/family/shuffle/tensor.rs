//! Operations built on the shuffle (issue 11): sort, argsort and the dask#3872 benchmark
//! graph. Their tileable nodes are O(1) in the number of partitions; the supervisor expands
//! them ([`crate::prepare::tile`]).

use crate::array::Scalar;
use crate::error::{AresError, Result};
use crate::ops::{Op, OpArgs};
use crate::tensor::Tensor;

impl Tensor {
    /// Sorted along the last axis (NaN last, as NumPy).
    pub fn sort(&self) -> Result<Tensor> {
        self.sort_along(-1, false, false)
    }

    /// Positions that sort the last axis; ties keep their order (NumPy's `kind='stable'`).
    pub fn argsort(&self) -> Result<Tensor> {
        self.sort_along(-1, false, true)
    }

    /// `sort` (`arg` = false) or `argsort` along `axis` (negative from the end), ascending
    /// or `descending`, always stable (the array API's `stable=True`). Descending is the
    /// ascending order of the axis reversed, the positions counted from its end: ties keep
    /// their order, NaN first (the array API's order for a descending sort of NumPy's
    /// NaN-last ascending one).
    ///
    /// An N-D tensor sorts each lane of the axis in place in its chunk (the axis made one
    /// chunk, [`crate::ops::family::shuffle::lanes`]). A 1-D tensor sorts through PSRS when
    /// in several chunks, which sorts ascending: descending is its result reversed.
    pub fn sort_along(&self, axis: i64, descending: bool, arg: bool) -> Result<Tensor> {
        let name = if arg { "argsort" } else { "sort" };
        let nd = self.ndim() as i64;
        if nd == 0 {
            return Err(AresError::arg(
                name,
                "a 0-d tensor has no axis to sort along",
            ));
        }
        let a = if axis < 0 { axis + nd } else { axis };
        if !(0..nd).contains(&a) {
            return Err(AresError::arg(
                name,
                format!("axis {axis} is out of bounds for array of dimension {nd}"),
            ));
        }
        let sort = |t: &Tensor, descending: bool| {
            Tensor::new(
                Op::Sort,
                OpArgs::Sort {
                    arg,
                    axis: a as u32,
                    descending,
                },
                vec![t.clone()],
            )
        };
        if nd > 1 || !descending {
            return sort(self, descending);
        }
        let flip = |t: &Tensor| t.slice_when_known(&reverse_last(t.ndim()));
        if arg {
            // Reversed, sorted stably, reversed back: equal elements keep their order;
            // positions in the reversed axis are counted back from its end.
            let n = self.shape()[0] as i64;
            flip(&sort(&flip(self)?, false)?)?.binary_scalar(Op::Sub, Scalar::I64(n - 1), true)
        } else {
            flip(&sort(self, false)?)
        }
    }
}

/// `[..., ::-1]` for a tensor of `ndim` dimensions.
fn reverse_last(ndim: usize) -> Vec<crate::tensor::SliceArg> {
    use crate::tensor::SliceArg;
    let all = SliceArg::Range {
        start: None,
        stop: None,
        step: None,
    };
    let mut index = vec![all; ndim];
    index[ndim - 1] = SliceArg::Range {
        start: None,
        stop: None,
        step: Some(-1),
    };
    index
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
