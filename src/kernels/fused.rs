//! The fused kernel: one pass over the data for chains of elementwise ops with an optional
//! trailing reduction (the role numexpr plays in Mars).
//!
//! A FUSE node's steps run in order. A run of elementwise steps whose values are float64 or
//! bool (bools ride as 0.0/1.0), optionally followed by `sum`/`prod`/`min`/`max`, is compiled
//! into a list of lane operations and evaluated block by block: each block of input elements
//! is loaded into a small buffer, every operation is applied to the buffer in place, and the
//! buffer is written out or folded into the reduction. Intermediate results never exist as
//! whole arrays. Steps outside such runs (slices, matmul, int64 arithmetic) use the ordinary
//! kernels.

use super::elementwise::{fmax, fmin};
use super::{kerr, KResult};
use crate::array::{numel, ArrayData, DType};
use crate::ops::{FuseStep, Op, OpArgs};
use crate::tensor::infer::{binary_dtype, broadcast, reduced_shape, reduction_dtype, unary_dtype};
use ndarray::{ArrayD, IxDyn};
use smallvec::SmallVec;
use std::borrow::Cow;

/// Elements per block: the buffers stay in L1.
const BLOCK: usize = 2048;

#[derive(Clone, Copy, Debug)]
enum Lane {
    Unary(Op),
    Scalar {
        op: Op,
        value: f64,
        left: bool,
    },
    /// A binary op on the segment's two inputs (head only).
    Binary(Op),
    ToBool,
    Nop,
}

struct Plan {
    lanes: Vec<Lane>,
    reduce: Option<(Op, SmallVec<[usize; 4]>, bool)>,
    /// Index of the first step after the segment.
    end: usize,
    out_dtype: DType,
}

fn lane_dtype_ok(d: DType) -> bool {
    matches!(d, DType::F64 | DType::Bool)
}

fn plan_segment(
    steps: &[FuseStep],
    start: usize,
    table: &[OpArgs],
    ins: &[&ArrayData],
) -> Option<Plan> {
    if ins.is_empty() || !ins.iter().all(|a| lane_dtype_ok(a.dtype())) {
        return None;
    }
    let mut lanes = Vec::new();
    let mut cur = ins[0].dtype();
    let mut j = start;
    while j < steps.len() && steps[j].op.is_elementwise() {
        let (op, args) = (steps[j].op, &table[steps[j].args.index()]);
        let (lane, out) = match args {
            OpArgs::Cast { dtype: DType::F64 } => (Lane::Nop, DType::F64),
            OpArgs::Cast { dtype: DType::Bool } => (Lane::ToBool, DType::Bool),
            OpArgs::Cast { .. } => break,
            OpArgs::Scalar { value, scalar_left } => {
                let lane = Lane::Scalar {
                    op,
                    value: value.as_f64(),
                    left: *scalar_left,
                };
                match binary_dtype(op, cur, value.dtype()) {
                    Ok(d) => (lane, d),
                    Err(_) => break,
                }
            }
            OpArgs::None if op.family() == crate::ops::Family::Binary => {
                if j != start || ins.len() != 2 {
                    break;
                }
                match binary_dtype(op, ins[0].dtype(), ins[1].dtype()) {
                    Ok(d) => (Lane::Binary(op), d),
                    Err(_) => break,
                }
            }
            _ => match unary_dtype(op, args, cur) {
                Ok(d) => (Lane::Unary(op), d),
                Err(_) => break,
            },
        };
        if !lane_dtype_ok(out) {
            break;
        }
        lanes.push(lane);
        if out == DType::Bool && op == Op::Add {
            // bool + bool is logical or: 1 + 1 must read back as 1.
            lanes.push(Lane::ToBool);
        }
        cur = out;
        j += 1;
    }
    if lanes.is_empty() {
        return None;
    }
    let mut reduce = None;
    if let Some(step) = steps.get(j) {
        if let OpArgs::Reduce { axes, keepdims } = &table[step.args.index()] {
            reduce = Some((step.op, axes.clone(), *keepdims));
            cur = reduction_dtype(step.op, cur);
            j += 1;
        }
    }
    (lanes.len() + reduce.is_some() as usize >= 2).then_some(Plan {
        lanes,
        reduce,
        end: j,
        out_dtype: cur,
    })
}

/// An input as a contiguous f64 or bool slice of the segment's full shape.
enum Source<'a> {
    F64(Cow<'a, [f64]>),
    Bool(Cow<'a, [bool]>),
}

impl Source<'_> {
    fn load(&self, off: usize, dst: &mut [f64]) {
        match self {
            Source::F64(s) => dst.copy_from_slice(&s[off..off + dst.len()]),
            Source::Bool(s) => {
                let n = dst.len();
                for (d, b) in dst.iter_mut().zip(&s[off..off + n]) {
                    *d = *b as u8 as f64;
                }
            }
        }
    }
}

fn contiguous<'a, T: Clone>(a: &'a ArrayD<T>, shape: &[usize]) -> KResult<Cow<'a, [T]>> {
    if a.shape() == shape {
        if let Some(s) = a.as_slice() {
            return Ok(Cow::Borrowed(s));
        }
    }
    let view = a
        .broadcast(IxDyn(shape))
        .ok_or_else(|| super::KernelError("operands cannot be broadcast".into()))?;
    Ok(Cow::Owned(view.iter().cloned().collect()))
}

fn source<'a>(a: &'a ArrayData, shape: &[usize]) -> KResult<Source<'a>> {
    Ok(match a {
        ArrayData::F64(x) => Source::F64(contiguous(x, shape)?),
        ArrayData::Bool(x) => Source::Bool(contiguous(x, shape)?),
        ArrayData::I64(_) => return kerr("int64 input in a float lane segment"),
    })
}

#[inline]
fn map1(buf: &mut [f64], f: impl Fn(f64) -> f64) {
    for x in buf {
        *x = f(*x);
    }
}

#[inline]
fn map2(buf: &mut [f64], other: &[f64], f: impl Fn(f64, f64) -> f64) {
    for (x, y) in buf.iter_mut().zip(other) {
        *x = f(*x, *y);
    }
}

/// Expands `$body` once per binary op with `$f` bound to that op's closure, so every loop is
/// monomorphic and inlined.
macro_rules! with_binary {
    ($op:expr, $f:ident => $body:expr) => {
        match $op {
            Op::Add => {
                let $f = |x: f64, y: f64| x + y;
                $body
            }
            Op::Sub => {
                let $f = |x: f64, y: f64| x - y;
                $body
            }
            Op::Mul => {
                let $f = |x: f64, y: f64| x * y;
                $body
            }
            Op::Div => {
                let $f = |x: f64, y: f64| x / y;
                $body
            }
            Op::Pow => {
                let $f = f64::powf;
                $body
            }
            Op::Maximum => {
                let $f = fmax;
                $body
            }
            Op::Minimum => {
                let $f = fmin;
                $body
            }
            Op::Eq => {
                let $f = |x: f64, y: f64| (x == y) as u8 as f64;
                $body
            }
            Op::Ne => {
                let $f = |x: f64, y: f64| (x != y) as u8 as f64;
                $body
            }
            Op::Lt => {
                let $f = |x: f64, y: f64| (x < y) as u8 as f64;
                $body
            }
            Op::Le => {
                let $f = |x: f64, y: f64| (x <= y) as u8 as f64;
                $body
            }
            Op::Gt => {
                let $f = |x: f64, y: f64| (x > y) as u8 as f64;
                $body
            }
            _ => {
                let $f = |x: f64, y: f64| (x >= y) as u8 as f64;
                $body
            }
        }
    };
}

fn run_lane(lane: Lane, buf: &mut [f64], other: &[f64]) {
    match lane {
        Lane::Nop => {}
        Lane::ToBool => map1(buf, |x| (x != 0.0) as u8 as f64),
        Lane::Unary(op) => match op {
            Op::Neg => map1(buf, |x| -x),
            Op::Abs => map1(buf, f64::abs),
            Op::Sqrt => map1(buf, f64::sqrt),
            Op::Exp => map1(buf, f64::exp),
            Op::Log => map1(buf, f64::ln),
            Op::Sin => map1(buf, f64::sin),
            Op::Cos => map1(buf, f64::cos),
            Op::IsNan => map1(buf, |x| x.is_nan() as u8 as f64),
            Op::IsInf => map1(buf, |x| x.is_infinite() as u8 as f64),
            Op::IsFinite => map1(buf, |x| x.is_finite() as u8 as f64),
            other => unreachable!("{other} is not planned as a lane"),
        },
        Lane::Binary(op) => with_binary!(op, f => map2(buf, other, f)),
        Lane::Scalar {
            op,
            value,
            left: false,
        } => with_binary!(op, f => map1(buf, |x| f(x, value))),
        Lane::Scalar {
            op,
            value,
            left: true,
        } => with_binary!(op, f => map1(buf, |x| f(value, x))),
    }
}

fn eval_segment(plan: &Plan, ins: &[&ArrayData]) -> KResult<ArrayData> {
    let shape: SmallVec<[usize; 4]> = match ins {
        [a, b] => broadcast("fuse", a.shape(), b.shape())
            .map_err(|e| super::KernelError(e.to_string()))?,
        [a, ..] => a.shape().into(),
        [] => return kerr("fused segment without inputs"),
    };
    let n = numel(&shape);
    let first = source(ins[0], &shape)?;
    let second = if ins.len() == 2 {
        Some(source(ins[1], &shape)?)
    } else {
        None
    };
    let mut buf = vec![0.0f64; BLOCK];
    let mut buf2 = vec![0.0f64; if second.is_some() { BLOCK } else { 0 }];

    let (out_shape, mut acc): (SmallVec<[usize; 4]>, Vec<f64>) = match &plan.reduce {
        None => (shape.clone(), Vec::with_capacity(n)),
        Some((op, axes, keepdims)) => {
            let init = match op {
                Op::Sum => 0.0,
                Op::Prod => 1.0,
                Op::Min => f64::INFINITY,
                _ => f64::NEG_INFINITY,
            };
            let os = reduced_shape(&shape, axes, *keepdims);
            let len = numel(&os);
            (os, vec![init; len])
        }
    };
    // Stride in the accumulator for each input dimension (0 along reduced axes).
    let ostride: SmallVec<[usize; 4]> = match &plan.reduce {
        Some((_, axes, _)) if axes.len() < shape.len() => {
            let kept: SmallVec<[usize; 4]> = reduced_shape(&shape, axes, true);
            let mut strides: SmallVec<[usize; 4]> = SmallVec::from_elem(0, shape.len());
            let mut s = 1;
            for d in (0..shape.len()).rev() {
                strides[d] = if axes.contains(&d) { 0 } else { s };
                s *= kept[d];
            }
            strides
        }
        _ => SmallVec::new(),
    };
    let mut idx: SmallVec<[usize; 4]> = SmallVec::from_elem(0, shape.len());
    let mut oflat = 0usize;

    let mut off = 0;
    while off < n {
        let len = BLOCK.min(n - off);
        let b = &mut buf[..len];
        first.load(off, b);
        if let Some(s) = &second {
            s.load(off, &mut buf2[..len]);
        }
        for lane in &plan.lanes {
            run_lane(*lane, b, &buf2[..buf2.len().min(len)]);
        }
        match &plan.reduce {
            None => acc.extend_from_slice(b),
            Some((op, axes, _)) if axes.len() == shape.len() => {
                let v = match op {
                    Op::Sum => b.iter().sum::<f64>(),
                    Op::Prod => b.iter().product::<f64>(),
                    Op::Min => b.iter().copied().fold(f64::INFINITY, fmin),
                    _ => b.iter().copied().fold(f64::NEG_INFINITY, fmax),
                };
                acc[0] = match op {
                    Op::Sum => acc[0] + v,
                    Op::Prod => acc[0] * v,
                    Op::Min => fmin(acc[0], v),
                    _ => fmax(acc[0], v),
                };
            }
            Some((op, _, _)) => {
                for v in b.iter() {
                    let a = &mut acc[oflat];
                    *a = match op {
                        Op::Sum => *a + v,
                        Op::Prod => *a * v,
                        Op::Min => fmin(*a, *v),
                        _ => fmax(*a, *v),
                    };
                    for d in (0..shape.len()).rev() {
                        idx[d] += 1;
                        oflat += ostride[d];
                        if idx[d] < shape[d] {
                            break;
                        }
                        oflat -= ostride[d] * shape[d];
                        idx[d] = 0;
                    }
                }
            }
        }
        off += len;
    }
    let dim = IxDyn(&out_shape);
    let wrap = |e: ndarray::ShapeError| super::KernelError(format!("fused output shape: {e}"));
    Ok(match plan.out_dtype {
        DType::F64 => ArrayData::F64(ArrayD::from_shape_vec(dim, acc).map_err(wrap)?),
        DType::Bool => ArrayData::Bool(
            // Bool lanes hold 0 or 1; an empty reduction leaves its identity, -inf for `max`
            // (any: false) and +inf for `min` (all: true), so compare with 1/2, not with 0.
            ArrayD::from_shape_vec(dim, acc.iter().map(|x| *x > 0.5).collect()).map_err(wrap)?,
        ),
        DType::I64 => ArrayData::I64(
            ArrayD::from_shape_vec(dim, acc.iter().map(|x| *x as i64).collect()).map_err(wrap)?,
        ),
    })
}

/// Runs the steps of a FUSE node on the head's inputs.
pub fn run_fused(
    steps: &[FuseStep],
    table: &[OpArgs],
    inputs: &[&ArrayData],
) -> KResult<ArrayData> {
    let mut cur: Option<ArrayData> = None;
    let mut i = 0;
    while i < steps.len() {
        let out = {
            let ins: Vec<&ArrayData> = match &cur {
                None => inputs.to_vec(),
                Some(c) => vec![c],
            };
            if let Some(plan) = plan_segment(steps, i, table, &ins) {
                i = plan.end;
                eval_segment(&plan, &ins)?
            } else {
                let step = steps[i];
                i += 1;
                super::apply(step.op, &table[step.args.index()], table, &ins)?
            }
        };
        cur = Some(out);
    }
    cur.ok_or_else(|| super::KernelError("FUSE node without steps".into()))
}
