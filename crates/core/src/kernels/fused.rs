//! The fused kernel: one pass over the data for chains of elementwise ops with an optional
//! trailing reduction (the role numexpr plays in Mars).
//!
//! A FUSE node's steps run in order. A run of elementwise steps whose values are float64,
//! float32 or bool (float32 rides as float64, rounded to float32 after each op; bools as
//! 0.0/1.0), optionally followed by `sum`/`prod`/`min`/`max`, is compiled
//! into a list of lane operations and evaluated block by block: each block of input elements
//! is loaded into a small buffer, every operation is applied to the buffer in place, and the
//! buffer is written out or folded into the reduction. Intermediate results never exist as
//! whole arrays. Steps outside such runs (slices, matmul, integer arithmetic) use the
//! ordinary kernels.
//!
//! A FUSE node that starts with a creation step (`FUSE[rand, sum]`, the map side of
//! `mean(rand(...), axis=0)`) streams it: the values are generated block by block into the
//! same buffer (`generate`), so the chunk never exists and a busy slot holds kilobytes, not
//! the chunk. Reductions over some axes fold runs along the last dimension: into one
//! accumulator when that axis is reduced, into a row of accumulators when it is kept.

use super::generate::Stream;
use super::lanes::{run_lane, source, Lane, Source};
use super::{kerr, KResult};
use crate::array::{numel, ArrayData, DType};
use crate::ops::family::reduction::{self, Monoid};
use crate::ops::infer::{
    binary_dtype, broadcast, reduced_shape, reduction_dtype, scalar_binary_dtype,
    scalar_compute_dtype, unary_dtype,
};
use crate::ops::{FuseStep, Op, OpArgs};
use ndarray::{ArrayD, IxDyn};
use smallvec::SmallVec;

/// Elements per block: the buffers stay in L1.
const BLOCK: usize = 2048;

struct Plan {
    lanes: Vec<Lane>,
    reduce: Option<(Monoid, SmallVec<[usize; 4]>, bool)>,
    /// Index of the first step after the segment.
    end: usize,
    out_dtype: DType,
}

fn lane_dtype_ok(d: DType) -> bool {
    matches!(d, DType::F64 | DType::F32 | DType::Bool)
}

/// Plans the longest segment from `start` over inputs of dtypes `ins`. `generated`: the
/// single input is the stream of the creation step just before `start` (it counts as a
/// step of the segment: a creation followed by a lone reduction is worth streaming).
fn plan_segment(
    steps: &[FuseStep],
    start: usize,
    table: &[OpArgs],
    ins: &[DType],
    generated: bool,
) -> Option<Plan> {
    if ins.is_empty() || !ins.iter().all(|d| lane_dtype_ok(*d)) {
        return None;
    }
    let mut lanes = Vec::new();
    let mut cur = ins[0];
    let mut j = start;
    while j < steps.len() && (steps[j].op.is_elementwise() || steps[j].op == Op::Where) {
        let (op, args) = (steps[j].op, &table[steps[j].args.index()]);
        let (lane, out) = match args {
            OpArgs::Cast { dtype: DType::F64 } => (Lane::Nop, DType::F64),
            OpArgs::Cast { dtype: DType::F32 } => (Lane::RoundF32, DType::F32),
            OpArgs::Cast { dtype: DType::Bool } => (Lane::ToBool, DType::Bool),
            OpArgs::Cast { .. } => break,
            OpArgs::Scalar { value, scalar_left } => {
                let (Ok(out), Ok(compute)) = (
                    scalar_binary_dtype(op, cur, *value),
                    scalar_compute_dtype(op, cur, *value),
                ) else {
                    break;
                };
                // A weak Python number meets a float32 array as a float32 (NEP 50).
                let value = match compute {
                    DType::F32 => value.as_f64() as f32 as f64,
                    _ => value.as_f64(),
                };
                let lane = Lane::Scalar {
                    op,
                    value,
                    left: *scalar_left,
                    f32: compute == DType::F32,
                };
                (lane, out)
            }
            OpArgs::None if op.family() == crate::ops::Family::Binary => {
                if j != start || ins.len() != 2 {
                    break;
                }
                match binary_dtype(op, ins[0], ins[1]) {
                    Ok(d) => (Lane::Binary(op, d == DType::F32), d),
                    Err(_) => break,
                }
            }
            // `where(c, x, y)` heads a segment: c (bool) in the buffer, x and y beside it.
            OpArgs::None if op == Op::Where => {
                if j != start || ins.len() != 3 {
                    break;
                }
                (Lane::Select, ins[1].promote(ins[2]))
            }
            _ => match unary_dtype(op, args, cur) {
                Ok(d) => (Lane::Unary(op, d == DType::F32), d),
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
        if out == DType::F32 && !matches!(lane, Lane::RoundF32 | Lane::Nop) {
            lanes.push(Lane::RoundF32);
        }
        cur = out;
        j += 1;
    }
    if lanes.is_empty() && !generated {
        return None;
    }
    let mut reduce = None;
    if let Some(step) = steps.get(j) {
        let fold = reduction::fold(step.op).filter(|row| row.fuses);
        if let (OpArgs::Reduce { axes, keepdims }, Some(row)) = (&table[step.args.index()], fold) {
            reduce = Some((row.monoid, axes.clone(), *keepdims));
            cur = reduction_dtype(step.op, cur);
            j += 1;
        }
    }
    let counted = lanes.len() + reduce.is_some() as usize + generated as usize;
    (counted >= 2).then_some(Plan {
        lanes,
        reduce,
        end: j,
        out_dtype: cur,
    })
}

fn eval_segment(plan: &Plan, ins: &[&ArrayData]) -> KResult<ArrayData> {
    let mut shape: SmallVec<[usize; 4]> = match ins.first() {
        Some(a) => a.shape().into(),
        None => return kerr("fused segment without inputs"),
    };
    for other in &ins[1..] {
        shape = broadcast("fuse", &shape, other.shape())
            .map_err(|e| super::KernelError(e.to_string()))?;
    }
    let first = source(ins[0], &shape)?;
    let beside = ins[1..]
        .iter()
        .map(|a| source(a, &shape))
        .collect::<KResult<Vec<_>>>()?;
    eval_sources(plan, shape, first, beside)
}

fn eval_sources(
    plan: &Plan,
    shape: SmallVec<[usize; 4]>,
    mut first: Source<'_>,
    mut beside: Vec<Source<'_>>,
) -> KResult<ArrayData> {
    let n = numel(&shape);
    let mut buf = vec![0.0f64; BLOCK];
    // The other inputs of the head step (a binary op's second, `where`'s x and y).
    let mut others: Vec<Vec<f64>> = beside.iter().map(|_| vec![0.0f64; BLOCK]).collect();

    let (out_shape, mut acc): (SmallVec<[usize; 4]>, Vec<f64>) = match &plan.reduce {
        None if plan.out_dtype == DType::F32 => (shape.clone(), Vec::new()),
        None => (shape.clone(), Vec::with_capacity(n)),
        Some((monoid, axes, keepdims)) => {
            let init = monoid.identity();
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
    // A float32 result without a reduction is written as float32 directly.
    let mut out32: Vec<f32> = match (&plan.reduce, plan.out_dtype) {
        (None, DType::F32) => Vec::with_capacity(n),
        _ => Vec::new(),
    };
    let mut idx: SmallVec<[usize; 4]> = SmallVec::from_elem(0, shape.len());
    let mut oflat = 0usize;

    let mut off = 0;
    while off < n {
        let len = BLOCK.min(n - off);
        let b = &mut buf[..len];
        first.load(off, b);
        for (src, dst) in beside.iter_mut().zip(&mut others) {
            src.load(off, &mut dst[..len]);
        }
        let views: SmallVec<[&[f64]; 2]> = others.iter().map(|o| &o[..len]).collect();
        for lane in &plan.lanes {
            run_lane(*lane, b, &views);
        }
        match &plan.reduce {
            None if plan.out_dtype == DType::F32 => out32.extend(b.iter().map(|x| *x as f32)),
            None => acc.extend_from_slice(b),
            Some((monoid, axes, _)) if axes.len() == shape.len() => {
                monoid.fold_block(&mut acc[0], b)
            }
            Some((monoid, _, _)) => {
                // Runs along the last dimension: into one accumulator when that axis is
                // reduced, elementwise into a contiguous stretch of them when it is kept (so
                // `sum(axis=0)` of a matrix adds whole rows, vectorized). Each accumulator
                // takes its runs in C order (a run's sum in the partial sums of `monoid::sum`).
                let last = shape.len() - 1;
                let mut pos = 0;
                while pos < len {
                    let run = (shape[last] - idx[last]).min(len - pos);
                    let seg = &b[pos..pos + run];
                    if ostride[last] == 0 {
                        monoid.fold_run(&mut acc[oflat], seg);
                    } else {
                        monoid.fold_lanes(&mut acc[oflat..oflat + run], seg);
                    }
                    pos += run;
                    idx[last] += run;
                    oflat += ostride[last] * run;
                    if idx[last] < shape[last] {
                        continue;
                    }
                    oflat -= ostride[last] * shape[last];
                    idx[last] = 0;
                    for d in (0..last).rev() {
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
        DType::F32 if plan.reduce.is_none() => {
            ArrayData::F32(ArrayD::from_shape_vec(dim, out32).map_err(wrap)?)
        }
        DType::F32 => ArrayData::F32(
            ArrayD::from_shape_vec(dim, acc.iter().map(|x| *x as f32).collect()).map_err(wrap)?,
        ),
        DType::I32 => ArrayData::I32(
            ArrayD::from_shape_vec(dim, acc.iter().map(|x| *x as i32).collect()).map_err(wrap)?,
        ),
        DType::Bool => ArrayData::Bool(
            // Bool lanes hold 0 or 1; an empty reduction leaves its identity, -inf for `max`
            // (any: false) and +inf for `min` (all: true), so compare with 1/2, not with 0.
            ArrayD::from_shape_vec(dim, acc.iter().map(|x| *x > 0.5).collect()).map_err(wrap)?,
        ),
        DType::I64 => ArrayData::I64(
            ArrayD::from_shape_vec(dim, acc.iter().map(|x| *x as i64).collect()).map_err(wrap)?,
        ),
        DType::C64 | DType::C128 => return kerr("a lane segment never computes complex values"),
        d => return kerr(format!("a lane segment never computes {d} values")),
    })
}

/// A fold (a row of the reduction table) of a float32 chunk, streamed block by block through
/// the lane buffer (accumulating in float64) instead of over a float64 copy of the chunk.
pub fn reduce_float32(op: Op, axes: &[usize], keepdims: bool, x: &ArrayData) -> KResult<ArrayData> {
    let Some(row) = reduction::fold(op) else {
        return kerr(format!("{op} is not a reduction"));
    };
    let monoid = row.monoid;
    let plan = Plan {
        lanes: Vec::new(),
        reduce: Some((monoid, axes.iter().copied().collect(), keepdims)),
        end: 0,
        out_dtype: reduction_dtype(op, x.dtype()),
    };
    eval_segment(&plan, &[x])
}

/// Runs the steps of a FUSE node on the head's inputs.
pub fn run_fused(
    steps: &[FuseStep],
    table: &[OpArgs],
    inputs: &[&ArrayData],
) -> KResult<ArrayData> {
    let mut cur: Option<ArrayData> = None;
    let mut i = 0;
    if let Some((out, end)) = streamed_head(steps, table, inputs)? {
        cur = Some(out);
        i = end;
    } else if let Some((out, end)) = generated_operands_whole(steps, table)? {
        cur = Some(out);
        i = end;
    }
    while i < steps.len() {
        let out = {
            let ins: Vec<&ArrayData> = match &cur {
                None => inputs.to_vec(),
                Some(c) => vec![c],
            };
            let dtypes: SmallVec<[DType; 2]> = ins.iter().map(|a| a.dtype()).collect();
            if let Some(plan) = plan_segment(steps, i, table, &dtypes, false) {
                i = plan.end;
                eval_segment(&plan, &ins)?
            } else {
                let step = steps[i];
                i += 1;
                super::apply(
                    step.op,
                    &table[step.args.index()].at(step.position),
                    table,
                    &ins,
                )?
            }
        };
        cur = Some(out);
    }
    cur.ok_or_else(|| super::KernelError("FUSE node without steps".into()))
}

mod head;
use head::{generated_operands_whole, streamed_head};

#[cfg(test)]
mod tests;
