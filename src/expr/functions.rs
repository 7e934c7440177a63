//! The numpy-named functions of the expression language and their argument conversions.
//!
//! Random functions without `seed=` get the seed 0, 1, 2... in the order they appear, so a
//! program always means the same numbers.

use super::eval::{apply_binary, binary_op, unary_op, Ctx, Value};
use super::{err, ExprError, Pos};
use crate::array::{DType, Scalar};
use crate::ops::ChunkSpec;
use crate::tensor::{self, Tensor};

/// Positional and keyword arguments of one call, checked against the names it accepts.
pub(super) struct Args {
    pub(super) func: String,
    pub(super) pos: Pos,
    pub(super) positional: Vec<(Value, Pos)>,
    pub(super) keywords: Vec<(String, Value, Pos)>,
}

impl Args {
    pub(super) fn check(&self, max_positional: usize, keywords: &[&str]) -> Result<(), ExprError> {
        if let Some((_, p)) = self.positional.get(max_positional) {
            return err(
                *p,
                format!(
                    "{} takes at most {max_positional} positional arguments",
                    self.func
                ),
            );
        }
        for (k, _, p) in &self.keywords {
            if !keywords.contains(&k.as_str()) {
                return err(
                    *p,
                    format!("unknown keyword argument '{k}' for {}", self.func),
                );
            }
        }
        Ok(())
    }

    /// Argument `i`, or keyword `name`.
    pub(super) fn get(&self, i: usize, name: &str) -> Option<(Value, Pos)> {
        self.keywords
            .iter()
            .find(|(k, _, _)| k == name)
            .map(|(_, v, p)| (v.clone(), *p))
            .or_else(|| self.positional.get(i).cloned())
    }

    pub(super) fn need(&self, i: usize, name: &str) -> Result<(Value, Pos), ExprError> {
        self.get(i, name).map_or_else(
            || err(self.pos, format!("{} needs argument '{name}'", self.func)),
            Ok,
        )
    }

    pub(super) fn tensor(&self, i: usize, name: &str) -> Result<Tensor, ExprError> {
        let (v, p) = self.need(i, name)?;
        to_tensor(v, p)
    }
}

pub(super) fn to_tensor(v: Value, p: Pos) -> Result<Tensor, ExprError> {
    match v {
        Value::Tensor(t) => Ok(t),
        Value::Num(s) => tensor::full(&[], s, 1).or_else(|e| err(p, e.to_string())),
        _ => err(p, "expected a tensor"),
    }
}

/// An integer argument. As in NumPy, floats (`2.0`) and bools are not integers here.
pub(super) fn to_int(v: &Value, p: Pos) -> Result<i64, ExprError> {
    match v {
        Value::Num(Scalar::I64(i)) => Ok(*i),
        Value::Num(s) => err(p, format!("expected an integer, got the {} {s}", s.dtype())),
        _ => err(p, "expected an integer"),
    }
}

pub(super) fn to_usize(v: &Value, p: Pos) -> Result<usize, ExprError> {
    let i = to_int(v, p)?;
    usize::try_from(i).or_else(|_| err(p, format!("expected a non-negative integer, got {i}")))
}

pub(super) fn to_ints(v: &Value, p: Pos) -> Result<Vec<i64>, ExprError> {
    match v {
        Value::Tuple(items) => items.iter().map(|x| to_int(x, p)).collect(),
        other => Ok(vec![to_int(other, p)?]),
    }
}

pub(super) fn to_shape(v: &Value, p: Pos) -> Result<Vec<usize>, ExprError> {
    match v {
        Value::Tuple(items) => items.iter().map(|x| to_usize(x, p)).collect(),
        other => Ok(vec![to_usize(other, p)?]),
    }
}

/// `chunk=`: one length for every dimension, one per dimension, or, as dask's `chunks=`, a
/// tuple of every chunk length for some dimensions (`((2, 3, 5), 4)`).
pub(super) fn to_chunk(v: Option<(Value, Pos)>, shape: &[usize]) -> Result<ChunkSpec, ExprError> {
    match v {
        None | Some((Value::None, _)) => Ok(tensor::auto_chunk(shape)),
        Some((Value::Tuple(items), p)) if items.iter().any(|x| matches!(x, Value::Tuple(_))) => {
            if items.len() != shape.len() {
                return err(
                    p,
                    format!(
                        "chunk has {} entries for a tensor of {} dimensions",
                        items.len(),
                        shape.len()
                    ),
                );
            }
            let dims = items
                .iter()
                .zip(shape)
                .map(|(x, n)| match x {
                    Value::Tuple(lens) => lens.iter().map(|l| to_usize(l, p)).collect(),
                    one => Ok(crate::prepare::tile::split_dim(
                        *n,
                        to_usize(one, p)?.max(1),
                    )),
                })
                .collect::<Result<_, _>>()?;
            Ok(ChunkSpec::Explicit(dims))
        }
        Some((Value::Tuple(items), p)) => Ok(ChunkSpec::PerDim(
            items
                .iter()
                .map(|x| to_usize(x, p))
                .collect::<Result<_, _>>()?,
        )),
        Some((v, p)) => Ok(ChunkSpec::Uniform(to_usize(&v, p)?)),
    }
}

pub(super) fn to_bool(v: Option<(Value, Pos)>) -> Result<bool, ExprError> {
    match v {
        None => Ok(false),
        Some((Value::Num(s), _)) => Ok(s.as_bool()),
        Some((_, p)) => err(p, "expected True or False"),
    }
}

pub(super) fn to_axes(v: Option<(Value, Pos)>) -> Result<Option<Vec<i64>>, ExprError> {
    match v {
        None | Some((Value::None, _)) => Ok(None),
        Some((v, p)) => to_ints(&v, p).map(Some),
    }
}

/// The axes of a ufunc reduction (`sum`, `prod`, `min`, `max`, `all`, `any`). NumPy keeps a
/// legacy rule for them: on a 0-d tensor, the integer axis `0` or `-1` reduces nothing.
pub(super) fn ufunc_reduce_axes(
    x: &Tensor,
    v: Option<(Value, Pos)>,
) -> Result<Option<Vec<i64>>, ExprError> {
    match v {
        Some((Value::Num(Scalar::I64(0 | -1)), _)) if x.ndim() == 0 => Ok(Some(vec![])),
        v => to_axes(v),
    }
}

pub(super) fn to_dtype(v: Option<(Value, Pos)>) -> Result<Option<DType>, ExprError> {
    match v {
        None | Some((Value::None, _)) => Ok(None),
        Some((Value::Str(s), p)) => DType::parse(&s).map(Some).map_or_else(
            || err(p, format!("unknown dtype {s:?} (bool, int64, float64)")),
            Ok,
        ),
        Some((_, p)) => err(p, "dtype must be a string such as 'float64'"),
    }
}

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
                let value = match dtype {
                    DType::F64 => Scalar::F64(value.as_f64()),
                    DType::I64 => Scalar::I64(value.as_i64()),
                    DType::Bool => Scalar::Bool(value.as_bool()),
                };
                let chunk = to_chunk(
                    a.get(usize::MAX, "chunk")
                        .or(a.get(usize::MAX, "chunk_size")),
                    &shape,
                )?;
                wrap(tensor::full(&shape, value, chunk))
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
                    )?,
                ))
            }
            "sum" | "prod" | "min" | "max" | "amin" | "amax" | "mean" | "var" | "std" => {
                a.check(2, &["a", "axis", "keepdims", "ddof"])?;
                let x = a.tensor(0, "a")?;
                let axes = match name {
                    "mean" | "var" | "std" => to_axes(a.get(1, "axis"))?,
                    _ => ufunc_reduce_axes(&x, a.get(1, "axis"))?,
                };
                let keep = to_bool(a.get(usize::MAX, "keepdims"))?;
                let ddof = match a.get(usize::MAX, "ddof") {
                    Some((v, p)) => to_usize(&v, p)?,
                    None => 0,
                };
                let axes = axes.as_deref();
                wrap(match name {
                    "sum" => x.sum(axes, keep),
                    "prod" => x.prod(axes, keep),
                    "min" | "amin" => x.min(axes, keep),
                    "max" | "amax" => x.max(axes, keep),
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
                // Negative axes count from the end, as in NumPy.
                let n = x.ndim() as i64;
                let axes: Option<Vec<usize>> = axes.map(|v| {
                    v.iter()
                        .map(|d| (if *d < 0 { d + n } else { *d }).max(0) as usize)
                        .collect()
                });
                wrap(x.transpose(axes.as_deref()))
            }
            "concatenate" => {
                a.check(2, &["axis"])?;
                let (list, lp) = a.need(0, "arrays")?;
                let Value::Tuple(items) = list else {
                    return err(lp, "concatenate takes a tuple of tensors");
                };
                let tensors = items
                    .into_iter()
                    .map(|v| to_tensor(v, lp))
                    .collect::<Result<Vec<_>, _>>()?;
                let axis = match a.get(1, "axis") {
                    Some((v, p)) => to_int(&v, p)?,
                    None => 0,
                };
                wrap(tensor::concatenate(&tensors, axis))
            }
            "rechunk" => {
                a.check(2, &["chunk", "chunk_size"])?;
                let x = a.tensor(0, "a")?;
                let spec = a.get(1, "chunk").or(a.get(usize::MAX, "chunk_size"));
                if spec.is_none() {
                    return err(p, "rechunk needs a chunk size");
                }
                wrap(x.rechunk(to_chunk(spec, x.shape())?))
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
                wrap(x.reshape(&dims))
            }
            "astype" => {
                a.check(2, &["dtype"])?;
                let x = a.tensor(0, "a")?;
                let dtype = to_dtype(a.get(1, "dtype"))?
                    .map_or_else(|| err(p, "astype needs a dtype"), Ok)?;
                wrap(x.astype(dtype))
            }
            _ => self.call_composed(name, a),
        }
    }
}
