//! The chunk-level `matmul` of two stacks of blocks: `(..., n, k) @ (..., k, m)` with the
//! batch dimensions broadcast (a block of a stack broadcast along a dimension has length 1
//! there). Each matrix of the stack goes through the same 2-D products as a plain chunk
//! (`gemm` for float64, four real ones for complex, wrapping int64, bool as the or of
//! ands), read in place from the
//! stack and written once into the result.

use super::kernels::{as_c128, as_f64, gemm_c128, gemm_f64, to_i64, wrapping_matmul_i64};
use super::shape::matmul_shape;
use crate::array::{ArrayData, DType};
use crate::kernels::{kerr, KResult};
use ndarray::{ArrayD, ArrayView2, ArrayViewD, Axis, Ix2, IxDyn};

/// The 2-D matrix of `x` at batch position `at` of a batch of `batch` dimensions (aligned
/// on the right; a dimension of length 1 is read at 0).
fn matrix<'a, T>(x: &ArrayViewD<'a, T>, at: &[usize]) -> KResult<ArrayView2<'a, T>> {
    let own = x.ndim() - 2;
    let skip = at.len() - own;
    let mut v = x.clone();
    for d in 0..own {
        let i = if v.shape()[0] == 1 { 0 } else { at[skip + d] };
        v = v.index_axis_move(Axis(0), i);
    }
    v.into_dimensionality::<Ix2>()
        .or_else(|e| kerr(format!("matmul block: {e}")))
}

/// Fills `out` (shape `batch ++ [n, m]`) matrix by matrix with `product`.
fn fill<T: Clone + Default>(
    out_shape: &[usize],
    a: ArrayViewD<T>,
    b: ArrayViewD<T>,
    product: impl Fn(ArrayView2<T>, ArrayView2<T>) -> ndarray::Array2<T>,
) -> KResult<ArrayD<T>> {
    let batch = &out_shape[..out_shape.len() - 2];
    let mut out = ArrayD::<T>::default(IxDyn(out_shape));
    let count: usize = batch.iter().product();
    let mut at = vec![0usize; batch.len()];
    for _ in 0..count {
        let p = product(matrix(&a, &at)?, matrix(&b, &at)?);
        let mut dst = out.view_mut();
        for i in &at {
            dst = dst.index_axis_move(Axis(0), *i);
        }
        dst.assign(&p);
        for d in (0..at.len()).rev() {
            at[d] += 1;
            if at[d] < batch[d] {
                break;
            }
            at[d] = 0;
        }
    }
    Ok(out)
}

/// Largest `n·k·m` multiplied by [`small_f64`] rather than `gemm`: below it, gemm's dispatch
/// and packing cost more than the product (a stack of 4×4 matrices ran 4× slower).
const SMALL_PRODUCT: usize = 512;

/// `x @ y` by the definition, each sum from `+0.0` in order of `k` (as NumPy's BLAS, so a
/// sum of `-0.0` products is `+0.0`).
fn small_f64(x: ArrayView2<f64>, y: ArrayView2<f64>) -> ndarray::Array2<f64> {
    let k = x.ncols();
    ndarray::Array2::from_shape_fn((x.nrows(), y.ncols()), |(i, j)| {
        (0..k).fold(0.0, |acc, t| acc + x[[i, t]] * y[[t, j]])
    })
}

/// `a @ b` for blocks of more than 2 dimensions (or stacks against matrices).
pub fn matmul_stack(a: &ArrayData, b: &ArrayData) -> KResult<ArrayData> {
    let shape = matmul_shape(a.shape(), b.shape()).or_else(|e| kerr(e.to_string()))?;
    let out = a.dtype().promote(b.dtype());
    let product = match out {
        DType::C64 | DType::C128 => {
            let (x, y) = (as_c128(a), as_c128(b));
            ArrayData::C128(fill(&shape, x.view(), y.view(), gemm_c128)?)
        }
        DType::F64 => {
            let (x, y) = (as_f64(a), as_f64(b));
            let (n, k, m) = (
                a.shape()[a.shape().len() - 2],
                y.shape()[y.ndim() - 2],
                shape[shape.len() - 1],
            );
            if n * k * m <= SMALL_PRODUCT {
                ArrayData::F64(fill(&shape, x.view(), y.view(), small_f64)?)
            } else {
                ArrayData::F64(fill(&shape, x.view(), y.view(), gemm_f64)?)
            }
        }
        DType::F32 => {
            let (x, y) = (super::kernels::as_f32(a), super::kernels::as_f32(b));
            let f = |p: ArrayView2<f32>, q: ArrayView2<f32>| super::kernels::gemm_float(p, q);
            ArrayData::F32(fill(&shape, x.view(), y.view(), f)?)
        }
        // Integers multiply and add modulo 2^64 in int64, whose low bits are every
        // integer type's result (uint64's too), cast back below.
        _ => {
            let (x, y) = (to_i64(a), to_i64(b));
            let f = |p: ArrayView2<i64>, q: ArrayView2<i64>| wrapping_matmul_i64(&p, &q);
            ArrayData::I64(fill(&shape, x.view(), y.view(), f)?)
        }
    };
    Ok(product.cast(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(shape: &[usize], f: impl Fn(usize) -> f64) -> ArrayD<f64> {
        let n: usize = shape.iter().product();
        ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(f).collect()).unwrap()
    }

    #[test]
    fn stacks_multiply_matrix_by_matrix_with_broadcast_batches() {
        let a = arr(&[2, 1, 2, 3], |i| i as f64 - 3.0);
        let b = arr(&[4, 3, 2], |i| (i % 5) as f64 * 0.5);
        let got = matmul_stack(&ArrayData::F64(a.clone()), &ArrayData::F64(b.clone())).unwrap();
        assert_eq!(got.shape(), &[2, 4, 2, 2]);
        let ArrayData::F64(got) = got else { panic!() };
        for (i, j, r, c) in [(0, 0, 0, 0), (1, 3, 1, 1), (0, 2, 1, 0), (1, 1, 0, 1)] {
            let want: f64 = (0..3).map(|t| a[[i, 0, r, t]] * b[[j, t, c]]).sum();
            assert_eq!(got[[i, j, r, c]], want);
        }
        // Small and large products take different paths and agree.
        for (n, k, m) in [(2, 3, 2), (9, 40, 7)] {
            let x = arr(&[3, n, k], |i| ((i * 7) % 11) as f64 - 5.0);
            let y = arr(&[k, m], |i| ((i * 5) % 13) as f64 * -0.0 + (i % 3) as f64);
            let got = matmul_stack(&ArrayData::F64(x.clone()), &ArrayData::F64(y.clone()));
            let ArrayData::F64(got) = got.unwrap() else {
                panic!()
            };
            for (s, r, c) in [(0, 0, 0), (2, n - 1, m - 1), (1, 1, 1)] {
                let want: f64 = (0..k).map(|t| x[[s, r, t]] * y[[t, c]]).sum();
                assert_eq!(got[[s, r, c]], want, "{n}x{k}x{m}");
            }
        }
        let zeros = ArrayData::F64(arr(&[2, 2, 2], |_| -0.0));
        let got = matmul_stack(&zeros, &ArrayData::F64(arr(&[2, 2], |_| 1.0))).unwrap();
        assert!(got.iter_f64().all(|v| v == 0.0 && v.is_sign_positive()));
        let ints = ArrayData::I64(ArrayD::from_elem(IxDyn(&[3, 2, 2]), i64::MAX));
        let got = matmul_stack(&ints, &ints).unwrap();
        assert_eq!(got.get_flat(0), Some(crate::array::Scalar::I64(2)));
        let flags = ArrayData::Bool(ArrayD::from_elem(IxDyn(&[0, 2, 2]), true));
        assert_eq!(matmul_stack(&flags, &flags).unwrap().shape(), &[0, 2, 2]);
        assert_eq!(matmul_stack(&flags, &flags).unwrap().dtype(), DType::Bool);
        let z = |shape: &[usize], s: f64| {
            let n: usize = shape.iter().product();
            let v = (0..n).map(|i| crate::array::Complex64::new(i as f64 - s, s * i as f64 % 3.0));
            ArrayD::from_shape_vec(IxDyn(shape), v.collect()).unwrap()
        };
        let (p, q) = (z(&[2, 2, 3], 2.0), z(&[3, 2], 0.5));
        let got = matmul_stack(&ArrayData::C128(p.clone()), &ArrayData::C128(q.clone())).unwrap();
        let ArrayData::C128(got) = got else { panic!() };
        for (s, r, c) in [(0, 0, 0), (1, 1, 1), (1, 0, 1)] {
            let want: crate::array::Complex64 = (0..3).map(|t| p[[s, r, t]] * q[[t, c]]).sum();
            assert_eq!(got[[s, r, c]], want);
        }
        let bad = ArrayData::F64(arr(&[3, 2, 2], |_| 1.0));
        assert!(matmul_stack(&ArrayData::F64(a), &bad).is_err());
    }
}
