//! `x.shape` and `x.shape[i]`: a tensor's lengths as numbers of the program.
//!
//! The length of `x[mask]` or `unique(x)` depends on the data (see `tensor::select`): ares
//! tiles before anything runs, so such a tensor's shape holds an upper bound, the input's
//! size. A program that read it would take the bound for the length (`x[x > 0].shape[0]`
//! would give the size of `x` where NumPy counts the selected elements), so until shapes can
//! be learned while a task runs, reading such a length is an error that names the problem and
//! the way around it. Lengths that are known stay readable.

use super::eval::Value;
use super::{err, ExprError, Pos};
use crate::array::Scalar;
use crate::tensor::Tensor;

/// `t.shape`: the tuple of its lengths, refused when one of them depends on the data.
pub(super) fn whole(t: &Tensor, p: Pos) -> Result<Value, ExprError> {
    if let Some(axis) = (0..t.ndim()).find(|a| !t.axis_length_known(*a)) {
        return unknown(t, axis, "shape", p);
    }
    Ok(Value::Tuple((0..t.ndim()).map(|a| length(t, a)).collect()))
}

/// `t.shape[i]` (`i` negative counts from the end), refused when that length depends on the
/// data.
pub(super) fn axis(t: &Tensor, i: i64, p: Pos) -> Result<Value, ExprError> {
    let n = t.ndim() as i64;
    let a = if i < 0 { i + n } else { i };
    if !(0..n).contains(&a) {
        return err(p, format!("index {i} out of range"));
    }
    let a = a as usize;
    if !t.axis_length_known(a) {
        return unknown(t, a, &format!("shape[{i}]"), p);
    }
    Ok(length(t, a))
}

fn length(t: &Tensor, axis: usize) -> Value {
    Value::Num(Scalar::I64(t.shape()[axis] as i64))
}

fn unknown<T>(t: &Tensor, axis: usize, read: &str, p: Pos) -> Result<T, ExprError> {
    let name = t.data_dependent_name().unwrap_or("this tensor");
    let what = if t.ndim() == 1 {
        format!("the length of {name}")
    } else {
        format!("the length of axis {axis} of {name}")
    };
    err(
        p,
        format!(
            "{name}.{read}: {what} depends on the data and is not known before it runs; \
             compute the result first (data-dependent shapes are not supported yet)"
        ),
    )
}
