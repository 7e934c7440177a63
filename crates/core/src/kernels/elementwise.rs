//! Elementwise kernels with numpy broadcasting and dtype promotion.
//!
//! Operands are first converted to the dtype the op computes in (float64 for division and the
//! math functions, the promoted dtype otherwise, int64 for arithmetic on bools), then mapped
//! with one monomorphic closure per op so the loops vectorize.

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
        (Op::Neg, ArrayData::F64(x)) => ArrayData::F64(x.mapv(|v| -v)),
        (Op::Abs, ArrayData::I64(x)) => ArrayData::I64(x.mapv(i64::wrapping_abs)),
        (Op::Abs, ArrayData::F64(x)) => ArrayData::F64(x.mapv(f64::abs)),
        (Op::Abs, ArrayData::Bool(x)) => ArrayData::Bool(x.clone()),
        (Op::Invert, ArrayData::I64(x)) => ArrayData::I64(x.mapv(|v| !v)),
        (Op::Invert, ArrayData::Bool(x)) => ArrayData::Bool(x.mapv(|v| !v)),
        (Op::IsNan, ArrayData::F64(x)) => ArrayData::Bool(x.mapv(f64::is_nan)),
        (Op::IsInf, ArrayData::F64(x)) => ArrayData::Bool(x.mapv(f64::is_infinite)),
        (Op::IsFinite, ArrayData::F64(x)) => ArrayData::Bool(x.mapv(f64::is_finite)),
        // Integers and bools are always finite numbers.
        (Op::IsNan | Op::IsInf | Op::IsFinite, _) => {
            ArrayData::Bool(ArrayD::from_elem(IxDyn(a.shape()), op == Op::IsFinite))
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
        (ArrayData::I64(x), ArrayData::I64(y)) => {
            // NumPy refuses a negative exponent only where it applies one.
            let applied = !x.is_empty() && !y.is_empty();
            if op == Op::Pow && applied && y.iter().any(|e| *e < 0) {
                return kerr("integers to negative integer powers are not allowed");
            }
            match op {
                Op::BitAnd => return Ok(ArrayData::I64(zip_map(x, y, |p, q| p & q)?)),
                Op::BitOr => return Ok(ArrayData::I64(zip_map(x, y, |p, q| p | q)?)),
                Op::BitXor => return Ok(ArrayData::I64(zip_map(x, y, |p, q| p ^ q)?)),
                _ => {}
            }
            numeric_op!(
                op,
                x,
                y,
                I64,
                i64::wrapping_add,
                i64::wrapping_sub,
                i64::wrapping_mul,
                wrapping_pow_i64,
                i64::max,
                i64::min
            )
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
    let dt = compute_dtype(op, a.dtype(), value.dtype())?;
    let s = match dt {
        DType::F64 => ArrayData::F64(ArrayD::from_elem(IxDyn(&[]), value.as_f64())),
        DType::I64 => ArrayData::I64(ArrayD::from_elem(IxDyn(&[]), value.as_i64())),
        DType::Bool => ArrayData::Bool(ArrayD::from_elem(IxDyn(&[]), value.as_bool())),
    };
    if scalar_left {
        binary(op, &s, a)
    } else {
        binary(op, a, &s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bools(v: &[bool]) -> ArrayData {
        ArrayData::Bool(ArrayD::from_shape_vec(IxDyn(&[v.len()]), v.to_vec()).unwrap())
    }

    #[test]
    fn integer_power_wraps_over_the_whole_exponent() {
        let naive = |p: i64, q: u64| (0..q).fold(1i64, |acc, _| acc.wrapping_mul(p));
        for p in [-3i64, -1, 0, 1, 2, 3, 7, 1 << 40] {
            for q in [0u64, 1, 2, 5, 63, 64, 65, 1000] {
                assert_eq!(wrapping_pow_i64(p, q as i64), naive(p, q), "{p} ** {q}");
            }
        }
        // Past u32::MAX the exponent still counts: 3 ** (2^32 + 1) = 3 * (3 ** 2^32).
        let big = (1i64 << 32) + 1;
        assert_eq!(
            wrapping_pow_i64(3, big),
            3i64.wrapping_mul(wrapping_pow_i64(wrapping_pow_i64(3, 1 << 16), 1 << 16))
        );
    }

    #[test]
    fn bitwise_ops_are_logical_on_bools_bitwise_on_ints_refused_on_floats() {
        let (a, b) = (
            bools(&[false, false, true, true]),
            bools(&[false, true, false, true]),
        );
        let run = |op, x: &ArrayData, y: &ArrayData| binary(op, x, y).map_err(|e| e.0);
        assert_eq!(
            run(Op::BitAnd, &a, &b),
            Ok(bools(&[false, false, false, true]))
        );
        assert_eq!(
            run(Op::BitOr, &a, &b),
            Ok(bools(&[false, true, true, true]))
        );
        assert_eq!(
            run(Op::BitXor, &a, &b),
            Ok(bools(&[false, true, true, false]))
        );
        let ints = |v: &[i64]| {
            ArrayData::I64(ArrayD::from_shape_vec(IxDyn(&[v.len()]), v.to_vec()).unwrap())
        };
        let (x, y) = (ints(&[12, -1, 0, i64::MIN]), ints(&[10, 7, -1, -1]));
        assert_eq!(run(Op::BitAnd, &x, &y), Ok(ints(&[8, 7, 0, i64::MIN])));
        assert_eq!(run(Op::BitOr, &x, &y), Ok(ints(&[14, -1, -1, -1])));
        assert_eq!(run(Op::BitXor, &x, &y), Ok(ints(&[6, -8, -1, i64::MAX])));
        // A bool with an int promotes to int64: True & 3 is 1.
        assert_eq!(
            run(Op::BitAnd, &bools(&[true]), &ints(&[3])),
            Ok(ints(&[1]))
        );
        let invert = |x: &ArrayData| unary(Op::Invert, &OpArgs::None, x).map_err(|e| e.0);
        assert_eq!(invert(&x), Ok(ints(&[-13, 0, -1, i64::MAX])));
        assert_eq!(invert(&a), Ok(bools(&[true, true, false, false])));
        let floats = ArrayData::F64(ArrayD::from_elem(IxDyn(&[2]), 1.5));
        let e = run(Op::BitOr, &floats, &x).unwrap_err();
        assert!(e.contains("bitwise_or") && e.contains("float64"), "{e}");
        assert!(invert(&floats).unwrap_err().contains("invert"));
    }

    #[test]
    fn two_bools_follow_numpys_bool_loops() {
        let (a, b) = (
            bools(&[false, false, true, true]),
            bools(&[false, true, false, true]),
        );
        let run = |op| binary(op, &a, &b).map_err(|e| e.0);
        assert_eq!(run(Op::Add), Ok(bools(&[false, true, true, true])));
        assert_eq!(run(Op::Mul), Ok(bools(&[false, false, false, true])));
        assert!(run(Op::Sub).unwrap_err().contains("boolean subtract"));
        assert_eq!(run(Op::Pow).unwrap().dtype(), DType::I64);
        assert_eq!(run(Op::Div).unwrap().dtype(), DType::F64);
        // A weak int scalar on bools widens to int64; a weak bool does not.
        let plus_one = binary_scalar(Op::Add, &a, Scalar::I64(1), false).unwrap();
        assert_eq!(plus_one.dtype(), DType::I64);
        let plus_true = binary_scalar(Op::Add, &a, Scalar::Bool(true), false).unwrap();
        assert_eq!(plus_true, bools(&[true; 4]));
    }
}
