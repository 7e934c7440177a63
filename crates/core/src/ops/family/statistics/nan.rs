//! The NaN-skipping reductions, as NumPy's `nanfunctions` compute them: NaN replaced by the
//! fold's identity (`nansum`, `nanprod`) or by the infinity that never wins (`nanmin`,
//! `nanmax`, `nanargmin`, `nanargmax`), and the mean and variance divided by the count of
//! the values kept. A slice of NaN only gives NaN (`nanmin`, `nanmean`, `nanvar` with no
//! degree of freedom left), as NumPy's do (without their warnings). Integers and bools hold
//! no NaN: their nan-functions are the plain ones, as in NumPy.

use crate::array::{DType, Scalar};
use crate::error::{AresError, Result};
use crate::ops::Op;
use crate::tensor::{full, select, Tensor};

impl Tensor {
    /// Whether the dtype has NaN at all.
    fn holds_nan(&self) -> bool {
        self.dtype().is_float() || self.dtype().is_complex()
    }

    /// A 0-d tensor of `value` in this tensor's dtype (so `where` keeps the dtype).
    fn scalar_like(&self, value: Scalar) -> Result<Tensor> {
        let t = full(&[], value, crate::tensor::auto_chunk(&[]))?;
        if t.dtype() == self.dtype() {
            Ok(t)
        } else {
            t.astype(self.dtype())
        }
    }

    /// `where(isnan(x), fill, x)`.
    fn nan_replaced(&self, fill: f64) -> Result<Tensor> {
        select(
            &self.unary(Op::IsNan)?,
            &self.scalar_like(Scalar::F64(fill))?,
            self,
        )
    }

    /// How many values over `axes` are not NaN, as int64.
    fn count_not_nan(&self, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        self.unary(Op::IsNan)?
            .logical_not()?
            .astype(DType::I64)?
            .sum(axes, keepdims)
    }

    /// `nansum`: the sum with NaN counted as zero (0 over a slice of NaN only).
    pub fn nansum(&self, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        match self.holds_nan() {
            true => self.nan_replaced(0.0)?.sum(axes, keepdims),
            false => self.sum(axes, keepdims),
        }
    }

    /// `nanprod`: the product with NaN counted as one.
    pub fn nanprod(&self, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        match self.holds_nan() {
            true => self.nan_replaced(1.0)?.prod(axes, keepdims),
            false => self.prod(axes, keepdims),
        }
    }

    /// `nanmin` (`max` false) or `nanmax`: NaN never wins; a slice of NaN only gives NaN.
    pub fn nan_extreme(&self, max: bool, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        if !self.holds_nan() {
            return self.reduce(if max { Op::Max } else { Op::Min }, axes, keepdims);
        }
        let never = if max {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        let filled = self.nan_replaced(never)?.reduce(
            if max { Op::Max } else { Op::Min },
            axes,
            keepdims,
        )?;
        let all_nan = self.unary(Op::IsNan)?.all(axes, keepdims)?;
        select(&all_nan, &self.scalar_like(Scalar::F64(f64::NAN))?, &filled)
    }

    /// `nanmean`: the sum of the values that are not NaN over their count (NaN over none),
    /// in the input's float dtype (float64 for integers, as `mean`).
    pub fn nanmean(&self, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        if !self.holds_nan() {
            return self.mean(axes, keepdims);
        }
        let total = self.nan_replaced(0.0)?.sum(axes, keepdims)?;
        let count = self.count_not_nan(axes, keepdims)?.astype(self.dtype())?;
        total.elementwise(Op::Div, &count)
    }

    /// `nanvar`: NumPy's two passes over the values that are not NaN (their mean, then the
    /// sum of squared deviations) divided by `count - ddof`; NaN where that is not positive.
    pub fn nanvar(&self, axes: Option<&[i64]>, keepdims: bool, ddof: usize) -> Result<Tensor> {
        if !self.holds_nan() {
            return self.var(axes, keepdims, ddof);
        }
        if self.dtype().is_complex() {
            return Err(AresError::arg(
                "nanvar",
                "complex tensors are not supported (take the variance of the parts)",
            ));
        }
        let ddof = i64::try_from(ddof)
            .map_err(|_| AresError::arg("nanvar", format!("ddof {ddof} is too large")))?;
        let zeroed = self.nan_replaced(0.0)?;
        let count_kept = self.count_not_nan(axes, true)?;
        let mean = zeroed
            .sum(axes, true)?
            .elementwise(Op::Div, &count_kept.astype(self.dtype())?)?;
        let isnan = self.unary(Op::IsNan)?;
        let zero = self.scalar_like(Scalar::F64(0.0))?;
        let deviation = select(&isnan, &zero, &zeroed.elementwise(Op::Sub, &mean)?)?;
        let squares = deviation.elementwise(Op::Mul, &deviation)?;
        let sum = squares.sum(axes, keepdims)?;
        let dof =
            self.count_not_nan(axes, keepdims)?
                .binary_scalar(Op::Sub, Scalar::I64(ddof), false)?;
        let var = sum.elementwise(Op::Div, &dof.astype(self.dtype())?)?;
        let none_left = dof.binary_scalar(Op::Le, Scalar::I64(0), false)?;
        select(&none_left, &self.scalar_like(Scalar::F64(f64::NAN))?, &var)
    }

    /// `nanstd`: the square root of `nanvar`.
    pub fn nanstd(&self, axes: Option<&[i64]>, keepdims: bool, ddof: usize) -> Result<Tensor> {
        self.nanvar(axes, keepdims, ddof)?.sqrt()
    }

    /// `nanargmin` (`op` = `Op::ArgMin`) or `nanargmax`: the position of the extreme among
    /// the values that are not NaN. NumPy raises on a slice of NaN only, which a lazy tensor
    /// cannot know before it runs: such a slice gives -1 here (never a valid position; the
    /// Python package checks for it and raises NumPy's `ValueError`).
    pub fn nan_arg_reduce(&self, op: Op, axis: Option<i64>, keepdims: bool) -> Result<Tensor> {
        if !self.holds_nan() {
            return self.arg_reduce(op, axis, keepdims);
        }
        let never = match op {
            Op::ArgMin => f64::INFINITY,
            Op::ArgMax => f64::NEG_INFINITY,
            _ => return Err(AresError::arg(op.name(), "not an arg-reduction")),
        };
        let found = self.nan_replaced(never)?.arg_reduce(op, axis, keepdims)?;
        let axes = axis.map(|a| vec![a]);
        let mut all_nan = self.unary(Op::IsNan)?.all(axes.as_deref(), keepdims)?;
        if all_nan.shape() != found.shape() {
            // `axis=None` with keepdims: every axis kept as 1, as `arg_reduce` gives.
            let shape: Vec<i64> = found.shape().iter().map(|d| *d as i64).collect();
            all_nan = all_nan.reshape(&shape)?;
        }
        let invalid = full(&[], Scalar::I64(-1), crate::tensor::auto_chunk(&[]))?;
        select(&all_nan, &invalid, &found)
    }
}

#[cfg(test)]
mod tests {
    use crate::array::DType;
    use crate::ops::Op;
    use crate::tensor::Tensor;

    fn x() -> Tensor {
        // [[1, nan, 3], [nan, nan, nan]] as float32, in chunks of 1 row.
        crate::expr::evaluate(
            "astype(reshape(where(arange(6) % 4 == 0, arange(6) + 1, nan), (2, 3)), 'float32')",
        )
        .unwrap()
    }

    #[test]
    fn nan_reductions_keep_the_dtype_and_the_reduced_shape() {
        let x = x();
        assert_eq!(x.dtype(), DType::F32);
        assert_eq!(x.nansum(Some(&[1]), false).unwrap().shape(), &[2]);
        assert_eq!(x.nanmean(None, true).unwrap().shape(), &[1, 1]);
        assert_eq!(x.nanmean(None, false).unwrap().dtype(), DType::F32);
        assert_eq!(x.nanvar(Some(&[0]), false, 1).unwrap().dtype(), DType::F32);
        assert_eq!(
            x.nan_extreme(true, Some(&[-1]), true).unwrap().shape(),
            &[2, 1]
        );
        let arg = x.nan_arg_reduce(Op::ArgMin, None, true).unwrap();
        assert_eq!((arg.shape(), arg.dtype()), (&[1usize, 1][..], DType::I64));
        assert!(x.nan_arg_reduce(Op::Sum, None, false).is_err());
    }

    #[test]
    fn integers_take_the_plain_reductions() {
        let i = crate::expr::evaluate("arange(6)").unwrap();
        assert_eq!(i.nansum(None, false).unwrap().dtype(), DType::I64);
        assert_eq!(i.nanmean(None, false).unwrap().dtype(), DType::F64);
        assert_eq!(
            i.nan_extreme(false, None, false).unwrap().dtype(),
            DType::I64
        );
    }
}
