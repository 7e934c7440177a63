//! The elementwise array kernels, with numpy broadcasting and dtype promotion, generic over
//! the ufuncs' scalar loops ([`super::math`]).
//!
//! Operands are first converted to the dtype the op computes in (the result's float dtype for
//! division and the math functions, the promoted dtype otherwise, int64 for arithmetic on
//! bools), then mapped with the ufunc's loop for that dtype: each loop is monomorphic, so it
//! vectorizes. Every dtype has loops of its own: `float32 * float32` rounds as NumPy's
//! does, and the narrow integers' arithmetic wraps at their width.

use super::complex::{self, ZipComplex};
use super::math::{BinaryUfunc, BinaryVisitor, UnaryUfunc, UnaryVisitor};
use super::{binary_rule, unary_rule, with_binary, with_unary, BinaryRule, UnaryRule};
use crate::array::{ArrayData, DType, Scalar};
use crate::kernels::{kerr, KResult, KernelError};
use crate::ops::infer;
use crate::ops::{Op, OpArgs};
use ndarray::{ArrayD, IxDyn, Zip};
use std::borrow::Cow;

fn cast_cow(a: &ArrayData, dtype: DType) -> Cow<'_, ArrayData> {
    if a.dtype() == dtype {
        Cow::Borrowed(a)
    } else {
        Cow::Owned(a.clone().cast(dtype))
    }
}

fn not_a(what: &str, op: Op) -> KernelError {
    KernelError(format!("{op} is not a {what} elementwise op"))
}

pub fn unary(op: Op, args: &OpArgs, a: &ArrayData) -> KResult<ArrayData> {
    let out = infer::unary_dtype(op, args, a.dtype()).map_err(|e| KernelError(e.to_string()))?;
    if op == Op::AsType {
        return Ok(a.clone().cast(out));
    }
    if a.dtype() == DType::Bool && out == DType::I8 {
        // NumPy's int8 loop for bools (`square`, `reciprocal`).
        return unary(op, args, &a.clone().cast(DType::I8));
    }
    if a.dtype().is_complex() || matches!(op, Op::Conj | Op::RealPart | Op::ImagPart) {
        return complex::unary(op, a);
    }
    let rule = unary_rule(op).ok_or_else(|| not_a("unary", op))?;
    with_unary(op, UnaryLoops { rule, a }).ok_or_else(|| not_a("unary", op))?
}

/// One unary ufunc over an array, in the loop its rule and the array's dtype select.
struct UnaryLoops<'a> {
    rule: UnaryRule,
    a: &'a ArrayData,
}

impl UnaryVisitor for UnaryLoops<'_> {
    type Out = KResult<ArrayData>;

    fn visit<K: UnaryUfunc>(self) -> KResult<ArrayData> {
        let a = self.a;
        Ok(match (self.rule, a) {
            (UnaryRule::Predicate, ArrayData::F64(x)) => {
                ArrayData::Bool(x.mapv(|v| K::f64(v) != 0.0))
            }
            (UnaryRule::Predicate, ArrayData::F32(x)) => {
                ArrayData::Bool(x.mapv(|v| K::f64(f64::from(v)) != 0.0))
            }
            // Integers and bools are finite numbers: the answer at 0 is every element's.
            (UnaryRule::Predicate, _) => {
                ArrayData::Bool(ArrayD::from_elem(IxDyn(a.shape()), K::f64(0.0) != 0.0))
            }
            // Every element's own answer, read in float64 (exact for the sign of any integer).
            (UnaryRule::Test, _) => {
                let x = cast_cow(a, DType::F64);
                let ArrayData::F64(x) = x.as_ref() else {
                    unreachable!("cast to f64")
                };
                ArrayData::Bool(x.mapv(|v| K::f64(v) != 0.0))
            }
            // float32 math in float64, rounded once: the fused kernel's values exactly (and
            // correctly rounded but for the rarest cases; the square root always).
            (UnaryRule::Float, ArrayData::F32(x)) => ArrayData::F32(x.mapv(K::f32)),
            (UnaryRule::Float, _) | (UnaryRule::Round, ArrayData::Bool(_)) => {
                let x = cast_cow(a, DType::F64);
                let ArrayData::F64(x) = x.as_ref() else {
                    unreachable!("cast to f64")
                };
                ArrayData::F64(x.mapv(K::f64))
            }
            (_, ArrayData::F64(x)) => ArrayData::F64(x.mapv(K::f64)),
            (_, ArrayData::F32(x)) => ArrayData::F32(x.mapv(K::f32)),
            (_, ArrayData::I64(x)) => ArrayData::I64(x.mapv(K::i64)),
            (_, ArrayData::I32(x)) => ArrayData::I32(x.mapv(K::i32)),
            (_, ArrayData::I16(x)) => ArrayData::I16(x.mapv(K::i16)),
            (_, ArrayData::I8(x)) => ArrayData::I8(x.mapv(K::i8)),
            (_, ArrayData::U64(x)) => ArrayData::U64(x.mapv(K::u64)),
            (_, ArrayData::U32(x)) => ArrayData::U32(x.mapv(K::u32)),
            (_, ArrayData::U16(x)) => ArrayData::U16(x.mapv(K::u16)),
            (_, ArrayData::U8(x)) => ArrayData::U8(x.mapv(K::u8)),
            (_, ArrayData::Bool(x)) => ArrayData::Bool(x.mapv(K::bool)),
            (_, ArrayData::C64(_) | ArrayData::C128(_)) => {
                return kerr("complex operands take the complex kernels")
            }
        })
    }
}

/// The dtype both operands are converted to before the op runs: the result dtype, except
/// that comparisons run in the promoted dtype and division in float64.
fn compute_dtype(op: Op, a: DType, b: DType) -> KResult<DType> {
    if binary_rule(op) == Some(BinaryRule::Compare) {
        return Ok(a.promote(b));
    }
    infer::binary_dtype(op, a, b).map_err(|e| KernelError(e.to_string()))
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
        .map_err(|e| KernelError(e.to_string()))?;
    let (av, bv) = match (a.broadcast(IxDyn(&shape)), b.broadcast(IxDyn(&shape))) {
        (Some(x), Some(y)) => (x, y),
        _ => return kerr("operands cannot be broadcast"),
    };
    Ok(Zip::from(&av).and(&bv).map_collect(|x, y| f(*x, *y)))
}

/// [`zip_map`] for the complex kernels.
struct Broadcasting;

impl ZipComplex for Broadcasting {
    fn zip<A: Copy, B: Copy, O>(
        &self,
        a: &ArrayD<A>,
        b: &ArrayD<B>,
        f: impl Fn(A, B) -> O,
    ) -> KResult<ArrayD<O>> {
        zip_map(a, b, f)
    }
}

/// NumPy refuses a negative integer exponent only where it applies one.
fn check_int_power<T: Copy + Default + PartialOrd>(x: &ArrayD<T>, y: &ArrayD<T>) -> KResult<()> {
    let applied = !x.is_empty() && !y.is_empty();
    if applied && y.iter().any(|e| *e < T::default()) {
        return kerr("integers to negative integer powers are not allowed");
    }
    Ok(())
}

pub fn binary(op: Op, a: &ArrayData, b: &ArrayData) -> KResult<ArrayData> {
    let rule = binary_rule(op).ok_or_else(|| not_a("binary", op))?;
    let dt = compute_dtype(op, a.dtype(), b.dtype())?;
    let (a, b) = (cast_cow(a, dt), cast_cow(b, dt));
    if dt.is_complex() {
        return complex::binary(op, &a, &b, Broadcasting);
    }
    let loops = BinaryLoops {
        rule,
        a: a.as_ref(),
        b: b.as_ref(),
    };
    with_binary(op, loops).ok_or_else(|| not_a("binary", op))?
}

/// One binary ufunc over two arrays of one dtype, broadcast together.
struct BinaryLoops<'a> {
    rule: BinaryRule,
    a: &'a ArrayData,
    b: &'a ArrayData,
}

impl BinaryVisitor for BinaryLoops<'_> {
    type Out = KResult<ArrayData>;

    fn visit<K: BinaryUfunc>(self) -> KResult<ArrayData> {
        let compare = self.rule == BinaryRule::Compare;
        // A comparison's loop answers 1 or 0 in the operands' dtype: read back as bools.
        macro_rules! run {
            ($x:expr, $y:expr, $wrap:ident, $f:path, $zero:expr) => {
                if compare {
                    ArrayData::Bool(zip_map($x, $y, |p, q| $f(p, q) != $zero)?)
                } else {
                    ArrayData::$wrap(zip_map($x, $y, $f)?)
                }
            };
        }
        let power = self.rule == BinaryRule::Power;
        Ok(match (self.a, self.b) {
            (ArrayData::F64(x), ArrayData::F64(y)) => run!(x, y, F64, K::f64, 0.0),
            (ArrayData::F32(x), ArrayData::F32(y)) => run!(x, y, F32, K::f32, 0.0),
            (ArrayData::I64(x), ArrayData::I64(y)) => {
                if power {
                    check_int_power(x, y)?;
                }
                run!(x, y, I64, K::i64, 0)
            }
            (ArrayData::I32(x), ArrayData::I32(y)) => {
                if power {
                    check_int_power(x, y)?;
                }
                run!(x, y, I32, K::i32, 0)
            }
            (ArrayData::I16(x), ArrayData::I16(y)) => {
                if power {
                    check_int_power(x, y)?;
                }
                run!(x, y, I16, K::i16, 0)
            }
            (ArrayData::I8(x), ArrayData::I8(y)) => {
                if power {
                    check_int_power(x, y)?;
                }
                run!(x, y, I8, K::i8, 0)
            }
            // Unsigned exponents are never negative.
            (ArrayData::U64(x), ArrayData::U64(y)) => run!(x, y, U64, K::u64, 0),
            (ArrayData::U32(x), ArrayData::U32(y)) => run!(x, y, U32, K::u32, 0),
            (ArrayData::U16(x), ArrayData::U16(y)) => run!(x, y, U16, K::u16, 0),
            (ArrayData::U8(x), ArrayData::U8(y)) => run!(x, y, U8, K::u8, 0),
            (ArrayData::Bool(x), ArrayData::Bool(y)) => ArrayData::Bool(zip_map(x, y, K::bool)?),
            _ => return kerr("operands were not converted to one dtype"),
        })
    }
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
        .map_err(|e| KernelError(e.to_string()))?;
    let dim = IxDyn(&shape);
    let cv = c
        .broadcast(dim.clone())
        .ok_or_else(|| KernelError("where: condition cannot be broadcast".into()))?;
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
        (ArrayData::C64(a), ArrayData::C64(b)) => pick!(C64, a, b),
        (ArrayData::C128(a), ArrayData::C128(b)) => pick!(C128, a, b),
        (ArrayData::I8(a), ArrayData::I8(b)) => pick!(I8, a, b),
        (ArrayData::I16(a), ArrayData::I16(b)) => pick!(I16, a, b),
        (ArrayData::U8(a), ArrayData::U8(b)) => pick!(U8, a, b),
        (ArrayData::U16(a), ArrayData::U16(b)) => pick!(U16, a, b),
        (ArrayData::U32(a), ArrayData::U32(b)) => pick!(U32, a, b),
        (ArrayData::U64(a), ArrayData::U64(b)) => pick!(U64, a, b),
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
        .map_err(|e| KernelError(e.to_string()))?;
    let s = ArrayData::scalar_of(value, dt);
    if scalar_left {
        binary(op, &s, a)
    } else {
        binary(op, a, &s)
    }
}

#[cfg(test)]
mod tests;
