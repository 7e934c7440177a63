//! Operations whose result depends on the values, not only the shapes: `unique`, `x[mask]`
//! (their length is known only when they have run) and `searchsorted`.
//!
//! A tensor whose length depends on the data carries its upper bound (the input's size) as
//! its shape, and [`Tensor::length_from_data`] says so; so does whatever is computed from
//! it element by element. Such a tensor may feed the operations that do not need its length
//! to be built ([`check_inputs`]: elementwise functions, reductions, sorting, `unique`,
//! further masks). The supervisor then runs the graph in stages (`prepare::stages`): the
//! stage that computes the data-dependent tensors first, then, with their real chunk lengths
//! read from the workers' reports, the rest, tiled again. Operations that need the length
//! while the expression is built (slicing, reshaping, concatenating, matmul, `take`) are
//! refused with an error that names the fix (compute it first). Reading the length in a
//! program (`x[mask].shape[0]`) is refused the same way: the bound is not the length.

use crate::error::{AresError, Result};
use crate::ops::{Op, OpArgs};
use crate::tensor::Tensor;

impl Tensor {
    /// How an error names the tensor a data-dependent length comes from: `x[mask]` or
    /// `unique(...)` (this tensor's, or the first input's it inherits it from); `None` when
    /// the length is known.
    pub fn data_dependent_name(&self) -> Option<&'static str> {
        let mut t = self;
        loop {
            match t.op() {
                Op::MaskSelect => return Some("x[mask]"),
                Op::Unique | Op::UniquePick => return Some("unique(...)"),
                _ => t = t.inputs().iter().find(|i| i.length_from_data())?,
            }
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

    /// The array API's `unique_all`: the sorted distinct values of the flattened tensor,
    /// the index of each one's first occurrence, for every element the index of its value
    /// (shaped as `self`), and the counts. Built from `unique` (with counts), a stable
    /// argsort and two `searchsorted`: the values' length depends on the data, so this runs
    /// in stages.
    pub fn unique_all(&self) -> Result<[Tensor; 4]> {
        let (values, counts, inverse) = self.unique_inverse_counts()?;
        let flat = self.flatten_any()?;
        // The first occurrence: where each value starts in the stably sorted elements.
        let first = flat.sort()?.searchsorted(&values, false)?;
        let indices = flat.argsort()?.take(&first, Some(0))?;
        Ok([values, indices, inverse, counts])
    }

    /// The array API's `unique_inverse`: the values, and for every element the index of
    /// its value in them (shaped as `self`).
    pub fn unique_inverse(&self) -> Result<[Tensor; 2]> {
        let (values, _, inverse) = self.unique_inverse_counts()?;
        Ok([values, inverse])
    }

    fn unique_inverse_counts(&self) -> Result<(Tensor, Tensor, Tensor)> {
        let flat = self.flatten_any()?;
        let (values, counts) = flat.unique(true)?;
        let counts = counts.expect("asked for counts");
        let shape: Vec<i64> = self.shape().iter().map(|d| *d as i64).collect();
        let inverse = values.searchsorted(&flat, false)?.reshape(&shape)?;
        Ok((values, counts, inverse))
    }

    /// 1-D in C order, a 0-d tensor as one element.
    fn flatten_any(&self) -> Result<Tensor> {
        if self.ndim() == 0 {
            self.reshape(&[1])
        } else {
            self.flatten()
        }
    }

    /// `np.nonzero(self)`: for each dimension, the int64 indices along it of the non-zero
    /// elements, in C order. Their length depends on the data: the flat positions are
    /// `arange(size)[x != 0]`, and each dimension's index is computed from them element
    /// by element (`(p // stride) % n`, with exact float divisions below 2^53), so what
    /// follows runs in stages.
    pub fn nonzero(&self) -> Result<Vec<Tensor>> {
        use crate::array::{DType, Scalar};
        if self.ndim() == 0 {
            return Err(AresError::arg(
                "nonzero",
                "calling nonzero on 0d arrays is not allowed; use atleast_1d(x).nonzero()",
            ));
        }
        if self.length_from_data() {
            let name = self.data_dependent_name().unwrap_or("x[mask]");
            return Err(AresError::arg(
                "nonzero",
                format!(
                    "needs the length of {name} while the expression is built: compute it \
                     first (Python: `x.compute_chunk_sizes()`)"
                ),
            ));
        }
        let size = self.size();
        let flat = self.flatten()?;
        let positions = crate::tensor::arange(
            Scalar::I64(0),
            Scalar::I64(size as i64),
            Scalar::I64(1),
            size.clamp(1, 1 << 20),
        )?;
        // NumPy's truth: non-zero, NaN included.
        let nonzero = flat.truthy()?;
        let p = positions.mask_select(&nonzero)?;
        let shape = self.shape().to_vec();
        let mut stride: usize = shape.iter().product();
        let mut out = Vec::with_capacity(shape.len());
        // q = p // stride, then q % n, in float64 (exact: every value is below 2^53).
        let pf = p.astype(DType::F64)?;
        for n in shape {
            stride /= n.max(1);
            let q = pf
                .binary_scalar(Op::Div, Scalar::F64(stride.max(1) as f64), false)?
                .astype(DType::I64)?;
            let whole = q
                .astype(DType::F64)?
                .binary_scalar(Op::Div, Scalar::F64(n.max(1) as f64), false)?
                .astype(DType::I64)?
                .binary_scalar(Op::Mul, Scalar::I64(n as i64), false)?;
            out.push((&q - &whole)?);
        }
        Ok(out)
    }

    /// `x[mask]`: the elements where the bool `mask` (of `x`'s shape) is true, in C order;
    /// a 1-D `mask` along the first axis of an N-D `x` selects whole rows (NumPy's
    /// `t[mask_1d]`), as `take(x, nonzero(mask)[0], axis=0)`: in stages.
    pub fn mask_select(&self, mask: &Tensor) -> Result<Tensor> {
        if self.ndim() > 1
            && mask.ndim() == 1
            && mask.dtype() == crate::array::DType::Bool
            && mask.shape()[0] == self.shape()[0]
            && !self.length_from_data()
        {
            let rows = mask.nonzero()?.remove(0);
            return self.take(&rows, Some(0));
        }
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

/// Whether `op` may consume a data-dependent tensor by waiting for the stage that computes
/// it: its arguments do not depend on the length (`v @ w`, `concatenate((v, v))`,
/// `rechunk(v, 2)`, `v + ones(3)`, a [`crate::tensor::wait`] call), and the unknown axis
/// stays axis 0 (what `length_from_data` says of the result).
fn waits_for_lengths(op: Op, args: &OpArgs, inputs: &[Tensor]) -> bool {
    use crate::ops::family::elementwise::Elementwise;
    use crate::ops::registry::OpFamily;
    match (op, args) {
        (Op::WaitForLength, _) | (Op::Rechunk, _) => true,
        (Op::Matmul, OpArgs::None) => true,
        (Op::Concatenate, _) => true,
        (Op::Transpose, _) => inputs.first().is_some_and(|t| t.ndim() <= 1),
        _ if Elementwise.owns(op) => {
            let ndim = inputs.iter().map(Tensor::ndim).max().unwrap_or(0);
            inputs
                .iter()
                .filter(|t| t.length_from_data())
                .all(|t| t.ndim() == ndim)
        }
        _ => false,
    }
}

/// Whether `op` (with output `shape`) may take inputs whose length depends on the data:
/// it needs no length to be built, and its own length (if any) is theirs.
fn takes_unknown_lengths(op: Op, args: &OpArgs, inputs: &[Tensor], shape: &[usize]) -> bool {
    use crate::ops::family::{elementwise::Elementwise, reduction::Reduction};
    use crate::ops::registry::OpFamily;
    match op {
        // Their own length depends on the data; a masked `x[mask]` or `x[mask][...]` too.
        Op::Unique | Op::UniquePick | Op::MaskSelect | Op::Sort => true,
        // Rows at data-dependent positions (`x[mask_1d]`): as many rows as positions.
        Op::TakeRows => !inputs[0].length_from_data(),
        // Positions in a sorted data-dependent tensor (`unique_inverse`), or of values of
        // data-dependent length in a sorted known one (`unique_all`'s first indices).
        Op::SearchSorted => true,
        // Only the rows' shape changes (`take` gathers rows as 2-D, then gives them their
        // shape); their number is carried over when the stage before is known
        // (`stages::tensors_of`). Into N-D, a bound of 1 row could as well be a reshape to
        // one row (`reshape(1, -1)`), which would then differ: refused; into 1-D it is a
        // flatten of rows of one element either way.
        Op::Reshape => match (args, inputs.first()) {
            (OpArgs::Reshape(out), Some(x)) if !out.is_empty() && x.ndim() >= 2 => {
                (out.len() == 1 || x.shape()[0] > 1)
                    && out[0] == x.shape()[0]
                    && out[1..].iter().product::<usize>()
                        == x.shape()[1..].iter().product::<usize>()
            }
            _ => false,
        },
        // Element by element, when the unknown axis stays axis 0 (no dimension broadcast in
        // before it).
        _ if Elementwise.owns(op) => inputs
            .iter()
            .filter(|t| t.length_from_data())
            .all(|t| t.ndim() == shape.len()),
        // Reductions and scans read every element, however many there are.
        _ if Reduction.owns(op) => true,
        _ => false,
    }
}

/// Checks `op`'s inputs (see the module doc); whether the result's length depends on the
/// data.
pub(crate) fn check_inputs(
    op: Op,
    args: &OpArgs,
    inputs: &[Tensor],
    shape: &[usize],
) -> Result<bool> {
    let own = matches!(op, Op::Unique | Op::UniquePick | Op::MaskSelect);
    let Some(from) = inputs.iter().find(|t| t.length_from_data()) else {
        return Ok(own);
    };
    if waits_for_lengths(op, args, inputs) {
        // Runs after the stage that computes the lengths, built again from them
        // (`prepare::stages`); its shape until then is a preview.
        return Ok(!shape.is_empty());
    }
    if !takes_unknown_lengths(op, args, inputs, shape) {
        let name = from.data_dependent_name().unwrap_or("x[mask]");
        return Err(AresError::arg(
            op.name(),
            format!(
                "needs the length of {name} while the expression is built, and that length \
                 depends on the data: compute it first (Python: `x.compute_chunk_sizes()` or \
                 `x.compute()`), then build {} from the result",
                op.name()
            ),
        ));
    }
    // Whether the unknown axis reaches the result's axis 0: not through a reduction over
    // it, nor from the input that only gives values to look in (`take`'s rows,
    // `searchsorted`'s sorted array).
    let passes = match (op, args) {
        (Op::TakeRows | Op::SearchSorted, _) => inputs[1].length_from_data(),
        (
            _,
            OpArgs::Reduce { axes, .. }
            | OpArgs::Moments { axes, .. }
            | OpArgs::Combine { axes, .. },
        ) => !axes.contains(&0),
        (_, OpArgs::Arg { axis, .. }) => *axis != 0,
        _ => true,
    };
    Ok(own || (passes && !shape.is_empty()))
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
        let positions = if idx.ndim() == 1 {
            idx.clone()
        } else {
            idx.reshape(&[to_i64(idx.size())])?
        };
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
        if width == 0 && !idx.length_from_data() && !self.length_from_data() {
            // No element to gather: NumPy checks no position then (`take` of a (0, 0) array
            // at [0] along axis 1 is a (0, 1) array), so neither does this.
            let mut out: Vec<usize> = self.shape()[..a].to_vec();
            out.extend_from_slice(idx.shape());
            out.extend_from_slice(&self.shape()[a + 1..]);
            let zero = crate::array::Scalar::I64(0);
            return crate::tensor::full(&out, zero, crate::tensor::auto_chunk(&out))?
                .astype(self.dtype());
        }
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
