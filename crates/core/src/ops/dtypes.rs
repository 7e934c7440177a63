//! Result dtypes, by NumPy 2's rules for the dtypes ares has (`bool < int64 < float64`).
//!
//! One set of rules serves tensors, numbers mixed with tensors, and numbers folded while a
//! program is read: the kernels and the fold both ask these functions.

use crate::array::DType;
use crate::error::{AresError, Result};
use crate::ops::{Fill, Op, OpArgs};

/// Output dtype of a binary elementwise op, by NumPy 2's rules for `bool < int64 < float64`.
///
/// Python numbers in an expression are NumPy's *weak* scalars (NEP 50): they take the kind
/// of their value (`True` is bool, `2` is an integer, `2.5` a float) and never widen a tensor
/// beyond what that kind needs. With only these three dtypes the weak and the strong rules
/// give the same result, so one function serves tensors and scalars alike. Two bools follow
/// NumPy's bool loops: `+` is logical or, `*` logical and, `-` is an error; `**` has no bool
/// loop (NumPy gives int8, ares int64: the smallest integer type it has).
pub fn binary_dtype(op: Op, a: DType, b: DType) -> Result<DType> {
    let p = a.promote(b);
    Ok(match op {
        _ if op.is_comparison() => DType::Bool,
        Op::Div => DType::F64,
        Op::Sub if p == DType::Bool => {
            return Err(AresError::dtype(
                "subtract",
                "numpy boolean subtract is not supported; cast the operands with astype first",
            ))
        }
        Op::Pow if p == DType::Bool => DType::I64,
        _ if op.is_bitwise() && p == DType::F64 => return Err(not_for_floats(op, a, b)),
        _ => p,
    })
}

/// Output dtype of a unary elementwise op.
pub fn unary_dtype(op: Op, args: &OpArgs, a: DType) -> Result<DType> {
    Ok(match (op, args) {
        (Op::AsType, OpArgs::Cast { dtype }) => *dtype,
        (Op::AsType, _) => return Err(AresError::arg("astype", "missing target dtype")),
        (Op::Neg, _) if a == DType::Bool => {
            return Err(AresError::dtype(
                "negative",
                "cannot negate a bool tensor; cast it first with astype(x, 'int64')",
            ))
        }
        (Op::Neg | Op::Abs, _) => a,
        (Op::Invert, _) if a == DType::F64 => return Err(not_for_floats(op, a, a)),
        (Op::Invert, _) => a,
        (Op::IsNan | Op::IsInf | Op::IsFinite, _) => DType::Bool,
        _ => DType::F64,
    })
}

/// NumPy: "ufunc 'bitwise_and' not supported for the input types".
fn not_for_floats(op: Op, a: DType, b: DType) -> AresError {
    let operands = if op.family() == crate::ops::Family::Unary {
        format!("a {a} operand")
    } else {
        format!("operands {a} and {b}")
    };
    AresError::dtype(
        op.name(),
        format!("not supported for {operands} (bool and int64 only); cast with astype first"),
    )
}

pub fn reduction_dtype(op: Op, a: DType) -> DType {
    match op {
        Op::Sum | Op::Prod if a == DType::Bool => DType::I64,
        _ => a,
    }
}

pub fn fill_dtype(fill: &Fill) -> DType {
    match fill {
        Fill::Uniform { .. } | Fill::Normal { .. } => DType::F64,
        Fill::Const { value } => value.dtype(),
        Fill::Range { start, step, .. } => start.dtype().promote(step.dtype()).max(DType::I64),
    }
}
