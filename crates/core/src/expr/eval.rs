//! Evaluation: values, names, operators, indexing and calls (the functions themselves are
//! in `functions`).

use super::args::{to_int, to_tensor, Args};
use super::parser::{Expr, IndexItem, Stmt};
use super::{err, ExprError, Pos};
use crate::array::{ArrayData, Scalar};
use crate::ops::family::elementwise::ufunc;
use crate::ops::{Family, Op, OpArgs};
use crate::tensor::{self, SliceArg, Tensor};
use std::collections::HashMap;

/// A value of the language (what names hold, what functions take and return): a tensor, a
/// number, a string, a tuple or `None`.
#[derive(Clone, Debug)]
pub enum Value {
    Tensor(Tensor),
    Num(Scalar),
    Str(String),
    Tuple(Vec<Value>),
    None,
}

impl From<Tensor> for Value {
    fn from(t: Tensor) -> Value {
        Value::Tensor(t)
    }
}

impl From<Scalar> for Value {
    fn from(s: Scalar) -> Value {
        Value::Num(s)
    }
}

#[derive(Default)]
pub(crate) struct Ctx {
    vars: HashMap<String, Value>,
    pub(super) next_seed: u64,
}

pub fn run(program: &[Stmt], bindings: &[(String, Tensor)]) -> Result<Tensor, ExprError> {
    let mut ctx = Ctx::default();
    for (name, t) in bindings {
        ctx.vars.insert(name.clone(), Value::Tensor(t.clone()));
    }
    let mut last = (Value::None, Pos::default());
    for stmt in program {
        let v = ctx.eval(&stmt.expr)?;
        match (stmt.targets.as_slice(), &v) {
            ([], _) => {}
            ([(name, _)], _) => {
                ctx.vars.insert(name.clone(), v.clone());
            }
            (names, Value::Tuple(items)) if names.len() == items.len() => {
                for ((name, _), item) in names.iter().zip(items) {
                    ctx.vars.insert(name.clone(), item.clone());
                }
            }
            (names, _) => {
                let got = match &v {
                    Value::Tuple(items) => format!("a tuple of {}", items.len()),
                    _ => "one value".to_string(),
                };
                return err(
                    names[0].1,
                    format!("cannot unpack {got} into {} names", names.len()),
                );
            }
        }
        last = (v, stmt.expr.pos());
    }
    match last.0 {
        Value::Tensor(t) => Ok(t),
        Value::Num(s) => tensor::full(&[], s, 1).or_else(|e| err(last.1, e.to_string())),
        _ => err(last.1, "the last expression is not a tensor or a number"),
    }
}

/// `x[idx]` with a tensor index: a bool mask selects (`x[x > 0]`), int64 positions take
/// along the first axis (NumPy's advanced indexing with one array).
fn fancy_index(x: &Tensor, idx: &Tensor) -> crate::error::Result<Tensor> {
    match idx.dtype() {
        crate::array::DType::Bool => x.mask_select(idx),
        crate::array::DType::I64 => x.take(idx, Some(0)),
        d if d.is_int() => x.take(&idx.astype(crate::array::DType::I64)?, Some(0)),
        _ => Err(crate::error::AresError::arg(
            "getitem",
            "arrays used as indices must be of integer (or boolean) type",
        )),
    }
}

/// The binary ufunc a function name calls (`divide` and `true_divide` are [`Op::Div`]).
pub(super) fn binary_op(name: &str) -> Option<Op> {
    ufunc(name)
        .map(|u| u.op)
        .filter(|op| op.family() == Family::Binary)
}

/// The unary ufunc a function name calls (`abs` and `absolute` are [`Op::Abs`]).
pub(super) fn unary_op(name: &str) -> Option<Op> {
    ufunc(name)
        .map(|u| u.op)
        .filter(|op| op.family() == Family::Unary)
}

/// Folds an operation on numbers with the same kernel a tensor would use, on 0-d arrays, so
/// `maximum(3, 2.5)`, `True + 1` and `2**53 + 1 == 2**53` mean what they mean on tensors.
fn fold(op: Op, operands: &[Scalar], pos: Pos) -> Result<Scalar, ExprError> {
    let arrays: Vec<ArrayData> = operands.iter().map(|s| ArrayData::scalar(*s)).collect();
    let refs: Vec<&ArrayData> = arrays.iter().collect();
    let out = crate::kernels::apply(op, &OpArgs::None, &[], &refs).or_else(|e| err(pos, e.0))?;
    Ok(out.get_flat(0).expect("a 0-d result has one element"))
}

pub(super) fn apply_binary(op: Op, a: Value, b: Value, pos: Pos) -> Result<Value, ExprError> {
    let r = match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => x.elementwise(op, &y),
        (Value::Tensor(x), Value::Num(s)) => x.binary_scalar(op, s, false),
        (Value::Num(s), Value::Tensor(x)) => x.binary_scalar(op, s, true),
        (Value::Num(s), Value::Num(t)) => return fold(op, &[s, t], pos).map(Value::Num),
        _ => return err(pos, format!("{op} needs tensors or numbers")),
    };
    r.map(Value::Tensor).or_else(|e| err(pos, e.to_string()))
}

/// `v.name`: `.T` and `.shape` (a number is a 0-d array: shape `()`, its own transpose, as
/// NumPy's `np.shape(2.5)`, `np.transpose(2.5)`).
fn attribute(v: Value, name: &str, p: Pos) -> Result<Value, ExprError> {
    Ok(match (v, name) {
        (Value::Tensor(t), "T") => {
            Value::Tensor(t.transpose(None).or_else(|e| err(p, e.to_string()))?)
        }
        (Value::Tensor(t), "shape") => super::shape::whole(&t, p)?,
        (Value::Num(_), "shape") => Value::Tuple(vec![]),
        (v @ Value::Num(_), "T") => v,
        _ => {
            return err(
                p,
                format!("unknown attribute '{name}' (call methods as x.{name}(...))"),
            )
        }
    })
}

impl Ctx {
    fn eval(&mut self, e: &Expr) -> Result<Value, ExprError> {
        stacker::maybe_grow(64 << 10, 1 << 20, || self.eval_node(e))
    }

    fn eval_node(&mut self, e: &Expr) -> Result<Value, ExprError> {
        Ok(match e {
            Expr::Int(i, _) => Value::Num(Scalar::I64(*i)),
            Expr::Float(f, _) => Value::Num(Scalar::F64(*f)),
            Expr::Str(s, _) => Value::Str(s.clone()),
            Expr::Name(n, p) => match n.as_str() {
                "True" => Value::Num(Scalar::Bool(true)),
                "False" => Value::Num(Scalar::Bool(false)),
                "None" => Value::None,
                // NumPy's constants, as `np.nan` and `np.inf` (a name bound by the program
                // shadows them).
                "nan" | "inf" | "pi" | "e" if !self.vars.contains_key(n) => {
                    Value::Num(Scalar::F64(match n.as_str() {
                        "nan" => f64::NAN,
                        "inf" => f64::INFINITY,
                        "pi" => std::f64::consts::PI,
                        _ => std::f64::consts::E,
                    }))
                }
                _ => self
                    .vars
                    .get(n)
                    .cloned()
                    .map_or_else(|| err(*p, format!("unknown name '{n}'")), Ok)?,
            },
            Expr::Tuple(items, _) => Value::Tuple(
                items
                    .iter()
                    .map(|x| self.eval(x))
                    .collect::<Result<_, _>>()?,
            ),
            Expr::Neg(x, p) => match self.eval(x)? {
                Value::Num(s) => Value::Num(fold(Op::Neg, &[s], *p)?),
                Value::Tensor(t) => Value::Tensor((-&t).or_else(|e| err(*p, e.to_string()))?),
                _ => return err(*p, "cannot negate this value"),
            },
            Expr::Invert(x, p) => match self.eval(x)? {
                Value::Num(s) => Value::Num(fold(Op::Invert, &[s], *p)?),
                Value::Tensor(t) => Value::Tensor(t.invert().or_else(|e| err(*p, e.to_string()))?),
                _ => return err(*p, "cannot invert this value"),
            },
            Expr::Binary(name, a, b, p) => {
                let (a, b) = (self.eval(a)?, self.eval(b)?);
                if *name == "matmul" {
                    let (x, y) = (to_tensor(a, *p)?, to_tensor(b, *p)?);
                    return x
                        .matmul_nd(&y)
                        .map(Value::Tensor)
                        .or_else(|e| err(*p, e.to_string()));
                }
                apply_binary(
                    binary_op(name).expect("parser emits known operators"),
                    a,
                    b,
                    *p,
                )?
            }
            Expr::Attr(obj, name, p) => attribute(self.eval(obj)?, name, *p)?,
            Expr::Index(obj, items, p) => {
                let target = match (obj.as_ref(), items.as_slice()) {
                    // `x.shape[i]` reads one length, which may be known when another is not.
                    (Expr::Attr(x, name, ap), [IndexItem::At(i)]) if name == "shape" => {
                        match self.eval(x)? {
                            Value::Tensor(t) => {
                                let i = to_int(&self.eval(i)?, *p)?;
                                return super::shape::axis(&t, i, *p);
                            }
                            v => attribute(v, name, *ap)?,
                        }
                    }
                    _ => self.eval(obj)?,
                };
                if let Value::Tuple(values) = &target {
                    let [IndexItem::At(i)] = items.as_slice() else {
                        return err(*p, "tuples take one integer index");
                    };
                    let i = to_int(&self.eval(i)?, *p)?;
                    let n = values.len() as i64;
                    let j = if i < 0 { i + n } else { i };
                    return values
                        .get(j as usize)
                        .cloned()
                        .map_or_else(|| err(*p, format!("index {i} out of range")), Ok);
                }
                let t = to_tensor(target, *p)?;
                if let [IndexItem::At(e)] = items.as_slice() {
                    let arg = match self.eval(e)? {
                        Value::Tensor(idx) => {
                            return Ok(Value::Tensor(
                                fancy_index(&t, &idx).or_else(|e| err(*p, e.to_string()))?,
                            ))
                        }
                        Value::None => SliceArg::NewAxis,
                        v => SliceArg::Index(to_int(&v, e.pos())?),
                    };
                    return Ok(Value::Tensor(
                        t.slice_when_known(&[arg])
                            .or_else(|e| err(*p, e.to_string()))?,
                    ));
                }
                let args = items
                    .iter()
                    .map(|it| self.slice_arg(it))
                    .collect::<Result<Vec<_>, _>>()?;
                Value::Tensor(
                    t.slice_when_known(&args)
                        .or_else(|e| err(*p, e.to_string()))?,
                )
            }
            Expr::Call {
                func,
                args,
                kwargs,
                pos,
            } => {
                let (name, mut positional) = match func.as_ref() {
                    Expr::Name(n, _) => (n.clone(), vec![]),
                    // `linalg.qr(x)`: a function of the `linalg` namespace (unless the
                    // program bound the name `linalg` itself).
                    Expr::Attr(obj, n, _) if matches!(obj.as_ref(), Expr::Name(ns, _) if ns == "linalg" && !self.vars.contains_key(ns)) => {
                        (format!("linalg.{n}"), vec![])
                    }
                    // `fft.rfft(x)` likewise.
                    Expr::Attr(obj, n, _) if matches!(obj.as_ref(), Expr::Name(ns, _) if ns == "fft" && !self.vars.contains_key(ns)) => {
                        (format!("fft.{n}"), vec![])
                    }
                    Expr::Attr(obj, n, p) => (n.clone(), vec![(self.eval(obj)?, *p)]),
                    other => return err(other.pos(), "only functions and methods can be called"),
                };
                for a in args {
                    positional.push((self.eval(a)?, a.pos()));
                }
                let keywords = kwargs
                    .iter()
                    .map(|(k, v, p)| Ok((k.clone(), self.eval(v)?, *p)))
                    .collect::<Result<_, ExprError>>()?;
                let call = Args {
                    func: name.clone(),
                    pos: *pos,
                    positional,
                    keywords,
                };
                self.call(&name, call).map_err(|e| {
                    if e.pos == Pos::default() {
                        ExprError { pos: *pos, ..e }
                    } else {
                        e
                    }
                })?
            }
        })
    }

    fn slice_arg(&mut self, item: &IndexItem) -> Result<SliceArg, ExprError> {
        let mut bound = |x: &Option<Expr>| -> Result<Option<i64>, ExprError> {
            match x {
                None => Ok(None),
                Some(e) => match self.eval(e)? {
                    Value::None => Ok(None),
                    v => to_int(&v, e.pos()).map(Some),
                },
            }
        };
        Ok(match item {
            IndexItem::At(e) => match self.eval(e)? {
                Value::None => SliceArg::NewAxis,
                v => SliceArg::Index(to_int(&v, e.pos())?),
            },
            IndexItem::Slice(a, b, c) => SliceArg::Range {
                start: bound(a)?,
                stop: bound(b)?,
                step: bound(c)?,
            },
        })
    }
}
