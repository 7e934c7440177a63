//! NumPy's products beyond the 2-D `matmul` primitive: vectors, stacks of matrices,
//! `inner` and `tensordot`, all composed from `matmul`, slices, transposes and reshapes.
//!
//! A stack of matrices (`(..., n, k) @ (..., k, m)`, batch dimensions broadcast) becomes one
//! 2-D product per matrix of the broadcast batch, stacked back together: the graph grows with
//! the number of matrices, so it is bounded by [`MAX_BATCH`].

use super::{concatenate, SliceArg, Tensor};
use crate::array::fmt_shape;
use crate::error::{AresError, Result};
use crate::ops::infer::broadcast;
use crate::ops::Op;

/// Most matrices a batched `matmul` may multiply.
pub const MAX_BATCH: usize = 4096;

impl Tensor {
    /// NumPy's `matmul` (`@`): a 1-D operand is a row (on the left) or a column (on the
    /// right) whose axis is removed from the result; more than 2 dimensions are stacks of
    /// matrices with broadcast batch dimensions.
    pub fn matmul_nd(&self, other: &Tensor) -> Result<Tensor> {
        if self.ndim() == 0 || other.ndim() == 0 {
            return Err(AresError::shape(
                "matmul",
                "operands must have at least one dimension (use * for scalars)",
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
        let product = if lhs.ndim() == 2 && rhs.ndim() == 2 {
            lhs.matmul(&rhs)?
        } else {
            batched_matmul(&lhs, &rhs)?
        };
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

/// `(..., n, k) @ (..., k, m)` with broadcast batch dimensions: one 2-D product per matrix.
fn batched_matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (na, nb) = (a.ndim(), b.ndim());
    let batch = broadcast("matmul", &a.shape()[..na - 2], &b.shape()[..nb - 2])?;
    let count: usize = batch.iter().product();
    if count > MAX_BATCH {
        return Err(AresError::arg(
            "matmul",
            format!("a stack of {count} matrices is more than the {MAX_BATCH} supported"),
        ));
    }
    let (n, m) = (a.shape()[na - 2], b.shape()[nb - 1]);
    // The matrix of `t` at batch position `idx` (broadcast dimensions read position 0).
    let matrix = |t: &Tensor, idx: &[usize]| -> Result<Tensor> {
        let own = &t.shape()[..t.ndim() - 2];
        let skip = batch.len() - own.len();
        let index: Vec<SliceArg> = own
            .iter()
            .zip(&idx[skip..])
            .map(|(len, i)| SliceArg::Index(if *len == 1 { 0 } else { *i as i64 }))
            .collect();
        t.slice(&index)
    };
    let mut products = Vec::with_capacity(count.max(1));
    let mut idx = vec![0usize; batch.len()];
    for _ in 0..count {
        let p = matrix(a, &idx)?.matmul(&matrix(b, &idx)?)?;
        products.push(p.reshape(&[1, n as i64, m as i64])?);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < batch[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    let shape: Vec<i64> = batch
        .iter()
        .map(|d| *d as i64)
        .chain([n as i64, m as i64])
        .collect();
    if products.is_empty() {
        // An empty batch: a zero-size product of the right shape and dtype.
        let dtype = a.dtype().promote(b.dtype());
        let zeros = super::full(&[0, n, m], crate::array::Scalar::F64(0.0), 1)?.astype(dtype)?;
        return zeros.reshape(&shape);
    }
    concatenate(&products, 0)?.reshape(&shape)
}
