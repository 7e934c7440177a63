//! Result dtypes by NumPy 2's rules for the dtypes ares has (the array API standard's
//! thirteen): statistics and fills here; the ufuncs' rules, NEP 50's weak scalars
//! among them, are the elementwise family's (`family::elementwise::dtypes`) and the
//! reductions' the reduction table's (`family::reduction::reduction_dtype`), re-exported.

use crate::array::DType;
use crate::ops::Fill;

pub use crate::ops::family::elementwise::dtypes::{
    binary_dtype, scalar_binary_dtype, scalar_compute_dtype, unary_dtype, weak_promote,
};
pub use crate::ops::family::reduction::reduction_dtype;

/// The float dtype of a statistic or math function of `a`: float32 and the complex dtypes
/// stay, the rest give float64 (`mean`, `sqrt`...).
pub fn float_result(a: DType) -> DType {
    if a == DType::F32 || a.is_complex() {
        a
    } else {
        DType::F64
    }
}

/// The float dtype of a math ufunc of `a` (`sqrt`, `atan2`...): as [`float_result`], but
/// 8- and 16-bit integers give float32, as NumPy's loops (which give float16 for the 8-bit
/// ones: ares has no float16, and float32 holds every value float16 would round).
pub fn math_float_result(a: DType) -> DType {
    match a.int_kind() {
        Some((_, bits)) if bits <= 16 => DType::F32,
        _ => float_result(a),
    }
}

pub fn fill_dtype(fill: &Fill) -> DType {
    match fill {
        Fill::Uniform { .. } | Fill::Normal { .. } => DType::F64,
        Fill::Const { value } => value.dtype(),
        Fill::Range { start, step, .. } => start.dtype().promote(step.dtype()).promote(DType::I64),
    }
}
