//! Operations whose result depends on the values, not only the shapes: `unique`, `x[mask]`
//! (their length is known only when they have run) and `searchsorted`.
//!
//! ares tiles a whole graph once, on the supervisor, before anything runs: every chunk's
//! shape is fixed then. A tensor whose length depends on the data therefore carries its upper
//! bound (the input's size) as its shape, and [`Tensor::length_from_data`] says so. Such a
//! tensor can only be a result: the executor concatenates its chunks, whatever their real
//! lengths, when it assembles a 1-D result. Using it as the input of another operation is
//! refused when the expression is built ("... the length of unique(...) depends on the
//! data"), except `unique`'s own split into values and counts, and so is reading that length
//! in a program (`x[mask].shape[0]` would give the bound). Mars instead tiles
//! iteratively (the supervisor learns the lengths after the stage and tiles what follows
//! then); that is the way to lift the restriction.

use crate::error::{AresError, Result};
use crate::ops::{Op, OpArgs};
use crate::tensor::Tensor;

impl Tensor {
    /// Whether the length of this (1-D) tensor is known only once it has run; its shape is
    /// then an upper bound.
    pub fn length_from_data(&self) -> bool {
        self.data_dependent_name().is_some()
    }

    /// How an error names a tensor whose length depends on the data: `x[mask]` or
    /// `unique(...)`; `None` for every other tensor.
    pub fn data_dependent_name(&self) -> Option<&'static str> {
        match self.op() {
            Op::MaskSelect => Some("x[mask]"),
            Op::Unique | Op::UniquePick => Some("unique(...)"),
            _ => None,
        }
    }

    /// Whether the length of `axis` is known before the tensor runs (every axis but the
    /// only one of a tensor whose [length depends on the data](Tensor::length_from_data)).
    pub fn axis_length_known(&self, axis: usize) -> bool {
        !(self.length_from_data() && axis == 0)
    }

    /// The sorted distinct values of the flattened tensor (NumPy 2's `np.unique`, one NaN,
    /// `-0.0` and `0.0` one value), and with `counts` how often each occurs.
    pub fn unique(&self, counts: bool) -> Result<(Tensor, Option<Tensor>)> {
        let dtype = self.dtype();
        let u = Tensor::new(Op::Unique, OpArgs::Unique { counts }, vec![self.clone()])?;
        if !counts {
            return Ok((u, None));
        }
        let pick = |c| {
            Tensor::new(
                Op::UniquePick,
                OpArgs::UniquePick { counts: c, dtype },
                vec![u.clone()],
            )
        };
        Ok((pick(false)?, Some(pick(true)?)))
    }

    /// `x[mask]`: the elements where the bool `mask` (of `x`'s shape) is true, in C order.
    pub fn mask_select(&self, mask: &Tensor) -> Result<Tensor> {
        Tensor::new(
            Op::MaskSelect,
            OpArgs::MaskSelect,
            vec![self.clone(), mask.clone()],
        )
    }

    /// `np.searchsorted(self, v, side)`: self is 1-D and sorted (NaN last); both operands are
    /// first promoted to a common dtype.
    pub fn searchsorted(&self, v: &Tensor, right: bool) -> Result<Tensor> {
        let dtype = self.dtype().promote(v.dtype());
        let cast = |t: &Tensor| {
            if t.dtype() == dtype {
                Ok(t.clone())
            } else {
                t.astype(dtype)
            }
        };
        Tensor::new(
            Op::SearchSorted,
            OpArgs::SearchSorted { right },
            vec![cast(self)?, cast(v)?],
        )
    }
}

/// Refuses `op` on a tensor whose length depends on the data (see the module doc).
pub(crate) fn check_inputs(op: Op, inputs: &[Tensor]) -> Result<()> {
    if op == Op::UniquePick {
        return Ok(());
    }
    match inputs.iter().find_map(|t| t.data_dependent_name()) {
        Some(name) => Err(AresError::arg(
            op.name(),
            format!(
                "the length of {name} depends on the data, so it can only be the result of the \
                 program (ares tiles before running)"
            ),
        )),
        None => Ok(()),
    }
}

impl Tensor {
    /// `np.take(self, idx, axis)`: elements (`axis=None`: of the flattened tensor) at the int64
    /// positions `idx`, negative ones counting from the end. The shape is `idx`'s in place of
    /// the axis. Built as rows of a 2-D tensor (the axis moved first, the rest flattened),
    /// gathered through two shuffles (`crate::prepare::tile::take`).
    pub fn take(&self, idx: &Tensor, axis: Option<i64>) -> Result<Tensor> {
        if idx.dtype() != crate::array::DType::I64 {
            return Err(AresError::arg(
                "take",
                format!("indices must be int64, got {}", idx.dtype()),
            ));
        }
        let to_i64 = |v: usize| v as i64;
        let positions = idx.reshape(&[to_i64(idx.size())])?;
        let rows = |x: &Tensor, axis: u32| {
            Tensor::new(
                Op::TakeRows,
                OpArgs::TakeRows { axis },
                vec![x.clone(), positions.clone()],
            )
        };
        let ishape: Vec<i64> = idx.shape().iter().map(|d| to_i64(*d)).collect();
        let Some(axis) = axis else {
            let x = self.reshape(&[to_i64(self.size()), 1])?;
            return rows(&x, u32::MAX)?.reshape(&ishape);
        };
        let nd = self.ndim() as i64;
        let a = if axis < 0 { axis + nd } else { axis };
        if a < 0 || a >= nd {
            return Err(AresError::arg(
                "take",
                format!("axis {axis} is out of bounds for array of dimension {nd}"),
            ));
        }
        let a = a as usize;
        let rest: Vec<usize> = (0..self.ndim()).filter(|d| *d != a).collect();
        let moved = if a == 0 {
            self.clone()
        } else {
            let perm: Vec<usize> = std::iter::once(a).chain(rest.iter().copied()).collect();
            self.transpose(Some(&perm))?
        };
        let width: usize = rest.iter().map(|d| self.shape()[*d]).product();
        let x = moved.reshape(&[to_i64(self.shape()[a]), to_i64(width)])?;
        let mut shape = ishape.clone();
        shape.extend(rest.iter().map(|d| to_i64(self.shape()[*d])));
        let gathered = rows(&x, a as u32)?.reshape(&shape)?;
        if a == 0 {
            return Ok(gathered);
        }
        // (idx dims, dims before a, dims after a) → (before, idx, after).
        let k = ishape.len();
        let perm: Vec<usize> = (k..k + a)
            .chain(0..k)
            .chain(k + a..k + rest.len())
            .collect();
        gathered.transpose(Some(&perm))
    }
}
