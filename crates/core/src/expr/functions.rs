//! The numpy-named functions of the expression language (argument conversions are in
//! `args`).
//!
//! Random functions without `seed=` get the seed 0, 1, 2... in the order they appear, so a
//! program always means the same numbers.

use super::args::*;
use super::eval::{apply_binary, binary_op, unary_op, Ctx, Value};
use super::{err, ExprError};
use crate::array::{DType, Scalar};
use crate::ops::family::reduction;
use crate::tensor::{self, Tensor};

impl Ctx {
    fn random_seed(&mut self, a: &Args) -> Result<u64, ExprError> {
        match a.get(usize::MAX, "seed") {
            Some((v, p)) => Ok(to_int(&v, p)? as u64),
            None => {
                self.next_seed += 1;
                Ok(self.next_seed - 1)
            }
        }
    }

    pub(super) fn call(&mut self, name: &str, a: Args) -> Result<Value, ExprError> {
        let p = a.pos;
        let wrap =
            |r: crate::Result<Tensor>| r.map(Value::Tensor).or_else(|e| err(p, e.to_string()));
        if let Some(op) = unary_op(name) {
            a.check(1, &["x"])?;
            return wrap(a.tensor(0, "x")?.unary(op));
        }
        if let Some(op) = binary_op(name) {
            a.check(2, &["x1", "x2"])?;
            let ((x, _), (y, _)) = (a.need(0, "x1")?, a.need(1, "x2")?);
            return apply_binary(op, x, y, p);
        }
        if let Some(op) = reduction::fold_op(name) {
            // `ddof` is checked and ignored: these once shared the statistics' arguments.
            // `dtype=` (sums and products): the accumulator's and the result's dtype.
            let with_dtype = matches!(name, "sum" | "prod");
            let keys: &[&str] = if with_dtype {
                &["a", "x", "axis", "keepdims", "ddof", "dtype"]
            } else {
                &["a", "axis", "keepdims", "ddof"]
            };
            a.check(2, keys)?;
            let x = match a.get(usize::MAX, "x") {
                Some((v, vp)) if with_dtype => to_tensor(v, vp)?,
                _ => a.tensor(0, "a")?,
            };
            let axes = ufunc_reduce_axes(&x, a.get(1, "axis"))?;
            let keep = to_bool(a.get(usize::MAX, "keepdims"))?;
            if let Some((v, p)) = a.get(usize::MAX, "ddof") {
                to_usize(&v, p)?;
            }
            let dtype = to_dtype(a.get(usize::MAX, "dtype"))?;
            return wrap(match dtype {
                None => x.reduce(op, axes.as_deref(), keep),
                Some(d) => x
                    .astype(d)
                    .and_then(|x| x.reduce(op, axes.as_deref(), keep))
                    .and_then(|r| if r.dtype() == d { Ok(r) } else { r.astype(d) }),
            });
        }
        if let Some(op) = reduction::scan_op(name) {
            a.check(2, &["a", "axis"])?;
            let x = a.tensor(0, "a")?;
            let axis = a.opt_int(1, "axis")?;
            return wrap(x.scan(op, axis));
        }
        match name {
            "rand" | "randn" => {
                a.check(usize::MAX, &["chunk", "chunk_size", "seed"])?;
                let shape = match a.positional.as_slice() {
                    [(v @ Value::Tuple(_), p)] => to_shape(v, *p)?,
                    dims => dims
                        .iter()
                        .map(|(v, p)| to_usize(v, *p))
                        .collect::<Result<_, _>>()?,
                };
                let chunk = to_chunk(
                    a.get(usize::MAX, "chunk")
                        .or(a.get(usize::MAX, "chunk_size")),
                    &shape,
                    DType::F64.itemsize(),
                )?;
                let seed = Some(self.random_seed(&a)?);
                wrap(if name == "rand" {
                    tensor::rand(&shape, chunk, seed)
                } else {
                    tensor::randn(&shape, chunk, seed)
                })
            }
            "zeros" | "ones" | "full" => {
                let value_at = usize::from(name == "full");
                a.check(
                    1 + value_at,
                    &["shape", "fill_value", "chunk", "chunk_size", "dtype"],
                )?;
                let (sv, sp) = a.need(0, "shape")?;
                let shape = to_shape(&sv, sp)?;
                let value = match name {
                    "zeros" => Scalar::I64(0),
                    "ones" => Scalar::I64(1),
                    _ => match a.need(1, "fill_value")? {
                        (Value::Num(s), _) => s,
                        (_, p) => return err(p, "fill_value must be a number"),
                    },
                };
                let dtype = to_dtype(a.get(usize::MAX, "dtype"))?.unwrap_or(if name == "full" {
                    value.dtype()
                } else {
                    DType::F64
                });
                // An integer fill outside an integer dtype's range is NumPy 2's
                // OverflowError, not a wrapped value.
                if let (Scalar::I64(i), Some((lo, hi))) = (value, dtype.int_range()) {
                    if !(lo..=hi).contains(&i128::from(i)) {
                        return err(
                            a.pos,
                            format!("Python integer {i} out of bounds for {dtype}"),
                        );
                    }
                }
                // A fill is one of the three scalar kinds; narrow and complex fills are the
                // wide real fill cast (fused into one pass with it).
                let value = match dtype.wide() {
                    DType::F64 | DType::C128 => Scalar::F64(value.as_f64()),
                    DType::Bool => Scalar::Bool(value.as_bool()),
                    _ => Scalar::I64(value.as_i64()),
                };
                let chunk = to_chunk(
                    a.get(usize::MAX, "chunk")
                        .or(a.get(usize::MAX, "chunk_size")),
                    &shape,
                    dtype.itemsize(),
                )?;
                let filled = tensor::full(&shape, value, chunk);
                wrap(if dtype == value.dtype() {
                    filled
                } else {
                    filled.and_then(|t| t.astype(dtype))
                })
            }
            "arange" => {
                a.check(3, &["chunk", "chunk_size"])?;
                let nums: Vec<Scalar> = a
                    .positional
                    .iter()
                    .map(|(v, p)| {
                        if let Value::Num(s) = v {
                            Ok(*s)
                        } else {
                            err(*p, "arange takes numbers")
                        }
                    })
                    .collect::<Result<_, _>>()?;
                let (start, stop, step) = match nums.as_slice() {
                    [stop] => (Scalar::I64(0), *stop, Scalar::I64(1)),
                    [start, stop] => (*start, *stop, Scalar::I64(1)),
                    [start, stop, step] => (*start, *stop, *step),
                    _ => return err(p, "arange needs 1 to 3 numbers"),
                };
                let n = tensor::arange_len(start, stop, step)
                    .or_else(|e| err(p, e.to_string()))?
                    .3;
                let chunk = to_chunk(
                    a.get(usize::MAX, "chunk")
                        .or(a.get(usize::MAX, "chunk_size")),
                    &[n],
                    DType::F64.itemsize(),
                )?;
                wrap(tensor::arange(start, stop, step, chunk))
            }
            "linspace" => {
                a.check(
                    3,
                    &["start", "stop", "num", "endpoint", "chunk", "chunk_size"],
                )?;
                let num_of = |i, k| -> Result<f64, ExprError> {
                    match a.need(i, k)? {
                        (Value::Num(s), _) => Ok(s.as_f64()),
                        (_, p) => err(p, format!("{k} must be a number")),
                    }
                };
                let num = match a.get(2, "num") {
                    Some((v, p)) => to_usize(&v, p)?,
                    None => 50,
                };
                let endpoint = match a.get(usize::MAX, "endpoint") {
                    None => true,
                    Some((Value::Num(Scalar::Bool(b)), _)) => b,
                    Some((_, p)) => return err(p, "endpoint must be True or False"),
                };
                wrap(tensor::linspace_endpoint(
                    num_of(0, "start")?,
                    num_of(1, "stop")?,
                    num,
                    endpoint,
                    to_chunk(
                        a.get(usize::MAX, "chunk")
                            .or(a.get(usize::MAX, "chunk_size")),
                        &[num],
                        DType::F64.itemsize(),
                    )?,
                ))
            }
            "mean" | "var" | "std" => {
                a.check(2, &["a", "axis", "keepdims", "ddof"])?;
                let x = a.tensor(0, "a")?;
                let axes = to_axes(a.get(1, "axis"))?;
                let keep = to_bool(a.get(usize::MAX, "keepdims"))?;
                let ddof = match a.get(usize::MAX, "ddof") {
                    Some((Value::Num(Scalar::F64(c)), p)) if name != "mean" => {
                        if c.fract() != 0.0 && c.is_finite() && c > 0.0 {
                            let axes = axes.as_deref();
                            return wrap(fractional_correction(&x, axes, keep, c, name == "std"));
                        }
                        to_usize(&Value::Num(Scalar::I64(c as i64)), p).and_then(|d| {
                            if c.fract() == 0.0 && c >= 0.0 {
                                Ok(d)
                            } else {
                                err(p, format!("correction must be non-negative, got {c}"))
                            }
                        })?
                    }
                    Some((v, p)) => to_usize(&v, p)?,
                    None => 0,
                };
                let axes = axes.as_deref();
                wrap(match name {
                    "mean" => x.mean(axes, keep),
                    "var" => x.var(axes, keep, ddof),
                    _ => x.std(axes, keep, ddof),
                })
            }
            "matmul" | "dot" => {
                a.check(2, &[])?;
                let (x, y) = (a.tensor(0, "a")?, a.tensor(1, "b")?);
                if name == "dot" && (x.ndim() == 0 || y.ndim() == 0) {
                    return wrap(x.elementwise(crate::ops::Op::Mul, &y));
                }
                if name == "dot" && (x.ndim() > 2 || y.ndim() > 2) {
                    // N-D dot sums over the last axis of a and the second-to-last of b.
                    let b_axis = if y.ndim() >= 2 { -2 } else { -1 };
                    return wrap(x.tensordot(&y, &[-1], &[b_axis]));
                }
                wrap(x.matmul_nd(&y))
            }
            "transpose" => {
                a.check(usize::MAX, &["axes"])?;
                let x = a.tensor(0, "a")?;
                let axes: Option<Vec<i64>> = match a.positional.len() {
                    0 | 1 => match a.get(usize::MAX, "axes") {
                        None | Some((Value::None, _)) => None,
                        Some((v, p)) => Some(to_ints(&v, p)?),
                    },
                    2 => Some(to_ints(&a.positional[1].0, a.positional[1].1)?),
                    _ => Some(
                        a.positional[1..]
                            .iter()
                            .map(|(v, p)| to_int(v, *p))
                            .collect::<Result<_, _>>()?,
                    ),
                };
                // Negative axes count from the end, as in NumPy; each one is checked.
                wrap(match axes {
                    Some(axes) => x.permute_dims(&axes),
                    None => x.transpose(None),
                })
            }
            "concatenate" => {
                a.check(2, &["axis"])?;
                let tensors = a.tensors(0, "arrays")?;
                let axis = a.int_or(1, "axis", 0)?;
                wrap(tensor::concatenate(&tensors, axis))
            }
            "rechunk" => {
                a.check(2, &["chunk", "chunk_size"])?;
                let x = a.tensor(0, "a")?;
                let spec = a.get(1, "chunk").or(a.get(usize::MAX, "chunk_size"));
                if spec.is_none() {
                    return err(p, "rechunk needs a chunk size");
                }
                wrap(x.rechunk(to_chunk(spec, x.shape(), x.dtype().itemsize())?))
            }
            "reshape" => {
                a.check(usize::MAX, &["shape"])?;
                let x = a.tensor(0, "a")?;
                let dims: Vec<i64> = match (a.positional.len(), a.get(1, "shape")) {
                    (0..=2, Some((v, p))) => to_ints(&v, p)?,
                    (n, _) if n > 2 => a.positional[1..]
                        .iter()
                        .map(|(v, p)| to_int(v, *p))
                        .collect::<Result<_, _>>()?,
                    _ => return err(p, "reshape needs a shape"),
                };
                wrap(x.reshape_when_known(&dims))
            }
            "astype" => {
                a.check(2, &["dtype"])?;
                let x = a.tensor(0, "a")?;
                let dtype = to_dtype(a.get(1, "dtype"))?
                    .map_or_else(|| err(p, "astype needs a dtype"), Ok)?;
                wrap(x.astype(dtype))
            }
            "from_npy" | "from_zarr" | "to_npy" | "to_zarr" => self.call_io(name, a),
            _ if name.starts_with("linalg.") => self.call_linalg(name, a),
            _ if name.starts_with("fft.") => self.call_fft(name, a),
            _ if super::statistics::is_statistic(name) => self.call_statistics(name, a),
            // Shuffle (issue 11).
            "sort" | "argsort" => {
                a.check(3, &["a", "axis", "descending"])?;
                let x = a.tensor(0, "a")?;
                let axis = a.int_or(1, "axis", -1)?;
                let descending = to_bool(a.get(2, "descending"))?;
                wrap(x.sort_along(axis, descending, name == "argsort"))
            }
            "unique_all" | "unique_inverse" => {
                a.check(1, &["x"])?;
                let x = a.tensor(0, "x")?;
                let parts = if name == "unique_all" {
                    x.unique_all().map(|p| p.to_vec())
                } else {
                    x.unique_inverse().map(|p| p.to_vec())
                };
                let parts = parts.or_else(|e| err(p, e.to_string()))?;
                Ok(Value::Tuple(parts.into_iter().map(Value::Tensor).collect()))
            }
            "nonzero" => {
                a.check(1, &["a"])?;
                let x = a.tensor(0, "a")?;
                let parts = x.nonzero().or_else(|e| err(p, e.to_string()))?;
                Ok(Value::Tuple(parts.into_iter().map(Value::Tensor).collect()))
            }
            "unique" => {
                a.check(2, &["ar", "return_counts", "equal_nan"])?;
                let x = a.tensor(0, "ar")?;
                if let Some((v, vp)) = a.get(usize::MAX, "equal_nan") {
                    if !to_bool(Some((v, vp)))? {
                        return err(
                            vp,
                            "unique: only equal_nan=True (NumPy's default) is supported",
                        );
                    }
                }
                let counts = to_bool(a.get(1, "return_counts"))?;
                let (values, counts) = x.unique(counts).or_else(|e| err(p, e.to_string()))?;
                Ok(match counts {
                    Some(c) => Value::Tuple(vec![Value::Tensor(values), Value::Tensor(c)]),
                    None => Value::Tensor(values),
                })
            }
            "take" => {
                a.check(3, &["a", "indices", "axis"])?;
                let x = a.tensor(0, "a")?;
                let idx = a.tensor(1, "indices")?;
                let axis = a.opt_int(2, "axis")?;
                wrap(x.take(&idx, axis))
            }
            "compress" => {
                a.check(3, &["condition", "a", "axis"])?;
                let condition = a.tensor(0, "condition")?;
                let x = a.tensor(1, "a")?;
                let axis = a.opt_int(2, "axis")?;
                wrap(x.compress(&condition, axis))
            }
            "searchsorted" => {
                a.check(3, &["a", "v", "side"])?;
                let sorted = a.tensor(0, "a")?;
                let v = a.tensor(1, "v")?;
                let right = match a.get(2, "side") {
                    None => false,
                    Some((Value::Str(s), _)) if s == "left" => false,
                    Some((Value::Str(s), _)) if s == "right" => true,
                    Some((_, sp)) => {
                        return err(sp, "searchsorted: side must be 'left' or 'right'")
                    }
                };
                wrap(sorted.searchsorted(&v, right))
            }
            "shuffle_bench" => {
                a.check(3, &["in_parts", "out_parts", "rows"])?;
                let count = |i, n| -> Result<u32, ExprError> {
                    let v = a.int_or(i, n, -1)?;
                    u32::try_from(v).or_else(|_| err(p, format!("{n} must be in 0..2^32, got {v}")))
                };
                let (i, o) = (count(0, "in_parts")?, count(1, "out_parts")?);
                let rows = a.int_or(2, "rows", -1)?;
                let rows = u64::try_from(rows)
                    .or_else(|_| err(p, format!("rows must be non-negative, got {rows}")))?;
                wrap(tensor::shuffle_bench(i, o, rows))
            }
            _ => self.call_composed(name, a),
        }
    }
}

/// `var`/`std` with a correction that is not a whole number (the array API allows any
/// non-negative float): the population variance scaled by `N / (N - c)`, `N` the count of
/// reduced elements; `N <= c` divides by zero as NumPy does (`inf`, or NaN for zero).
fn fractional_correction(
    x: &Tensor,
    axes: Option<&[i64]>,
    keep: bool,
    c: f64,
    std: bool,
) -> crate::Result<Tensor> {
    let reduced = x.normalize_axes("var", axes)?;
    let n: f64 = reduced.iter().map(|d| x.shape()[*d] as f64).product();
    let var = x.var(axes, keep, 0)?;
    let scaled = var.binary_scalar(crate::ops::Op::Mul, Scalar::F64(n), false)?;
    let denominator = (n - c).max(0.0);
    let out = scaled.binary_scalar(crate::ops::Op::Div, Scalar::F64(denominator), false)?;
    if std {
        out.sqrt()
    } else {
        Ok(out)
    }
}
