//! Operations on tensors: elementwise with broadcasting, reductions, linear algebra, slicing
//! and reshaping. Composite statistics (`mean`, `var`, `std`) are built from primitive ops so
//! that tiling, fusion and kernels only have to know the primitives.

use super::Tensor;
use crate::array::{DType, Scalar, Shape};
use crate::error::{AresError, Result};
use crate::ops::{ChunkSpec, DimIndex, Op, OpArgs};
use smallvec::SmallVec;
use std::ops::{Add, Div, Mul, Neg, Sub};

pub use super::slice_arg::SliceArg;

impl Tensor {
    fn binary(&self, op: Op, other: &Tensor) -> Result<Tensor> {
        Tensor::new(op, OpArgs::None, vec![self.clone(), other.clone()])
    }

    /// `op(self, value)`, or `op(value, self)` with `scalar_left`.
    pub fn binary_scalar(&self, op: Op, value: Scalar, scalar_left: bool) -> Result<Tensor> {
        Tensor::new(
            op,
            OpArgs::Scalar { value, scalar_left },
            vec![self.clone()],
        )
    }

    /// Any binary elementwise op by [`Op`] (`Op::Pow`, `Op::Lt`, ...).
    pub fn elementwise(&self, op: Op, other: &Tensor) -> Result<Tensor> {
        if op.family() != crate::ops::Family::Binary {
            return Err(AresError::arg(
                op.name(),
                "is not a binary elementwise operation",
            ));
        }
        self.binary(op, other)
    }

    /// Any unary elementwise op by [`Op`] (`Op::Sqrt`, `Op::Abs`, ...).
    pub fn unary(&self, op: Op) -> Result<Tensor> {
        if op.family() != crate::ops::Family::Unary || op == Op::AsType {
            return Err(AresError::arg(
                op.name(),
                "is not a unary elementwise operation",
            ));
        }
        Tensor::new(op, OpArgs::None, vec![self.clone()])
    }

    pub fn pow(&self, other: &Tensor) -> Result<Tensor> {
        self.binary(Op::Pow, other)
    }
    pub fn maximum(&self, other: &Tensor) -> Result<Tensor> {
        self.binary(Op::Maximum, other)
    }
    pub fn minimum(&self, other: &Tensor) -> Result<Tensor> {
        self.binary(Op::Minimum, other)
    }
    pub fn sqrt(&self) -> Result<Tensor> {
        self.unary(Op::Sqrt)
    }
    pub fn exp(&self) -> Result<Tensor> {
        self.unary(Op::Exp)
    }
    pub fn abs(&self) -> Result<Tensor> {
        self.unary(Op::Abs)
    }

    pub fn astype(&self, dtype: DType) -> Result<Tensor> {
        Tensor::new(Op::AsType, OpArgs::Cast { dtype }, vec![self.clone()])
    }

    /// Normalizes `axes` (negative counts from the end; `None` = all) to a sorted list.
    pub fn normalize_axes(
        &self,
        op: &'static str,
        axes: Option<&[i64]>,
    ) -> Result<SmallVec<[usize; 4]>> {
        let ndim = self.ndim() as i64;
        let mut out: SmallVec<[usize; 4]> = match axes {
            None => (0..self.ndim()).collect(),
            Some(list) => list
                .iter()
                .map(|&a| {
                    let b = if a < 0 { a + ndim } else { a };
                    if b < 0 || b >= ndim {
                        Err(AresError::arg(
                            op,
                            format!("axis {a} is out of bounds for a tensor of dimension {ndim}"),
                        ))
                    } else {
                        Ok(b as usize)
                    }
                })
                .collect::<Result<_>>()?,
        };
        out.sort_unstable();
        if out.windows(2).any(|w| w[0] == w[1]) {
            return Err(AresError::arg(op, "duplicate value in axis"));
        }
        Ok(out)
    }

    /// A reduction of the family's table (`sum`, `prod`, `min`, `max`...) over `axes`
    /// (`None` = all).
    pub fn reduce(&self, op: Op, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        let Some(row) = crate::ops::family::reduction::fold(op) else {
            return Err(AresError::arg(op.name(), "not a reduction"));
        };
        let axes = self.normalize_axes(op.name(), axes)?;
        // (`ops::infer` checks it again where shapes are inferred, so a stage built again
        // on an empty data-dependent length is refused too.)
        if !row.monoid.reduces_empty() && axes.iter().any(|a| self.shape()[*a] == 0) {
            return Err(AresError::arg(
                op.name(),
                "zero-size array to reduction operation which has no identity",
            ));
        }
        Tensor::new(op, OpArgs::Reduce { axes, keepdims }, vec![self.clone()])
    }

    pub fn sum(&self, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        self.reduce(Op::Sum, axes, keepdims)
    }
    pub fn prod(&self, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        self.reduce(Op::Prod, axes, keepdims)
    }
    pub fn min(&self, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        self.reduce(Op::Min, axes, keepdims)
    }
    pub fn max(&self, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        self.reduce(Op::Max, axes, keepdims)
    }

    fn reduced_count(&self, op: &'static str, axes: Option<&[i64]>) -> Result<usize> {
        Ok(self
            .normalize_axes(op, axes)?
            .iter()
            .map(|a| self.shape()[*a])
            .product())
    }

    /// Arithmetic mean: `sum / n`, accumulated in float64 whatever the input dtype (so
    /// integer sums never wrap before the division); float32 data gives a float32 mean, as
    /// NumPy's does.
    pub fn mean(&self, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        if self.length_from_data() {
            // How many elements there are is known only with the data: counted by the same
            // reduction, over `x ** 0` (1 for every value, NaN included).
            let x = self.as_float()?;
            let ones = x.binary_scalar(Op::Pow, Scalar::F64(0.0), false)?;
            return &x.sum(axes, keepdims)? / &ones.sum(axes, keepdims)?;
        }
        let n = self.reduced_count("mean", axes)?;
        self.as_float()?
            .sum(axes, keepdims)?
            .binary_scalar(Op::Div, Scalar::F64(n as f64), false)
    }

    /// Variance `sum((x - mean(x))^2) / max(n - ddof, 0)` in float64 (float32 for float32
    /// data, as NumPy), computed in one pass
    /// over the data with a numerically stable merge of per-chunk moments
    /// (`ops::family::reduction::moments`).
    pub fn var(&self, axes: Option<&[i64]>, keepdims: bool, ddof: usize) -> Result<Tensor> {
        let axes = self.normalize_axes("var", axes)?;
        let ddof = u32::try_from(ddof)
            .map_err(|_| AresError::arg("var", format!("ddof {ddof} is too large")))?;
        Tensor::new(
            Op::Var,
            OpArgs::Moments {
                axes,
                keepdims,
                ddof,
            },
            vec![self.clone()],
        )
    }

    /// The tensor itself if it is a float, else a float64 copy.
    pub(crate) fn as_float(&self) -> Result<Tensor> {
        if self.dtype().is_float() || self.dtype().is_complex() {
            Ok(self.clone())
        } else {
            self.astype(DType::F64)
        }
    }

    pub fn std(&self, axes: Option<&[i64]>, keepdims: bool, ddof: usize) -> Result<Tensor> {
        self.var(axes, keepdims, ddof)?.sqrt()
    }

    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        Tensor::new(Op::Matmul, OpArgs::None, vec![self.clone(), other.clone()])
    }

    /// `dot` of 2-D tensors is `matmul`.
    pub fn dot(&self, other: &Tensor) -> Result<Tensor> {
        self.matmul(other)
    }

    /// Permutes axes; `None` reverses them.
    pub fn transpose(&self, axes: Option<&[usize]>) -> Result<Tensor> {
        let perm: SmallVec<[usize; 4]> = match axes {
            Some(a) => a.iter().copied().collect(),
            None => (0..self.ndim()).rev().collect(),
        };
        Tensor::new(Op::Transpose, OpArgs::Transpose(perm), vec![self.clone()])
    }

    /// Basic numpy slicing; missing trailing indices select everything, and `NewAxis`
    /// entries insert axes of length 1 where they stand (a slice, then a reshape).
    pub fn slice(&self, index: &[SliceArg]) -> Result<Tensor> {
        let real: Vec<SliceArg> = index
            .iter()
            .copied()
            .filter(|a| *a != SliceArg::NewAxis)
            .collect();
        if real.len() > self.ndim() {
            return Err(AresError::arg(
                "slice",
                format!(
                    "too many indices: {} for a tensor of {} dimensions",
                    real.len(),
                    self.ndim()
                ),
            ));
        }
        let dims = (0..self.ndim())
            .map(|d| {
                real.get(d)
                    .copied()
                    .unwrap_or(SliceArg::FULL)
                    .normalize(d, self.shape()[d])
            })
            .collect::<Result<SmallVec<[DimIndex; 4]>>>()?;
        let sliced = Tensor::new(
            Op::Slice,
            OpArgs::Slice(dims.clone().into()),
            vec![self.clone()],
        )?;
        if real.len() == index.len() {
            return Ok(sliced);
        }
        let mut shape: Vec<i64> = Vec::new();
        let mut next = 0;
        for arg in index.iter().chain(std::iter::repeat_n(
            &SliceArg::FULL,
            self.ndim() - real.len(),
        )) {
            if *arg == SliceArg::NewAxis {
                shape.push(1);
                continue;
            }
            if let DimIndex::Range { len, .. } = dims[next] {
                shape.push(len as i64);
            }
            next += 1;
        }
        sliced.reshape(&shape)
    }

    pub fn rechunk(&self, chunk: impl Into<ChunkSpec>) -> Result<Tensor> {
        Tensor::new(
            Op::Rechunk,
            OpArgs::Rechunk(chunk.into()),
            vec![self.clone()],
        )
    }

    /// Reshape; one dimension may be `-1`. Tiling requires the chunks to line up with the new
    /// shape (see `prepare::tile`); rechunk first otherwise.
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        let known: i64 = shape.iter().filter(|d| **d != -1).product();
        let unknown = shape.iter().filter(|d| **d == -1).count();
        if unknown > 1 || shape.iter().any(|d| *d < -1) {
            return Err(AresError::arg(
                "reshape",
                format!("invalid target shape {shape:?}"),
            ));
        }
        let size = self.size() as i64;
        let resolved: Shape = shape
            .iter()
            .map(|d| {
                if *d == -1 && known > 0 {
                    (size / known) as usize
                } else {
                    *d as usize
                }
            })
            .collect();
        Tensor::new(Op::Reshape, OpArgs::Reshape(resolved), vec![self.clone()])
    }
}

/// Joins tensors along an existing axis (negative counts from the end).
pub fn concatenate(tensors: &[Tensor], axis: i64) -> Result<Tensor> {
    let first = tensors
        .first()
        .ok_or_else(|| AresError::arg("concatenate", "needs at least one tensor"))?;
    let ndim = first.ndim() as i64;
    let a = if axis < 0 { axis + ndim } else { axis };
    if a < 0 || a >= ndim.max(1) {
        return Err(AresError::arg(
            "concatenate",
            format!("axis {axis} is out of bounds for dimension {ndim}"),
        ));
    }
    Tensor::new(
        Op::Concatenate,
        OpArgs::Concat { axis: a as usize },
        tensors.to_vec(),
    )
}

macro_rules! binary_operator {
    ($trait:ident, $method:ident, $op:expr) => {
        impl $trait<&Tensor> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                self.binary($op, rhs)
            }
        }
        impl $trait<f64> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: f64) -> Result<Tensor> {
                self.binary_scalar($op, Scalar::F64(rhs), false)
            }
        }
        impl $trait<&Tensor> for f64 {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                rhs.binary_scalar($op, Scalar::F64(self), true)
            }
        }
    };
}

binary_operator!(Add, add, Op::Add);
binary_operator!(Sub, sub, Op::Sub);
binary_operator!(Mul, mul, Op::Mul);
binary_operator!(Div, div, Op::Div);

impl Neg for &Tensor {
    type Output = Result<Tensor>;
    fn neg(self) -> Result<Tensor> {
        self.unary(Op::Neg)
    }
}
