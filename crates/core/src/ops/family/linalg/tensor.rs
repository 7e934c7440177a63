//! NumPy's products on top of the `matmul` primitive (which multiplies stacks of matrices
//! with broadcast batch dimensions): vectors, `inner` and `tensordot`, composed from
//! `matmul`, transposes and reshapes.

use crate::array::fmt_shape;
use crate::error::{AresError, Result};
use crate::ops::Op;
use crate::tensor::Tensor;

impl Tensor {
    /// NumPy's `matmul` (`@`): a 1-D operand is a row (on the left) or a column (on the
    /// right) whose axis is removed from the result; more than 2 dimensions are stacks of
    /// matrices with broadcast batch dimensions.
    pub fn matmul_nd(&self, other: &Tensor) -> Result<Tensor> {
        if self.length_from_data() || other.length_from_data() {
            // A vector becomes a row or a column of its length: made once it is known.
            return Tensor::wait_for_length(
                crate::tensor::wait::Call::Matmul,
                &[self.clone(), other.clone()],
            );
        }
        if self.ndim() == 0 || other.ndim() == 0 {
            return Err(AresError::shape(
                "matmul",
                "operands must have at least one dimension (use * for scalars)",
            ));
        }
        // The contracted axes: the last of `a`, the second-to-last of `b` (its only one if 1-D).
        let k_a = self.shape()[self.ndim() - 1];
        let k_b = other.shape()[other.ndim().saturating_sub(2)];
        if k_a != k_b {
            return Err(AresError::shape(
                "matmul",
                format!(
                    "shapes {} and {} do not align: {k_a} (last axis of a) != {k_b} ({} of b)",
                    fmt_shape(self.shape()),
                    fmt_shape(other.shape()),
                    if other.ndim() == 1 {
                        "axis 0"
                    } else {
                        "second-to-last axis"
                    }
                ),
            ));
        }
        let lhs = match self.ndim() {
            1 => self.expand_dims(&[0])?,
            _ => self.clone(),
        };
        let rhs = match other.ndim() {
            1 => other.expand_dims(&[1])?,
            _ => other.clone(),
        };
        // Stacks of matrices are one primitive too (`prepare::tile::matmul` tiles them).
        let product = lhs.matmul(&rhs)?;
        let mut drop = Vec::new();
        if self.ndim() == 1 {
            drop.push(-2);
        }
        if other.ndim() == 1 {
            drop.push(-1);
        }
        match drop.is_empty() {
            true => Ok(product),
            false => product.squeeze(Some(&drop)),
        }
    }

    /// `numpy.inner`: sums products over the last axis of both operands; the result has the
    /// other axes of `self`, then those of `other`. A 0-d operand multiplies.
    pub fn inner(&self, other: &Tensor) -> Result<Tensor> {
        let (Some(ka), Some(kb)) = (self.shape().last(), other.shape().last()) else {
            return self.elementwise(Op::Mul, other);
        };
        if ka != kb {
            return Err(AresError::shape(
                "inner",
                format!(
                    "shapes {} and {} not aligned: last dimensions differ ({ka} != {kb})",
                    fmt_shape(self.shape()),
                    fmt_shape(other.shape())
                ),
            ));
        }
        self.tensordot(other, &[-1], &[-1])
    }

    /// `numpy.tensordot`: sums products over `a_axes` of `self` and `b_axes` of `other`
    /// (pairwise, equal lengths); the result has the free axes of `self`, then of `other`.
    pub fn tensordot(&self, other: &Tensor, a_axes: &[i64], b_axes: &[i64]) -> Result<Tensor> {
        if a_axes.len() != b_axes.len() {
            return Err(AresError::arg(
                "tensordot",
                format!("{} axes of a against {} of b", a_axes.len(), b_axes.len()),
            ));
        }
        // The axes in the order given (pairs matter), each normalized as any axis is.
        let norm = |t: &Tensor, axes: &[i64]| -> Result<Vec<usize>> {
            let out = axes
                .iter()
                .map(|a| Ok(t.normalize_axes("tensordot", Some(&[*a]))?[0]))
                .collect::<Result<Vec<usize>>>()?;
            t.normalize_axes(
                "tensordot",
                Some(&out.iter().map(|a| *a as i64).collect::<Vec<_>>()),
            )?;
            Ok(out)
        };
        let (sa, sb) = (norm(self, a_axes)?, norm(other, b_axes)?);
        for (x, y) in sa.iter().zip(&sb) {
            if self.shape()[*x] != other.shape()[*y] {
                return Err(AresError::shape(
                    "tensordot",
                    format!(
                        "shape mismatch for sum: {} axis {x} vs {} axis {y}",
                        fmt_shape(self.shape()),
                        fmt_shape(other.shape())
                    ),
                ));
            }
        }
        let free_a: Vec<usize> = (0..self.ndim()).filter(|d| !sa.contains(d)).collect();
        let free_b: Vec<usize> = (0..other.ndim()).filter(|d| !sb.contains(d)).collect();
        let size = |t: &Tensor, dims: &[usize]| {
            dims.iter().map(|d| t.shape()[*d]).product::<usize>() as i64
        };
        let a2 = self
            .transpose(Some(&[free_a.clone(), sa.clone()].concat()))?
            .reshape(&[size(self, &free_a), size(self, &sa)])?;
        let b2 = other
            .transpose(Some(&[sb.clone(), free_b.clone()].concat()))?
            .reshape(&[size(other, &sb), size(other, &free_b)])?;
        let out: Vec<i64> = free_a
            .iter()
            .map(|d| self.shape()[*d] as i64)
            .chain(free_b.iter().map(|d| other.shape()[*d] as i64))
            .collect();
        a2.matmul(&b2)?.reshape(&out)
    }
}
