//! Result dtypes of the ops outside the elementwise family (reductions, statistics, fills),
//! by NumPy 2's rules for the dtypes ares has (`bool`, `int32`, `int64`, `float32`,
//! `float64`). The ufuncs' rules, NEP 50's weak scalars among them, are the elementwise
//! family's (`family::elementwise::dtypes`, re-exported here).

use crate::array::DType;
use crate::ops::{Fill, Op};

pub use crate::ops::family::elementwise::dtypes::{
    binary_dtype, scalar_binary_dtype, scalar_compute_dtype, unary_dtype, weak_promote,
};

/// The float dtype of a statistic or math function of `a`: float32 stays, the rest give
/// float64 (`mean`, `var`, `std`, `sqrt`...).
pub fn float_result(a: DType) -> DType {
    if a == DType::F32 {
        DType::F32
    } else {
        DType::F64
    }
}

/// `sum` and `prod` (and the running `cumsum`/`cumprod`) of bools and int32 give int64, as
/// NumPy's do on 64-bit Linux; `min`/`max` keep the dtype.
pub fn reduction_dtype(op: Op, a: DType) -> DType {
    match op {
        Op::Sum | Op::Prod if matches!(a, DType::Bool | DType::I32) => DType::I64,
        _ => a,
    }
}

pub fn fill_dtype(fill: &Fill) -> DType {
    match fill {
        Fill::Uniform { .. } | Fill::Normal { .. } => DType::F64,
        Fill::Const { value } => value.dtype(),
        Fill::Range { start, step, .. } => start.dtype().promote(step.dtype()).promote(DType::I64),
    }
}
