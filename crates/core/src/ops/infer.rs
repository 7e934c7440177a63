//! Shape and dtype inference: the rules that make a bad expression fail when it is built.
//!
//! The tensor API calls [`infer`] for every new node and `TileableGraph::validate` calls it
//! again for graphs that come from outside, so both agree on what is well-formed.

use crate::array::{fmt_shape, DType, Shape};
use crate::error::{AresError, Result};
use crate::ops::{DimIndex, Family, Op, OpArgs};

pub use super::chunk_spec::check_chunk_spec;
pub use super::dtypes::{
    binary_dtype, fill_dtype, float_result, reduction_dtype, scalar_binary_dtype,
    scalar_compute_dtype, unary_dtype,
};
use smallvec::smallvec;

/// Largest number of elements a tensor may have (2^48): absurd shapes fail early instead of
/// overflowing later.
pub const MAX_ELEMENTS: u128 = 1 << 48;
/// Largest number of dimensions.
pub const MAX_NDIM: usize = 32;

pub fn check_shape(op: &'static str, shape: &[usize]) -> Result<()> {
    if shape.len() > MAX_NDIM {
        return Err(AresError::shape(
            op,
            format!("{} dimensions exceed the limit of {MAX_NDIM}", shape.len()),
        ));
    }
    let total: u128 = shape.iter().map(|d| *d as u128).product();
    if total > MAX_ELEMENTS {
        return Err(AresError::shape(
            op,
            format!(
                "shape {} has {total} elements, more than the limit of 2^48",
                fmt_shape(shape)
            ),
        ));
    }
    Ok(())
}

/// numpy broadcasting of two shapes.
pub fn broadcast(op: &'static str, a: &[usize], b: &[usize]) -> Result<Shape> {
    let n = a.len().max(b.len());
    let mut out: Shape = smallvec![0; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(AresError::shape(
                    op,
                    format!(
                        "operands could not be broadcast together with shapes {} {}",
                        fmt_shape(a),
                        fmt_shape(b)
                    ),
                ))
            }
        };
    }
    Ok(out)
}

/// Shape after reducing `axes` (sorted, unique, checked).
pub fn reduced_shape(shape: &[usize], axes: &[usize], keepdims: bool) -> Shape {
    let mut out = Shape::new();
    for (d, len) in shape.iter().enumerate() {
        if axes.contains(&d) {
            if keepdims {
                out.push(1);
            }
        } else {
            out.push(*len);
        }
    }
    out
}

/// An error naming `op` unless it got `want` inputs.
pub(super) fn arity(op: Op, inputs: usize, want: usize) -> Result<()> {
    if inputs != want {
        return Err(AresError::arg(
            op.name(),
            format!("expects {want} input(s), got {inputs}"),
        ));
    }
    Ok(())
}

/// Shape and dtype of `op(args)` applied to inputs of the given shapes and dtypes.
pub fn infer(op: Op, args: &OpArgs, inputs: &[(&Shape, DType)]) -> Result<(Shape, DType)> {
    let name = op.name();
    if let Some((_, d)) = inputs.iter().find(|(_, d)| d.is_complex()) {
        check_complex(op, args, *d)?;
    }
    let out = match (op.family(), args) {
        (Family::Creation, OpArgs::Create { fill, shape, chunk }) => {
            arity(op, inputs.len(), 0)?;
            check_shape(name, shape)?;
            check_chunk_spec(name, chunk, shape)?;
            (shape.clone(), fill_dtype(fill))
        }
        (Family::Io, OpArgs::Source { data, chunk }) => {
            arity(op, inputs.len(), 0)?;
            check_shape(name, &data.shape)?;
            check_chunk_spec(name, chunk, &data.shape)?;
            (data.shape.clone(), data.dtype)
        }
        (Family::Io, OpArgs::Sink { data, chunk }) => {
            arity(op, inputs.len(), 1)?;
            if inputs[0].0 != &data.shape || inputs[0].1 != data.dtype {
                return Err(AresError::arg(
                    name,
                    format!(
                        "the file is described as {} {} but the input is {} {}",
                        crate::array::fmt_shape(&data.shape),
                        data.dtype,
                        crate::array::fmt_shape(inputs[0].0),
                        inputs[0].1
                    ),
                ));
            }
            if !chunk.is_empty() && (chunk.len() != data.shape.len() || chunk.contains(&0)) {
                return Err(AresError::arg(
                    name,
                    "store chunk shape does not fit the array",
                ));
            }
            (Shape::new(), DType::I64)
        }
        (Family::Unary, _) => {
            arity(op, inputs.len(), 1)?;
            (inputs[0].0.clone(), unary_dtype(op, args, inputs[0].1)?)
        }
        (Family::Binary, OpArgs::Scalar { value, .. }) => {
            arity(op, inputs.len(), 1)?;
            (
                inputs[0].0.clone(),
                scalar_binary_dtype(op, inputs[0].1, *value)?,
            )
        }
        (Family::Reduction, OpArgs::Arg { axis, keepdims, .. })
            if matches!(op, Op::ArgMin | Op::ArgMax) =>
        {
            arity(op, inputs.len(), 1)?;
            check_axes(name, &[*axis], inputs[0].0.len())?;
            if inputs[0].0[*axis] == 0 {
                return Err(AresError::arg(
                    name,
                    format!("attempt to get {name} of an empty sequence"),
                ));
            }
            (reduced_shape(inputs[0].0, &[*axis], *keepdims), DType::I64)
        }
        (Family::Scan, OpArgs::Scan { axis }) => {
            arity(op, inputs.len(), 1)?;
            check_axes(name, &[*axis], inputs[0].0.len())?;
            (inputs[0].0.clone(), reduction_dtype(op, inputs[0].1))
        }
        (Family::Ternary, OpArgs::None) => {
            arity(op, inputs.len(), 3)?;
            let shape = broadcast(name, inputs[0].0, inputs[1].0)?;
            (
                broadcast(name, &shape, inputs[2].0)?,
                inputs[1].1.promote(inputs[2].1),
            )
        }
        (Family::Binary, OpArgs::None) => {
            arity(op, inputs.len(), 2)?;
            (
                broadcast(name, inputs[0].0, inputs[1].0)?,
                binary_dtype(op, inputs[0].1, inputs[1].1)?,
            )
        }
        (Family::Reduction, OpArgs::Moments { axes, keepdims, .. }) if op == Op::Var => {
            arity(op, inputs.len(), 1)?;
            check_axes(name, axes, inputs[0].0.len())?;
            (
                reduced_shape(inputs[0].0, axes, *keepdims),
                float_result(inputs[0].1),
            )
        }
        (Family::Reduction, OpArgs::Reduce { axes, keepdims }) => {
            arity(op, inputs.len(), 1)?;
            check_axes(name, axes, inputs[0].0.len())?;
            // Here too, not only where the expression is built (`Tensor::reduce`): a
            // data-dependent length found empty when the next stage is built again must
            // fail, not give the identity (`any`/`all` of such a tensor are counts, see
            // `Tensor::any`).
            let no_identity =
                super::family::reduction::fold(op).is_some_and(|row| !row.monoid.reduces_empty());
            if no_identity && axes.iter().any(|a| inputs[0].0[*a] == 0) {
                return Err(AresError::arg(
                    name,
                    "zero-size array to reduction operation which has no identity",
                ));
            }
            (
                reduced_shape(inputs[0].0, axes, *keepdims),
                reduction_dtype(op, inputs[0].1),
            )
        }
        (Family::Fetch, OpArgs::Deferred(d)) if op == Op::WaitForLength => {
            // Its call checks its inputs when it is made (`tensor::wait`).
            if inputs.is_empty() {
                return Err(AresError::arg(name, "waits for the length of no input"));
            }
            (d.shape.clone(), d.dtype)
        }
        (Family::UserCode, OpArgs::MapBlocks(call)) => call.infer(inputs)?,
        (Family::Linalg, _) if op != Op::Matmul => super::family::linalg::infer(op, args, inputs)?,
        (Family::Fft, _) => super::family::fft::infer(op, args, inputs)?,
        (Family::Linalg, OpArgs::None) => {
            arity(op, inputs.len(), 2)?;
            let shape = super::family::linalg::shape::matmul_shape(inputs[0].0, inputs[1].0)?;
            (shape, inputs[0].1.promote(inputs[1].1))
        }
        (
            Family::Fetch,
            OpArgs::FetchResult {
                shape,
                dtype,
                splits,
                chunks,
                ..
            },
        ) => {
            arity(op, inputs.len(), 0)?;
            let grid: usize = splits.iter().map(|s| s.len()).product();
            let consistent = splits.len() == shape.len()
                && splits
                    .iter()
                    .zip(shape)
                    .all(|(s, n)| s.iter().sum::<usize>() == *n || (*n == 0 && s == &[0]));
            if !consistent || grid != chunks.len() {
                return Err(AresError::arg(
                    name,
                    "chunk layout does not match the shape",
                ));
            }
            (shape.clone(), *dtype)
        }
        (_, OpArgs::Slice(dims)) if op == Op::Slice => {
            arity(op, inputs.len(), 1)?;
            (slice_shape(inputs[0].0, dims)?, inputs[0].1)
        }
        (_, OpArgs::Transpose(perm)) if op == Op::Transpose => {
            arity(op, inputs.len(), 1)?;
            let shape = inputs[0].0;
            let mut seen = vec![false; shape.len()];
            if perm.len() != shape.len()
                || perm
                    .iter()
                    .any(|p| *p >= shape.len() || std::mem::replace(&mut seen[*p], true))
            {
                return Err(AresError::arg(
                    name,
                    format!(
                        "axes {perm:?} are not a permutation of {} dimensions",
                        shape.len()
                    ),
                ));
            }
            (perm.iter().map(|p| shape[*p]).collect(), inputs[0].1)
        }
        (_, OpArgs::Concat { axis }) if op == Op::Concatenate => concat_shape(*axis, inputs)?,
        (_, OpArgs::Rechunk(chunk)) if op == Op::Rechunk => {
            arity(op, inputs.len(), 1)?;
            check_chunk_spec(name, chunk, inputs[0].0)?;
            (inputs[0].0.clone(), inputs[0].1)
        }
        (_, OpArgs::Reshape(shape)) if op == Op::Reshape => {
            arity(op, inputs.len(), 1)?;
            check_shape(name, shape)?;
            if shape.iter().product::<usize>() != inputs[0].0.iter().product::<usize>() {
                return Err(AresError::shape(
                    name,
                    format!(
                        "cannot reshape array of shape {} into shape {}",
                        fmt_shape(inputs[0].0),
                        fmt_shape(shape)
                    ),
                ));
            }
            (shape.clone(), inputs[0].1)
        }
        (_, OpArgs::SelectRanks { ranks }) if op == Op::SelectRanks => {
            arity(op, inputs.len(), 1)?;
            let (len, dtype) =
                super::family::statistics::select::infer(ranks, inputs[0].0, inputs[0].1)?;
            (smallvec::smallvec![len], dtype)
        }
        _ => return infer_data_dependent(op, args, inputs),
    };
    Ok(out)
}

pub use super::family::shuffle::select::infer::infer_data_dependent;

/// Whether `op` takes a complex input (of dtype `d`): the elementwise ops (whose dtype rules
/// refuse what the standard leaves undefined, as `<`), `sum` and `prod` (and `mean`, made of
/// them), data movement, the Fourier transforms, and the factorizations of whole matrices
/// (`dense`). Every other
/// op names the dtype and itself here, before a graph is built, instead of failing in a
/// kernel.
fn check_complex(op: Op, args: &OpArgs, d: DType) -> Result<()> {
    let ok = match op.family() {
        Family::Unary | Family::Binary | Family::Ternary | Family::Fft => true,
        Family::Fuse | Family::Fetch | Family::Combine => true,
        Family::Indexing => true,
        Family::Reduction => matches!(op, Op::Sum | Op::Prod),
        // `x[mask]` moves elements; `matmul` multiplies and adds (`tensordot`, `vecdot`).
        Family::Shuffle | Family::Linalg => {
            matches!(args, OpArgs::Dense(_)) || matches!(op, Op::MaskSelect | Op::Matmul)
        }
        _ => false,
    };
    if ok {
        return Ok(());
    }
    let why = match op {
        Op::Min | Op::Max | Op::Sort | Op::ArgMin | Op::ArgMax | Op::SearchSorted => {
            ": complex numbers have no order"
        }
        _ => " yet",
    };
    Err(AresError::dtype(
        op.name(),
        format!("not supported for a {d} tensor{why}"),
    ))
}

pub fn check_axes(op: &'static str, axes: &[usize], ndim: usize) -> Result<()> {
    for w in axes.windows(2) {
        if w[0] >= w[1] {
            return Err(AresError::arg(
                op,
                format!("axes {axes:?} must be sorted and unique"),
            ));
        }
    }
    if let Some(a) = axes.iter().find(|a| **a >= ndim) {
        return Err(AresError::arg(
            op,
            format!("axis {a} is out of bounds for a tensor of dimension {ndim}"),
        ));
    }
    Ok(())
}

fn slice_shape(shape: &[usize], dims: &[DimIndex]) -> Result<Shape> {
    if dims.len() != shape.len() {
        return Err(AresError::arg(
            "slice",
            format!(
                "{} indices for a tensor of {} dimensions",
                dims.len(),
                shape.len()
            ),
        ));
    }
    let mut out = Shape::new();
    for (d, (idx, len)) in dims.iter().zip(shape).enumerate() {
        match *idx {
            DimIndex::Index(i) if i >= *len => {
                return Err(AresError::arg(
                    "slice",
                    format!("index {i} is out of bounds for axis {d} with size {len}"),
                ))
            }
            DimIndex::Index(_) => {}
            DimIndex::Range {
                start,
                step,
                len: n,
            } => {
                let last = start as i128 + step as i128 * (n as i128 - 1);
                if step == 0 || (n > 0 && (start >= *len || last < 0 || last >= *len as i128)) {
                    return Err(AresError::arg("slice", format!("range {start}:{step}:{n} is out of bounds for axis {d} with size {len}")));
                }
                out.push(n);
            }
        }
    }
    Ok(out)
}

fn concat_shape(axis: usize, inputs: &[(&Shape, DType)]) -> Result<(Shape, DType)> {
    let first = inputs
        .first()
        .ok_or_else(|| AresError::arg("concatenate", "needs at least one tensor"))?;
    if axis >= first.0.len() {
        return Err(AresError::arg(
            "concatenate",
            format!(
                "axis {axis} is out of bounds for dimension {}",
                first.0.len()
            ),
        ));
    }
    let mut shape = first.0.clone();
    let mut dtype = first.1;
    for (s, t) in &inputs[1..] {
        let same = s.len() == shape.len()
            && s.iter()
                .zip(&shape)
                .enumerate()
                .all(|(d, (a, b))| d == axis || a == b);
        if !same {
            return Err(AresError::shape(
                "concatenate",
                format!(
                    "all dimensions but axis {axis} must match: {} vs {}",
                    fmt_shape(first.0),
                    fmt_shape(s)
                ),
            ));
        }
        shape[axis] += s[axis];
        dtype = dtype.promote(*t);
    }
    Ok((shape, dtype))
}
