//! Expression-language names for the array API's rearranging, constructing and counting
//! functions composed in `tensor::rearrange` (`flip`, `roll`, `tile`, `eye`, `tril`...), and
//! its scans with `dtype=`/`include_initial=` (`cumulative_sum`, `cumulative_prod`) and
//! `count_nonzero`. Each takes NumPy's argument names and the array API's.

use super::args::{
    to_axes, to_bool, to_chunk, to_dtype, to_int, to_ints, to_tensor, ufunc_reduce_axes, Args,
};
use super::eval::{Ctx, Value};
use super::{err, ExprError};
use crate::array::{DType, Scalar};
use crate::ops::Op;
use crate::tensor::{self, Tensor};

impl Ctx {
    pub(super) fn call_rearrange(&mut self, name: &str, a: Args) -> Result<Value, ExprError> {
        let p = a.pos;
        let wrap =
            |r: crate::Result<Tensor>| r.map(Value::Tensor).or_else(|e| err(p, e.to_string()));
        let tuple = |r: crate::Result<Vec<Tensor>>| {
            r.map(|ts| Value::Tuple(ts.into_iter().map(Value::Tensor).collect()))
                .or_else(|e| err(p, e.to_string()))
        };
        match name {
            "flip" => {
                a.check(2, &["m", "x", "axis"])?;
                let x = self.first_tensor(&a, &["m", "x"])?;
                let axes = to_axes(a.get(1, "axis"))?;
                wrap(x.flip(axes.as_deref()))
            }
            "roll" => {
                a.check(3, &["a", "x", "shift", "axis"])?;
                let x = self.first_tensor(&a, &["a", "x"])?;
                let (sv, sp) = a.need(1, "shift")?;
                let shifts = to_ints(&sv, sp)?;
                let axes = to_axes(a.get(2, "axis"))?;
                wrap(x.roll(&shifts, axes.as_deref()))
            }
            "moveaxis" => {
                a.check(3, &["a", "x", "source", "destination"])?;
                let x = self.first_tensor(&a, &["a", "x"])?;
                let (s, sp) = a.need(1, "source")?;
                let (d, dp) = a.need(2, "destination")?;
                wrap(x.moveaxis(&to_ints(&s, sp)?, &to_ints(&d, dp)?))
            }
            "tile" => {
                a.check(2, &["A", "x", "reps", "repetitions"])?;
                let x = self.first_tensor(&a, &["A", "x"])?;
                let (r, rp) = a
                    .get(1, "reps")
                    .or_else(|| a.get(usize::MAX, "repetitions"))
                    .map_or_else(|| err(p, "tile needs argument 'reps'"), Ok)?;
                wrap(x.tile(&to_ints(&r, rp)?))
            }
            "repeat" => {
                a.check(3, &["a", "x", "repeats", "axis"])?;
                let x = self.first_tensor(&a, &["a", "x"])?;
                let repeats = match a.need(1, "repeats")? {
                    (Value::Num(s), rp) => to_int(&Value::Num(s), rp)?,
                    (_, rp) => {
                        return err(
                            rp,
                            "repeat: repeats per element (an array) is not supported: the \
                             result's length would depend on its values; pass an integer",
                        )
                    }
                };
                let axis = a.opt_int(2, "axis")?;
                wrap(x.repeat(repeats, axis))
            }
            "unstack" => {
                a.check(2, &["x", "axis"])?;
                let x = a.tensor(0, "x")?;
                tuple(x.unstack(a.int_or(1, "axis", 0)?))
            }
            "broadcast_arrays" | "meshgrid" => {
                let keys: &[&str] = if name == "meshgrid" {
                    &["indexing"]
                } else {
                    &[]
                };
                a.check(usize::MAX, keys)?;
                let tensors = a
                    .positional
                    .iter()
                    .map(|(v, vp)| to_tensor(v.clone(), *vp))
                    .collect::<Result<Vec<_>, _>>()?;
                if name == "broadcast_arrays" {
                    return tuple(tensor::broadcast_arrays(&tensors));
                }
                let indexing = match a.get(usize::MAX, "indexing") {
                    None => "xy".to_string(),
                    Some((Value::Str(s), _)) => s,
                    Some((_, ip)) => return err(ip, "meshgrid: indexing must be 'xy' or 'ij'"),
                };
                tuple(tensor::meshgrid(&tensors, &indexing))
            }
            "diff" => {
                a.check(5, &["a", "x", "n", "axis", "prepend", "append"])?;
                let x = self.first_tensor(&a, &["a", "x"])?;
                let n = a.int_or(1, "n", 1)?;
                let axis = a.int_or(2, "axis", -1)?;
                let edge = |i, k| match a.get(i, k) {
                    None | Some((Value::None, _)) => Ok(None),
                    Some((v, vp)) => to_tensor(v, vp).map(Some),
                };
                let (pre, app) = (edge(3, "prepend")?, edge(4, "append")?);
                wrap(x.diff(n, axis, pre.as_ref(), app.as_ref()))
            }
            "take_along_axis" => {
                a.check(3, &["arr", "x", "indices", "axis"])?;
                let x = self.first_tensor(&a, &["arr", "x"])?;
                let idx = a.tensor(1, "indices")?;
                let axis = match a.get(2, "axis") {
                    None => -1,
                    Some((Value::None, ap)) => {
                        return err(ap, "take_along_axis: axis=None is not supported")
                    }
                    Some((v, ap)) => to_int(&v, ap)?,
                };
                wrap(x.take_along_axis(&idx, axis))
            }
            "tril" | "triu" => {
                a.check(2, &["m", "x", "k"])?;
                let x = self.first_tensor(&a, &["m", "x"])?;
                let k = a.int_or(1, "k", 0)?;
                wrap(x.triangle(k, name == "triu"))
            }
            "eye" => {
                a.check(
                    3,
                    &[
                        "N",
                        "n_rows",
                        "M",
                        "n_cols",
                        "k",
                        "dtype",
                        "chunk",
                        "chunk_size",
                    ],
                )?;
                let count = |i, k1, k2| -> Result<Option<usize>, ExprError> {
                    match a.get(i, k1).or_else(|| a.get(usize::MAX, k2)) {
                        None | Some((Value::None, _)) => Ok(None),
                        Some((v, vp)) => {
                            let n = to_int(&v, vp)?;
                            usize::try_from(n).map(Some).or_else(|_| {
                                err(
                                    vp,
                                    format!("eye: negative dimensions are not allowed ({n})"),
                                )
                            })
                        }
                    }
                };
                let n = count(0, "N", "n_rows")?
                    .map_or_else(|| err(p, "eye needs argument 'N'"), Ok)?;
                let m = count(1, "M", "n_cols")?.unwrap_or(n);
                let k = a.int_or(2, "k", 0)?;
                let dtype = to_dtype(a.get(usize::MAX, "dtype"))?.unwrap_or(DType::F64);
                let chunk = to_chunk(
                    a.get(usize::MAX, "chunk")
                        .or(a.get(usize::MAX, "chunk_size")),
                    &[n, m],
                    dtype.itemsize(),
                )?;
                wrap(tensor::eye(n, m, k, dtype, chunk))
            }
            "cumulative_sum" | "cumulative_prod" => {
                a.check(2, &["x", "axis", "dtype", "include_initial"])?;
                let x = a.tensor(0, "x")?;
                let axis = a.opt_int(1, "axis")?;
                let dtype = to_dtype(a.get(usize::MAX, "dtype"))?;
                let initial = to_bool(a.get(usize::MAX, "include_initial"))?;
                wrap(cumulative(
                    &x,
                    name == "cumulative_sum",
                    axis,
                    dtype,
                    initial,
                ))
            }
            "count_nonzero" => {
                a.check(2, &["a", "x", "axis", "keepdims"])?;
                let x = self.first_tensor(&a, &["a", "x"])?;
                let axes = ufunc_reduce_axes(&x, a.get(1, "axis"))?;
                let keep = to_bool(a.get(usize::MAX, "keepdims"))?;
                wrap(
                    x.truthy()
                        .and_then(|t| t.astype(DType::I64))
                        .and_then(|t| t.sum(axes.as_deref(), keep)),
                )
            }
            _ => err(p, format!("unknown function {name}")),
        }
    }

    /// The first argument, by position or under either of its names (NumPy's and the array
    /// API's).
    fn first_tensor(&self, a: &Args, names: &[&str]) -> Result<Tensor, ExprError> {
        for k in names {
            if let Some((v, vp)) = a.get(usize::MAX, k) {
                return to_tensor(v, vp);
            }
        }
        a.tensor(0, names[0])
    }
}

/// The array API's `cumulative_sum`/`cumulative_prod`: along `axis` (which a tensor of more
/// than one dimension must name), in `dtype` when given (else cumsum's), with the identity
/// first when `include_initial`.
fn cumulative(
    x: &Tensor,
    sum: bool,
    axis: Option<i64>,
    dtype: Option<DType>,
    include_initial: bool,
) -> crate::Result<Tensor> {
    let name = if sum {
        "cumulative_sum"
    } else {
        "cumulative_prod"
    };
    if x.ndim() == 0 {
        // NumPy scans a 0-d tensor as one of shape (1,).
        return cumulative(&x.reshape(&[1])?, sum, axis, dtype, include_initial);
    }
    let axis = match axis {
        Some(a) => a,
        None if x.ndim() == 1 => 0,
        None => {
            return Err(crate::error::AresError::arg(
                name,
                "axis must be given for a tensor of more than one dimension",
            ))
        }
    };
    let axis = x.normalize_axes(name, Some(&[axis]))?[0];
    let source = match dtype {
        Some(d) if d != x.dtype() => x.astype(d)?,
        _ => x.clone(),
    };
    let op = if sum { Op::CumSum } else { Op::CumProd };
    let mut out = source.scan(op, Some(axis as i64))?;
    if let Some(d) = dtype {
        if out.dtype() != d {
            out = out.astype(d)?;
        }
    }
    if !include_initial {
        return Ok(out);
    }
    let mut shape = out.shape().to_vec();
    shape[axis] = 1;
    let identity = if sum { Scalar::I64(0) } else { Scalar::I64(1) };
    let mut first = tensor::full(&shape, identity, tensor::auto_chunk(&shape))?;
    if first.dtype() != out.dtype() {
        first = first.astype(out.dtype())?;
    }
    tensor::concatenate(&[first, out], axis as i64)
}

#[cfg(test)]
mod tests {
    use crate::expr::evaluate;

    /// Each name parses NumPy's and the standard's arguments into the right shapes and
    /// dtypes, and refuses bad ones with a message naming the problem.
    #[test]
    fn names_take_numpy_and_array_api_arguments() {
        for (program, shape, dtype) in [
            (
                "flip(ones((2, 3)), axis=(0, 1))",
                &[2usize, 3][..],
                "float64",
            ),
            (
                "roll(ones((2, 3)), (1, 2), axis=(0, 1))",
                &[2, 3],
                "float64",
            ),
            ("moveaxis(ones((2, 3, 4)), 0, -1)", &[3, 4, 2], "float64"),
            ("tile(ones(3), (2, 2))", &[2, 6], "float64"),
            ("repeat(ones((2, 3)), 2, axis=1)", &[2, 6], "float64"),
            ("diff(ones((2, 5)), n=2)", &[2, 3], "float64"),
            ("diff(ones(4) > 0, prepend=0)", &[4], "int64"),
            ("eye(3, 4, k=1, dtype='int32')", &[3, 4], "int32"),
            ("triu(ones((2, 3, 3)), k=-1)", &[2, 3, 3], "float64"),
            (
                "cumulative_sum(ones((2, 3)), axis=1, include_initial=True)",
                &[2, 4],
                "float64",
            ),
            (
                "cumulative_prod(ones(3, dtype='int32'), dtype='float32')",
                &[3],
                "float32",
            ),
            (
                "count_nonzero(ones((2, 3)), axis=0, keepdims=True)",
                &[1, 3],
                "int64",
            ),
            ("sum(ones(3, dtype='int32'), dtype='int32')", &[], "int32"),
            ("var(ones((2, 3)), axis=1, ddof=0.5)", &[2], "float64"),
            (
                "take_along_axis(ones((2, 3)), zeros((2, 1), dtype='int64'), axis=1)",
                &[2, 1],
                "float64",
            ),
        ] {
            let t = evaluate(program).unwrap_or_else(|e| panic!("{program}: {e}"));
            assert_eq!(t.shape(), shape, "{program}");
            assert_eq!(t.dtype().to_string(), dtype, "{program}");
        }
        for (program, message) in [
            ("cumulative_sum(ones((2, 3)))", "axis must be given"),
            ("repeat(ones(3), ones(3))", "per element"),
            ("meshgrid(ones(3), indexing='yx')", "indexing must be"),
            ("tril(ones(3))", "at least 2 dimensions"),
            (
                "moveaxis(ones((2, 3)), (0, 1), 0)",
                "same number of elements",
            ),
            ("eye(-1)", "negative dimensions"),
            ("var(ones(3), ddof=-0.5)", "non-negative"),
            ("sum(ones(3), dtype='frobnicate')", "unknown dtype"),
        ] {
            let e = evaluate(program)
                .err()
                .unwrap_or_else(|| panic!("{program} is refused"));
            assert!(e.message.contains(message), "{program}: {e}");
        }
    }
}
