//! The array API's `linalg` functions that are products and views of chunked tensors:
//! `matrix_transpose`, `diagonal`, `trace`, `outer`, `vecdot`, `cross` and `matrix_power`.
//! Every one is composed from chunked primitives (elementwise ops with broadcasting,
//! reductions, slices, `matmul`), so none gathers its input into one chunk.
//!
//! `diagonal` slices the window its diagonal crosses (a square of k × k elements) and keeps
//! the elements where the row index equals the column index (`where` against two broadcast
//! `arange`s), summed along the rows: a pass over the window, elementwise and a reduction,
//! chunked like them; no reshape of the matrix (which would shuffle it).

use crate::array::{fmt_shape, DType, Scalar};
use crate::error::{AresError, Result};
use crate::tensor::{self, SliceArg, Tensor};

fn range(start: usize, stop: usize) -> SliceArg {
    SliceArg::Range {
        start: Some(start as i64),
        stop: Some(stop as i64),
        step: None,
    }
}

/// A boolean `k × k` identity (true on the diagonal), from two broadcast `arange`s.
fn identity_mask(k: usize) -> Result<Tensor> {
    let i = tensor::arange(
        Scalar::I64(0),
        Scalar::I64(k as i64),
        Scalar::I64(1),
        k.max(1),
    )?;
    let rows = i.expand_dims(&[1])?;
    let cols = i.expand_dims(&[0])?;
    rows.elementwise(crate::ops::Op::Eq, &cols)
}

/// The axis `axis` (negative from the end) of a broadcast of `ndim` axes, checked.
fn negative_axis(name: &'static str, axis: i64, ndim: usize) -> Result<i64> {
    let n = ndim as i64;
    if axis < -n || axis >= n {
        return Err(AresError::arg(
            name,
            format!("axis {axis} is out of bounds for {ndim} dimensions"),
        ));
    }
    Ok(if axis >= 0 { axis - n } else { axis })
}

impl Tensor {
    /// The array API's `matrix_transpose`: the last two axes swapped.
    pub fn matrix_transpose(&self) -> Result<Tensor> {
        let (batch, _, _) = self.stack_dims("linalg.matrix_transpose")?;
        let b = batch.len();
        let mut perm: Vec<usize> = (0..b).collect();
        perm.extend([b + 1, b]);
        self.transpose(Some(&perm))
    }

    /// The array API's `linalg.diagonal(x, offset=0)`: the `offset`-th diagonal of each
    /// matrix (above the main one for a positive offset), along a new last axis.
    pub fn diagonal(&self, offset: i64) -> Result<Tensor> {
        let (batch, m, n) = self.stack_dims("linalg.diagonal")?;
        let (r0, c0) = if offset >= 0 {
            (0, offset.unsigned_abs() as usize)
        } else {
            (offset.unsigned_abs() as usize, 0)
        };
        let k = m.saturating_sub(r0).min(n.saturating_sub(c0));
        let mut window = vec![SliceArg::FULL; batch.len()];
        window.extend([range(r0, r0 + k), range(c0, c0 + k)]);
        let x = self.slice(&window)?;
        let zero = tensor::zeros(&[], 1)?.astype(self.dtype())?;
        let kept = tensor::select(&identity_mask(k)?, &x, &zero)?;
        kept.sum(Some(&[-1]), false)?.astype(self.dtype())
    }

    /// The array API's `linalg.trace(x, offset=0, dtype=None)`: the sum of each matrix's
    /// `offset`-th diagonal, accumulated in `dtype` when given (else as `sum` does).
    pub fn trace(&self, offset: i64, dtype: Option<DType>) -> Result<Tensor> {
        let d = self.diagonal(offset)?;
        let d = match dtype {
            Some(t) => d.astype(t)?,
            None => d,
        };
        d.sum(Some(&[-1]), false)
    }

    /// The array API's `linalg.outer(x1, x2)`: the outer product of two vectors.
    pub fn outer(&self, other: &Tensor) -> Result<Tensor> {
        if self.ndim() != 1 || other.ndim() != 1 {
            return Err(AresError::shape(
                "linalg.outer",
                format!(
                    "needs two vectors (1-D), got shapes {} and {}",
                    fmt_shape(self.shape()),
                    fmt_shape(other.shape())
                ),
            ));
        }
        &self.expand_dims(&[1])? * &other.expand_dims(&[0])?
    }

    /// The array API's `linalg.vecdot(x1, x2, axis=-1)`: the dot product of the vectors
    /// along `axis` (of the broadcast shape), the other axes broadcast.
    pub fn vecdot(&self, other: &Tensor, axis: i64) -> Result<Tensor> {
        let name = "linalg.vecdot";
        let ndim = self.ndim().max(other.ndim());
        let axis = negative_axis(name, axis, ndim)?;
        let len = |t: &Tensor| {
            let d = t.ndim() as i64 + axis;
            (d >= 0).then(|| t.shape()[d as usize])
        };
        match (len(self), len(other)) {
            (Some(a), Some(b)) if a == b => {}
            _ => {
                return Err(AresError::shape(
                    name,
                    format!(
                        "shapes {} and {} must have the same length along axis {axis}",
                        fmt_shape(self.shape()),
                        fmt_shape(other.shape())
                    ),
                ))
            }
        }
        // The standard's `sum(conj(x1) * x2)`: complex vectors' inner product conjugates
        // the first. In the operands' promoted dtype (NumPy's and the array API's): `sum`
        // would widen int32 to int64.
        let first = if self.dtype().is_complex() {
            self.unary(crate::ops::Op::Conj)?
        } else {
            self.clone()
        };
        let product = (&first * other)?;
        let dtype = product.dtype();
        product.sum(Some(&[axis]), false)?.astype(dtype)
    }

    /// The array API's `linalg.cross(x1, x2, axis=-1)`: the cross product of 3-vectors
    /// along `axis` (of the broadcast shape), the other axes broadcast.
    pub fn cross(&self, other: &Tensor, axis: i64) -> Result<Tensor> {
        let name = "linalg.cross";
        let ndim = self.ndim().max(other.ndim());
        let axis = negative_axis(name, axis, ndim)?;
        let component = |t: &Tensor, i: usize| -> Result<Tensor> {
            let d = t.ndim() as i64 + axis;
            if d < 0 || t.shape()[d as usize] != 3 {
                return Err(AresError::shape(
                    name,
                    format!(
                        "needs vectors of 3 elements along axis {axis}, got shape {}",
                        fmt_shape(t.shape())
                    ),
                ));
            }
            let mut index = vec![SliceArg::FULL; d as usize];
            index.push(range(i, i + 1));
            t.slice(&index)
        };
        let a: Vec<Tensor> = (0..3).map(|i| component(self, i)).collect::<Result<_>>()?;
        let b: Vec<Tensor> = (0..3).map(|i| component(other, i)).collect::<Result<_>>()?;
        let term = |i: usize, j: usize| -> Result<Tensor> { &(&a[i] * &b[j])? - &(&a[j] * &b[i])? };
        let parts = [term(1, 2)?, term(2, 0)?, term(0, 1)?];
        tensor::concatenate(&parts, axis)
    }

    /// The array API's `linalg.matrix_power(x, n)`: `x` multiplied by itself `n` times by
    /// repeated squaring (`matmul`, chunked); the identity for `n = 0`, powers of the inverse
    /// for `n < 0`.
    pub fn matrix_power(&self, n: i64) -> Result<Tensor> {
        let name = "linalg.matrix_power";
        let (_, rows, cols) = self.stack_dims(name)?;
        if rows != cols {
            return Err(AresError::shape(
                name,
                format!(
                    "needs square matrices, got shape {}",
                    fmt_shape(self.shape())
                ),
            ));
        }
        if n == 0 {
            let eye = identity_mask(rows)?.astype(self.dtype())?;
            return eye.broadcast_to(self.shape());
        }
        let base = if n < 0 { self.inv()? } else { self.clone() };
        let mut e = n.unsigned_abs();
        let mut square = base;
        let mut result: Option<Tensor> = None;
        loop {
            if e & 1 == 1 {
                result = Some(match result {
                    None => square.clone(),
                    Some(r) => r.matmul_nd(&square)?,
                });
            }
            e >>= 1;
            if e == 0 {
                break;
            }
            square = square.matmul_nd(&square)?;
        }
        Ok(result.expect("n != 0 sets a bit"))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use crate::tensor::Tensor;
    use ndarray::ArrayD;

    /// Runs a program's named results on the local executor (chunked, two slots).
    pub(in crate::ops::family::linalg) fn run(program: &str, names: &[&str]) -> Vec<ArrayD<f64>> {
        let got: Vec<Tensor> = names
            .iter()
            .map(|n| crate::expr::evaluate(&format!("{program}; {n}")).unwrap())
            .collect();
        let refs: Vec<&Tensor> = got.iter().collect();
        let results = crate::executor::compute(&refs, &Default::default(), 2).unwrap();
        results.into_iter().map(|a| a.to_f64()).collect()
    }

    /// Diagonals, traces, cross and dot products and matrix powers of chunked tensors
    /// equal direct loops over the same numbers.
    #[test]
    fn products_and_views_equal_direct_loops() {
        let got = run(
            "x = rand((3, 7, 5), chunk=(2, 3, 2), seed=1); v = rand((4, 3), chunk=(3, 2), seed=2); \
             w = rand((4, 3), chunk=2, seed=3); m = rand((4, 4), chunk=3, seed=4)",
            &[
                "x",
                "linalg.diagonal(x, offset=1)",
                "linalg.trace(x, offset=-2)",
                "v",
                "w",
                "linalg.cross(v, w)",
                "linalg.vecdot(v, w)",
                "m",
                "linalg.matrix_power(m, 3)",
                "linalg.matrix_power(m, 0)",
            ],
        );
        let (x, diag, trace) = (&got[0], &got[1], &got[2]);
        assert_eq!(diag.shape(), &[3, 4]);
        for b in 0..3 {
            for i in 0..4 {
                assert_eq!(diag[[b, i]], x[[b, i, i + 1]]);
            }
            let want: f64 = (0..5).map(|i| x[[b, i + 2, i]]).sum();
            assert!((trace[[b]] - want).abs() < 1e-12);
        }
        let (v, w, cross, dot) = (&got[3], &got[4], &got[5], &got[6]);
        for r in 0..4 {
            let c = |i: usize, j: usize| v[[r, i]] * w[[r, j]] - v[[r, j]] * w[[r, i]];
            let want = [c(1, 2), c(2, 0), c(0, 1)];
            for (k, want) in want.iter().enumerate() {
                assert!((cross[[r, k]] - want).abs() < 1e-15);
            }
            let want: f64 = (0..3).map(|k| v[[r, k]] * w[[r, k]]).sum();
            assert!((dot[[r]] - want).abs() < 1e-15);
        }
        let (m, cube, eye) = (&got[7], &got[8], &got[9]);
        let mm = |a: &ArrayD<f64>, b: &ArrayD<f64>| {
            ArrayD::from_shape_fn(ndarray::IxDyn(&[4, 4]), |ix| {
                (0..4).map(|k| a[[ix[0], k]] * b[[k, ix[1]]]).sum::<f64>()
            })
        };
        let want = mm(&mm(m, m), m);
        assert!(cube.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-12));
        for i in 0..4 {
            for j in 0..4 {
                assert_eq!(eye[[i, j]], f64::from(u8::from(i == j)));
            }
        }
    }
}
