//! Creation functions: random, constant and range tensors.
//!
//! Every creation op takes a chunk size, one number for all dimensions or one per dimension;
//! the last chunk of a dimension may be smaller. Random tensors take a seed; `None` draws
//! one from the OS so that two unseeded calls differ, as in numpy.

use crate::array::{DType, Scalar, Shape};
use crate::error::{AresError, Result};
use crate::ops::{ChunkSpec, Fill, Op, OpArgs};
use crate::tensor::Tensor;

impl From<usize> for ChunkSpec {
    fn from(c: usize) -> Self {
        ChunkSpec::Uniform(c)
    }
}

impl From<&[usize]> for ChunkSpec {
    fn from(c: &[usize]) -> Self {
        ChunkSpec::PerDim(c.iter().copied().collect())
    }
}

impl<const N: usize> From<[usize; N]> for ChunkSpec {
    fn from(c: [usize; N]) -> Self {
        ChunkSpec::PerDim(c.iter().copied().collect())
    }
}

/// Default chunking: about 2^20 elements per chunk, split evenly over dimensions.
pub fn auto_chunk(shape: &[usize]) -> ChunkSpec {
    const TARGET: f64 = (1u64 << 20) as f64;
    if shape.is_empty() {
        return ChunkSpec::Uniform(1);
    }
    let per_dim = TARGET.powf(1.0 / shape.len() as f64).floor().max(1.0) as usize;
    ChunkSpec::Uniform(per_dim)
}

fn create(op: Op, fill: Fill, shape: &[usize], chunk: ChunkSpec) -> Result<Tensor> {
    let shape: Shape = shape.iter().copied().collect();
    let chunk = Box::new(chunk);
    Tensor::new(op, OpArgs::Create { fill, shape, chunk }, vec![])
}

fn seed_or_random(seed: Option<u64>) -> u64 {
    seed.unwrap_or_else(rand::random)
}

/// Uniform samples in [0, 1).
pub fn rand(shape: &[usize], chunk: impl Into<ChunkSpec>, seed: Option<u64>) -> Result<Tensor> {
    create(
        Op::Rand,
        Fill::Uniform {
            seed: seed_or_random(seed),
        },
        shape,
        chunk.into(),
    )
}

/// Standard normal samples.
pub fn randn(shape: &[usize], chunk: impl Into<ChunkSpec>, seed: Option<u64>) -> Result<Tensor> {
    create(
        Op::Randn,
        Fill::Normal {
            seed: seed_or_random(seed),
        },
        shape,
        chunk.into(),
    )
}

pub fn full(shape: &[usize], value: Scalar, chunk: impl Into<ChunkSpec>) -> Result<Tensor> {
    create(Op::Full, Fill::Const { value }, shape, chunk.into())
}

pub fn zeros(shape: &[usize], chunk: impl Into<ChunkSpec>) -> Result<Tensor> {
    full(shape, Scalar::F64(0.0), chunk)
}

pub fn ones(shape: &[usize], chunk: impl Into<ChunkSpec>) -> Result<Tensor> {
    full(shape, Scalar::F64(1.0), chunk)
}

/// `start, start + step, ...` below `stop` (above, for a negative step), as numpy's arange.
pub fn arange(
    start: Scalar,
    stop: Scalar,
    step: Scalar,
    chunk: impl Into<ChunkSpec>,
) -> Result<Tensor> {
    let (start, _, step, n) = arange_len(start, stop, step)?;
    // NumPy fills a float range with `start + i * delta`, `delta = (start + step) - start`.
    let step = match (start, step) {
        (Scalar::F64(a), Scalar::F64(s)) => Scalar::F64((a + s) - a),
        _ => step,
    };
    let fill = Fill::Range {
        start,
        step,
        offset: 0,
        end: None,
    };
    create(Op::Arange, fill, &[n], chunk.into())
}

/// `arange`'s arguments in its dtype (NumPy: float64 as soon as one of the three is a float,
/// int64 otherwise) and its length, exact for integers.
pub fn arange_len(
    start: Scalar,
    stop: Scalar,
    step: Scalar,
) -> Result<(Scalar, Scalar, Scalar, usize)> {
    let float = [start, stop, step].iter().any(|v| v.dtype() == DType::F64);
    let (start, stop, step) = if float {
        let f = |v: Scalar| Scalar::F64(v.as_f64());
        (f(start), f(stop), f(step))
    } else {
        let i = |v: Scalar| Scalar::I64(v.as_i64());
        (i(start), i(stop), i(step))
    };
    let bad = || {
        AresError::arg(
            "arange",
            format!("start {start}, stop {stop} and step {step} must be finite, step non-zero"),
        )
    };
    let n: f64 = match (start, stop, step) {
        (Scalar::I64(_), Scalar::I64(_), Scalar::I64(0)) => return Err(bad()),
        (Scalar::I64(a), Scalar::I64(b), Scalar::I64(s)) => {
            let (span, s) = (b as i128 - a as i128, s as i128);
            (if span != 0 && (span > 0) == (s > 0) {
                (span.abs() + s.abs() - 1) / s.abs()
            } else {
                0
            }) as f64
        }
        _ => {
            let (a, b, s) = (start.as_f64(), stop.as_f64(), step.as_f64());
            if s == 0.0 || !s.is_finite() || !a.is_finite() || !b.is_finite() {
                return Err(bad());
            }
            ((b - a) / s).ceil().max(0.0)
        }
    };
    if n > (1u64 << 48) as f64 {
        return Err(AresError::shape(
            "arange",
            format!("{n} elements exceed the limit of 2^48"),
        ));
    }
    Ok((start, stop, step, n as usize))
}

/// `num` evenly spaced samples from `start` to `stop` inclusive.
pub fn linspace(start: f64, stop: f64, num: usize, chunk: impl Into<ChunkSpec>) -> Result<Tensor> {
    linspace_endpoint(start, stop, num, true, chunk)
}

/// `numpy.linspace` with `endpoint`: without it, `stop` itself is left out.
pub fn linspace_endpoint(
    start: f64,
    stop: f64,
    num: usize,
    endpoint: bool,
    chunk: impl Into<ChunkSpec>,
) -> Result<Tensor> {
    if !start.is_finite() || !stop.is_finite() {
        return Err(AresError::arg("linspace", "start and stop must be finite"));
    }
    let div = if endpoint { num.saturating_sub(1) } else { num };
    let step = if div > 0 {
        (stop - start) / div as f64
    } else {
        0.0
    };
    let fill = Fill::Range {
        start: Scalar::F64(start),
        step: Scalar::F64(step),
        offset: 0,
        end: (endpoint && num > 1).then(|| ((num - 1) as u64, Scalar::F64(stop))),
    };
    create(Op::Linspace, fill, &[num], chunk.into())
}
