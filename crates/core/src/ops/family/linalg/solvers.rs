//! Linear systems and the SVD's pseudo-inverse: `solve`, `pinv`, `matrix_rank` and NumPy's
//! `lstsq`.
//!
//! `solve` broadcasts the leading axes of the matrices and the right-hand sides and solves
//! each system by LU with partial pivoting (faer), one `dense` chunk per chunk of the leading
//! axes. `pinv`, `matrix_rank` and `lstsq` come from the SVD, which for a single matrix is
//! TSQR's (the SVD of the small R): a tall-and-skinny least-squares problem is solved with
//! Q's rows chunked like the input's, as dask's `lstsq` does with its QR (the SVD of R on
//! top of it gives the minimum-norm solution of a rank-deficient problem, as LAPACK's
//! `gelsd` behind NumPy).

use super::dense::DenseFn;
use crate::array::{fmt_shape, DType};
use crate::error::{AresError, Result};
use crate::ops::infer::broadcast;
use crate::ops::Op;
use crate::tensor::{self, Tensor};

/// The machine epsilon of the results' dtype (float32's for float32, float64's otherwise).
fn eps(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => f32::EPSILON as f64,
        _ => f64::EPSILON,
    }
}

/// `1 / s` where `s > cutoff`, else 0 (the pseudo-inverse of singular values).
fn invert_above(s: &Tensor, cutoff: &Tensor) -> Result<Tensor> {
    let keep = s.elementwise(Op::Gt, cutoff)?;
    let safe = tensor::select(&keep, s, &tensor::ones(&[], 1)?)?;
    let zero = tensor::zeros(&[], 1)?.astype(s.dtype())?;
    tensor::select(&keep, &(1.0 / &safe)?, &zero)
}

/// The cutoff `rtol · max(s)` of each stack of singular values `s` (`(..., k)`), as
/// `(..., 1)`; `rtol` defaults to `max(m, n) · eps`.
fn cutoff(s: &Tensor, rtol: Option<f64>, m: usize, n: usize) -> Result<Tensor> {
    let rtol = rtol.unwrap_or(m.max(n) as f64 * eps(s.dtype()));
    let top = s.max(Some(&[-1]), true)?;
    &top * rtol
}

/// The cutoff with `rtol` a tensor broadcast against the leading axes (the array API's
/// `rtol` may be an array), or the default.
fn cutoff_by(s: &Tensor, rtol: Option<&Tensor>, m: usize, n: usize) -> Result<Tensor> {
    match rtol {
        None => cutoff(s, None, m, n),
        Some(r) => &s.max(Some(&[-1]), true)? * &r.expand_dims(&[-1])?,
    }
}

impl Tensor {
    /// The array API's `linalg.solve(x1, x2)`: `x` with `x1 · x = x2` for each matrix of
    /// `x1` (`(..., M, M)`); `x2` is `(..., M, K)` with broadcast leading axes, or a vector
    /// `(M,)` (then the result is `(..., M)`).
    pub fn solve(&self, b: &Tensor) -> Result<Tensor> {
        let name = "linalg.solve";
        let (batch, m, n) = self.stack_dims(name)?;
        if m != n {
            return Err(AresError::shape(
                name,
                format!(
                    "needs square matrices, got shape {}",
                    fmt_shape(self.shape())
                ),
            ));
        }
        if b.ndim() == 1 {
            if b.shape()[0] != m {
                return Err(AresError::shape(
                    name,
                    format!(
                        "the right-hand side {} does not have the matrices' {m} rows",
                        fmt_shape(b.shape())
                    ),
                ));
            }
            let column = b.expand_dims(&[1])?;
            let mut shape = batch.clone();
            shape.extend([m, 1]);
            return self
                .solve(&column.broadcast_to(&shape)?)?
                .squeeze(Some(&[-1]));
        }
        let (b_batch, bm, k) = b.stack_dims(name)?;
        if bm != m {
            return Err(AresError::shape(
                name,
                format!(
                    "the right-hand sides {} do not have the matrices' {m} rows (shape {})",
                    fmt_shape(b.shape()),
                    fmt_shape(self.shape())
                ),
            ));
        }
        let common = broadcast(name, &batch, &b_batch)?;
        let to = |t: &Tensor, rows: usize, cols: usize| -> Result<Tensor> {
            let mut shape = common.to_vec();
            shape.extend([rows, cols]);
            t.broadcast_to(&shape)
        };
        let (a, b) = (to(self, m, m)?, to(b, m, k)?);
        // float32 only when both are (NumPy's promotion of the two); complex as `dense`.
        let (x, complex_out) = a.dense(DenseFn::Solve, &[&b])?;
        let out = match (self.dtype(), b.dtype()) {
            _ if x.dtype().is_complex() => complex_out,
            (DType::F32, DType::F32) => DType::F32,
            _ => DType::F64,
        };
        x.astype(out)
    }

    /// The array API's `linalg.pinv(x, rtol=None)`: the pseudo-inverse from the SVD,
    /// singular values at most `rtol · max(s)` taken as zero (`rtol`, a number or a tensor
    /// broadcast against the leading axes, defaults to `max(m, n) · eps`).
    pub fn pinv(&self, rtol: Option<&Tensor>) -> Result<Tensor> {
        let (_, m, n) = self.stack_dims("linalg.pinv")?;
        let [u, s, vh] = self.svd()?;
        let s_inv = invert_above(&s, &cutoff_by(&s, rtol, m, n)?)?;
        // V·S⁺·Uᴴ: the conjugate transposes of a complex SVD's factors.
        let adjoint = |t: &Tensor| -> Result<Tensor> {
            let t = t.matrix_transpose()?;
            match t.dtype().is_complex() {
                true => t.unary(Op::Conj),
                false => Ok(t),
            }
        };
        let v_scaled = (&adjoint(&vh)? * &s_inv.expand_dims(&[-2])?)?;
        // In the factors' dtype (the input's floating one): S⁺ may have been widened.
        v_scaled.matmul_nd(&adjoint(&u)?)?.astype(u.dtype())
    }

    /// The array API's `linalg.matrix_rank(x, rtol=None)`: the number of singular values
    /// above `rtol · max(s)` (int64).
    pub fn matrix_rank(&self, rtol: Option<&Tensor>) -> Result<Tensor> {
        let (_, m, n) = self.stack_dims("linalg.matrix_rank")?;
        let s = self.svdvals()?;
        let above = s.elementwise(Op::Gt, &cutoff_by(&s, rtol, m, n)?)?;
        above.astype(DType::I64)?.sum(Some(&[-1]), false)
    }

    /// NumPy's `linalg.lstsq(a, b, rcond=None)`: the least-squares solution `x` of
    /// `a · x = b` (minimum-norm when `a` is rank-deficient), the residuals, the rank and the
    /// singular values. `a` is one matrix (M × N), `b` `(M,)` or `(M, K)`. The residuals
    /// are the squared 2-norms of `b - a·x` per column when M > N (`(K,)`, or `(1,)` for a
    /// vector `b`), empty when M ≤ N; NumPy also returns them empty when the rank is below
    /// N, which is known only once computed: here they are the sums of squares then too.
    pub fn lstsq(&self, b: &Tensor, rcond: Option<f64>) -> Result<[Tensor; 4]> {
        let name = "linalg.lstsq";
        let [m, n] = self.shape() else {
            return Err(AresError::shape(
                name,
                format!(
                    "needs a matrix (2-D), got shape {}",
                    fmt_shape(self.shape())
                ),
            ));
        };
        let (m, n) = (*m, *n);
        let rhs_rows = b.shape().first().copied();
        if b.ndim() > 2 || b.ndim() == 0 || rhs_rows != Some(m) {
            return Err(AresError::shape(
                name,
                format!(
                    "b must be (M,) or (M, K) with M = {m} (a is {}), got shape {}",
                    fmt_shape(self.shape()),
                    fmt_shape(b.shape())
                ),
            ));
        }
        let out = match (self.dtype(), b.dtype()) {
            (DType::F32, DType::F32) => DType::F32,
            _ => DType::F64,
        };
        let (a, b) = (self.astype(out)?, b.astype(out)?);
        let vector = b.ndim() == 1;
        let b2 = if vector {
            b.expand_dims(&[1])?
        } else {
            b.clone()
        };
        let [u, s, vh] = a.svd()?;
        let s_inv = invert_above(&s, &cutoff(&s, rcond, m, n)?)?;
        let rank = s
            .elementwise(Op::Gt, &cutoff(&s, rcond, m, n)?)?
            .astype(DType::I64)?
            .sum(None, false)?;
        let projected = u.matrix_transpose()?.matmul_nd(&b2)?;
        let scaled = (&projected * &s_inv.expand_dims(&[1])?)?;
        let x2 = vh.matrix_transpose()?.matmul_nd(&scaled)?;
        let residuals = if m > n {
            let r = (&b2 - &a.matmul_nd(&x2)?)?;
            (&r * &r)?.sum(Some(&[0]), false)?
        } else {
            tensor::zeros(&[0], 1)?.astype(out)?
        };
        let x = if vector { x2.squeeze(Some(&[-1]))? } else { x2 };
        Ok([x, residuals, rank, s])
    }
}
