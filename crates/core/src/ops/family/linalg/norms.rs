//! The array API's norms: `vector_norm(x, axis, keepdims, ord)` and `matrix_norm(x,
//! keepdims, ord)`.
//!
//! Elementwise ops and reductions over chunks, except the spectral and nuclear norms of a
//! matrix (`ord` 2, -2, `'nuc'`), which need its singular values (`svdvals`: TSQR for one
//! matrix, a `dense` chunk per chunk of a stack's leading axes). Integer and bool inputs
//! are computed in float64, as NumPy's; complex ones from their magnitudes (real results,
//! in the input's precision), the spectral and nuclear norms from their own singular values.

use crate::array::fmt_shape;
use crate::error::{AresError, Result};
use crate::ops::Op;
use crate::tensor::{SliceArg, Tensor};

/// The `ord` of a norm: a number (±inf included), or the Frobenius or nuclear norm.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NormOrd {
    Fro,
    Nuc,
    P(f64),
}

impl Tensor {
    /// The values a norm made of elementwise terms reads: `|x|` for a complex tensor (real,
    /// in its precision: `x·x` of a complex one is not `|x|²`), float64 for integers and
    /// bools, the tensor itself otherwise.
    fn magnitudes(&self) -> Result<Tensor> {
        match self.dtype().is_complex() {
            true => self.abs(),
            false => self.as_float(),
        }
    }

    /// The array API's `linalg.vector_norm`: over `axes` (all when `None`), `ord` a number
    /// (2 by default; `inf`, `-inf`, 0 for the count of nonzeros, any p ≠ 0 for
    /// `sum(|x|^p)^(1/p)`).
    pub fn vector_norm(&self, axes: Option<&[i64]>, keepdims: bool, ord: f64) -> Result<Tensor> {
        let x = self.magnitudes()?;
        if ord.is_nan() {
            return Err(AresError::arg(
                "linalg.vector_norm",
                "ord must be a number, got nan",
            ));
        }
        let a = x.abs()?;
        if ord == f64::INFINITY {
            return a.max(axes, keepdims);
        }
        if ord == f64::NEG_INFINITY {
            return a.min(axes, keepdims);
        }
        if ord == 0.0 {
            let zero = crate::tensor::zeros(&[], 1)?.astype(x.dtype())?;
            return x
                .elementwise(Op::Ne, &zero)?
                .astype(x.dtype())?
                .sum(axes, keepdims);
        }
        if ord == 1.0 {
            return a.sum(axes, keepdims);
        }
        if ord == 2.0 {
            return (&x * &x)?.sum(axes, keepdims)?.sqrt();
        }
        let p = crate::tensor::full(&[], crate::array::Scalar::F64(ord), 1)?.astype(x.dtype())?;
        let inv =
            crate::tensor::full(&[], crate::array::Scalar::F64(1.0 / ord), 1)?.astype(x.dtype())?;
        a.pow(&p)?.sum(axes, keepdims)?.pow(&inv)
    }

    /// The array API's `linalg.matrix_norm` over the last two axes: `'fro'` (default),
    /// `'nuc'`, 1 / -1 (max / min column sum of |x|), inf / -inf (max / min row sum), 2 / -2
    /// (largest / smallest singular value).
    pub fn matrix_norm(&self, keepdims: bool, ord: NormOrd) -> Result<Tensor> {
        let name = "linalg.matrix_norm";
        self.stack_dims(name)?;
        let x = self.magnitudes()?;
        let keep = |t: Tensor| match keepdims {
            true => t.expand_dims(&[-2, -1]),
            false => Ok(t),
        };
        let inf = f64::INFINITY;
        match ord {
            NormOrd::Fro => {
                let sq = (&x * &x)?.sum(Some(&[-2, -1]), keepdims)?;
                sq.sqrt()
            }
            // The singular values are the matrix's own, complex or not (not its |x|'s).
            NormOrd::Nuc => keep(self.as_float()?.svdvals()?.sum(Some(&[-1]), false)?),
            NormOrd::P(p) if p == 2.0 || p == -2.0 => {
                let s = self.as_float()?.svdvals()?;
                let k = s.shape()[s.ndim() - 1] as i64;
                let mut index = vec![SliceArg::FULL; s.ndim() - 1];
                // Singular values are nonincreasing: the first is the largest.
                index.push(SliceArg::Index(if p > 0.0 { 0 } else { k - 1 }));
                keep(s.slice(&index)?)
            }
            NormOrd::P(p) if p.abs() == 1.0 || p.abs() == inf => {
                // Column sums (ord ±1) reduce the rows, row sums (±inf) the columns.
                let along = if p.abs() == 1.0 { -2 } else { -1 };
                let sums = x.abs()?.sum(Some(&[along]), true)?;
                let pick = match p > 0.0 {
                    true => sums.max(Some(&[-2, -1]), keepdims)?,
                    false => sums.min(Some(&[-2, -1]), keepdims)?,
                };
                Ok(pick)
            }
            NormOrd::P(p) => Err(AresError::arg(
                name,
                format!(
                    "ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {p} (for a tensor of shape {})",
                    fmt_shape(self.shape())
                ),
            )),
        }
    }
}
