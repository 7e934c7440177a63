//! Expression-language names for the NumPy functions the tensor API composes from primitive
//! ops (`tensor::compose`): logical functions, `all`/`any`, `clip`, axis insertion and
//! removal, broadcasting, stacking, splitting and `inner`; and `where`.

use super::args::{to_axes, to_bool, to_int, to_ints, to_shape, ufunc_reduce_axes, Args};
use super::eval::{apply_binary, Ctx, Value};
use super::{err, ExprError};
use crate::ops::Op;
use crate::tensor::{self, Tensor};

impl Ctx {
    pub(super) fn call_composed(&mut self, name: &str, a: Args) -> Result<Value, ExprError> {
        let p = a.pos;
        let wrap =
            |r: crate::Result<Tensor>| r.map(Value::Tensor).or_else(|e| err(p, e.to_string()));
        match name {
            "logical_and" | "logical_or" | "logical_xor" => {
                a.check(2, &["x1", "x2"])?;
                let (x, y) = (a.tensor(0, "x1")?, a.tensor(1, "x2")?);
                wrap(match name {
                    "logical_and" => x.logical_and(&y),
                    "logical_or" => x.logical_or(&y),
                    _ => x.logical_xor(&y),
                })
            }
            // Identities for real dtypes, as NumPy's (`imag` is zeros); ops of their own for
            // complex ones. `positive` of bools NumPy refuses; `conj` gives int8 (its loop).
            "positive" | "conj" | "conjugate" | "real" | "imag" => {
                a.check(1, &["x", "val"])?;
                let x = match a.get(usize::MAX, "val") {
                    Some((v, vp)) => super::args::to_tensor(v, vp)?,
                    None => a.tensor(0, "x")?,
                };
                if x.dtype() == crate::array::DType::Bool
                    && name != "positive"
                    && name != "real"
                    && name != "imag"
                {
                    return wrap(x.astype(crate::array::DType::I8));
                }
                if name == "positive" && x.dtype() == crate::array::DType::Bool {
                    return err(
                        p,
                        format!("{name} of a bool tensor is not supported (NumPy has no bool loop); cast it first with astype(x, 'int64')"),
                    );
                }
                // A complex tensor's parts and conjugate are ops of their own.
                if x.dtype().is_complex() {
                    return wrap(match name {
                        "positive" => Ok(x),
                        "real" => x.unary(Op::RealPart),
                        "imag" => x.unary(Op::ImagPart),
                        _ => x.unary(Op::Conj),
                    });
                }
                if name != "imag" {
                    return Ok(Value::Tensor(x));
                }
                // Zeros of x's shape, chunks and dtype: `isnan & isfinite` is never true.
                wrap(
                    x.unary(Op::IsNan)
                        .and_then(|n| n.logical_and(&x.unary(Op::IsFinite)?))
                        .and_then(|z| z.astype(x.dtype())),
                )
            }
            // NumPy's `rint`: `round` of floats; integers and bools give the math functions'
            // float (float32 for 8- and 16-bit integers, float64 for bools and wider ones;
            // NumPy: float16 for bools and 8-bit integers), where `round` keeps integers.
            "rint" => {
                a.check(1, &["x"])?;
                let x = a.tensor(0, "x")?;
                let x = if x.dtype().is_float() {
                    x
                } else {
                    x.astype(crate::ops::dtypes::math_float_result(x.dtype()))
                        .or_else(|e| err(p, e.to_string()))?
                };
                wrap(x.unary(Op::Round))
            }
            "logical_not" => {
                a.check(1, &["x"])?;
                wrap(a.tensor(0, "x")?.logical_not())
            }
            "all" | "any" => {
                a.check(2, &["a", "axis", "keepdims"])?;
                let x = a.tensor(0, "a")?;
                let axes = ufunc_reduce_axes(&x, a.get(1, "axis"))?;
                let keep = to_bool(a.get(usize::MAX, "keepdims"))?;
                wrap(match name {
                    "all" => x.all(axes.as_deref(), keep),
                    _ => x.any(axes.as_deref(), keep),
                })
            }
            "clip" => {
                // NumPy 1's `a_min`/`a_max`, or NumPy 2's and the array API's `min`/`max`;
                // with neither, `x` itself (NumPy 2.1 returns a copy).
                a.check(3, &["a", "x", "a_min", "a_max", "min", "max"])?;
                let x = match a.get(usize::MAX, "x") {
                    Some((v, vp)) => Value::Tensor(super::args::to_tensor(v, vp)?),
                    None => Value::Tensor(a.tensor(0, "a")?),
                };
                let bound = |i, k, alias| {
                    a.get(i, k)
                        .or_else(|| a.get(usize::MAX, alias))
                        .filter(|(v, _)| !matches!(v, Value::None))
                };
                let (lo, hi) = (bound(1, "a_min", "min"), bound(2, "a_max", "max"));
                // NumPy 2: a Python integer past an integer tensor's range on the side where
                // it bounds nothing (a minimum below the dtype's, a maximum above it) is no
                // bound; past it on the other side it is the usual OverflowError.
                let range = match &x {
                    Value::Tensor(t) => t.dtype().int_range(),
                    _ => None,
                };
                let beyond = |b: &Option<(Value, super::Pos)>, below: bool| match (b, range) {
                    (Some((Value::Num(crate::array::Scalar::I64(i)), _)), Some((min, max))) => {
                        let i = i128::from(*i);
                        if below {
                            i < min
                        } else {
                            i > max
                        }
                    }
                    _ => false,
                };
                let lo = if beyond(&lo, true) { None } else { lo };
                let hi = if beyond(&hi, false) { None } else { hi };
                let original = match &x {
                    Value::Tensor(t) => Some(t.clone()),
                    _ => None,
                };
                let x = match lo {
                    Some((v, _)) => apply_binary(Op::Maximum, x, v, p)?,
                    None => x,
                };
                let clipped = match hi {
                    Some((v, _)) => apply_binary(Op::Minimum, x, v, p)?,
                    None => x,
                };
                // NumPy's clip keeps x where x is within the bounds (the sign of its zero).
                match (original, clipped) {
                    (Some(x), Value::Tensor(c)) => wrap(x.kept_where_equal(c)),
                    (_, clipped) => Ok(clipped),
                }
            }
            "expand_dims" | "squeeze" => {
                a.check(2, &["a", "axis"])?;
                let x = a.tensor(0, "a")?;
                let axes = to_axes(a.get(1, "axis"))?;
                wrap(match (name, axes) {
                    ("expand_dims", Some(axes)) => x.expand_dims(&axes),
                    ("expand_dims", None) => return err(p, "expand_dims needs an axis"),
                    (_, axes) => x.squeeze(axes.as_deref()),
                })
            }
            "broadcast_to" => {
                a.check(2, &["array", "shape"])?;
                let x = a.tensor(0, "array")?;
                let (v, vp) = a.need(1, "shape")?;
                wrap(x.broadcast_to(&to_shape(&v, vp)?))
            }
            "stack" => {
                a.check(2, &["arrays", "axis"])?;
                let tensors = a.tensors(0, "arrays")?;
                let axis = a.int_or(1, "axis", 0)?;
                wrap(tensor::stack(&tensors, axis))
            }
            "split" => {
                a.check(3, &["ary", "indices_or_sections", "axis"])?;
                let x = a.tensor(0, "ary")?;
                let axis = a.int_or(2, "axis", 0)?;
                let parts = match a.need(1, "indices_or_sections")? {
                    (Value::Tuple(items), ip) => {
                        x.split_at(&to_ints(&Value::Tuple(items), ip)?, axis)
                    }
                    (v, vp) => match to_int(&v, vp)? {
                        n if n > 0 => x.split_equal(n as usize, axis),
                        n => {
                            return err(
                                vp,
                                format!("number sections must be larger than 0, got {n}"),
                            )
                        }
                    },
                };
                parts
                    .map(|ts| Value::Tuple(ts.into_iter().map(Value::Tensor).collect()))
                    .or_else(|e| err(p, e.to_string()))
            }
            "argmin" | "argmax" => {
                a.check(2, &["a", "axis", "keepdims"])?;
                let x = a.tensor(0, "a")?;
                let axis = a.opt_int(1, "axis")?;
                let keep = to_bool(a.get(usize::MAX, "keepdims"))?;
                let op = if name == "argmin" {
                    Op::ArgMin
                } else {
                    Op::ArgMax
                };
                wrap(x.arg_reduce(op, axis, keep))
            }

            "where" => {
                a.check(3, &["condition", "x", "y"])?;
                if a.positional.len() + a.keywords.len() != 3 {
                    return err(
                        p,
                        "where needs a condition, x and y (the one-argument form is not supported)",
                    );
                }
                let c = a.tensor(0, "condition")?;
                let (x, y) = super::args::weak_pair(a.need(1, "x")?, a.need(2, "y")?)?;
                wrap(tensor::select(&c, &x, &y))
            }
            "tensordot" => {
                a.check(3, &["a", "b", "axes"])?;
                let (x, y) = (a.tensor(0, "a")?, a.tensor(1, "b")?);
                let (a_axes, b_axes) = match a.get(2, "axes") {
                    None => tensordot_count(&x, 2),
                    Some((Value::Tuple(pair), ap)) if pair.len() == 2 => {
                        (to_ints(&pair[0], ap)?, to_ints(&pair[1], ap)?)
                    }
                    Some((v, ap)) => {
                        let n = to_int(&v, ap)?;
                        if n < 0 || n as usize > x.ndim().min(y.ndim()) {
                            return err(ap, format!("tensordot cannot sum over {n} axes"));
                        }
                        tensordot_count(&x, n as usize)
                    }
                };
                wrap(x.tensordot(&y, &a_axes, &b_axes))
            }
            "inner" => {
                a.check(2, &["a", "b"])?;
                wrap(a.tensor(0, "a")?.inner(&a.tensor(1, "b")?))
            }
            _ => self.call_rearrange(name, a),
        }
    }
}

/// `axes=n` of `tensordot`: the last `n` axes of `a` against the first `n` of `b`.
fn tensordot_count(a: &Tensor, n: usize) -> (Vec<i64>, Vec<i64>) {
    let nd = a.ndim() as i64;
    let n = n.min(a.ndim()) as i64;
    ((nd - n..nd).collect(), (0..n).collect())
}
