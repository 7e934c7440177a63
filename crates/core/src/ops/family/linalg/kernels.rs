//! The matrix product of two 2-D chunks (stacks of them: `batched`).
//!
//! float64 goes through the `gemm` crate: a pure-Rust GEMM with packed, cache-blocked
//! micro-kernels chosen at run time for the CPU (AVX-512 where there is one), single-threaded
//! because the slots of a worker already run one chunk each. A system BLAS would break the
//! static `FROM scratch` image. float32 takes the same path with gemm's float32 kernels (twice
//! the flops per instruction of float64). int64 and int32 use a wrapping product (like
//! NumPy's: the int32 one is the int64 one's low half), and bools are NumPy's bool matmul:
//! the or of ands.
//!
//! A float64 block of a 4000² product in chunks of 1000 is 8 MB and its product takes
//! ~20-30 ms on one core, so every pass over the block outside the GEMM costs a few percent:
//! the inputs are read in place (gemm takes any strides, so no copy and no relayout), the
//! output is written once, and the pass that turns NumPy's `-0.0` into `+0.0` runs only
//! for the shapes where gemm does not go through its packed micro-kernel (see
//! [`gemm_f64`]).

use crate::array::{ArrayData, Complex64, DType};
use crate::kernels::{KResult, KernelError};
use ndarray::{Array2, ArrayD, ArrayView2, ArrayViewMut2, Ix2};
use std::borrow::Cow;

pub fn matmul(a: &ArrayData, b: &ArrayData) -> KResult<ArrayData> {
    if a.shape().len() != 2 || b.shape().len() != 2 {
        return super::batched::matmul_stack(a, b);
    }
    let out = a.dtype().promote(b.dtype());
    let product = match out {
        DType::F64 => {
            let (x, y) = (as_f64(a), as_f64(b));
            ArrayData::F64(gemm_f64(as_2d(&x)?, as_2d(&y)?).into_dyn())
        }
        DType::F32 => {
            let (x, y) = (as_f32(a), as_f32(b));
            ArrayData::F32(gemm_float(as_2d(&x)?, as_2d(&y)?).into_dyn())
        }
        DType::C64 | DType::C128 => {
            let (x, y) = (as_c128(a), as_c128(b));
            ArrayData::C128(gemm_c128(as_2d(&x)?, as_2d(&y)?).into_dyn())
        }
        // Integers multiply and add modulo 2^64 in int64, whose low bits are every
        // integer type's result (uint64's too), cast back below.
        _ => {
            let (x, y) = (to_i64(a), to_i64(b));
            let (x, y) = (as_2d(&x)?, as_2d(&y)?);
            ArrayData::I64(wrapping_matmul_i64(&x, &y).into_dyn())
        }
    };
    Ok(product.cast(out))
}

/// The chunk itself when it is float64 (the common case: no copy), else a float64 copy.
pub(super) fn as_f64(a: &ArrayData) -> Cow<'_, ArrayD<f64>> {
    match a {
        ArrayData::F64(x) => Cow::Borrowed(x),
        other => Cow::Owned(other.clone().to_f64()),
    }
}

/// The chunk itself when it is float32, else a float32 copy.
pub(super) fn as_f32(a: &ArrayData) -> Cow<'_, ArrayD<f32>> {
    match a {
        ArrayData::F32(x) => Cow::Borrowed(x),
        other => match other.clone().cast(DType::F32) {
            ArrayData::F32(x) => Cow::Owned(x),
            _ => unreachable!("cast to float32"),
        },
    }
}

/// The chunk itself when it is complex128, else a complex128 copy (complex64 is multiplied
/// in double precision and rounded once at the end: NumPy's `cgemm` rounds every sum).
pub(super) fn as_c128(a: &ArrayData) -> Cow<'_, ArrayD<Complex64>> {
    match a {
        ArrayData::C128(x) => Cow::Borrowed(x),
        other => match other.clone().cast(DType::C128) {
            ArrayData::C128(x) => Cow::Owned(x),
            _ => unreachable!("cast to complex128"),
        },
    }
}

/// `x @ y` for complex128 matrices by four real products of the parts, each through
/// [`gemm_f64`]: `(xr + i·xi)(yr + i·yi) = (xr·yr - xi·yi) + i·(xr·yi + xi·yr)`, the
/// formula of every term of a complex sum, summed part by part.
pub(super) fn gemm_c128(x: ArrayView2<Complex64>, y: ArrayView2<Complex64>) -> Array2<Complex64> {
    let (xr, xi) = (x.mapv(|z| z.re), x.mapv(|z| z.im));
    let (yr, yi) = (y.mapv(|z| z.re), y.mapv(|z| z.im));
    let re = gemm_f64(xr.view(), yr.view()) - gemm_f64(xi.view(), yi.view());
    let im = gemm_f64(xr.view(), yi.view()) + gemm_f64(xi.view(), yr.view());
    ndarray::Zip::from(&re)
        .and(&im)
        .map_collect(|r, i| Complex64::new(*r, *i))
}

pub(super) fn to_i64(a: &ArrayData) -> ArrayD<i64> {
    match a.clone().cast(DType::I64) {
        ArrayData::I64(x) => x,
        _ => unreachable!("cast to int64"),
    }
}

pub(super) fn as_2d<T>(a: &ArrayD<T>) -> KResult<ArrayView2<'_, T>> {
    a.view()
        .into_dimensionality::<Ix2>()
        .map_err(|e| KernelError(format!("matmul needs 2-D chunks: {e}")))
}

/// `x @ y` for int64 matrices with NumPy's wrapping arithmetic (ndarray's product checks
/// overflow in debug builds and wraps in release ones). Row by row, `i-p-j` order, so the
/// inner loop runs over contiguous rows of `y` and of the result.
pub(super) fn wrapping_matmul_i64(x: &ArrayView2<i64>, y: &ArrayView2<i64>) -> Array2<i64> {
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

/// Whether gemm may hand back a `-0.0` where NumPy's BLAS, whose sums start from `+0.0`,
/// gives `+0.0` (a sum whose every term is `-0.0`). gemm's packed micro-kernel starts its
/// accumulators at `+0.0` and adds every product to them, so it cannot; its special paths
/// for small or thin shapes (k ≤ 2, one row or column, ≤ 16 × 16 outputs: `gevv`, `gemv`
/// and the horizontal kernel) may start from the first product. The unit test
/// `signed_zeros_follow_numpy_on_every_path` pins this for the version in Cargo.lock.
pub(super) fn may_return_negative_zero(m: usize, n: usize, k: usize) -> bool {
    k <= 2 || m <= 1 || n <= 1 || m * n <= 16 * 16
}

/// The float types gemm multiplies.
pub trait GemmFloat: Copy + 'static + std::ops::Add<Output = Self> {
    const ZERO: Self;
    const ONE: Self;
}

impl GemmFloat for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
}

impl GemmFloat for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
}

/// `x @ y` for float64 matrices of any strides (see [`gemm_float`]).
pub fn gemm_f64(x: ArrayView2<f64>, y: ArrayView2<f64>) -> Array2<f64> {
    gemm_float(x, y)
}

/// The most rows a product may have to be computed transposed (see [`gemm_float`]).
pub(super) const FEW_ROWS: usize = 32;

/// `x @ y` for float matrices of any strides (ndarray views of chunks are often
/// transposed or sliced); gemm reads them in place and packs its own panels.
///
/// A product of few rows and many more columns (`Qᵀ·x` in `svd_compressed`: 20 × 10^4 times
/// 10^4 × 1000) runs in gemm's worst shape: 1.4–1.7× the time of its transpose `yᵀ·xᵀ`
/// (1000 × 20, the same sums), which gemm computes with its micro-kernel across the long
/// side. Such a product is computed as that transpose and transposed back (a copy of the
/// small result).
pub fn gemm_float<T: GemmFloat>(x: ArrayView2<T>, y: ArrayView2<T>) -> Array2<T> {
    let (m, k) = x.dim();
    let n = y.ncols();
    assert_eq!(
        k,
        y.nrows(),
        "inner dimensions agree (checked when the graph was built)"
    );
    if m <= FEW_ROWS && n >= 4 * FEW_ROWS && k >= 4 * FEW_ROWS {
        return gemm_into(y.t(), x.t())
            .reversed_axes()
            .as_standard_layout()
            .into_owned();
    }
    gemm_into(x, y)
}

/// `x @ y` into a fresh row-major matrix, by gemm.
fn gemm_into<T: GemmFloat>(x: ArrayView2<T>, y: ArrayView2<T>) -> Array2<T> {
    let (m, k) = x.dim();
    let n = y.ncols();
    if m == 0 || n == 0 || k == 0 {
        return Array2::from_elem((m, n), T::ZERO);
    }
    // Zeroed, not uninitialised: gemm does not promise never to read `dst` when
    // `read_dst` is false. At most one memset (often none: fresh pages are zero).
    let mut out = Array2::<T>::from_elem((m, n), T::ZERO);
    gemm_to(out.view_mut(), x, y, false);
    if may_return_negative_zero(m, n, k) {
        out.mapv_inplace(|v| v + T::ZERO);
    }
    out
}

/// `dst = x @ y`, or `dst += x @ y` when `accumulate`, for views of any strides (`dst`'s
/// included: a transposed view writes the product's transpose). Empty products leave `dst`.
pub(super) fn gemm_to<T: GemmFloat>(
    mut dst: ArrayViewMut2<T>,
    x: ArrayView2<T>,
    y: ArrayView2<T>,
    accumulate: bool,
) {
    let (m, k) = x.dim();
    let n = y.ncols();
    assert_eq!((k, (m, n)), (y.nrows(), dst.dim()), "product shapes agree");
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    let (ds, xs, ys) = (dst.strides().to_vec(), x.strides(), y.strides());
    // SAFETY: every pointer comes from a live ndarray view with the matching shape and
    // strides (in elements, as gemm expects); `dst` is borrowed mutably, so gemm's writes
    // through it alias nothing else.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            ds[1],
            ds[0],
            accumulate,
            x.as_ptr(),
            xs[1],
            xs[0],
            y.as_ptr(),
            ys[1],
            ys[0],
            T::ONE,
            T::ONE,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
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
            assert_eq!(
                gemm_f64(x.view(), y.view()),
                naive(&x, &y),
                "{m}x{k} @ {k}x{n}"
            );
            let xt = x.t().to_owned().reversed_axes(); // same values, Fortran order
            assert_eq!(
                gemm_f64(xt.view(), y.view()),
                naive(&x, &y),
                "column-major lhs"
            );
        }
        let big = Array::from_shape_fn((40, 30), |(i, j)| (i + 2 * j) as f64);
        let view = big.slice(s![..;3, ..;2]).to_owned();
        let strided = big.slice(s![..;3, ..;2]);
        let y = Array::from_shape_fn((15, 4), |(i, j)| (i * j) as f64);
        assert_eq!(gemm_f64(strided, y.view()), naive(&view, &y));
    }

    /// Few rows and many columns go through the transposed product: the same values (small
    /// integers, so exact in any order of the sums) for row- and column-major operands, at
    /// the threshold and past it.
    #[test]
    fn a_wide_product_of_few_rows_equals_the_naive_one() {
        for (m, k, n) in [
            (1, 128, 128),
            (20, 300, 1000),
            (FEW_ROWS, 4 * FEW_ROWS, 4 * FEW_ROWS),
            (FEW_ROWS + 1, 200, 200),
            (5, 127, 400),
        ] {
            let x = Array::from_shape_fn((m, k), |(i, j)| (i * 7 + j * 3) as f64 % 11.0 - 5.0);
            let y = Array::from_shape_fn((k, n), |(i, j)| (i * 5 + j) as f64 % 7.0 - 3.0);
            let want = naive(&x, &y);
            let got = gemm_f64(x.view(), y.view());
            assert!(got.is_standard_layout());
            assert_eq!(got, want, "{m}x{k} @ {k}x{n}");
            let xt = x.t().to_owned();
            assert_eq!(gemm_f64(xt.t(), y.view()), want, "column-major lhs");
            let f = gemm_float(x.mapv(|v| v as f32).view(), y.mapv(|v| v as f32).view());
            assert_eq!(f, want.mapv(|v| v as f32), "float32");
        }
    }

    /// Every term `0.0 * -1.0 = -0.0`: NumPy's BLAS sums from `+0.0` and returns `+0.0`, on
    /// every path gemm may take (small, thin, k ≤ 2, packed over one and several k blocks).
    #[test]
    fn signed_zeros_follow_numpy_on_every_path() {
        for (m, k, n) in [
            (1, 1, 1),
            (3, 5, 2),
            (17, 33, 9),
            (64, 1, 64),
            (64, 2, 64),
            (40, 40, 40),
            (300, 5, 300),
            (20, 700, 20),
            (1, 50, 50),
            (50, 50, 1),
            (2, 3000, 2),
            (33, 1500, 65),
        ] {
            let x = Array2::<f64>::zeros((m, k));
            let y = Array2::<f64>::from_elem((k, n), -1.0);
            let p = gemm_f64(x.view(), y.view());
            assert!(
                p.iter().all(|v| *v == 0.0 && v.is_sign_positive()),
                "{m}x{k} @ {k}x{n} has a -0.0"
            );
        }
    }

    /// Complex products against the definition (each term's complex product summed in
    /// order), complex64 too (multiplied in double precision, rounded at the end).
    #[test]
    fn complex_products_match_the_definition() {
        let z = |r: usize, c: usize, seed: usize| {
            Array2::from_shape_fn((r, c), |(i, j)| {
                let k = (i * 7 + j * 3 + seed) as f64;
                Complex64::new(k % 11.0 - 5.0, (k * 1.5) % 7.0 - 3.0)
            })
        };
        for (m, k, n) in [(1, 1, 1), (3, 5, 2), (17, 33, 9), (2, 0, 3)] {
            let (x, y) = (z(m, k, 1), z(k, n, 4));
            let want = Array2::from_shape_fn((m, n), |(i, j)| {
                (0..k).fold(Complex64::new(0.0, 0.0), |acc, p| {
                    acc + x[[i, p]] * y[[p, j]]
                })
            });
            let got = matmul(
                &ArrayData::C128(x.clone().into_dyn()),
                &ArrayData::C128(y.clone().into_dyn()),
            )
            .unwrap();
            assert_eq!(got, ArrayData::C128(want.clone().into_dyn()), "{m}x{k}x{n}");
            let narrow =
                |a: &Array2<Complex64>| ArrayData::C128(a.clone().into_dyn()).cast(DType::C64);
            let got = matmul(&narrow(&x), &narrow(&y)).unwrap();
            assert_eq!(got, narrow(&want), "complex64 {m}x{k}x{n}");
        }
        // A real operand promotes: float64 @ complex128 is complex128.
        let r = ArrayData::F64(Array2::from_shape_fn((2, 3), |(i, j)| (i + j) as f64).into_dyn());
        let c = z(3, 2, 0);
        let ArrayData::C128(got) = matmul(&r, &ArrayData::C128(c.clone().into_dyn())).unwrap()
        else {
            panic!("complex128 expected")
        };
        assert_eq!(
            got[[1, 0]],
            (0..3).map(|p| c[[p, 0]] * (1 + p) as f64).sum()
        );
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
