//! The seam between ndarray chunks and faer's factorizations: views of float64 chunks as
//! faer matrices (no copy, any strides), and the factors faer computes back as ndarray
//! matrices. Every factorization of the family goes through here, so the kernels never
//! see faer's types, and faer runs single-threaded (the slots of a worker already run one
//! chunk each).

use crate::kernels::{kerr, KResult};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::{Mat, MatMut, MatRef, Par};
use ndarray::{Array1, Array2, ArrayView2};
use num_complex::Complex64;

/// A faer view of an ndarray matrix (strides in elements, as both count them).
pub(super) fn view<'a, T>(x: &ArrayView2<'a, T>) -> MatRef<'a, T> {
    let (m, n) = x.dim();
    let s = x.strides();
    // SAFETY: the pointer, shape and strides are those of a live ndarray view, which
    // outlives the returned reference (same lifetime); faer only reads through it.
    unsafe { MatRef::from_raw_parts(x.as_ptr(), m, n, s[0], s[1]) }
}

/// A faer matrix as a row-major ndarray matrix.
pub(super) fn owned<T: Copy>(m: MatRef<'_, T>) -> Array2<T> {
    Array2::from_shape_fn((m.nrows(), m.ncols()), |(i, j)| m[(i, j)])
}

/// The reduced QR of `x` (m × n): Q (m × k) with orthonormal columns and upper-triangular R
/// (k × n), k = min(m, n), by faer's blocked Householder QR (the batched `qr` and the
/// tests' reference; TSQR's kernels pack theirs: [`qr_packed`]).
pub fn qr(x: ArrayView2<f64>) -> (Array2<f64>, Array2<f64>) {
    let (m, n) = x.dim();
    let k = m.min(n);
    if k == 0 {
        return (Array2::zeros((m, k)), Array2::zeros((k, n)));
    }
    let f = view(&x).qr();
    let q: Mat<f64> = f.compute_thin_Q();
    (owned(q.as_ref()), owned(f.thin_R()))
}

/// The reduced QR of `x` packed as TSQR keeps it (`tsqr_kernels`): Q (m × k, zero-padded
/// to n columns) on top of R (k × n), written straight from faer's factors (a block of 10^5
/// rows is 80 MB a copy: one fewer than `qr` and a pack).
pub fn qr_packed(x: ArrayView2<f64>) -> Array2<f64> {
    let (m, n) = x.dim();
    let k = m.min(n);
    let mut out = Array2::<f64>::zeros((m + k, n));
    if k == 0 {
        return out;
    }
    let f = view(&x).qr();
    let q: Mat<f64> = f.compute_thin_Q();
    let r = f.thin_R();
    for (i, mut row) in out.rows_mut().into_iter().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = match i < m {
                true if j < k => q[(i, j)],
                true => 0.0,
                false => r[(i - m, j)],
            };
        }
    }
    out
}

/// faer's Householder QR of `x` (m × n, m ≥ n ≥ 1) in caller memory, the form TSQR's
/// leaves keep (`tsqr_kernels::leaf`): `basis` (m·n, column-major) gets R in its upper
/// triangle and the Householder vectors V below it (unit diagonal implied), `coeff` (n·n,
/// column-major) the upper-triangular T of their one block reflector, `Q = I − V·T⁻¹·Vᵀ`
/// (a block size of n: one block, so [`householder_times_top`] can use its structure).
pub fn householder_qr_into(x: ArrayView2<f64>, basis: &mut [f64], coeff: &mut [f64]) {
    use faer::linalg::qr::no_pivoting::factor::{qr_in_place, qr_in_place_scratch};
    let (m, n) = x.dim();
    assert!(m >= n && n > 0 && basis.len() == m * n && coeff.len() == n * n);
    let mut a = MatMut::from_column_major_slice_mut(basis, m, n);
    a.copy_from(view(&x));
    let t = MatMut::from_column_major_slice_mut(coeff, n, n);
    let scratch = qr_in_place_scratch::<f64>(m, n, n, Par::Seq, Default::default());
    let mut mem = MemBuffer::new(scratch);
    qr_in_place(a, t, Par::Seq, MemStack::new(&mut mem), Default::default());
}

/// `Q·[F; 0]` for the Q of [`householder_qr_into`]'s `basis` and `coeff` (m × n) and an
/// n × n `f`: the leaf's rows of TSQR's final Q, without forming the leaf's own Q. With
/// `W = T⁻¹·V_topᵀ·F` (n × n work), the rows are `F − V_top·W` on top and `−V_bot·W`
/// below: one (m − n) × n × n product (2mn² flops), a third of forming Q (4mn²: faer's
/// `compute_thin_Q` applies the reflector to a whole identity) and multiplying it by F (2mn²).
pub fn householder_times_top(
    basis: &[f64],
    coeff: &[f64],
    m: usize,
    f: ArrayView2<f64>,
) -> Array2<f64> {
    use faer::linalg::matmul::matmul;
    use faer::linalg::triangular_solve::solve_upper_triangular_in_place;
    use faer::Accum;
    let n = f.nrows();
    assert!(f.ncols() == n && m >= n && basis.len() == m * n && coeff.len() == n * n);
    let v = MatRef::from_column_major_slice(basis, m, n);
    let (v_top, v_bot) = v.split_at_row(n);
    let unit_lower = Mat::from_fn(n, n, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => v_top[(i, j)],
        std::cmp::Ordering::Equal => 1.0,
        std::cmp::Ordering::Less => 0.0,
    });
    let mut w = Mat::<f64>::zeros(n, n);
    matmul(
        w.as_mut(),
        Accum::Replace,
        unit_lower.transpose(),
        view(&f),
        1.0,
        Par::Seq,
    );
    let t = MatRef::from_column_major_slice(coeff, n, n);
    solve_upper_triangular_in_place(t, w.as_mut(), Par::Seq);
    let mut out = Array2::<f64>::zeros((m, n));
    let (mut top, mut bot) = out.view_mut().split_at(ndarray::Axis(0), n);
    top.assign(&f);
    matmul(
        view_mut(&mut top),
        Accum::Add,
        unit_lower.as_ref(),
        w.as_ref(),
        -1.0,
        Par::Seq,
    );
    matmul(
        view_mut(&mut bot),
        Accum::Replace,
        v_bot,
        w.as_ref(),
        -1.0,
        Par::Seq,
    );
    out
}

/// A faer view of a mutable ndarray matrix (strides in elements).
fn view_mut<'a>(x: &'a mut ndarray::ArrayViewMut2<'_, f64>) -> MatMut<'a, f64> {
    let (m, n) = x.dim();
    let (r, c) = (x.strides()[0], x.strides()[1]);
    // SAFETY: the pointer, shape and strides are those of a live, uniquely borrowed ndarray
    // view, which outlives the returned reference.
    unsafe { MatMut::from_raw_parts_mut(x.as_mut_ptr(), m, n, r, c) }
}

/// The thin SVD of `x` (m × n): U (m × k), the singular values (k, nonincreasing) and Vᵀ
/// (k × n), k = min(m, n).
pub fn svd(x: ArrayView2<f64>) -> KResult<(Array2<f64>, Array1<f64>, Array2<f64>)> {
    let (m, n) = x.dim();
    let k = m.min(n);
    if k == 0 {
        return Ok((
            Array2::zeros((m, k)),
            Array1::zeros(k),
            Array2::zeros((k, n)),
        ));
    }
    check_finite(&x, "svd")?;
    let (scaled, scale) = scaled_to_safe_range(x, |v| v.abs());
    let x = match &scaled {
        Some(s) => s.view(),
        None => x.view(),
    };
    let f = view(&x)
        .thin_svd()
        .or_else(|e| kerr(format!("svd did not converge: {e:?}")))?;
    let s = f.S().column_vector();
    let s = Array1::from_shape_fn(k, |i| s[i] * scale);
    let v = f.V();
    let vt = Array2::from_shape_fn((k, n), |(i, j)| v[(j, i)]);
    Ok((owned(f.U()), s, vt))
}

/// The thin SVD of a complex matrix: U (m × k), S (k, nonincreasing, real) and Vᴴ (k × n),
/// as `svd` (NumPy's `svd` of a complex128 matrix).
pub fn svd_complex(
    x: ArrayView2<Complex64>,
) -> KResult<(Array2<Complex64>, Array1<f64>, Array2<Complex64>)> {
    let (m, n) = x.dim();
    let k = m.min(n);
    if k == 0 {
        return Ok((
            Array2::zeros((m, k)),
            Array1::zeros(k),
            Array2::zeros((k, n)),
        ));
    }
    if !x.iter().all(|z| z.re.is_finite() && z.im.is_finite()) {
        return kerr("svd: the matrix holds NaN or infinity");
    }
    let (scaled, scale) = scaled_to_safe_range(x, |z| z.norm());
    let x = match &scaled {
        Some(s) => s.view(),
        None => x.view(),
    };
    let f = view(&x)
        .thin_svd()
        .or_else(|e| kerr(format!("svd did not converge: {e:?}")))?;
    let s = f.S().column_vector();
    let s = Array1::from_shape_fn(k, |i| s[i].re * scale);
    let (u, v) = (f.U(), f.V());
    let u = Array2::from_shape_fn((m, k), |(i, j)| u[(i, j)]);
    let vh = Array2::from_shape_fn((k, n), |(i, j)| v[(j, i)].conj());
    Ok((u, s, vh))
}

/// The singular values of `x`, nonincreasing.
pub fn singular_values(x: ArrayView2<f64>) -> KResult<Array1<f64>> {
    if x.is_empty() {
        return Ok(Array1::zeros(x.nrows().min(x.ncols())));
    }
    check_finite(&x, "svdvals")?;
    let (scaled, scale) = scaled_to_safe_range(x, |v| v.abs());
    let x = match &scaled {
        Some(s) => s.view(),
        None => x.view(),
    };
    let s = view(&x)
        .singular_values()
        .or_else(|e| kerr(format!("svd did not converge: {e:?}")))?;
    Ok(Array1::from(s) * scale)
}

/// The Cholesky factor of a symmetric positive-definite matrix (its lower triangle is
/// read, as NumPy's): L with `x = L·Lᵀ`, or `U = Lᵀ` when `upper`.
pub fn cholesky(x: ArrayView2<f64>, upper: bool) -> KResult<Array2<f64>> {
    if x.is_empty() {
        return Ok(Array2::zeros(x.dim()));
    }
    let f = view(&x).llt(faer::Side::Lower).or_else(|e| {
        kerr(format!(
            "cholesky: the matrix is not positive definite ({e:?})"
        ))
    })?;
    let l = owned(f.L());
    Ok(if upper { l.t().to_owned() } else { l })
}

/// The inverse of a square matrix, by LU with partial pivoting; a singular one is refused
/// (NumPy's `LinAlgError: Singular matrix`).
pub fn inv(x: ArrayView2<f64>) -> KResult<Array2<f64>> {
    use faer::linalg::solvers::DenseSolveCore;
    if x.is_empty() {
        return Ok(Array2::zeros(x.dim()));
    }
    let lu = view(&x).partial_piv_lu();
    let u = lu.U();
    if (0..u.nrows()).any(|i| u[(i, i)] == 0.0) {
        return kerr("inv: the matrix is singular");
    }
    Ok(owned(lu.inverse().as_ref()))
}

/// The determinant of a square matrix (1 for a 0 × 0 one, as NumPy's).
pub fn det(x: ArrayView2<f64>) -> f64 {
    if x.is_empty() {
        return 1.0;
    }
    view(&x).determinant()
}

/// The sign of the determinant of a square matrix and the natural log of its absolute
/// value, from the LU factors with partial pivoting (NumPy's `slogdet`: a singular matrix
/// gives sign 0 and log -inf; a 0 × 0 one sign 1 and log 0).
pub fn slogdet(x: ArrayView2<f64>) -> (f64, f64) {
    let n = x.nrows();
    if n == 0 {
        return (1.0, 0.0);
    }
    let (factors, mut sign) = lu_with_parity(x);
    let mut logabs = 0.0;
    for i in 0..n {
        let d = factors[(i, i)];
        if d == 0.0 {
            return (0.0, f64::NEG_INFINITY);
        }
        sign *= d.signum();
        logabs += d.abs().ln();
    }
    (sign, logabs)
}

/// The LU factors of a square matrix with partial pivoting (in one matrix, L's unit
/// diagonal implied), and the row exchanges' parity as a sign (±1): `slogdet`'s start.
pub(super) fn lu_with_parity<T: faer::traits::ComplexField>(x: ArrayView2<T>) -> (Mat<T>, f64) {
    use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
    let n = x.nrows();
    let mut factors = view(&x).to_owned();
    let (mut fwd, mut bwd) = (vec![0usize; n], vec![0usize; n]);
    let par = faer::Par::Seq;
    let scratch = lu_in_place_scratch::<usize, T>(n, n, par, Default::default());
    let mut mem = faer::dyn_stack::MemBuffer::new(scratch);
    let info = lu_in_place(
        factors.as_mut(),
        &mut fwd,
        &mut bwd,
        par,
        faer::dyn_stack::MemStack::new(&mut mem),
        Default::default(),
    )
    .0;
    let sign = match info.transposition_count % 2 {
        0 => 1.0,
        _ => -1.0,
    };
    (factors, sign)
}

/// The solution `x` of `a · x = b` (a square, b n × k), by LU with partial pivoting; a
/// singular `a` is refused (NumPy's `LinAlgError: Singular matrix`).
pub fn solve(a: ArrayView2<f64>, b: ArrayView2<f64>) -> KResult<Array2<f64>> {
    use faer::linalg::solvers::Solve;
    if a.is_empty() || b.is_empty() {
        return Ok(Array2::zeros(b.dim()));
    }
    let lu = view(&a).partial_piv_lu();
    let u = lu.U();
    if (0..u.nrows()).any(|i| u[(i, i)] == 0.0) {
        return kerr("solve: the matrix is singular");
    }
    let x: Mat<f64> = lu.solve(view(&b));
    Ok(owned(x.as_ref()))
}

/// The eigenvalues (nondecreasing) and eigenvectors (columns) of a symmetric matrix, from
/// its lower triangle (NumPy's `eigh`, `UPLO='L'`).
pub fn eigh(x: ArrayView2<f64>) -> KResult<(Array1<f64>, Array2<f64>)> {
    if x.is_empty() {
        return Ok((Array1::zeros(0), Array2::zeros((0, 0))));
    }
    check_finite(&x, "eigh")?;
    let f = view(&x)
        .self_adjoint_eigen(faer::Side::Lower)
        .or_else(|e| kerr(format!("eigh did not converge: {e:?}")))?;
    let s = f.S().column_vector();
    Ok((Array1::from_shape_fn(s.nrows(), |i| s[i]), owned(f.U())))
}

/// The eigenvalues of a symmetric matrix, nondecreasing (its lower triangle is read).
pub fn eigvalsh(x: ArrayView2<f64>) -> KResult<Array1<f64>> {
    if x.is_empty() {
        return Ok(Array1::zeros(0));
    }
    check_finite(&x, "eigvalsh")?;
    let w = view(&x)
        .self_adjoint_eigenvalues(faer::Side::Lower)
        .or_else(|e| kerr(format!("eigvalsh did not converge: {e:?}")))?;
    Ok(Array1::from(w))
}

/// A matrix whose largest magnitude is outside `[2^-500, 2^500]` scaled into it by a power
/// of two (exact), and the factor that takes its singular values back (`2^e`), as LAPACK's
/// drivers scale (`dlascl`): faer's SVD squares values on the way and does not converge on
/// entries near 1e300. `None` (and 1) for a matrix already in range.
fn scaled_to_safe_range<T>(
    x: ArrayView2<T>,
    magnitude: impl Fn(&T) -> f64,
) -> (Option<Array2<T>>, f64)
where
    T: Copy + std::ops::Mul<f64, Output = T>,
{
    let top = x.iter().map(&magnitude).fold(0.0, f64::max);
    let (low, high) = (2f64.powi(-500), 2f64.powi(500));
    if top == 0.0 || (low..=high).contains(&top) {
        return (None, 1.0);
    }
    let e = top.log2().round() as i32;
    // Two steps, as 2^±e alone may be out of range (e up to 1074).
    let (half, rest) = (e / 2, e - e / 2);
    let (a, b) = (2f64.powi(-half), 2f64.powi(-rest));
    (
        Some(x.mapv(|v| v * a * b)),
        2f64.powi(half) * 2f64.powi(rest),
    )
}

/// LAPACK refuses NaN and infinity in an SVD (NumPy raises `LinAlgError`); faer would loop
/// to its iteration limit. Refuse them by name.
fn check_finite(x: &ArrayView2<f64>, what: &str) -> KResult<()> {
    match x.iter().all(|v| v.is_finite()) {
        true => Ok(()),
        false => kerr(format!("{what}: the matrix holds NaN or infinity")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::family::linalg::kernels::gemm_f64;

    fn sample(m: usize, n: usize) -> Array2<f64> {
        Array2::from_shape_fn((m, n), |(i, j)| {
            ((i * 7 + j * 13) % 17) as f64 - 8.0 + i as f64 * 0.01
        })
    }

    fn close(a: &Array2<f64>, b: &Array2<f64>, tol: f64) -> bool {
        a.shape() == b.shape() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
    }

    #[test]
    fn qr_reconstructs_and_q_is_orthonormal_for_any_layout() {
        for (m, n) in [(40, 5), (5, 5), (3, 7), (1, 1)] {
            let x = sample(m, n);
            for v in [
                x.view(),
                x.t().to_owned().reversed_axes().view().to_owned().view(),
            ] {
                let (q, r) = qr(v);
                let k = m.min(n);
                assert_eq!((q.dim(), r.dim()), ((m, k), (k, n)));
                assert!(close(&gemm_f64(q.view(), r.view()), &x, 1e-9), "{m}x{n}");
                let eye = Array2::from_shape_fn((k, k), |(i, j)| f64::from(u8::from(i == j)));
                assert!(close(&gemm_f64(q.t(), q.view()), &eye, 1e-12));
                assert!(
                    (0..k).all(|i| (0..i).all(|j| r[[i, j]] == 0.0)),
                    "R is upper"
                );
            }
        }
        let (q, r) = qr(Array2::<f64>::zeros((0, 3)).view());
        assert_eq!((q.dim(), r.dim()), ((0, 0), (0, 3)));
    }

    #[test]
    fn svd_reconstructs_with_sorted_nonnegative_values() {
        for (m, n) in [(30, 4), (4, 30), (6, 6)] {
            let x = sample(m, n);
            let (u, s, vt) = svd(x.view()).unwrap();
            let us = &u * &s.view().insert_axis(ndarray::Axis(0));
            assert!(close(&gemm_f64(us.view(), vt.view()), &x, 1e-9), "{m}x{n}");
            assert!(s
                .windows(2)
                .into_iter()
                .all(|w| w[0] >= w[1] && w[1] >= 0.0));
            let only = singular_values(x.view()).unwrap();
            assert!(only.iter().zip(&s).all(|(a, b)| (a - b).abs() < 1e-9));
        }
        let mut bad = sample(3, 3);
        bad[[1, 1]] = f64::NAN;
        assert!(svd(bad.view()).unwrap_err().0.contains("NaN"));
    }

    /// Entries near the ends of float64's range: the singular values are the unscaled
    /// matrix's times the scale (faer alone did not converge at 1e300), U and Vᵀ the same.
    #[test]
    fn svd_of_huge_and_tiny_matrices_is_the_scaled_one() {
        let x = sample(4, 3);
        let (u, s, vt) = svd(x.view()).unwrap();
        for scale in [1e300, 1e-300, 1e200, 1e-200] {
            let big = x.mapv(|v| v * scale);
            let (bu, bs, bvt) = svd(big.view()).unwrap();
            for (a, b) in bs.iter().zip(&s) {
                assert!(
                    (a / scale - b).abs() < 1e-12 * b.abs().max(1.0),
                    "{scale}: {a} vs {b}"
                );
            }
            assert!(close(&bu, &u, 1e-12) && close(&bvt, &vt, 1e-12), "{scale}");
            let vals = singular_values(big.view()).unwrap();
            assert!(vals
                .iter()
                .zip(&s)
                .all(|(a, b)| (a / scale - b).abs() < 1e-12 * b.max(1.0)));
            let z = big.mapv(|v| Complex64::new(v, -v));
            let (_, zs, _) = svd_complex(z.view()).unwrap();
            let want = 2f64.sqrt();
            assert!(zs
                .iter()
                .zip(&s)
                .all(|(a, b)| (a / scale / want - b).abs() < 1e-12 * b.max(1.0)));
        }
    }
}
