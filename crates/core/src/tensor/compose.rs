//! NumPy functions built from the primitive ops: logical functions, `all`/`any`, axis
//! insertion and removal, broadcasting, stacking and splitting, and vector products.
//!
//! None of them needs a tiling rule or a kernel of its own, so fusion, the reference tests
//! and every executor already know them. Each follows NumPy's rules for the result's dtype
//! and shape (a bool `and` is a bool `*`, `expand_dims` a reshape that only inserts axes of
//! length 1, which tiling always accepts).

use super::{full, SliceArg, Tensor};
use crate::array::{fmt_shape, DType, Scalar};
use crate::error::{AresError, Result};
use crate::ops::infer::{broadcast, reduced_shape};
use crate::ops::Op;

/// Most pieces `split` makes of an empty axis (a non-empty one has at most its length).
const MAX_EMPTY_PIECES: usize = 1 << 16;

impl Tensor {
    /// `self != 0` as bool (the tensor itself when it is bool already).
    pub fn truthy(&self) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            Ok(self.clone())
        } else {
            self.astype(DType::Bool)
        }
    }

    pub fn logical_and(&self, other: &Tensor) -> Result<Tensor> {
        self.truthy()?.elementwise(Op::Mul, &other.truthy()?)
    }

    pub fn logical_or(&self, other: &Tensor) -> Result<Tensor> {
        self.truthy()?.elementwise(Op::Add, &other.truthy()?)
    }

    pub fn logical_xor(&self, other: &Tensor) -> Result<Tensor> {
        self.truthy()?.elementwise(Op::Ne, &other.truthy()?)
    }

    pub fn logical_not(&self) -> Result<Tensor> {
        self.truthy()?
            .binary_scalar(Op::Eq, Scalar::Bool(false), false)
    }

    /// `all`: the bool minimum; over zero elements, `True`.
    pub fn all(&self, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        self.bool_reduce("all", Op::Min, true, axes, keepdims)
    }

    /// `any`: the bool maximum; over zero elements, `False`.
    pub fn any(&self, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        self.bool_reduce("any", Op::Max, false, axes, keepdims)
    }

    /// `all`/`any` (`name`) as the bool `op` (min/max) over `axes`, `empty` over none.
    fn bool_reduce(
        &self,
        name: &'static str,
        op: Op,
        empty: bool,
        axes: Option<&[i64]>,
        keepdims: bool,
    ) -> Result<Tensor> {
        let norm = self.normalize_axes(name, axes)?;
        if self.length_from_data() {
            // Its length may turn out 0, where the bool max/min have no identity: counted
            // instead (`any`: some true; `all`: no false), which is defined over nothing.
            let t = self.truthy()?;
            let (counted, test) = if empty {
                (t.logical_not()?, Op::Eq)
            } else {
                (t, Op::Gt)
            };
            return counted
                .astype(DType::I64)?
                .sum(axes, keepdims)?
                .binary_scalar(test, Scalar::I64(0), false);
        }
        if norm.iter().any(|a| self.shape()[*a] == 0) {
            let shape = reduced_shape(self.shape(), &norm, keepdims);
            return full(&shape, Scalar::Bool(empty), super::auto_chunk(&shape));
        }
        self.truthy()?.reduce(op, axes, keepdims)
    }

    /// `argmin` (`op` = `Op::ArgMin`) or `argmax` along `axis`; `None` gives the index in
    /// the flattened tensor, as in NumPy.
    pub fn arg_reduce(&self, op: Op, axis: Option<i64>, keepdims: bool) -> Result<Tensor> {
        let (x, ax) = match axis {
            None => (self.flatten()?, 0),
            Some(a) => (self.clone(), self.normalize_axes(op.name(), Some(&[a]))?[0]),
        };
        let out = Tensor::new(
            op,
            crate::ops::OpArgs::Arg {
                op,
                axis: ax,
                offset: 0,
                keepdims: keepdims && axis.is_some(),
            },
            vec![x],
        )?;
        match (axis, keepdims) {
            // NumPy keeps every axis, as length 1, for axis=None with keepdims.
            (None, true) => out.reshape(&vec![1; self.ndim()]),
            _ => Ok(out),
        }
    }

    /// The tensor as 1-D in C order; whole rows per chunk first, so the reshape is
    /// chunk-aligned whatever the chunking.
    pub fn flatten(&self) -> Result<Tensor> {
        if self.ndim() == 1 {
            // Already flat (and a data-dependent length needs no reshape).
            return Ok(self.clone());
        }
        if self.ndim() == 0 || self.size() == 0 {
            return self.reshape(&[-1]);
        }
        let row: usize = self.shape()[1..].iter().product();
        let mut chunk: smallvec::SmallVec<[usize; 4]> = self.shape().into();
        chunk[0] = ((1usize << 20) / row.max(1)).max(1);
        self.rechunk(crate::ops::ChunkSpec::PerDim(chunk))?
            .reshape(&[-1])
    }

    /// `cumsum` (`op` = `Op::CumSum`) or `cumprod` along `axis`; `None` runs over the
    /// flattened tensor, as in NumPy.
    pub fn scan(&self, op: Op, axis: Option<i64>) -> Result<Tensor> {
        let (x, axis) = match axis {
            None => (self.flatten()?, 0),
            Some(a) => (self.clone(), self.normalize_axes(op.name(), Some(&[a]))?[0]),
        };
        Tensor::new(op, crate::ops::OpArgs::Scan { axis }, vec![x])
    }

    /// Inserts axes of length 1 at `axes` (positions in the result; negative from its end).
    pub fn expand_dims(&self, axes: &[i64]) -> Result<Tensor> {
        if self.length_from_data() {
            // Its reshape spells out every length: made once they are known.
            return Tensor::wait_for_length(
                super::wait::Call::ExpandDims(axes.to_vec()),
                std::slice::from_ref(self),
            );
        }
        let ndim = (self.ndim() + axes.len()) as i64;
        let mut new = vec![false; ndim as usize];
        for &a in axes {
            let b = if a < 0 { a + ndim } else { a };
            if b < 0 || b >= ndim || std::mem::replace(&mut new[b as usize], true) {
                return Err(AresError::arg(
                    "expand_dims",
                    format!(
                        "axis {a} is out of bounds or repeated for a result of {ndim} dimensions"
                    ),
                ));
            }
        }
        let mut dims = self.shape().iter();
        let shape: Vec<i64> = new
            .iter()
            .map(|inserted| match inserted {
                true => 1,
                false => *dims.next().expect("one source dimension per kept axis") as i64,
            })
            .collect();
        self.reshape(&shape)
    }

    /// Removes axes of length 1: the given ones, or all of them.
    pub fn squeeze(&self, axes: Option<&[i64]>) -> Result<Tensor> {
        let drop = match axes {
            None => (0..self.ndim()).filter(|d| self.shape()[*d] == 1).collect(),
            Some(_) => self.normalize_axes("squeeze", axes)?,
        };
        if let Some(d) = drop.iter().find(|d| self.shape()[**d] != 1) {
            return Err(AresError::arg(
                "squeeze",
                format!(
                    "cannot squeeze axis {d} of shape {}: its length is not 1",
                    fmt_shape(self.shape())
                ),
            ));
        }
        let shape: Vec<i64> = (0..self.ndim())
            .filter(|d| !drop.contains(d))
            .map(|d| self.shape()[d] as i64)
            .collect();
        self.reshape(&shape)
    }

    /// The tensor broadcast to `shape` (a multiplication by ones of its own dtype, which
    /// keeps every value, `-0.0` and NaN included).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Tensor> {
        let fits = broadcast("broadcast_to", self.shape(), shape).ok();
        if fits.as_deref() != Some(shape) {
            return Err(AresError::shape(
                "broadcast_to",
                format!(
                    "cannot broadcast a tensor of shape {} to {}",
                    fmt_shape(self.shape()),
                    fmt_shape(shape)
                ),
            ));
        }
        if self.shape() == shape {
            return Ok(self.clone());
        }
        // Times a tensor of `True`: bool promotes to every dtype, so the dtype stays.
        let ones = full(shape, Scalar::Bool(true), super::auto_chunk(shape))?;
        self.elementwise(Op::Mul, &ones)
    }

    /// Splits into `sections` equal parts along `axis`, as `numpy.split` with an integer.
    pub fn split_equal(&self, sections: usize, axis: i64) -> Result<Vec<Tensor>> {
        let axis = self.normalize_axes("split", Some(&[axis]))?[0];
        let len = self.shape()[axis];
        // An empty axis splits into any number of empty pieces: bound it before the
        // pieces are built.
        if len == 0 && sections > MAX_EMPTY_PIECES {
            return Err(AresError::arg(
                "split",
                format!(
                    "{sections} pieces of an empty axis exceed the limit of {MAX_EMPTY_PIECES}"
                ),
            ));
        }
        if sections == 0 || !len.is_multiple_of(sections) {
            return Err(AresError::arg(
                "split",
                format!("array split does not result in an equal division ({len} into {sections})"),
            ));
        }
        let step = (len / sections) as i64;
        let bounds: Vec<i64> = (1..sections as i64).map(|i| i * step).collect();
        self.split_at(&bounds, axis as i64)
    }

    /// Splits at `bounds` along `axis`, as `numpy.split` with a list: piece `i` is the
    /// Python slice `bounds[i-1]:bounds[i]` (so negative bounds count from the end and a
    /// decreasing pair gives an empty piece).
    pub fn split_at(&self, bounds: &[i64], axis: i64) -> Result<Vec<Tensor>> {
        let axis = self.normalize_axes("split", Some(&[axis]))?[0];
        let mut edges: Vec<Option<i64>> = vec![Some(0)];
        edges.extend(bounds.iter().map(|b| Some(*b)));
        edges.push(None);
        edges
            .windows(2)
            .map(|w| {
                let mut index = vec![SliceArg::FULL; axis + 1];
                index[axis] = SliceArg::Range {
                    start: w[0],
                    stop: w[1],
                    step: None,
                };
                self.slice(&index)
            })
            .collect()
    }
}

/// `where(condition, x, y)`: elements of `x` where `condition` is true (nonzero), else of `y`,
/// all three broadcast together; the result has the promoted dtype of `x` and `y`.
pub fn select(condition: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    Tensor::new(
        Op::Where,
        crate::ops::OpArgs::None,
        vec![condition.truthy()?, x.clone(), y.clone()],
    )
}

/// Joins tensors of one shape along a new axis.
pub fn stack(tensors: &[Tensor], axis: i64) -> Result<Tensor> {
    let first = tensors
        .first()
        .ok_or_else(|| AresError::arg("stack", "needs at least one tensor"))?;
    if let Some(t) = tensors.iter().find(|t| t.shape() != first.shape()) {
        return Err(AresError::shape(
            "stack",
            format!(
                "all input arrays must have the same shape: {} vs {}",
                fmt_shape(first.shape()),
                fmt_shape(t.shape())
            ),
        ));
    }
    let expanded = tensors
        .iter()
        .map(|t| t.expand_dims(&[axis]))
        .collect::<Result<Vec<_>>>()?;
    let ndim = first.ndim() as i64 + 1;
    super::concatenate(&expanded, if axis < 0 { axis + ndim } else { axis })
}
