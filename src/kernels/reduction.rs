//! Reduction and combine kernels.
//!
//! A reduction map keeps or drops the reduced axes as its arguments say; `combine` folds
//! same-shaped partials elementwise with the same op and then drops the reduced axes if this
//! is the last level of the tree. `min`/`max` propagate NaN, as numpy does.

use super::elementwise::{fmax, fmin};
use super::{kerr, KResult};
use crate::array::ArrayData;
use crate::ops::Op;
use ndarray::{ArrayD, Axis, IxDyn, Zip};

/// Folds `axes` (ascending) of `a` with `f` from `init`; a reduction never copies its input.
///
/// How each axis is folded matters more than the fold itself: ndarray's `fold_axis` checks
/// shapes and layouts once per sub-array, which is free on a leading axis and ruinous on the
/// last one, where the sub-arrays are single elements (a 1-D int64 `sum` spent 65% of its time
/// there). So every axis at once folds the elements in memory order, the last axis folds each
/// contiguous lane, and only the other axes go through `fold_axis`. The order of the additions
/// along an axis is the same either way.
fn fold_axes<T: Copy>(
    a: &ArrayD<T>,
    axes: &[usize],
    keepdims: bool,
    init: T,
    f: impl Fn(T, T) -> T + Copy,
) -> ArrayD<T> {
    let fold = |acc: T, x: &T| f(acc, *x);
    let mut out = if !axes.is_empty() && axes.len() == a.ndim() {
        let v = match a.as_slice() {
            Some(s) => s.iter().fold(init, fold),
            None => a.iter().fold(init, fold),
        };
        ArrayD::from_elem(IxDyn(&[]), v)
    } else {
        let mut out: Option<ArrayD<T>> = None;
        for &ax in axes.iter().rev() {
            let view = out.as_ref().map_or_else(|| a.view(), |o| o.view());
            out = Some(if ax + 1 == view.ndim() {
                view.map_axis(Axis(ax), |lane| lane.iter().fold(init, fold))
            } else {
                view.fold_axis(Axis(ax), init, |acc, x| f(*acc, *x))
            });
        }
        out.unwrap_or_else(|| a.clone())
    };
    if keepdims {
        for ax in axes {
            out.insert_axis_inplace(Axis(*ax));
        }
    }
    out
}

fn reduce_f64(op: Op, a: &ArrayD<f64>, axes: &[usize], keepdims: bool) -> KResult<ArrayD<f64>> {
    if axes.is_empty() && op == Op::Sum {
        // NumPy starts every sum from the identity +0.0, so -0.0 comes out as +0.0.
        return Ok(a.mapv(|x| 0.0 + x));
    }
    if axes.len() == a.ndim() {
        let v = match op {
            Op::Sum => a.sum(),
            Op::Prod => a.product(),
            // An empty chunk (a zero-length piece of a concatenation) contributes the
            // identity; the tensor-level check refused reductions with no element at all.
            Op::Min => a.iter().copied().fold(f64::INFINITY, fmin),
            Op::Max => a.iter().copied().fold(f64::NEG_INFINITY, fmax),
            _ => return kerr(format!("{op} is not a reduction")),
        };
        let shape: Vec<usize> = if keepdims { vec![1; a.ndim()] } else { vec![] };
        return Ok(ArrayD::from_elem(IxDyn(&shape), v));
    }
    Ok(match op {
        Op::Sum => fold_axes(a, axes, keepdims, 0.0, |x: f64, y: f64| x + y),
        Op::Prod => fold_axes(a, axes, keepdims, 1.0, |x: f64, y: f64| x * y),
        Op::Min => fold_axes(a, axes, keepdims, f64::INFINITY, fmin),
        Op::Max => fold_axes(a, axes, keepdims, f64::NEG_INFINITY, fmax),
        _ => return kerr(format!("{op} is not a reduction")),
    })
}

fn reduce_i64(op: Op, a: &ArrayD<i64>, axes: &[usize], keepdims: bool) -> KResult<ArrayD<i64>> {
    Ok(match op {
        Op::Sum => fold_axes(a, axes, keepdims, 0i64, i64::wrapping_add),
        Op::Prod => fold_axes(a, axes, keepdims, 1i64, i64::wrapping_mul),
        Op::Min => fold_axes(a, axes, keepdims, i64::MAX, i64::min),
        Op::Max => fold_axes(a, axes, keepdims, i64::MIN, i64::max),
        _ => return kerr(format!("{op} is not a reduction")),
    })
}

fn reduce_bool(op: Op, a: &ArrayD<bool>, axes: &[usize], keepdims: bool) -> KResult<ArrayD<bool>> {
    Ok(match op {
        Op::Min => fold_axes(a, axes, keepdims, true, |x: bool, y: bool| x & y),
        Op::Max => fold_axes(a, axes, keepdims, false, |x: bool, y: bool| x | y),
        _ => return kerr(format!("{op} is not defined on bool")),
    })
}

pub fn reduce(op: Op, a: &ArrayData, axes: &[usize], keepdims: bool) -> KResult<ArrayData> {
    Ok(match a {
        ArrayData::F64(x) => ArrayData::F64(reduce_f64(op, x, axes, keepdims)?),
        ArrayData::I64(x) => ArrayData::I64(reduce_i64(op, x, axes, keepdims)?),
        ArrayData::Bool(x) if matches!(op, Op::Sum | Op::Prod) => {
            ArrayData::I64(reduce_i64(op, &x.mapv(|v| v as i64), axes, keepdims)?)
        }
        ArrayData::Bool(x) => ArrayData::Bool(reduce_bool(op, x, axes, keepdims)?),
    })
}

/// Running sum or product along `axis` inside one chunk (bools count as int64, as in NumPy);
/// tiling adds the carry of the chunks before it.
pub fn scan(op: Op, a: &ArrayData, axis: usize) -> KResult<ArrayData> {
    if axis >= a.shape().len() {
        return kerr(format!(
            "axis {axis} is out of bounds for a chunk of {:?}",
            a.shape()
        ));
    }
    let ax = Axis(axis);
    let sum = op == Op::CumSum;
    Ok(match a.clone() {
        ArrayData::F64(mut x) => {
            x.accumulate_axis_inplace(ax, |p, c| *c = if sum { *p + *c } else { *p * *c });
            ArrayData::F64(x)
        }
        other => {
            let ArrayData::I64(mut x) = other.cast(crate::array::DType::I64) else {
                unreachable!("cast to int64")
            };
            x.accumulate_axis_inplace(ax, |p, c| {
                *c = if sum {
                    p.wrapping_add(*c)
                } else {
                    p.wrapping_mul(*c)
                }
            });
            ArrayData::I64(x)
        }
    })
}

fn fold_into<T: Copy>(acc: &mut ArrayD<T>, x: &ArrayD<T>, f: impl Fn(T, T) -> T) -> KResult<()> {
    if acc.shape() != x.shape() {
        return kerr(format!(
            "partials have different shapes {:?} and {:?}",
            acc.shape(),
            x.shape()
        ));
    }
    Zip::from(acc).and(x).for_each(|a, b| *a = f(*a, *b));
    Ok(())
}

/// Folds partials with `op`, then removes `axes` unless `keepdims`.
pub fn combine(
    op: Op,
    inputs: &[&ArrayData],
    axes: &[usize],
    keepdims: bool,
) -> KResult<ArrayData> {
    let Some(first) = inputs.first() else {
        return kerr("combine of no partials");
    };
    let mut acc = (*first).clone();
    for x in &inputs[1..] {
        match (&mut acc, x) {
            (ArrayData::F64(a), ArrayData::F64(b)) => match op {
                Op::Sum => fold_into(a, b, |p, q| p + q)?,
                Op::Prod => fold_into(a, b, |p, q| p * q)?,
                Op::Min => fold_into(a, b, fmin)?,
                _ => fold_into(a, b, fmax)?,
            },
            (ArrayData::I64(a), ArrayData::I64(b)) => match op {
                Op::Sum => fold_into(a, b, i64::wrapping_add)?,
                Op::Prod => fold_into(a, b, i64::wrapping_mul)?,
                Op::Min => fold_into(a, b, i64::min)?,
                _ => fold_into(a, b, i64::max)?,
            },
            (ArrayData::Bool(a), ArrayData::Bool(b)) => match op {
                Op::Min => fold_into(a, b, |p, q| p & q)?,
                _ => fold_into(a, b, |p, q| p | q)?,
            },
            (a, b) => {
                return kerr(format!(
                    "partials of different dtypes {} and {}",
                    a.dtype(),
                    b.dtype()
                ))
            }
        }
    }
    if keepdims || axes.is_empty() {
        return Ok(acc);
    }
    let shape: Vec<usize> = acc
        .shape()
        .iter()
        .enumerate()
        .filter(|(d, _)| !axes.contains(d))
        .map(|(_, n)| *n)
        .collect();
    Ok(crate::map_array!(acc, |a| a
        .into_shape_with_order(IxDyn(&shape))
        .map_err(|e| super::KernelError(format!(
            "cannot drop reduced axes: {e}"
        )))?))
}
