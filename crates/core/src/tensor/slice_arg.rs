//! One entry of a NumPy basic index and its normalization against a dimension, as Python's
//! `slice.indices` does it.

use crate::error::{AresError, Result};
use crate::ops::DimIndex;

/// One entry of a numpy basic index: `a:b:c` (each part optional) or an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum SliceArg {
    Range {
        start: Option<i64>,
        stop: Option<i64>,
        step: Option<i64>,
    },
    Index(i64),
    /// `None`: a new axis of length 1 (numpy's `np.newaxis`).
    NewAxis,
}

impl SliceArg {
    pub const FULL: SliceArg = SliceArg::Range {
        start: None,
        stop: None,
        step: None,
    };

    /// Normalizes against a dimension of length `len`, as Python's `slice.indices`.
    pub fn normalize(self, axis: usize, len: usize) -> Result<DimIndex> {
        let n = len as i64;
        match self {
            SliceArg::NewAxis => Err(AresError::arg(
                "slice",
                format!("a new axis does not index axis {axis}"),
            )),
            SliceArg::Index(i) => {
                let j = if i < 0 { i + n } else { i };
                if j < 0 || j >= n {
                    return Err(AresError::arg(
                        "slice",
                        format!("index {i} is out of bounds for axis {axis} with size {len}"),
                    ));
                }
                Ok(DimIndex::Index(j as usize))
            }
            SliceArg::Range { start, stop, step } => {
                let step = step.unwrap_or(1);
                if step == 0 {
                    return Err(AresError::arg(
                        "slice",
                        format!("slice step cannot be zero (axis {axis})"),
                    ));
                }
                let adjust = |v: i64, lo: i64, hi: i64| {
                    let v = if v < 0 { v + n } else { v };
                    v.clamp(lo, hi)
                };
                let (first, count) = if step > 0 {
                    let a = start.map_or(0, |v| adjust(v, 0, n));
                    let b = stop.map_or(n, |v| adjust(v, 0, n));
                    (a, if b > a { (b - a + step - 1) / step } else { 0 })
                } else {
                    let a = start.map_or(n - 1, |v| adjust(v, -1, n - 1));
                    let b = stop.map_or(-1, |v| adjust(v, -1, n - 1));
                    (
                        a,
                        if a > b {
                            (a - b + (-step) - 1) / (-step)
                        } else {
                            0
                        },
                    )
                };
                Ok(DimIndex::Range {
                    start: if count == 0 { 0 } else { first as usize },
                    step: step as isize,
                    len: count as usize,
                })
            }
        }
    }
}
