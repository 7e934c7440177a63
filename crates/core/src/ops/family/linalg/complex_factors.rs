//! The factorizations of whole complex128 matrices (faer's, as `faer_bridge`'s of float64
//! ones): what the `dense` op computes for a complex matrix. NumPy's conventions carry
//! over with the conjugate transpose where the real ones have the transpose: `cholesky`
//! reads the lower triangle of a Hermitian positive-definite matrix, `x = L·Lᴴ` (U = Lᴴ),
//! `eigh` the lower triangle of a Hermitian one (real eigenvalues), and `slogdet`'s sign is
//! the unit complex number `det / |det|`.

use super::faer_bridge::{self, owned, view};
use crate::kernels::{kerr, KResult};
use faer::Mat;
use ndarray::{Array1, Array2, ArrayView2};
use num_complex::Complex64;

/// Refuses NaN and infinity by name (LAPACK's `LinAlgError`; faer would iterate on them).
fn check_finite(x: &ArrayView2<Complex64>, what: &str) -> KResult<()> {
    match x.iter().all(|z| z.re.is_finite() && z.im.is_finite()) {
        true => Ok(()),
        false => kerr(format!("{what}: the matrix holds NaN or infinity")),
    }
}

/// The reduced QR: Q (m × k, orthonormal columns) and upper-triangular R (k × n).
pub fn qr(x: ArrayView2<Complex64>) -> (Array2<Complex64>, Array2<Complex64>) {
    let (m, n) = x.dim();
    let k = m.min(n);
    if k == 0 {
        return (Array2::zeros((m, k)), Array2::zeros((k, n)));
    }
    let f = view(&x).qr();
    let q: Mat<Complex64> = f.compute_thin_Q();
    (owned(q.as_ref()), owned(f.thin_R()))
}

/// The Cholesky factor L (`x = L·Lᴴ`), or `U = Lᴴ` when `upper`.
pub fn cholesky(x: ArrayView2<Complex64>, upper: bool) -> KResult<Array2<Complex64>> {
    if x.is_empty() {
        return Ok(Array2::zeros(x.dim()));
    }
    let f = view(&x).llt(faer::Side::Lower).or_else(|e| {
        kerr(format!(
            "cholesky: the matrix is not positive definite ({e:?})"
        ))
    })?;
    let l = owned(f.L());
    Ok(match upper {
        true => l.t().mapv(|z| z.conj()),
        false => l,
    })
}

/// The LU factors with partial pivoting, refusing a singular matrix by `what`.
fn lu(
    x: &ArrayView2<Complex64>,
    what: &str,
) -> KResult<faer::linalg::solvers::PartialPivLu<Complex64>> {
    let lu = view(x).partial_piv_lu();
    let u = lu.U();
    if (0..u.nrows()).any(|i| u[(i, i)] == Complex64::new(0.0, 0.0)) {
        return kerr(format!("{what}: the matrix is singular"));
    }
    Ok(lu)
}

/// The inverse, by LU with partial pivoting; a singular matrix is refused.
pub fn inv(x: ArrayView2<Complex64>) -> KResult<Array2<Complex64>> {
    use faer::linalg::solvers::DenseSolveCore;
    if x.is_empty() {
        return Ok(Array2::zeros(x.dim()));
    }
    Ok(owned(lu(&x, "inv")?.inverse().as_ref()))
}

/// The solution of `a · x = b`; a singular `a` is refused.
pub fn solve(a: ArrayView2<Complex64>, b: ArrayView2<Complex64>) -> KResult<Array2<Complex64>> {
    use faer::linalg::solvers::Solve;
    if a.is_empty() || b.is_empty() {
        return Ok(Array2::zeros(b.dim()));
    }
    let x: Mat<Complex64> = lu(&a, "solve")?.solve(view(&b));
    Ok(owned(x.as_ref()))
}

/// The determinant (1 for a 0 × 0 matrix).
pub fn det(x: ArrayView2<Complex64>) -> Complex64 {
    if x.is_empty() {
        return Complex64::new(1.0, 0.0);
    }
    view(&x).determinant()
}

/// The sign (`det / |det|`, 0 for a singular matrix) and `ln |det|` (-inf then), from the
/// LU factors' diagonal and the row exchanges' parity, so no product overflows.
pub fn slogdet(x: ArrayView2<Complex64>) -> (Complex64, f64) {
    let n = x.nrows();
    if n == 0 {
        return (Complex64::new(1.0, 0.0), 0.0);
    }
    let (factors, parity) = faer_bridge::lu_with_parity(x);
    let mut sign = Complex64::new(parity, 0.0);
    let mut logabs = 0.0;
    for i in 0..n {
        let d = factors[(i, i)];
        let r = d.norm();
        if r == 0.0 {
            return (Complex64::new(0.0, 0.0), f64::NEG_INFINITY);
        }
        sign *= d / r;
        logabs += r.ln();
    }
    (sign, logabs)
}

/// The eigenvalues (real, nondecreasing) and eigenvectors (columns) of a Hermitian matrix,
/// from its lower triangle.
pub fn eigh(x: ArrayView2<Complex64>) -> KResult<(Array1<f64>, Array2<Complex64>)> {
    if x.is_empty() {
        return Ok((Array1::zeros(0), Array2::zeros((0, 0))));
    }
    check_finite(&x, "eigh")?;
    let f = view(&x)
        .self_adjoint_eigen(faer::Side::Lower)
        .or_else(|e| kerr(format!("eigh did not converge: {e:?}")))?;
    let s = f.S().column_vector();
    Ok((Array1::from_shape_fn(s.nrows(), |i| s[i].re), owned(f.U())))
}

/// The eigenvalues of a Hermitian matrix, real and nondecreasing.
pub fn eigvalsh(x: ArrayView2<Complex64>) -> KResult<Array1<f64>> {
    Ok(eigh(x)?.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(re: f64, im: f64) -> Complex64 {
        Complex64::new(re, im)
    }

    fn sample(m: usize, n: usize) -> Array2<Complex64> {
        Array2::from_shape_fn((m, n), |(i, j)| {
            c(
                ((i * 7 + j * 13) % 17) as f64 - 8.0,
                ((i * 5 + j * 3) % 11) as f64 - 5.0 + 0.1 * i as f64,
            )
        })
    }

    fn adjoint(a: &Array2<Complex64>) -> Array2<Complex64> {
        a.t().mapv(|z| z.conj())
    }

    fn worst(a: &Array2<Complex64>, b: &Array2<Complex64>) -> f64 {
        assert_eq!(a.dim(), b.dim());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max)
    }

    /// Each factorization against its definition: Q·R = X with QᴴQ = I, L·Lᴴ = H, X·X⁻¹ = I,
    /// X·solve(X, B) = B, sign·e^logabs = det, H·V = V·diag(w) with real w.
    #[test]
    fn complex_factors_meet_their_definitions() {
        let x = sample(5, 5);
        let eye = Array2::<Complex64>::eye(5);
        for (m, n) in [(6, 3), (3, 6), (5, 5)] {
            let a = sample(m, n);
            let (q, r) = qr(a.view());
            assert!(worst(&q.dot(&r), &a) < 1e-12, "{m} × {n}: Q·R");
            let k = m.min(n);
            assert!(worst(&adjoint(&q).dot(&q), &Array2::eye(k)) < 1e-12);
        }
        let h = adjoint(&x).dot(&x) + &eye.mapv(|z| z * 5.0);
        let l = cholesky(h.view(), false).unwrap();
        assert!(worst(&l.dot(&adjoint(&l)), &h) < 1e-10, "L·Lᴴ");
        assert_eq!(cholesky(h.view(), true).unwrap(), adjoint(&l));
        let inverse = inv(x.view()).unwrap();
        assert!(worst(&x.dot(&inverse), &eye) < 1e-12, "X·X⁻¹");
        let b = sample(5, 2);
        assert!(worst(&x.dot(&solve(x.view(), b.view()).unwrap()), &b) < 1e-10);
        let (sign, logabs) = slogdet(x.view());
        let d = det(x.view());
        assert!((sign.norm() - 1.0).abs() < 1e-12);
        assert!((sign * logabs.exp() - d).norm() < 1e-9 * d.norm());
        let (w, v) = eigh(h.view()).unwrap();
        let vw = Array2::from_shape_fn((5, 5), |(i, j)| v[[i, j]] * w[j]);
        assert!(worst(&h.dot(&v), &vw) < 1e-9, "H·V = V·w");
        assert!(w.windows(2).into_iter().all(|p| p[0] <= p[1]));
        // Singular and non-finite matrices are refused by name, or give NumPy's sign 0.
        let singular = Array2::<Complex64>::zeros((3, 3));
        assert!(inv(singular.view()).unwrap_err().0.contains("singular"));
        assert_eq!(slogdet(singular.view()), (c(0.0, 0.0), f64::NEG_INFINITY));
        let mut bad = x.clone();
        bad[[1, 1]] = c(f64::NAN, 0.0);
        assert!(eigh(bad.view()).unwrap_err().0.contains("NaN"));
    }
}
