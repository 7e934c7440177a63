//! The matrix product of two 2-D chunks.
//!
//! float64 goes through the `gemm` crate: a pure-Rust GEMM with packed, cache-blocked
//! micro-kernels chosen at run time for the CPU (AVX-512 where there is one), single-threaded
//! because the slots of a worker already run one chunk each. A system BLAS would break the
//! static `FROM scratch` image. int64 uses ndarray's product (wrapping like NumPy's), and
//! bools are NumPy's bool matmul: the or of ands.

use super::{KResult, KernelError};
use crate::array::{ArrayData, DType};
use ndarray::{Array2, ArrayD, Ix2};

pub fn matmul(a: &ArrayData, b: &ArrayData) -> KResult<ArrayData> {
    let out = a.dtype().promote(b.dtype());
    let product = match out {
        DType::F64 => {
            let (x, y) = (a.clone().to_f64(), b.clone().to_f64());
            ArrayData::F64(gemm_f64(&as_2d(x)?, &as_2d(y)?).into_dyn())
        }
        DType::I64 | DType::Bool => {
            let (x, y) = (to_i64(a), to_i64(b));
            ArrayData::I64(wrapping_matmul_i64(&as_2d(x)?, &as_2d(y)?).into_dyn())
        }
    };
    Ok(product.cast(out))
}

fn to_i64(a: &ArrayData) -> ArrayD<i64> {
    match a.clone().cast(DType::I64) {
        ArrayData::I64(x) => x,
        _ => unreachable!("cast to int64"),
    }
}

fn as_2d<T>(a: ArrayD<T>) -> KResult<Array2<T>> {
    a.into_dimensionality::<Ix2>()
        .map_err(|e| KernelError(format!("matmul needs 2-D chunks: {e}")))
}

/// `x @ y` for int64 matrices with NumPy's wrapping arithmetic (ndarray's product checks
/// overflow in debug builds and wraps in release ones). Row by row, `i-p-j` order, so the
/// inner loop runs over contiguous rows of `y` and of the result.
fn wrapping_matmul_i64(x: &Array2<i64>, y: &Array2<i64>) -> Array2<i64> {
    let (m, k) = x.dim();
    let mut out = Array2::<i64>::zeros((m, y.ncols()));
    for i in 0..m {
        let mut row = out.row_mut(i);
        for p in 0..k {
            let a = x[[i, p]];
            for (o, b) in row.iter_mut().zip(y.row(p)) {
                *o = o.wrapping_add(a.wrapping_mul(*b));
            }
        }
    }
    out
}

/// `x @ y` for float64 matrices of any strides (ndarray views of chunks are often
/// transposed or sliced).
pub fn gemm_f64(x: &Array2<f64>, y: &Array2<f64>) -> Array2<f64> {
    let (m, k) = x.dim();
    let n = y.ncols();
    assert_eq!(
        k,
        y.nrows(),
        "inner dimensions agree (checked when the graph was built)"
    );
    let mut out = Array2::<f64>::zeros((m, n));
    if m == 0 || n == 0 {
        return out;
    }
    let (xs, ys) = (x.strides(), y.strides());
    let os = out.strides().to_vec();
    // SAFETY: every pointer comes from a live ndarray with the matching shape and strides
    // (in elements, as gemm expects); `out` is freshly allocated, contiguous and written
    // only here; `read_dst = false` so its zeros are never read as input. When k == 0 the
    // product is the zero matrix `out` already holds, and gemm writes beta * 0 = 0.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            os[1],
            os[0],
            false,
            x.as_ptr(),
            xs[1],
            xs[0],
            y.as_ptr(),
            ys[1],
            ys[0],
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
    // NumPy's (BLAS's) sums start from +0.0: a product that is all -0.0 terms is +0.0.
    out.mapv_inplace(|v| v + 0.0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{s, Array};

    fn naive(x: &Array2<f64>, y: &Array2<f64>) -> Array2<f64> {
        Array2::from_shape_fn((x.nrows(), y.ncols()), |(i, j)| {
            (0..x.ncols()).map(|p| x[[i, p]] * y[[p, j]]).sum()
        })
    }

    #[test]
    fn gemm_matches_the_naive_product_for_any_layout() {
        for (m, k, n) in [
            (1, 1, 1),
            (3, 5, 2),
            (17, 33, 9),
            (64, 1, 64),
            (2, 0, 3),
            (0, 4, 5),
        ] {
            let x = Array::from_shape_fn((m, k), |(i, j)| (i * 7 + j * 3) as f64 % 11.0 - 5.0);
            let y = Array::from_shape_fn((k, n), |(i, j)| (i * 5 + j) as f64 % 7.0 - 3.0);
            assert_eq!(gemm_f64(&x, &y), naive(&x, &y), "{m}x{k} @ {k}x{n}");
            let xt = x.t().to_owned().reversed_axes(); // same values, Fortran order
            assert_eq!(gemm_f64(&xt, &y), naive(&x, &y), "column-major lhs");
        }
        let big = Array::from_shape_fn((40, 30), |(i, j)| (i + 2 * j) as f64);
        let view = big.slice(s![..;3, ..;2]).to_owned();
        let strided = big.slice(s![..;3, ..;2]);
        let y = Array::from_shape_fn((15, 4), |(i, j)| (i * j) as f64);
        assert_eq!(gemm_f64(&strided.to_owned(), &y), naive(&view, &y));
    }

    #[test]
    fn bool_and_int_products_follow_numpy() {
        let b = |v: &[bool], r, c| {
            ArrayData::Bool(
                Array::from_shape_vec((r, c), v.to_vec())
                    .unwrap()
                    .into_dyn(),
            )
        };
        let p = matmul(
            &b(&[true, false, false, false], 2, 2),
            &b(&[true, true, true, false], 2, 2),
        )
        .unwrap();
        assert_eq!(p, b(&[true, true, false, false], 2, 2));
        let i = ArrayData::I64(
            Array::from_shape_vec((1, 2), vec![i64::MAX, 1])
                .unwrap()
                .into_dyn(),
        );
        let j = ArrayData::I64(
            Array::from_shape_vec((2, 1), vec![2, 2])
                .unwrap()
                .into_dyn(),
        );
        let ArrayData::I64(w) = matmul(&i, &j).unwrap() else {
            panic!()
        };
        assert_eq!(w[[0, 0]], i64::MAX.wrapping_mul(2).wrapping_add(2));
    }
}
