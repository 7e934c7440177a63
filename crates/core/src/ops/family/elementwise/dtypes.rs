//! The ufuncs' result dtypes, by NumPy 2's rules for the dtypes ares has (all thirteen of the
//! array API standard).
//!
//! One set of rules serves tensors, numbers mixed with tensors, and numbers folded while a
//! program is read: the kernels and the fold both ask these functions.
//!
//! Two arrays promote by [`DType::promote`] (NumPy's `result_type`). Python numbers in an
//! expression are NumPy's *weak* scalars (NEP 50, which the array API standard follows): they
//! take the kind of their value (`True` is bool, `2` an integer, `2.5` a float) and never
//! widen a tensor beyond what that kind needs: `float32 + 2.5` stays float32, `int32 + 2`
//! stays int32, `uint8 + 1` stays uint8 (and an integer outside the array's range is an
//! error, as NumPy's `OverflowError`: `uint8 + 300`, `uint8 - (-1)`), `int32 + 2.5` is
//! float64.
//!
//! Each ufunc's row in the table names its rule ([`UnaryRule`], [`BinaryRule`]); this file
//! turns rules into dtypes and NumPy's errors.

use super::{binary_rule, unary_rule, BinaryRule, UnaryRule};
use crate::array::{DType, Scalar};
use crate::error::{AresError, Result};
use crate::ops::dtypes::math_float_result;
use crate::ops::{Op, OpArgs};

fn is_comparison(op: Op) -> bool {
    binary_rule(op) == Some(BinaryRule::Compare)
}

/// Output dtype of a binary elementwise op on two arrays of dtypes `a` and `b`.
pub fn binary_dtype(op: Op, a: DType, b: DType) -> Result<DType> {
    let out = op_result(op, a.promote(b), a, b)?;
    // NumPy picks a math function's float loop by each operand, not by their promotion:
    // `hypot(uint16, int8)` is float32 (both fit it), though the two promote to int32.
    let math = binary_rule(op) == Some(BinaryRule::Float) && op != Op::Div;
    if math && out.is_float() && !a.is_float() && !b.is_float() {
        // A bool fits any of them (NumPy's float16); two bools stay float64.
        return Ok(match (a, b) {
            (DType::Bool, DType::Bool) => DType::F64,
            (DType::Bool, x) | (x, DType::Bool) => math_float_result(x),
            _ => math_float_result(a).promote(math_float_result(b)),
        });
    }
    Ok(out)
}

/// The binary ufuncs the array API standard defines for complex operands (and ares
/// computes with num-complex): arithmetic, powers and equality. Ordering (`<`, `maximum`)
/// is not defined on complex numbers; the rest are real functions.
fn complex_binary(op: Op, p: DType, a: DType, b: DType) -> Result<DType> {
    match op {
        Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Pow => Ok(p),
        Op::Eq | Op::Ne => Ok(DType::Bool),
        _ => Err(AresError::dtype(
            op.name(),
            format!(
                "not supported for complex operands ({a} and {b}){}",
                if binary_rule(op) == Some(BinaryRule::Compare)
                    || matches!(op, Op::Maximum | Op::Minimum)
                {
                    ": complex numbers have no order"
                } else {
                    ""
                }
            ),
        )),
    }
}

/// Output dtype of a unary ufunc on a complex array: the complex functions keep the dtype,
/// `abs` gives the real dtype of the parts, the tests give bools; the rest are refused.
fn complex_unary(op: Op, a: DType) -> Result<DType> {
    use Op::*;
    match op {
        Neg | Sign | Square | Reciprocal | Sqrt | Exp | Expm1 | Log | Log1p | Log2 | Log10
        | Sin | Cos | Tan | Sinh | Cosh | Tanh | Asin | Acos | Atan | Asinh | Acosh | Atanh
        | Conj => Ok(a),
        Abs | RealPart | ImagPart => Ok(a.real_part()),
        IsNan | IsInf | IsFinite => Ok(DType::Bool),
        _ => Err(AresError::dtype(
            op.name(),
            format!("not supported for a {a} operand (real dtypes only)"),
        )),
    }
}

/// Output dtype of a binary elementwise op on an array of dtype `a` and a Python number.
pub fn scalar_binary_dtype(op: Op, a: DType, value: Scalar) -> Result<DType> {
    let out = op_result(op, weak_promote(a, value), a, value.dtype())?;
    check_scalar_fits(op, out, value)?;
    Ok(out)
}

/// The dtype an array of dtype `a` and a weak Python number meet in (NEP 50).
pub fn weak_promote(a: DType, value: Scalar) -> DType {
    match value {
        Scalar::Bool(_) => a,
        Scalar::I64(_) if a == DType::Bool => DType::I64,
        Scalar::I64(_) => a,
        Scalar::F64(_) if a.is_float() || a.is_complex() => a,
        Scalar::F64(_) => DType::F64,
    }
}

/// The dtype a binary op computes in: the result's, except that comparisons compare in the
/// promoted dtype, and an integer outside an integer array's range is compared exactly, as
/// NumPy 2 does: in int64, which holds both (or, for a negative number and a uint64 array,
/// in float64, which orders every uint64 above every negative number).
pub fn scalar_compute_dtype(op: Op, a: DType, value: Scalar) -> Result<DType> {
    if is_comparison(op) {
        return Ok(match weak_promote(a, value) {
            d if fits(d, value) => d,
            DType::U64 => DType::F64,
            _ => DType::I64,
        });
    }
    scalar_binary_dtype(op, a, value)
}

/// Whether a Python number is within an integer dtype's range (any number fits the others).
fn fits(d: DType, value: Scalar) -> bool {
    match (d.int_range(), value) {
        (Some((lo, hi)), Scalar::I64(i)) => (lo..=hi).contains(&i128::from(i)),
        _ => true,
    }
}

/// NumPy 2: "Python integer 300 out of bounds for uint8", where the number is converted to
/// the integer dtype the op computes and answers in (`out`); a comparison compares exactly
/// and a true division or math function converts it to a float instead (`uint8 / -1`).
fn check_scalar_fits(op: Op, out: DType, value: Scalar) -> Result<()> {
    if out.is_int() && !fits(out, value) {
        return Err(AresError::dtype(
            op.name(),
            format!("Python integer {value} out of bounds for {out}; cast the array with astype(x, 'int64') first"),
        ));
    }
    Ok(())
}

/// The result of `op` once its operands (of dtypes `a` and `b`) meet in dtype `p`. Two bools
/// follow NumPy's bool loops: `+` is logical or, `*` logical and, `-` is an error; `**`,
/// `//`, `%` and the shifts have no bool loop and give int8, as NumPy's.
fn op_result(op: Op, p: DType, a: DType, b: DType) -> Result<DType> {
    use BinaryRule::*;
    let rule =
        binary_rule(op).ok_or_else(|| AresError::arg(op.name(), "not a binary elementwise op"))?;
    if p.is_complex() {
        return complex_binary(op, p, a, b);
    }
    Ok(match rule {
        Compare => DType::Bool,
        Float if p.is_float() => p,
        // True division of integers is float64 whatever their width (NumPy's loops).
        Float if op == Op::Div => DType::F64,
        Float => math_float_result(p),
        // NumPy's bool loops of `//`, `%`, `**` and the shifts are int8's.
        FloorDivide if p == DType::Bool => DType::I8,
        NoBool if p == DType::Bool => {
            return Err(AresError::dtype(
                op.name(),
                format!("numpy boolean {op} is not supported; cast the operands with astype first"),
            ))
        }
        Power if p == DType::Bool => DType::I8,
        Bitwise if p.is_float() => return Err(not_for_floats(op, a, b)),
        Shift if p == DType::Bool => DType::I8,
        Shift if !p.is_int() => return Err(not_for_shifts(op, a, b)),
        _ => p,
    })
}

/// Output dtype of a unary elementwise op. The math functions keep float32 and give
/// float64 for integers and bools (NumPy gives float16 for bools: a documented deviation).
pub fn unary_dtype(op: Op, args: &OpArgs, a: DType) -> Result<DType> {
    if op == Op::AsType {
        return match args {
            // NumPy discards the imaginary part with a warning; the standard leaves it
            // open: ares refuses rather than drop it silently.
            OpArgs::Cast { dtype } if a.is_complex() && !dtype.is_complex() && *dtype != DType::Bool => {
                Err(AresError::dtype(
                    "astype",
                    format!("cannot cast {a} to {dtype} (that would discard the imaginary part); take real(x), imag(x) or abs(x) first"),
                ))
            }
            OpArgs::Cast { dtype } => Ok(*dtype),
            _ => Err(AresError::arg("astype", "missing target dtype")),
        };
    }
    if a.is_complex() {
        return complex_unary(op, a);
    }
    let rule =
        unary_rule(op).ok_or_else(|| AresError::arg(op.name(), "not a unary elementwise op"))?;
    Ok(match rule {
        // NumPy squares and inverts bools with its int8 loop.
        UnaryRule::NoBool if a == DType::Bool && matches!(op, Op::Square | Op::Reciprocal) => {
            DType::I8
        }
        UnaryRule::NoBool if a == DType::Bool => {
            return Err(AresError::dtype(
                op.name(),
                format!(
                    "numpy boolean {op} is not supported; cast it first with astype(x, 'int64')"
                ),
            ))
        }
        UnaryRule::Same | UnaryRule::NoBool => a,
        UnaryRule::IntBool if a.is_float() => return Err(not_for_floats(op, a, a)),
        UnaryRule::IntBool => a,
        UnaryRule::Predicate | UnaryRule::Test => DType::Bool,
        UnaryRule::Float => math_float_result(a),
        UnaryRule::Round if a == DType::Bool => DType::F64,
        UnaryRule::Round => a,
    })
}

/// NumPy: "ufunc 'bitwise_and' not supported for the input types".
fn not_for_floats(op: Op, a: DType, b: DType) -> AresError {
    let operands = if unary_rule(op).is_some() {
        format!("a {a} operand")
    } else {
        format!("operands {a} and {b}")
    };
    AresError::dtype(
        op.name(),
        format!("not supported for {operands} (bool and integers only); cast with astype first"),
    )
}

/// NumPy: "ufunc 'left_shift' not supported for the input types" (floats).
fn not_for_shifts(op: Op, a: DType, b: DType) -> AresError {
    AresError::dtype(
        op.name(),
        format!(
            "ufunc '{op}' not supported for the input types {a} and {b} (integers only); cast with astype(x, 'int64') first"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::dtypes::reduction_dtype;
    use DType::*;

    /// NEP 50 as NumPy 2.4 applies it: `(np.ones(3, dtype) + scalar).dtype`.
    #[test]
    fn weak_scalars_keep_the_arrays_kind() {
        let cases = [
            (F32, Scalar::F64(2.5), F32),
            (F32, Scalar::I64(2), F32),
            (I32, Scalar::I64(2), I32),
            (I32, Scalar::F64(2.5), F64),
            (I32, Scalar::Bool(true), I32),
            (Bool, Scalar::I64(2), I64),
            (Bool, Scalar::F64(2.5), F64),
            (I64, Scalar::F64(0.5), F64),
        ];
        for (a, v, want) in cases {
            assert_eq!(
                scalar_binary_dtype(Op::Add, a, v).unwrap(),
                want,
                "{a} + {v}"
            );
        }
        assert_eq!(
            scalar_binary_dtype(Op::Div, I32, Scalar::I64(2)).unwrap(),
            F64
        );
        assert_eq!(
            scalar_binary_dtype(Op::Div, F32, Scalar::I64(2)).unwrap(),
            F32
        );
        let e = scalar_binary_dtype(Op::Add, I32, Scalar::I64(1 << 40)).unwrap_err();
        assert!(e.to_string().contains("out of bounds for int32"), "{e}");
        assert_eq!(
            scalar_binary_dtype(Op::Lt, I32, Scalar::I64(1 << 40)).unwrap(),
            Bool
        );
        assert_eq!(
            scalar_compute_dtype(Op::Lt, I32, Scalar::I64(1 << 40)).unwrap(),
            I64
        );
    }

    /// NEP 50 on the narrow integers: a Python integer keeps the array's dtype when it fits,
    /// is NumPy's OverflowError when it does not, and compares exactly either way.
    #[test]
    fn python_integers_are_weak_and_checked_for_narrow_integers() {
        use DType::*;
        assert_eq!(
            scalar_binary_dtype(Op::Add, U8, Scalar::I64(1)).unwrap(),
            U8
        );
        assert_eq!(
            scalar_binary_dtype(Op::Add, I8, Scalar::I64(-128)).unwrap(),
            I8
        );
        assert_eq!(
            scalar_binary_dtype(Op::Mul, U16, Scalar::F64(0.5)).unwrap(),
            F64
        );
        for (a, v) in [
            (U8, 300),
            (U8, -1),
            (I8, 128),
            (I16, -32_769),
            (U32, 1 << 32),
            (U64, -1),
        ] {
            let e = scalar_binary_dtype(Op::Add, a, Scalar::I64(v))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("Python integer {v} out of bounds for {a}")),
                "{e}"
            );
            assert_eq!(
                scalar_binary_dtype(Op::Lt, a, Scalar::I64(v)).unwrap(),
                Bool
            );
            assert_eq!(
                scalar_binary_dtype(Op::Div, a, Scalar::I64(v)).unwrap(),
                F64
            );
        }
        assert_eq!(
            scalar_compute_dtype(Op::Lt, U8, Scalar::I64(300)).unwrap(),
            I64
        );
        assert_eq!(
            scalar_compute_dtype(Op::Lt, U8, Scalar::I64(3)).unwrap(),
            U8
        );
        // uint64 against a negative number: float64 orders them exactly.
        assert_eq!(
            scalar_compute_dtype(Op::Lt, U64, Scalar::I64(-1)).unwrap(),
            F64
        );
    }

    #[test]
    fn arrays_follow_numpys_loops() {
        assert_eq!(binary_dtype(Op::Div, F32, F32).unwrap(), F32);
        assert_eq!(binary_dtype(Op::Div, I32, I32).unwrap(), F64);
        assert_eq!(binary_dtype(Op::Mul, I32, F32).unwrap(), F64);
        assert!(binary_dtype(Op::BitAnd, I32, F32).is_err());
        assert_eq!(binary_dtype(Op::BitAnd, I32, Bool).unwrap(), I32);
        for op in [Op::LeftShift, Op::RightShift] {
            assert_eq!(binary_dtype(op, I32, I32).unwrap(), I32);
            assert_eq!(binary_dtype(op, I32, I64).unwrap(), I64);
            assert_eq!(binary_dtype(op, Bool, I32).unwrap(), I32);
            assert_eq!(scalar_binary_dtype(op, I32, Scalar::I64(3)).unwrap(), I32);
            assert_eq!(scalar_binary_dtype(op, Bool, Scalar::I64(3)).unwrap(), I64);
            assert!(scalar_binary_dtype(op, I32, Scalar::I64(1 << 40)).is_err());
            // NumPy shifts two bools with its int8 loop.
            assert_eq!(binary_dtype(op, Bool, Bool).unwrap(), I8);
            assert_eq!(
                scalar_binary_dtype(op, Bool, Scalar::Bool(true)).unwrap(),
                I8
            );
            for (a, b) in [(F64, I64), (I32, F32), (U8, F32)] {
                let e = binary_dtype(op, a, b).unwrap_err().to_string();
                assert!(
                    e.contains(&format!("ufunc '{op}' not supported for the input types")),
                    "{e}"
                );
            }
            assert!(scalar_binary_dtype(op, I64, Scalar::F64(1.0)).is_err());
        }
        let none = OpArgs::None;
        assert_eq!(unary_dtype(Op::Sqrt, &none, F32).unwrap(), F32);
        assert_eq!(unary_dtype(Op::Sqrt, &none, I32).unwrap(), F64);
        assert!(unary_dtype(Op::Invert, &none, F32).is_err());
        assert_eq!(reduction_dtype(Op::Sum, I32), I64);
        // NumPy 2: small signed integers sum to int64, unsigned ones to uint64.
        assert_eq!(reduction_dtype(Op::Sum, I8), I64);
        assert_eq!(reduction_dtype(Op::Prod, U8), U64);
        assert_eq!(reduction_dtype(Op::CumSum, U32), U64);
        assert_eq!(reduction_dtype(Op::Max, U16), U16);
        // Math functions: float32 for 8- and 16-bit integers, true division float64.
        assert_eq!(unary_dtype(Op::Sqrt, &none, I16).unwrap(), F32);
        assert_eq!(unary_dtype(Op::Sqrt, &none, U32).unwrap(), F64);
        assert_eq!(binary_dtype(Op::Atan2, U8, I8).unwrap(), F32);
        assert_eq!(binary_dtype(Op::Hypot, U16, I8).unwrap(), F32);
        assert_eq!(binary_dtype(Op::Hypot, U32, I8).unwrap(), F64);
        assert_eq!(binary_dtype(Op::Div, I8, I8).unwrap(), F64);
        assert_eq!(binary_dtype(Op::Pow, Bool, Bool).unwrap(), I8);
        assert_eq!(reduction_dtype(Op::Max, I32), I32);
        assert_eq!(reduction_dtype(Op::Sum, F32), F32);
    }
}
