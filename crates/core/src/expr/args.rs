//! A call's arguments and their conversions to shapes, axes, chunk specifications and dtypes,
//! each failing with the position of the offending argument.

use super::eval::Value;
use super::{err, ExprError, Pos};
use crate::array::{DType, Scalar};
use crate::ops::chunk_auto::{self, DimChunk};
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

    /// A tuple of tensors (`concatenate((a, b))`, `stack((a, b))`).
    pub(super) fn tensors(&self, i: usize, name: &str) -> Result<Vec<Tensor>, ExprError> {
        let (list, p) = self.need(i, name)?;
        let Value::Tuple(items) = list else {
            return err(p, format!("{} takes a tuple of tensors", self.func));
        };
        items.into_iter().map(|v| to_tensor(v, p)).collect()
    }

    /// An integer argument with a default when it is not given (`None` is not an integer).
    pub(super) fn int_or(&self, i: usize, name: &str, default: i64) -> Result<i64, ExprError> {
        match self.get(i, name) {
            None => Ok(default),
            Some((v, p)) => to_int(&v, p),
        }
    }

    /// An optional integer argument; `None` written out counts as absent.
    pub(super) fn opt_int(&self, i: usize, name: &str) -> Result<Option<i64>, ExprError> {
        match self.get(i, name) {
            None | Some((Value::None, _)) => Ok(None),
            Some((v, p)) => to_int(&v, p).map(Some),
        }
    }
}

pub(super) fn to_tensor(v: Value, p: Pos) -> Result<Tensor, ExprError> {
    match v {
        Value::Tensor(t) => Ok(t),
        Value::Num(s) => tensor::full(&[], s, 1).or_else(|e| err(p, e.to_string())),
        _ => err(p, "expected a tensor"),
    }
}

/// Two operands of which one may be a Python number: the number becomes a 0-d tensor of the
/// dtype NEP 50 gives it beside the other operand (`where(c, x_float32, 0)` is float32, as in
/// NumPy 2), where a lone number would be a tensor of its own kind.
pub(super) fn weak_pair(
    (a, pa): (Value, Pos),
    (b, pb): (Value, Pos),
) -> Result<(Tensor, Tensor), ExprError> {
    let number_beside = |s: Scalar, t: &Tensor, p: Pos| {
        let dtype = match (crate::ops::dtypes::weak_promote(t.dtype(), s), s) {
            // An integer a narrow integer dtype cannot hold stays int64 (never wraps).
            (d, Scalar::I64(i))
                if d.int_range()
                    .is_some_and(|(lo, hi)| !(lo..=hi).contains(&i128::from(i))) =>
            {
                DType::I64
            }
            (d, _) => d,
        };
        tensor::full(&[], s, 1)
            .and_then(|n| {
                if n.dtype() == dtype {
                    Ok(n)
                } else {
                    n.astype(dtype)
                }
            })
            .or_else(|e| err(p, e.to_string()))
    };
    match (a, b) {
        (Value::Num(s), Value::Tensor(t)) => Ok((number_beside(s, &t, pa)?, t)),
        (Value::Tensor(t), Value::Num(s)) => {
            let n = number_beside(s, &t, pb)?;
            Ok((t, n))
        }
        (a, b) => Ok((to_tensor(a, pa)?, to_tensor(b, pb)?)),
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

/// `chunk=` for a tensor of `shape` and elements of `itemsize` bytes: one length for every
/// dimension, one per dimension, or any of dask's spellings (`crate::ops::chunk_auto`):
/// `-1`/`None` for a whole axis, `"auto"` or a byte size (`"100 MiB"`), every chunk length of
/// an axis (`((2, 3, 5), 4)`), and on a 1-d tensor a tuple of its chunk lengths (`(3, 3, 4)`).
/// An absent or `None` argument is the engine's default chunking.
pub(super) fn to_chunk(
    v: Option<(Value, Pos)>,
    shape: &[usize],
    itemsize: usize,
) -> Result<ChunkSpec, ExprError> {
    let lengths = |items: &[Value], p| -> Result<Vec<usize>, ExprError> {
        items.iter().map(|l| to_usize(l, p)).collect()
    };
    let all_lengths = |items: &[Value]| {
        items
            .iter()
            .all(|x| matches!(x, Value::Num(Scalar::I64(i)) if *i >= 0))
    };
    let (dims, limit, p) = match v {
        None | Some((Value::None, _)) => return Ok(tensor::auto_chunk(shape)),
        Some((Value::Tuple(items), p))
            if shape.len() == 1 && items.len() > 1 && all_lengths(&items) =>
        {
            return Ok(ChunkSpec::Explicit(vec![lengths(&items, p)?]));
        }
        Some((Value::Tuple(items), p)) if all_lengths(&items) => {
            return Ok(ChunkSpec::PerDim(lengths(&items, p)?.into_iter().collect()));
        }
        Some((Value::Tuple(items), p)) => {
            let mut limit = None;
            let dims = items
                .iter()
                .map(|x| dim_chunk(x, p, &mut limit))
                .collect::<Result<Vec<_>, _>>()?;
            (dims, limit, p)
        }
        Some((Value::Num(Scalar::I64(-1)), p)) => (vec![DimChunk::Whole; shape.len()], None, p),
        Some((v @ Value::Str(_), p)) => {
            let mut limit = None;
            let one = dim_chunk(&v, p, &mut limit)?;
            (vec![one; shape.len()], limit, p)
        }
        Some((v, p)) => return Ok(ChunkSpec::Uniform(to_usize(&v, p)?)),
    };
    let limit = limit.unwrap_or(chunk_auto::AUTO_CHUNK_BYTES);
    chunk_auto::resolve_dims("chunk", dims, shape, itemsize, limit)
        .or_else(|e| err(p, e.to_string()))
}

/// One axis of a `chunk=` tuple; a byte size there sets the auto axes' budget.
fn dim_chunk(v: &Value, p: Pos, limit: &mut Option<u64>) -> Result<DimChunk, ExprError> {
    match v {
        Value::None | Value::Num(Scalar::I64(-1)) => Ok(DimChunk::Whole),
        Value::Tuple(lens) => Ok(DimChunk::Lengths(
            lens.iter()
                .map(|l| to_usize(l, p))
                .collect::<Result<_, _>>()?,
        )),
        Value::Str(s) if s == "auto" => Ok(DimChunk::Auto),
        Value::Str(s) => {
            let bytes =
                chunk_auto::parse_byte_size("chunk", s).or_else(|e| err(p, e.to_string()))?;
            match *limit {
                Some(other) if other != bytes => err(
                    p,
                    format!("chunk gives two byte sizes ({other} and {bytes} bytes): give one"),
                ),
                _ => {
                    *limit = Some(bytes);
                    Ok(DimChunk::Auto)
                }
            }
        }
        Value::Num(Scalar::I64(i)) if *i < -1 => err(
            p,
            format!("chunk length {i} is negative (-1 or None is the whole axis)"),
        ),
        other => Ok(DimChunk::Len(to_usize(other, p)?)),
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
            || {
                err(
                    p,
                    format!("unknown dtype {s:?} (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, complex64, complex128)"),
                )
            },
            Ok,
        ),
        Some((_, p)) => err(p, "dtype must be a string such as 'float64'"),
    }
}
