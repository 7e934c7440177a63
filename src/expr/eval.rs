//! Evaluation: values, operators and the numpy-named functions.
//!
//! Random functions without `seed=` get the seed 0, 1, 2... in the order they appear, so a
//! program always means the same numbers.

use super::parser::{Expr, IndexItem, Stmt};
use super::{err, ExprError, Pos};
use crate::array::{DType, Scalar};
use crate::ops::{ChunkSpec, Op};
use crate::tensor::{self, SliceArg, Tensor};
use std::collections::HashMap;

#[derive(Clone)]
enum Value {
    Tensor(Tensor),
    Num(Scalar),
    Str(String),
    Tuple(Vec<Value>),
    None,
}

#[derive(Default)]
struct Ctx {
    vars: HashMap<String, Value>,
    next_seed: u64,
}

pub fn run(program: &[Stmt]) -> Result<Tensor, ExprError> {
    let mut ctx = Ctx::default();
    let mut last = (Value::None, Pos::default());
    for stmt in program {
        let v = ctx.eval(&stmt.expr)?;
        if let Some((name, _)) = &stmt.target {
            ctx.vars.insert(name.clone(), v.clone());
        }
        last = (v, stmt.expr.pos());
    }
    match last.0 {
        Value::Tensor(t) => Ok(t),
        Value::Num(s) => tensor::full(&[], s, 1).or_else(|e| err(last.1, e.to_string())),
        _ => err(last.1, "the last expression is not a tensor or a number"),
    }
}

fn binary_op(name: &str) -> Option<Op> {
    Some(match name {
        "add" => Op::Add,
        "subtract" => Op::Sub,
        "multiply" => Op::Mul,
        "divide" | "true_divide" => Op::Div,
        "power" => Op::Pow,
        "maximum" => Op::Maximum,
        "minimum" => Op::Minimum,
        "equal" => Op::Eq,
        "not_equal" => Op::Ne,
        "less" => Op::Lt,
        "less_equal" => Op::Le,
        "greater" => Op::Gt,
        "greater_equal" => Op::Ge,
        _ => return None,
    })
}

fn unary_op(name: &str) -> Option<Op> {
    Some(match name {
        "negative" => Op::Neg,
        "abs" | "absolute" => Op::Abs,
        "sqrt" => Op::Sqrt,
        "exp" => Op::Exp,
        "log" => Op::Log,
        "sin" => Op::Sin,
        "cos" => Op::Cos,
        _ => return None,
    })
}

fn fold_scalars(op: Op, a: Scalar, b: Scalar) -> Scalar {
    let ints = matches!((a, b), (Scalar::I64(_), Scalar::I64(_)));
    let (x, y) = (a.as_f64(), b.as_f64());
    let (i, j) = (a.as_i64(), b.as_i64());
    match op {
        Op::Add if ints => Scalar::I64(i.wrapping_add(j)),
        Op::Sub if ints => Scalar::I64(i.wrapping_sub(j)),
        Op::Mul if ints => Scalar::I64(i.wrapping_mul(j)),
        Op::Pow if ints && j >= 0 => Scalar::I64(i.wrapping_pow(j.min(u32::MAX as i64) as u32)),
        Op::Add => Scalar::F64(x + y),
        Op::Sub => Scalar::F64(x - y),
        Op::Mul => Scalar::F64(x * y),
        Op::Div => Scalar::F64(x / y),
        Op::Pow => Scalar::F64(x.powf(y)),
        Op::Maximum => {
            if x >= y {
                a
            } else {
                b
            }
        }
        Op::Minimum => {
            if x <= y {
                a
            } else {
                b
            }
        }
        Op::Eq => Scalar::Bool(x == y),
        Op::Ne => Scalar::Bool(x != y),
        Op::Lt => Scalar::Bool(x < y),
        Op::Le => Scalar::Bool(x <= y),
        Op::Gt => Scalar::Bool(x > y),
        _ => Scalar::Bool(x >= y),
    }
}

fn apply_binary(op: Op, a: Value, b: Value, pos: Pos) -> Result<Value, ExprError> {
    let r = match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => x.elementwise(op, &y),
        (Value::Tensor(x), Value::Num(s)) => x.binary_scalar(op, s, false),
        (Value::Num(s), Value::Tensor(x)) => x.binary_scalar(op, s, true),
        (Value::Num(s), Value::Num(t)) => return Ok(Value::Num(fold_scalars(op, s, t))),
        _ => return err(pos, format!("{op} needs tensors or numbers")),
    };
    r.map(Value::Tensor).or_else(|e| err(pos, e.to_string()))
}

/// Positional and keyword arguments of one call, checked against the names it accepts.
struct Args {
    func: String,
    pos: Pos,
    positional: Vec<(Value, Pos)>,
    keywords: Vec<(String, Value, Pos)>,
}

impl Args {
    fn check(&self, max_positional: usize, keywords: &[&str]) -> Result<(), ExprError> {
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
    fn get(&self, i: usize, name: &str) -> Option<(Value, Pos)> {
        self.keywords
            .iter()
            .find(|(k, _, _)| k == name)
            .map(|(_, v, p)| (v.clone(), *p))
            .or_else(|| self.positional.get(i).cloned())
    }

    fn need(&self, i: usize, name: &str) -> Result<(Value, Pos), ExprError> {
        self.get(i, name).map_or_else(
            || err(self.pos, format!("{} needs argument '{name}'", self.func)),
            Ok,
        )
    }

    fn tensor(&self, i: usize, name: &str) -> Result<Tensor, ExprError> {
        let (v, p) = self.need(i, name)?;
        to_tensor(v, p)
    }
}

fn to_tensor(v: Value, p: Pos) -> Result<Tensor, ExprError> {
    match v {
        Value::Tensor(t) => Ok(t),
        Value::Num(s) => tensor::full(&[], s, 1).or_else(|e| err(p, e.to_string())),
        _ => err(p, "expected a tensor"),
    }
}

fn to_int(v: &Value, p: Pos) -> Result<i64, ExprError> {
    match v {
        Value::Num(Scalar::I64(i)) => Ok(*i),
        Value::Num(Scalar::F64(f)) if f.fract() == 0.0 && f.abs() < 9e15 => Ok(*f as i64),
        _ => err(p, "expected an integer"),
    }
}

fn to_usize(v: &Value, p: Pos) -> Result<usize, ExprError> {
    let i = to_int(v, p)?;
    usize::try_from(i).or_else(|_| err(p, format!("expected a non-negative integer, got {i}")))
}

fn to_ints(v: &Value, p: Pos) -> Result<Vec<i64>, ExprError> {
    match v {
        Value::Tuple(items) => items.iter().map(|x| to_int(x, p)).collect(),
        other => Ok(vec![to_int(other, p)?]),
    }
}

fn to_shape(v: &Value, p: Pos) -> Result<Vec<usize>, ExprError> {
    match v {
        Value::Tuple(items) => items.iter().map(|x| to_usize(x, p)).collect(),
        other => Ok(vec![to_usize(other, p)?]),
    }
}

fn to_chunk(v: Option<(Value, Pos)>, shape: &[usize]) -> Result<ChunkSpec, ExprError> {
    match v {
        None | Some((Value::None, _)) => Ok(tensor::auto_chunk(shape)),
        Some((Value::Tuple(items), p)) => Ok(ChunkSpec::PerDim(
            items
                .iter()
                .map(|x| to_usize(x, p))
                .collect::<Result<_, _>>()?,
        )),
        Some((v, p)) => Ok(ChunkSpec::Uniform(to_usize(&v, p)?)),
    }
}

fn to_bool(v: Option<(Value, Pos)>) -> Result<bool, ExprError> {
    match v {
        None => Ok(false),
        Some((Value::Num(s), _)) => Ok(s.as_bool()),
        Some((_, p)) => err(p, "expected True or False"),
    }
}

fn to_axes(v: Option<(Value, Pos)>) -> Result<Option<Vec<i64>>, ExprError> {
    match v {
        None | Some((Value::None, _)) => Ok(None),
        Some((v, p)) => to_ints(&v, p).map(Some),
    }
}

fn to_dtype(v: Option<(Value, Pos)>) -> Result<Option<DType>, ExprError> {
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
    fn eval(&mut self, e: &Expr) -> Result<Value, ExprError> {
        Ok(match e {
            Expr::Int(i, _) => Value::Num(Scalar::I64(*i)),
            Expr::Float(f, _) => Value::Num(Scalar::F64(*f)),
            Expr::Str(s, _) => Value::Str(s.clone()),
            Expr::Name(n, p) => match n.as_str() {
                "True" => Value::Num(Scalar::Bool(true)),
                "False" => Value::Num(Scalar::Bool(false)),
                "None" => Value::None,
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
                Value::Num(Scalar::I64(i)) => Value::Num(Scalar::I64(i.wrapping_neg())),
                Value::Num(s) => Value::Num(Scalar::F64(-s.as_f64())),
                Value::Tensor(t) => Value::Tensor((-&t).or_else(|e| err(*p, e.to_string()))?),
                _ => return err(*p, "cannot negate this value"),
            },
            Expr::Binary(name, a, b, p) => {
                let (a, b) = (self.eval(a)?, self.eval(b)?);
                if *name == "matmul" {
                    let (x, y) = (to_tensor(a, *p)?, to_tensor(b, *p)?);
                    return x
                        .matmul(&y)
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
            Expr::Attr(obj, name, p) => match (self.eval(obj)?, name.as_str()) {
                (Value::Tensor(t), "T") => {
                    Value::Tensor(t.transpose(None).or_else(|e| err(*p, e.to_string()))?)
                }
                (Value::Tensor(t), "shape") => Value::Tuple(
                    t.shape()
                        .iter()
                        .map(|d| Value::Num(Scalar::I64(*d as i64)))
                        .collect(),
                ),
                _ => {
                    return err(
                        *p,
                        format!("unknown attribute '{name}' (call methods as x.{name}(...))"),
                    )
                }
            },
            Expr::Index(obj, items, p) => {
                let target = self.eval(obj)?;
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
                let args = items
                    .iter()
                    .map(|it| self.slice_arg(it))
                    .collect::<Result<Vec<_>, _>>()?;
                Value::Tensor(t.slice(&args).or_else(|e| err(*p, e.to_string()))?)
            }
            Expr::Call {
                func,
                args,
                kwargs,
                pos,
            } => {
                let (name, mut positional) = match func.as_ref() {
                    Expr::Name(n, _) => (n.clone(), vec![]),
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
            IndexItem::At(e) => SliceArg::Index(bound(&Some(e.clone()))?.unwrap_or(0)),
            IndexItem::Slice(a, b, c) => SliceArg::Range {
                start: bound(a)?,
                stop: bound(b)?,
                step: bound(c)?,
            },
        })
    }

    fn random_seed(&mut self, a: &Args) -> Result<u64, ExprError> {
        match a.get(usize::MAX, "seed") {
            Some((v, p)) => Ok(to_int(&v, p)? as u64),
            None => {
                self.next_seed += 1;
                Ok(self.next_seed - 1)
            }
        }
    }

    fn call(&mut self, name: &str, a: Args) -> Result<Value, ExprError> {
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
                let n = ((stop.as_f64() - start.as_f64()) / step.as_f64())
                    .ceil()
                    .max(0.0) as usize;
                wrap(tensor::arange(
                    start,
                    stop,
                    step,
                    to_chunk(
                        a.get(usize::MAX, "chunk")
                            .or(a.get(usize::MAX, "chunk_size")),
                        &[n],
                    )?,
                ))
            }
            "linspace" => {
                a.check(3, &["start", "stop", "num", "chunk", "chunk_size"])?;
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
                wrap(tensor::linspace(
                    num_of(0, "start")?,
                    num_of(1, "stop")?,
                    num,
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
                let axes = to_axes(a.get(1, "axis"))?;
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
                wrap(a.tensor(0, "a")?.matmul(&a.tensor(1, "b")?))
            }
            "transpose" => {
                a.check(usize::MAX, &["axes"])?;
                let x = a.tensor(0, "a")?;
                let axes: Option<Vec<usize>> = match a.positional.len() {
                    0 | 1 => match a.get(usize::MAX, "axes") {
                        None | Some((Value::None, _)) => None,
                        Some((v, p)) => Some(to_shape(&v, p)?),
                    },
                    2 => Some(to_shape(&a.positional[1].0, a.positional[1].1)?),
                    _ => Some(
                        a.positional[1..]
                            .iter()
                            .map(|(v, p)| to_usize(v, *p))
                            .collect::<Result<_, _>>()?,
                    ),
                };
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
            _ => err(p, format!("unknown function {name}")),
        }
    }
}
