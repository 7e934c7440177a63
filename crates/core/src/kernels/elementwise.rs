//! Elementwise kernels with numpy broadcasting and dtype promotion.
//!
//! Operands are first converted to the dtype the op computes in (the result's float dtype for
//! division and the math functions, the promoted dtype otherwise, int64 for arithmetic on
//! bools), then mapped with one monomorphic closure per op so the loops vectorize. float32
//! and int32 have loops of their own: `float32 * float32` rounds as NumPy's does, and int32
//! arithmetic wraps at 32 bits.

use super::{kerr, KResult};
use crate::array::{ArrayData, DType, Scalar};
use crate::ops::infer;
use crate::ops::{Op, OpArgs};
use ndarray::{ArrayD, IxDyn, Zip};
use std::borrow::Cow;

/// numpy's `maximum`/`minimum` propagate NaN.
#[inline]
pub fn fmax(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.max(y)
    }
}

#[inline]
pub fn fmin(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.min(y)
    }
}

fn cast_cow(a: &ArrayData, dtype: DType) -> Cow<'_, ArrayData> {
    if a.dtype() == dtype {
        Cow::Borrowed(a)
    } else {
        Cow::Owned(a.clone().cast(dtype))
    }
}

pub fn unary(op: Op, args: &OpArgs, a: &ArrayData) -> KResult<ArrayData> {
    let out =
        infer::unary_dtype(op, args, a.dtype()).map_err(|e| super::KernelError(e.to_string()))?;
    Ok(match (op, a) {
        (Op::AsType, _) => a.clone().cast(out),
        (Op::Neg, ArrayData::I64(x)) => ArrayData::I64(x.mapv(i64::wrapping_neg)),
        (Op::Neg, ArrayData::I32(x)) => ArrayData::I32(x.mapv(i32::wrapping_neg)),
        (Op::Neg, ArrayData::F64(x)) => ArrayData::F64(x.mapv(|v| -v)),
        (Op::Neg, ArrayData::F32(x)) => ArrayData::F32(x.mapv(|v| -v)),
        (Op::Abs, ArrayData::I64(x)) => ArrayData::I64(x.mapv(i64::wrapping_abs)),
        (Op::Abs, ArrayData::I32(x)) => ArrayData::I32(x.mapv(i32::wrapping_abs)),
        (Op::Abs, ArrayData::F64(x)) => ArrayData::F64(x.mapv(f64::abs)),
        (Op::Abs, ArrayData::F32(x)) => ArrayData::F32(x.mapv(f32::abs)),
        (Op::Abs, ArrayData::Bool(x)) => ArrayData::Bool(x.clone()),
        (Op::Invert, ArrayData::I64(x)) => ArrayData::I64(x.mapv(|v| !v)),
        (Op::Invert, ArrayData::I32(x)) => ArrayData::I32(x.mapv(|v| !v)),
        (Op::Invert, ArrayData::Bool(x)) => ArrayData::Bool(x.mapv(|v| !v)),
        (Op::IsNan, ArrayData::F64(x)) => ArrayData::Bool(x.mapv(f64::is_nan)),
        (Op::IsInf, ArrayData::F64(x)) => ArrayData::Bool(x.mapv(f64::is_infinite)),
        (Op::IsFinite, ArrayData::F64(x)) => ArrayData::Bool(x.mapv(f64::is_finite)),
        (Op::IsNan, ArrayData::F32(x)) => ArrayData::Bool(x.mapv(f32::is_nan)),
        (Op::IsInf, ArrayData::F32(x)) => ArrayData::Bool(x.mapv(f32::is_infinite)),
        (Op::IsFinite, ArrayData::F32(x)) => ArrayData::Bool(x.mapv(f32::is_finite)),
        // Integers and bools are always finite numbers.
        (Op::IsNan | Op::IsInf | Op::IsFinite, _) => {
            ArrayData::Bool(ArrayD::from_elem(IxDyn(a.shape()), op == Op::IsFinite))
        }
        // float32 math in float64, rounded once: the fused kernel's values exactly (and
        // correctly rounded but for the rarest cases; the square root always).
        (Op::Sqrt | Op::Exp | Op::Log | Op::Sin | Op::Cos, ArrayData::F32(x)) => {
            let via = |f: fn(f64) -> f64| x.mapv(|v| f(v as f64) as f32);
            ArrayData::F32(match op {
                Op::Sqrt => x.mapv(f32::sqrt),
                Op::Exp => via(f64::exp),
                Op::Log => via(f64::ln),
                Op::Sin => via(f64::sin),
                _ => via(f64::cos),
            })
        }
        (Op::Sqrt | Op::Exp | Op::Log | Op::Sin | Op::Cos, _) => {
            let x = cast_cow(a, DType::F64);
            let ArrayData::F64(x) = x.as_ref() else {
                unreachable!("cast to f64")
            };
            ArrayData::F64(match op {
                Op::Sqrt => x.mapv(f64::sqrt),
                Op::Exp => x.mapv(f64::exp),
                Op::Log => x.mapv(f64::ln),
                Op::Sin => x.mapv(f64::sin),
                _ => x.mapv(f64::cos),
            })
        }
        _ => return kerr(format!("{op} is not defined for {}", a.dtype())),
    })
}

/// The dtype both operands are converted to before the op runs: the result dtype, except
/// that comparisons run in the promoted dtype and division in float64.
fn compute_dtype(op: Op, a: DType, b: DType) -> KResult<DType> {
    if op.is_comparison() {
        return Ok(a.promote(b));
    }
    infer::binary_dtype(op, a, b).map_err(|e| super::KernelError(e.to_string()))
}

fn zip_map<A: Copy, B: Copy, O>(
    a: &ArrayD<A>,
    b: &ArrayD<B>,
    f: impl Fn(A, B) -> O,
) -> KResult<ArrayD<O>> {
    if a.shape() == b.shape() {
        return Ok(Zip::from(a).and(b).map_collect(|x, y| f(*x, *y)));
    }
    let shape = infer::broadcast("elementwise", a.shape(), b.shape())
        .map_err(|e| super::KernelError(e.to_string()))?;
    let (av, bv) = match (a.broadcast(IxDyn(&shape)), b.broadcast(IxDyn(&shape))) {
        (Some(x), Some(y)) => (x, y),
        _ => return kerr("operands cannot be broadcast"),
    };
    Ok(Zip::from(&av).and(&bv).map_collect(|x, y| f(*x, *y)))
}

/// `p ** q` for `q >= 0` modulo 2^64, as NumPy's int64 power (square and multiply over the
/// whole exponent, so exponents past `u32::MAX` wrap like NumPy's too).
fn wrapping_pow_i64(p: i64, q: i64) -> i64 {
    let (mut base, mut exp, mut acc) = (p, q as u64, 1i64);
    while exp > 0 {
        if exp & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exp >>= 1;
    }
    acc
}

/// int32 power modulo 2^32: the int64 power's low half (multiplication modulo 2^64 keeps
/// every product's residue modulo 2^32).
fn wrapping_pow_i32(p: i32, q: i32) -> i32 {
    wrapping_pow_i64(p as i64, q as i64) as i32
}

/// float32 power in float64, rounded once (as the fused kernel computes it).
fn powf32(x: f32, y: f32) -> f32 {
    (x as f64).powf(y as f64) as f32
}

/// `maximum`/`minimum` of float32, NaN-propagating like [`fmax`].
fn fmax32(x: f32, y: f32) -> f32 {
    fmax(x as f64, y as f64) as f32
}

fn fmin32(x: f32, y: f32) -> f32 {
    fmin(x as f64, y as f64) as f32
}

macro_rules! numeric_op {
    ($op:expr, $a:expr, $b:expr, $wrap:ident, $add:expr, $sub:expr, $mul:expr, $pow:expr, $max:expr, $min:expr) => {
        match $op {
            Op::Add => ArrayData::$wrap(zip_map($a, $b, $add)?),
            Op::Sub => ArrayData::$wrap(zip_map($a, $b, $sub)?),
            Op::Mul | Op::Div => ArrayData::$wrap(zip_map($a, $b, $mul)?),
            Op::Pow => ArrayData::$wrap(zip_map($a, $b, $pow)?),
            Op::Maximum => ArrayData::$wrap(zip_map($a, $b, $max)?),
            Op::Minimum => ArrayData::$wrap(zip_map($a, $b, $min)?),
            Op::Eq => ArrayData::Bool(zip_map($a, $b, |x, y| x == y)?),
            Op::Ne => ArrayData::Bool(zip_map($a, $b, |x, y| x != y)?),
            Op::Lt => ArrayData::Bool(zip_map($a, $b, |x, y| x < y)?),
            Op::Le => ArrayData::Bool(zip_map($a, $b, |x, y| x <= y)?),
            Op::Gt => ArrayData::Bool(zip_map($a, $b, |x, y| x > y)?),
            Op::Ge => ArrayData::Bool(zip_map($a, $b, |x, y| x >= y)?),
            other => return kerr(format!("{other} is not a binary elementwise op")),
        }
    };
}

/// NumPy's shifts read the count as unsigned: a count of at least the bit width, or a
/// negative one, shifts every bit out, leaving 0 (`<<`, and `>>` of a non-negative value) or
/// -1 (`>>` of a negative value, which shifts in sign bits). NumPy defines them so on every
/// platform (`np.left_shift(np.int64(5), np.int64(-1))` is 0), where C leaves them undefined.
macro_rules! shifts {
    ($shl:ident, $shr:ident, $t:ident) => {
        fn $shl(p: $t, q: $t) -> $t {
            u32::try_from(q)
                .ok()
                .and_then(|s| p.checked_shl(s))
                .unwrap_or(0)
        }

        fn $shr(p: $t, q: $t) -> $t {
            u32::try_from(q)
                .ok()
                .and_then(|s| p.checked_shr(s))
                .unwrap_or(if p < 0 { -1 } else { 0 })
        }
    };
}

shifts!(shl_i64, shr_i64, i64);
shifts!(shl_i32, shr_i32, i32);

/// One integer type's loops: bitwise ops and shifts, then arithmetic wrapping as NumPy's
/// does.
macro_rules! int_op {
    ($op:expr, $x:expr, $y:expr, $wrap:ident, $t:ident, $pow:expr, $shl:expr, $shr:expr) => {{
        check_int_power($op, $x, $y)?;
        match $op {
            Op::BitAnd => ArrayData::$wrap(zip_map($x, $y, |p, q| p & q)?),
            Op::BitOr => ArrayData::$wrap(zip_map($x, $y, |p, q| p | q)?),
            Op::BitXor => ArrayData::$wrap(zip_map($x, $y, |p, q| p ^ q)?),
            Op::LeftShift => ArrayData::$wrap(zip_map($x, $y, $shl)?),
            Op::RightShift => ArrayData::$wrap(zip_map($x, $y, $shr)?),
            _ => numeric_op!(
                $op,
                $x,
                $y,
                $wrap,
                $t::wrapping_add,
                $t::wrapping_sub,
                $t::wrapping_mul,
                $pow,
                $t::max,
                $t::min
            ),
        }
    }};
}

/// NumPy refuses a negative integer exponent only where it applies one.
fn check_int_power<T: Copy + Default + PartialOrd>(
    op: Op,
    x: &ArrayD<T>,
    y: &ArrayD<T>,
) -> KResult<()> {
    let applied = !x.is_empty() && !y.is_empty();
    if op == Op::Pow && applied && y.iter().any(|e| *e < T::default()) {
        return kerr("integers to negative integer powers are not allowed");
    }
    Ok(())
}

pub fn binary(op: Op, a: &ArrayData, b: &ArrayData) -> KResult<ArrayData> {
    let dt = compute_dtype(op, a.dtype(), b.dtype())?;
    let (a, b) = (cast_cow(a, dt), cast_cow(b, dt));
    Ok(match (a.as_ref(), b.as_ref()) {
        (ArrayData::F64(x), ArrayData::F64(y)) => {
            if op == Op::Div {
                ArrayData::F64(zip_map(x, y, |p, q| p / q)?)
            } else {
                numeric_op!(
                    op,
                    x,
                    y,
                    F64,
                    |p, q| p + q,
                    |p, q| p - q,
                    |p, q| p * q,
                    f64::powf,
                    fmax,
                    fmin
                )
            }
        }
        (ArrayData::F32(x), ArrayData::F32(y)) => {
            if op == Op::Div {
                ArrayData::F32(zip_map(x, y, |p, q| p / q)?)
            } else {
                numeric_op!(
                    op,
                    x,
                    y,
                    F32,
                    |p, q| p + q,
                    |p, q| p - q,
                    |p, q| p * q,
                    powf32,
                    fmax32,
                    fmin32
                )
            }
        }
        (ArrayData::I64(x), ArrayData::I64(y)) => {
            int_op!(op, x, y, I64, i64, wrapping_pow_i64, shl_i64, shr_i64)
        }
        (ArrayData::I32(x), ArrayData::I32(y)) => {
            int_op!(op, x, y, I32, i32, wrapping_pow_i32, shl_i32, shr_i32)
        }
        (ArrayData::Bool(x), ArrayData::Bool(y)) => match op {
            Op::Add | Op::Maximum | Op::BitOr => ArrayData::Bool(zip_map(x, y, |p, q| p | q)?),
            Op::Mul | Op::Minimum | Op::BitAnd => ArrayData::Bool(zip_map(x, y, |p, q| p & q)?),
            Op::BitXor => ArrayData::Bool(zip_map(x, y, |p, q| p ^ q)?),
            Op::Eq => ArrayData::Bool(zip_map(x, y, |p, q| p == q)?),
            Op::Ne => ArrayData::Bool(zip_map(x, y, |p, q| p != q)?),
            Op::Lt => ArrayData::Bool(zip_map(x, y, |p, q| !p & q)?),
            Op::Le => ArrayData::Bool(zip_map(x, y, |p, q| p <= q)?),
            Op::Gt => ArrayData::Bool(zip_map(x, y, |p, q| p & !q)?),
            Op::Ge => ArrayData::Bool(zip_map(x, y, |p, q| p >= q)?),
            _ => return kerr(format!("{op} is not defined for bool")),
        },
        _ => return kerr("operands were not converted to one dtype"),
    })
}

/// `where(c, x, y)`: `x` where `c` is true, else `y`, broadcast together, in the promoted
/// dtype of `x` and `y`.
pub fn select(c: &ArrayData, x: &ArrayData, y: &ArrayData) -> KResult<ArrayData> {
    let dt = x.dtype().promote(y.dtype());
    let c = cast_cow(c, DType::Bool);
    let (x, y) = (cast_cow(x, dt), cast_cow(y, dt));
    let ArrayData::Bool(c) = c.as_ref() else {
        unreachable!("cast to bool")
    };
    let shape = infer::broadcast("where", c.shape(), x.shape())
        .and_then(|s| infer::broadcast("where", &s, y.shape()))
        .map_err(|e| super::KernelError(e.to_string()))?;
    let dim = IxDyn(&shape);
    let cv = c
        .broadcast(dim.clone())
        .ok_or_else(|| super::KernelError("where: condition cannot be broadcast".into()))?;
    macro_rules! pick {
        ($wrap:ident, $a:expr, $b:expr) => {{
            let (av, bv) = match ($a.broadcast(dim.clone()), $b.broadcast(dim.clone())) {
                (Some(p), Some(q)) => (p, q),
                _ => return kerr("where: operands cannot be broadcast"),
            };
            ArrayData::$wrap(Zip::from(&cv).and(&av).and(&bv).map_collect(
                |c, a, b| {
                    if *c {
                        *a
                    } else {
                        *b
                    }
                },
            ))
        }};
    }
    Ok(match (x.as_ref(), y.as_ref()) {
        (ArrayData::F64(a), ArrayData::F64(b)) => pick!(F64, a, b),
        (ArrayData::I64(a), ArrayData::I64(b)) => pick!(I64, a, b),
        (ArrayData::F32(a), ArrayData::F32(b)) => pick!(F32, a, b),
        (ArrayData::I32(a), ArrayData::I32(b)) => pick!(I32, a, b),
        (ArrayData::Bool(a), ArrayData::Bool(b)) => pick!(Bool, a, b),
        _ => return kerr("where: operands were not converted to one dtype"),
    })
}

/// `op(a, value)`, or `op(value, a)` when `scalar_left`.
pub fn binary_scalar(
    op: Op,
    a: &ArrayData,
    value: Scalar,
    scalar_left: bool,
) -> KResult<ArrayData> {
    let dt = infer::scalar_compute_dtype(op, a.dtype(), value)
        .map_err(|e| super::KernelError(e.to_string()))?;
    let s = ArrayData::scalar_of(value, dt);
    if scalar_left {
        binary(op, &s, a)
    } else {
        binary(op, a, &s)
    }
}

#[cfg(test)]
mod tests;
