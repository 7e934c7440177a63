//! Element types, scalars, shapes and the in-memory chunk representation.
//!
//! ares computes on the array API standard's thirteen dtypes, as NumPy would: `bool`, the
//! signed `int8`, `int16`, `int32`, `int64`, the unsigned `uint8` to `uint64`, `float32`,
//! `float64`, and the complex `complex64` and `complex128` (pairs of float32 / float64, as
//! `num_complex::Complex32` / `Complex64`: the FFT's results and their arithmetic). A chunk's
//! data is an [`ArrayData`], an ndarray of one of them. Promotion of two arrays follows NumPy
//! 2's table for these types ([`DType::promote`]); Python numbers mixed with arrays follow
//! NEP 50's weak-scalar rules (`crate::ops::dtypes`).
//!
//! One file per concept: [`DType`] and promotion (`dtype`), [`Scalar`] (`scalar`), the
//! chunk data [`ArrayData`] and its casts (`data`); shapes here.

mod data;
mod dtype;
mod scalar;

pub use data::ArrayData;
pub use dtype::{DType, DTYPES, INT_DTYPES, REAL_DTYPES};
pub use num_complex::{Complex32, Complex64};
pub use scalar::Scalar;
use smallvec::SmallVec;

/// A shape or a multi-index: inline for up to four dimensions.
pub type Shape = SmallVec<[usize; 4]>;

/// Formats a shape as numpy does: `(3,)`, `(2, 3)`, `()`.
pub fn fmt_shape(shape: &[usize]) -> String {
    match shape {
        [] => "()".to_string(),
        [one] => format!("({one},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// Number of elements of a shape.
pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_format_like_numpy() {
        assert_eq!(fmt_shape(&[]), "()");
        assert_eq!(fmt_shape(&[3]), "(3,)");
        assert_eq!(fmt_shape(&[2, 3]), "(2, 3)");
    }
}
