//! The tensor API of the factorizations: `qr`, `svd`, `svdvals`, `svd_compressed`,
//! `cholesky`, `inv`, `det`, `slogdet`, `eigh`, `eigvalsh`, built from the `qr` op (TSQR,
//! packed Q-over-R) and the `dense` op (whole matrices, packed flat results per matrix),
//! sliced and reshaped into the user's tensors. A stack of matrices (more than 2 axes) is
//! factored matrix by matrix, one `dense` chunk per chunk of its leading axes; a single
//! matrix's QR and SVD go by TSQR. The computation is in float64: float32 inputs get
//! float32 results (the array API's), integers and bools float64 ones (NumPy's).

use super::dense::DenseFn;
use crate::array::{fmt_shape, DType};
use crate::error::{AresError, Result};
use crate::ops::{Op, OpArgs};
use crate::tensor::{SliceArg, Tensor};

/// The real parts of a complex result whose values are real (S, eigenvalues, a log),
/// packed among complex ones; a real result as it is.
fn real_values(t: Tensor) -> Result<Tensor> {
    match t.dtype().is_complex() {
        true => t.unary(Op::RealPart),
        false => Ok(t),
    }
}

fn range(start: usize, stop: usize) -> SliceArg {
    SliceArg::Range {
        start: Some(start as i64),
        stop: Some(stop as i64),
        step: None,
    }
}

impl Tensor {
    /// The leading (batch) axes of a stack of matrices, its rows and its columns, refusing
    /// fewer than 2 axes.
    pub(super) fn stack_dims(&self, name: &'static str) -> Result<(Vec<usize>, usize, usize)> {
        match self.shape() {
            [batch @ .., m, n] => Ok((batch.to_vec(), *m, *n)),
            s => Err(AresError::shape(
                name,
                format!("needs a matrix (at least 2-D), got shape {}", fmt_shape(s)),
            )),
        }
    }

    /// Slices `start..stop` of the last axis of a packed `dense` result and reshapes it to
    /// the leading axes followed by `dims`.
    fn unpack(&self, start: usize, stop: usize, dims: &[usize]) -> Result<Tensor> {
        let batch = &self.shape()[..self.ndim() - 1];
        let mut index = vec![SliceArg::FULL; batch.len()];
        index.push(range(start, stop));
        let shape: Vec<i64> = batch.iter().chain(dims).map(|d| *d as i64).collect();
        self.slice(&index)?.reshape(&shape)
    }

    /// A `dense` op of a stack of matrices, in float64 (complex128 when an input is
    /// complex), and the dtype to give results in (complex ones' real values in its
    /// `real_part`).
    pub(super) fn dense(&self, f: DenseFn, others: &[&Tensor]) -> Result<(Tensor, DType)> {
        self.stack_dims(f.name())?;
        let complex = std::iter::once(self)
            .chain(others.iter().copied())
            .any(|t| t.dtype().is_complex());
        let (x, out) = match complex {
            true => {
                let dtypes = std::iter::once(self).chain(others.iter().copied());
                let out = match dtypes
                    .map(|t| t.dtype())
                    .all(|d| matches!(d, DType::C64 | DType::F32))
                {
                    true => DType::C64,
                    false => DType::C128,
                };
                (self.astype(DType::C128)?, out)
            }
            false => self.in_float64()?,
        };
        let wide = match complex {
            true => DType::C128,
            false => DType::F64,
        };
        let mut inputs = vec![x];
        for o in others {
            inputs.push(o.astype(wide)?);
        }
        Ok((Tensor::new(Op::Dense, OpArgs::Dense(f), inputs)?, out))
    }

    /// The matrix's rows and columns, refusing anything but a matrix.
    fn matrix_dims(&self, name: &'static str) -> Result<(usize, usize)> {
        match self.shape() {
            [m, n] => Ok((*m, *n)),
            s => Err(AresError::shape(
                name,
                format!("needs a matrix (2-D), got shape {}", fmt_shape(s)),
            )),
        }
    }

    /// The tensor in float64, and the dtype to give the results back in.
    pub(super) fn in_float64(&self) -> Result<(Tensor, DType)> {
        match self.dtype() {
            DType::F64 => Ok((self.clone(), DType::F64)),
            DType::F32 => Ok((self.astype(DType::F64)?, DType::F32)),
            _ => Ok((self.astype(DType::F64)?, DType::F64)),
        }
    }

    /// The array API's `linalg.qr(x, mode='reduced')`: Q (m × k, orthonormal columns) and
    /// R (k × n, upper triangular), k = min(m, n), by TSQR over the row chunks (see
    /// `tsqr`); a short-and-fat matrix is factored in one chunk.
    pub fn qr(&self) -> Result<[Tensor; 2]> {
        let (batch, m, n) = self.stack_dims("linalg.qr")?;
        // A stack, or a complex matrix (TSQR is float64's), one matrix per chunk.
        if !batch.is_empty() || self.dtype().is_complex() {
            let (packed, out) = self.dense(DenseFn::Qr, &[])?;
            let k = m.min(n);
            let q = packed.unpack(0, m * k, &[m, k])?;
            let r = packed.unpack(m * k, m * k + k * n, &[k, n])?;
            return Ok([q.astype(out)?, r.astype(out)?]);
        }
        let (x, out) = self.in_float64()?;
        let k = m.min(n);
        let packed = Tensor::new(Op::Qr, OpArgs::None, vec![x])?;
        let q = packed.slice(&[range(0, m), range(0, k)])?;
        let r = packed.slice(&[range(m, m + k), SliceArg::FULL])?;
        Ok([q.astype(out)?, r.astype(out)?])
    }

    /// The array API's `linalg.qr(x, mode='complete')`: Q (m × m, orthogonal) and R (m × n,
    /// upper triangular). With m <= n it is the reduced QR. With m > n it is the reduced QR
    /// of `[x | I_m]` (m × (n + m)): its Q is square, and as its R is upper triangular,
    /// `x = Q · R[:, :n]`. Q is m × m, as NumPy's: a tall `x` gives a square Q of its height.
    pub fn qr_complete(&self) -> Result<[Tensor; 2]> {
        let (batch, m, n) = self.stack_dims("linalg.qr")?;
        if m <= n {
            return self.qr();
        }
        let dtype = match self.dtype() {
            d @ (DType::F32 | DType::F64) => d,
            _ => DType::F64,
        };
        let x = match self.dtype() == dtype {
            true => self.clone(),
            false => self.astype(dtype)?,
        };
        let mut shape = batch.clone();
        shape.extend([m, m]);
        let chunk = crate::tensor::auto_chunk(&[m, m]);
        let identity = crate::tensor::eye(m, m, 0, dtype, chunk)?.broadcast_to(&shape)?;
        let [q, r] = crate::tensor::concatenate(&[x, identity], -1)?.qr()?;
        let mut index = vec![SliceArg::FULL; batch.len() + 1];
        index.push(range(0, n));
        Ok([q, r.slice(&index)?])
    }

    /// The array API's `linalg.svd(x, full_matrices=False)`: U (m × k), S (k,
    /// nonincreasing) and Vh (k × n). A tall matrix (m ≥ n) is QR-factored by TSQR and the
    /// small R decomposed in one chunk, U = Q·U_R; a short-and-fat one by transposition.
    pub fn svd(&self) -> Result<[Tensor; 3]> {
        let (batch, m, n) = self.stack_dims("linalg.svd")?;
        if self.dtype().is_complex() {
            return self.svd_complex(m, n);
        }
        if !batch.is_empty() {
            let (packed, out) = self.dense(DenseFn::Svd, &[])?;
            let k = m.min(n);
            let u = packed.unpack(0, m * k, &[m, k])?;
            let s = packed.unpack(m * k, m * k + k, &[k])?;
            let vt = packed.unpack(m * k + k, m * k + k + k * n, &[k, n])?;
            return Ok([u.astype(out)?, s.astype(out)?, vt.astype(out)?]);
        }
        if m < n {
            let [u, s, vt] = self.transpose(None)?.svd()?;
            return Ok([vt.transpose(None)?, s, u.transpose(None)?]);
        }
        let (x, out) = self.in_float64()?;
        let [q, r] = x.qr()?;
        let packed = Tensor::new(Op::Dense, OpArgs::Dense(DenseFn::Svd), vec![r])?;
        // R is n × n: U_R, S, Vh packed flat.
        let (nn, n_i) = (n * n, n as i64);
        let u_r = packed.slice(&[range(0, nn)])?.reshape(&[n_i, n_i])?;
        let s = packed.slice(&[range(nn, nn + n)])?;
        let vt = packed
            .slice(&[range(nn + n, 2 * nn + n)])?
            .reshape(&[n_i, n_i])?;
        let u = q.matmul_nd(&u_r)?;
        Ok([u.astype(out)?, s.astype(out)?, vt.astype(out)?])
    }

    /// The SVD of complex matrices, each whole in one chunk (faer's complex SVD; no TSQR
    /// for complex numbers): U and Vᴴ complex, S real, in the input's precision.
    fn svd_complex(&self, m: usize, n: usize) -> Result<[Tensor; 3]> {
        let (x, out, real) = self.in_complex128()?;
        let packed = Tensor::new(Op::Dense, OpArgs::Dense(DenseFn::Svd), vec![x])?;
        let k = m.min(n);
        let u = packed.unpack(0, m * k, &[m, k])?;
        let s = packed.unpack(m * k, m * k + k, &[k])?.unary(Op::RealPart)?;
        let vt = packed.unpack(m * k + k, m * k + k + k * n, &[k, n])?;
        Ok([u.astype(out)?, s.astype(real)?, vt.astype(out)?])
    }

    /// A complex tensor in complex128, the complex dtype to give results in and the real
    /// one of the same precision (complex64 → float32).
    fn in_complex128(&self) -> Result<(Tensor, DType, DType)> {
        let (out, real) = match self.dtype() {
            DType::C64 => (DType::C64, DType::F32),
            _ => (DType::C128, DType::F64),
        };
        let x = match self.dtype() {
            DType::C128 => self.clone(),
            _ => self.astype(DType::C128)?,
        };
        Ok((x, out, real))
    }

    /// The array API's `linalg.svdvals`: the singular values, nonincreasing (those of
    /// TSQR's R; a short-and-fat matrix's by transposition; complex matrices whole).
    pub fn svdvals(&self) -> Result<Tensor> {
        let (batch, m, n) = self.stack_dims("linalg.svdvals")?;
        if self.dtype().is_complex() {
            let (x, _, real) = self.in_complex128()?;
            let s = Tensor::new(Op::Dense, OpArgs::Dense(DenseFn::SvdVals), vec![x])?;
            return s.astype(real);
        }
        if !batch.is_empty() {
            let (t, out) = self.dense(DenseFn::SvdVals, &[])?;
            return t.astype(out);
        }
        if m < n {
            return self.transpose(None)?.svdvals();
        }
        let (x, out) = self.in_float64()?;
        let [_, r] = x.qr()?;
        Tensor::new(Op::Dense, OpArgs::Dense(DenseFn::SvdVals), vec![r])?.astype(out)
    }

    /// A factorization of square matrices (`dense`), in float64.
    fn square(&self, f: DenseFn) -> Result<(Tensor, DType)> {
        self.dense(f, &[])
    }

    /// The array API's `linalg.cholesky(x, upper=False)`: L (or U = Lᵀ) of a symmetric
    /// positive-definite matrix, in one chunk.
    pub fn cholesky(&self, upper: bool) -> Result<Tensor> {
        if upper && self.ndim() == 2 && !self.dtype().is_complex() {
            // One matrix may be factored by blocks, which give L: U is its transpose.
            return self.cholesky(false)?.matrix_transpose();
        }
        let (t, out) = self.square(DenseFn::Cholesky { upper })?;
        t.astype(out)
    }

    /// The array API's `linalg.inv`, in one chunk.
    pub fn inv(&self) -> Result<Tensor> {
        let (t, out) = self.square(DenseFn::Inv)?;
        t.astype(out)
    }

    /// The array API's `linalg.det`: a 0-d tensor (one per matrix of a stack).
    pub fn det(&self) -> Result<Tensor> {
        let (t, out) = self.square(DenseFn::Det)?;
        t.astype(out)
    }

    /// The array API's `linalg.slogdet`: the sign of the determinant and the natural log of
    /// its absolute value (sign 0 and log -inf for a singular matrix).
    pub fn slogdet(&self) -> Result<[Tensor; 2]> {
        let (packed, out) = self.square(DenseFn::Slogdet)?;
        let sign = packed.unpack(0, 1, &[])?;
        let logabs = real_values(packed.unpack(1, 2, &[])?)?;
        Ok([sign.astype(out)?, logabs.astype(out.real_part())?])
    }

    /// The array API's `linalg.eigh`: the eigenvalues (nondecreasing) and eigenvectors
    /// (columns) of a symmetric matrix (its lower triangle is read).
    pub fn eigh(&self) -> Result<[Tensor; 2]> {
        let (packed, out) = self.square(DenseFn::Eigh)?;
        let n = self.shape()[self.ndim() - 1];
        let w = real_values(packed.unpack(0, n, &[n])?)?;
        let v = packed.unpack(n, n + n * n, &[n, n])?;
        Ok([w.astype(out.real_part())?, v.astype(out)?])
    }

    /// The array API's `linalg.eigvalsh`: the eigenvalues of a symmetric matrix.
    pub fn eigvalsh(&self) -> Result<Tensor> {
        let (t, out) = self.square(DenseFn::EigvalsH)?;
        t.astype(out.real_part())
    }

    /// dask's `svd_compressed(x, k, n_power_iter, seed)`: the rank-`k` SVD by randomized
    /// range finding (Halko, Martinsson, Tropp 2011, algorithms 4.4 and 5.1). A Gaussian
    /// test matrix of `l = min(max(20, k + 10), min(m, n))` columns (dask's compression
    /// level), `Q` an orthonormal basis of `x·Ω` (TSQR), refined by `n_power_iter` power
    /// iterations re-orthonormalized by TSQR; then the SVD of the small `Qᵀ·x` (l × n) and
    /// U = Q·U_B, truncated to k. The last basis and `Qᵀ·x` come from one pass over x (the
    /// projected QR, `projected_qr`), not two.
    pub fn svd_compressed(
        &self,
        k: usize,
        n_power_iter: usize,
        seed: Option<u64>,
    ) -> Result<[Tensor; 3]> {
        let name = "linalg.svd_compressed";
        let (m, n) = self.matrix_dims(name)?;
        let small = m.min(n);
        if k == 0 || k > small {
            return Err(AresError::arg(
                name,
                format!("k must be in 1..={small} for a {m} × {n} matrix, got {k}"),
            ));
        }
        let (x, out) = self.in_float64()?;
        let l = (k + 10).max(20).min(small);
        let omega = crate::tensor::randn(&[n, l], [n.max(1), l], seed)?;
        let basis = |y: &Tensor| -> Result<Tensor> { Ok(y.qr()?[0].clone()) };
        // Q is the basis of x·w, w = Ω then xᵀ·Q re-orthonormalized at each power iteration.
        let mut w = omega;
        let xt = x.transpose(None)?;
        for _ in 0..n_power_iter {
            let q = basis(&x.matmul_nd(&w)?)?;
            w = basis(&xt.matmul_nd(&q)?)?;
        }
        let packed = Tensor::new(Op::QrProject, OpArgs::None, vec![x, w])?;
        let q = packed.slice(&[range(0, m), SliceArg::FULL])?;
        // (Qᵀ·x)ᵀ, n × l.
        let bt = packed.slice(&[range(m, m + n), SliceArg::FULL])?;
        let [ub, s, vt] = bt.transpose(None)?.svd()?;
        let u = q.matmul_nd(&ub)?;
        let (u, s, vt) = (
            u.slice(&[SliceArg::FULL, range(0, k)])?,
            s.slice(&[range(0, k)])?,
            vt.slice(&[range(0, k), SliceArg::FULL])?,
        );
        Ok([u.astype(out)?, s.astype(out)?, vt.astype(out)?])
    }
}

#[cfg(test)]
mod tests {
    use crate::tensor::{self, Tensor};
    use ndarray::{Array2, Ix2};

    /// Runs a program's tuple of results on the local executor.
    fn run(program: &str, outputs: usize) -> Vec<Array2<f64>> {
        let names: Vec<String> = (0..outputs).map(|i| format!("o{i}")).collect();
        let mut got = Vec::new();
        for name in &names {
            let t = crate::expr::evaluate(&format!("{program}; {name}")).unwrap();
            got.push(t);
        }
        let refs: Vec<&Tensor> = got.iter().collect();
        let results = crate::executor::compute(&refs, &Default::default(), 2).unwrap();
        results
            .into_iter()
            .map(|a| {
                let a = a.to_f64();
                let a = if a.ndim() == 1 {
                    a.insert_axis(ndarray::Axis(0))
                } else {
                    a
                };
                a.into_dimensionality::<Ix2>().unwrap()
            })
            .collect()
    }

    fn assert_close(a: &Array2<f64>, b: &Array2<f64>, tol: f64, what: &str) {
        assert_eq!(a.dim(), b.dim(), "{what}");
        let worst = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(worst <= tol, "{what}: off by {worst}");
    }

    /// TSQR over 12 row chunks (a tree of two levels with the default fan-in of 4, so
    /// factors come down through `qr_down`), columns rechunked to one: Q·R = X, QᵀQ = I, R
    /// upper triangular and equal to faer's R of the whole matrix up to the signs of its rows.
    #[test]
    fn tsqr_on_the_local_executor_reconstructs_the_input() {
        let got = run(
            "x = rand((230, 7), chunk=(20, 3), seed=1); q, r = linalg.qr(x); o0 = q; o1 = r; o2 = x",
            3,
        );
        let (q, r, x) = (&got[0], &got[1], &got[2]);
        let gemm = crate::ops::family::linalg::kernels::gemm_f64;
        assert_close(&gemm(q.view(), r.view()), x, 1e-12, "Q R = X");
        assert_close(&gemm(q.t(), q.view()), &Array2::eye(7), 1e-13, "QᵀQ = I");
        let (_, whole) = super::super::faer_bridge::qr(x.view());
        for i in 0..7 {
            let sign = (r[[i, i]] * whole[[i, i]]).signum();
            for j in 0..7 {
                assert!(
                    (r[[i, j]] - sign * whole[[i, j]]).abs() < 1e-12,
                    "R[{i}, {j}]"
                );
            }
        }
        let got = run(
            "x = rand((230, 7), chunk=(20, 7), seed=1); u, s, vh = linalg.svd(x); o0 = u; o1 = s; o2 = vh; o3 = linalg.svdvals(x); o4 = x",
            5,
        );
        let x = &got[4];
        let (u, s, vh) = (&got[0], &got[1], &got[2]);
        let us = u * s;
        assert_close(&gemm(us.view(), vh.view()), x, 1e-12, "U S Vh = X");
        assert_close(&got[3], s, 1e-12, "svdvals");
        let (_, want, _) = super::super::faer_bridge::svd(x.view()).unwrap();
        assert_close(s, &want.insert_axis(ndarray::Axis(0)), 1e-12, "S");
    }

    #[test]
    fn shapes_of_the_factors() {
        let x = tensor::rand(&[50, 4], [10, 2], Some(1)).unwrap();
        let [q, r] = x.qr().unwrap();
        assert_eq!((q.shape(), r.shape()), (&[50, 4][..], &[4, 4][..]));
        let [u, s, vt] = x.transpose(None).unwrap().svd().unwrap();
        assert_eq!(
            (u.shape(), s.shape(), vt.shape()),
            (&[4, 4][..], &[4][..], &[4, 50][..])
        );
        assert_eq!(x.svdvals().unwrap().shape(), &[4]);
        let [u, s, vt] = x.svd_compressed(2, 1, Some(3)).unwrap();
        assert_eq!(
            (u.shape(), s.shape(), vt.shape()),
            (&[50, 2][..], &[2][..], &[2, 4][..])
        );
        let e = x.svd_compressed(5, 0, None).unwrap_err().to_string();
        assert!(e.contains("k must be in 1..=4"), "{e}");
        let cube = tensor::rand(&[2, 3, 4], 3, Some(1)).unwrap();
        let [q, r] = cube.qr().unwrap();
        assert_eq!((q.shape(), r.shape()), (&[2, 3, 3][..], &[2, 3, 4][..]));
        let e = tensor::rand(&[4], 3, Some(1)).unwrap().qr().unwrap_err();
        assert!(
            e.to_string().contains("needs a matrix (at least 2-D)"),
            "{e}"
        );
        let ints: Tensor = x.astype(crate::array::DType::I64).unwrap();
        assert_eq!(ints.qr().unwrap()[0].dtype(), crate::array::DType::F64);
        let narrow = x.astype(crate::array::DType::F32).unwrap();
        assert_eq!(narrow.svdvals().unwrap().dtype(), crate::array::DType::F32);
    }
    /// Complex matrices (here the FFT of real ones, along their rows): the SVD reconstructs
    /// the matrix with orthonormal U and V, the singular values are the SVD's and real, and
    /// the pseudo-inverse meets the four Moore–Penrose conditions; complex64 in, complex64
    /// and float32 out. A tall, a wide and a stacked case.
    #[test]
    fn complex_svd_and_pinv_meet_their_definitions() {
        use crate::array::{ArrayData, Complex64, DType};
        use ndarray::{Array2, ArrayD, Ix2};
        let c = |a: &ArrayData| -> ArrayD<Complex64> {
            match a {
                ArrayData::C128(z) => z.clone(),
                ArrayData::C64(z) => z.mapv(|v| Complex64::new(v.re as f64, v.im as f64)),
                other => other.clone().to_f64().mapv(|v| Complex64::new(v, 0.0)),
            }
        };
        let mm = |a: &Array2<Complex64>, b: &Array2<Complex64>| a.dot(b);
        let h = |a: &Array2<Complex64>| a.t().mapv(|z| z.conj());
        let worst = |a: &Array2<Complex64>, b: &Array2<Complex64>| {
            a.iter()
                .zip(b)
                .map(|(x, y)| (x - y).norm())
                .fold(0.0, f64::max)
        };
        for (shape, batch) in [("(7, 4)", false), ("(3, 8)", false), ("(2, 5, 3)", true)] {
            let program = format!("z = fft.fft(rand({shape}, chunk=2, seed=3), axis=-2)");
            let names = ["z", "u", "s", "vh", "p", "sv"];
            let tensors: Vec<Tensor> = names
                .iter()
                .map(|n| {
                    let body = match *n {
                        "z" => "z".to_string(),
                        "u" => "u".into(),
                        "s" => "s".into(),
                        "vh" => "vh".into(),
                        "p" => "linalg.pinv(z)".into(),
                        _ => "linalg.svdvals(z)".into(),
                    };
                    crate::expr::evaluate(&format!("{program}; u, s, vh = linalg.svd(z); {body}"))
                        .unwrap()
                })
                .collect();
            assert_eq!(tensors[1].dtype(), DType::C128);
            assert_eq!(tensors[2].dtype(), DType::F64);
            let narrow = tensors[0].astype(DType::C64).unwrap();
            assert_eq!(narrow.pinv(None).unwrap().dtype(), DType::C64);
            assert_eq!(narrow.svdvals().unwrap().dtype(), DType::F32);
            let refs: Vec<&Tensor> = tensors.iter().collect();
            let got = crate::executor::compute(&refs, &Default::default(), 2).unwrap();
            let got: Vec<ArrayD<Complex64>> = got.iter().map(c).collect();
            let count = if batch { 2 } else { 1 };
            for b in 0..count {
                let m2 = |a: &ArrayD<Complex64>, nd: usize| -> Array2<Complex64> {
                    let a = if batch {
                        a.index_axis(ndarray::Axis(0), b).to_owned()
                    } else {
                        a.clone()
                    };
                    let a = if nd == 1 {
                        a.insert_axis(ndarray::Axis(0))
                    } else {
                        a
                    };
                    a.into_dimensionality::<Ix2>().unwrap()
                };
                let (z, u, s, vh, p, sv) = (
                    m2(&got[0], 2),
                    m2(&got[1], 2),
                    m2(&got[2], 1),
                    m2(&got[3], 2),
                    m2(&got[4], 2),
                    m2(&got[5], 1),
                );
                let k = s.ncols();
                let us = Array2::from_shape_fn(u.dim(), |(i, j)| u[[i, j]] * s[[0, j]]);
                let what = format!("{shape} [{b}]");
                assert!(worst(&mm(&us, &vh), &z) < 1e-12, "{what}: U S Vh = Z");
                assert!(
                    worst(&mm(&h(&u), &u), &Array2::eye(k)) < 1e-12,
                    "{what}: UᴴU"
                );
                assert!(
                    worst(&mm(&vh, &h(&vh)), &Array2::eye(k)) < 1e-12,
                    "{what}: VhVhᴴ"
                );
                assert!(
                    s.iter().all(|v| v.im == 0.0 && v.re >= 0.0),
                    "{what}: S real"
                );
                assert!(worst(&s, &sv) < 1e-12, "{what}: svdvals");
                let (zp, pz) = (mm(&z, &p), mm(&p, &z));
                assert!(worst(&mm(&zp, &z), &z) < 1e-12, "{what}: Z P Z = Z");
                assert!(worst(&mm(&pz, &p), &p) < 1e-12, "{what}: P Z P = P");
                assert!(worst(&h(&zp), &zp) < 1e-12, "{what}: (Z P)ᴴ = Z P");
                assert!(worst(&h(&pz), &pz) < 1e-12, "{what}: (P Z)ᴴ = P Z");
            }
        }
    }
}
