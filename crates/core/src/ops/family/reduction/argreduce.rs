//! `argmin` / `argmax` along one axis, chunk by chunk.
//!
//! A chunk maps to, for every output position, the pair `(value, index)` of its best
//! element, with `index` global along the axis (the chunk's offset added). Pairs merge by
//! value, the smaller index winning ties, so the first occurrence wins as in NumPy; a NaN
//! beats every number for both functions (NumPy returns the first NaN). Partials keep the
//! input's own dtype (float64, or int64 for integers and bools) in a trailing axis of length
//! 2, so int64 values compare exactly; a float64 index is exact below 2^53 elements.

use crate::array::{ArrayData, DType};
use crate::kernels::{KResult, KernelError};
use crate::ops::Op;
use ndarray::{ArrayD, ArrayView1, Axis, IxDyn};

const VALUE: usize = 0;
const INDEX: usize = 1;

/// Whether `(a, i)` is a better pick than `(b, j)` for `op`.
fn better_f64(op: Op, (a, i): (f64, f64), (b, j): (f64, f64)) -> bool {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => i < j,
        (true, false) => true,
        (false, true) => false,
        _ if a == b => i < j,
        _ if op == Op::ArgMin => a < b,
        _ => a > b,
    }
}

fn better_i64(op: Op, (a, i): (i64, i64), (b, j): (i64, i64)) -> bool {
    match a.cmp(&b) {
        std::cmp::Ordering::Equal => i < j,
        std::cmp::Ordering::Less => op == Op::ArgMin,
        std::cmp::Ordering::Greater => op == Op::ArgMax,
    }
}

fn pairs_shape(shape: &[usize], axis: usize) -> Vec<usize> {
    let mut out = shape.to_vec();
    out[axis] = 1;
    out.push(2);
    out
}

fn pick_lane_f64(op: Op, lane: ArrayView1<'_, f64>, offset: u64) -> (f64, f64) {
    let mut best = (f64::NAN, -1.0);
    for (k, v) in lane.iter().enumerate() {
        let cand = (*v, (offset + k as u64) as f64);
        if best.1 < 0.0 || better_f64(op, cand, best) {
            best = cand;
        }
    }
    best
}

fn pick_lane_i64(op: Op, lane: ArrayView1<'_, i64>, offset: u64) -> (i64, i64) {
    let mut best = (0, -1);
    for (k, v) in lane.iter().enumerate() {
        let cand = (*v, (offset + k as u64) as i64);
        if best.1 < 0 || better_i64(op, cand, best) {
            best = cand;
        }
    }
    best
}

/// The best `(value, global index)` along `axis` of one chunk. An empty lane gives index
/// -1, which every real pick beats.
pub fn map(op: Op, x: &ArrayData, axis: usize, offset: u64) -> KResult<ArrayData> {
    if axis >= x.shape().len() {
        return Err(KernelError(format!(
            "axis {axis} is out of bounds for {:?}",
            x.shape()
        )));
    }
    let shape = IxDyn(&pairs_shape(x.shape(), axis));
    Ok(match x {
        ArrayData::F64(a) => {
            let mut out = ArrayD::<f64>::zeros(shape);
            let picks = a.map_axis(Axis(axis), |lane| pick_lane_f64(op, lane, offset));
            for (mut pair, (v, i)) in out.lanes_mut(Axis(a.ndim())).into_iter().zip(picks) {
                pair[VALUE] = v;
                pair[INDEX] = i;
            }
            ArrayData::F64(out)
        }
        other => {
            let a = match other {
                // uint64 compares as int64 with the sign bit flipped (the same order).
                ArrayData::U64(a) => a.mapv(|v| (v ^ (1 << 63)) as i64),
                other => {
                    let ArrayData::I64(a) = other.clone().cast(DType::I64) else {
                        unreachable!("cast to int64")
                    };
                    a
                }
            };
            let mut out = ArrayD::<i64>::zeros(shape);
            let picks = a.map_axis(Axis(axis), |lane| pick_lane_i64(op, lane, offset));
            for (mut pair, (v, i)) in out.lanes_mut(Axis(a.ndim())).into_iter().zip(picks) {
                pair[VALUE] = v;
                pair[INDEX] = i;
            }
            ArrayData::I64(out)
        }
    })
}

/// Merges partials of one shape.
pub fn combine(op: Op, inputs: &[&ArrayData]) -> KResult<ArrayData> {
    let (first, rest) = inputs
        .split_first()
        .ok_or_else(|| KernelError("combine of no partials".into()))?;
    let mut acc = (*first).clone();
    for part in rest {
        match (&mut acc, part) {
            (ArrayData::F64(a), ArrayData::F64(b)) if a.shape() == b.shape() => {
                let last = Axis(a.ndim() - 1);
                for (mut x, y) in a.lanes_mut(last).into_iter().zip(b.lanes(last)) {
                    let (cand, best) = ((y[VALUE], y[INDEX]), (x[VALUE], x[INDEX]));
                    if cand.1 >= 0.0 && (best.1 < 0.0 || better_f64(op, cand, best)) {
                        x.assign(&y);
                    }
                }
            }
            (ArrayData::I64(a), ArrayData::I64(b)) if a.shape() == b.shape() => {
                let last = Axis(a.ndim() - 1);
                for (mut x, y) in a.lanes_mut(last).into_iter().zip(b.lanes(last)) {
                    let (cand, best) = ((y[VALUE], y[INDEX]), (x[VALUE], x[INDEX]));
                    if cand.1 >= 0 && (best.1 < 0 || better_i64(op, cand, best)) {
                        x.assign(&y);
                    }
                }
            }
            (a, b) => {
                return Err(KernelError(format!(
                    "{op} partials {} {:?} and {} {:?} do not match",
                    a.dtype(),
                    a.shape(),
                    b.dtype(),
                    b.shape()
                )))
            }
        }
    }
    Ok(acc)
}

/// The index field as int64, dropping `axis` unless `keepdims`.
pub fn index(pairs: &ArrayData, axis: usize, keepdims: bool) -> KResult<ArrayData> {
    let idx: ArrayD<i64> = match pairs {
        ArrayData::F64(a) => a.index_axis(Axis(a.ndim() - 1), INDEX).mapv(|i| i as i64),
        ArrayData::I64(a) => a.index_axis(Axis(a.ndim() - 1), INDEX).to_owned(),
        other => return Err(KernelError(format!("{} argmin partials", other.dtype()))),
    };
    Ok(ArrayData::I64(if keepdims {
        idx
    } else {
        idx.index_axis_move(Axis(axis), 0)
    }))
}
