//! Evaluation: values, names, operators, indexing and calls (the functions themselves are
//! in `functions`).

use super::functions::{to_int, to_tensor, Args};
use super::parser::{Expr, IndexItem, Stmt};
use super::{err, ExprError, Pos};
use crate::array::Scalar;
use crate::ops::Op;
use crate::tensor::{self, SliceArg, Tensor};
use std::collections::HashMap;

#[derive(Clone)]
pub(super) enum Value {
    Tensor(Tensor),
    Num(Scalar),
    Str(String),
    Tuple(Vec<Value>),
    None,
}

#[derive(Default)]
pub(super) struct Ctx {
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

pub(super) fn binary_op(name: &str) -> Option<Op> {
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

pub(super) fn unary_op(name: &str) -> Option<Op> {
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

pub(super) fn apply_binary(op: Op, a: Value, b: Value, pos: Pos) -> Result<Value, ExprError> {
    let r = match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => x.elementwise(op, &y),
        (Value::Tensor(x), Value::Num(s)) => x.binary_scalar(op, s, false),
        (Value::Num(s), Value::Tensor(x)) => x.binary_scalar(op, s, true),
        (Value::Num(s), Value::Num(t)) => return Ok(Value::Num(fold_scalars(op, s, t))),
        _ => return err(pos, format!("{op} needs tensors or numbers")),
    };
    r.map(Value::Tensor).or_else(|e| err(pos, e.to_string()))
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
}
