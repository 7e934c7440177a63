//! The reference evaluator: interprets the generated AST on whole arrays (never ares' parsed
//! graph), with the rules of `refarr` and `refshape`, and the creation functions as NumPy
//! documents them (`arange` is float64 when any argument is a float, `linspace` computes
//! `start + i * step` and sets the last value to `stop`).
//!
//! `reshape` takes any compatible shape whatever the chunking, as NumPy's does (ares regrids
//! chunks that do not line up).

use super::ast::{BinOp, Expr, Idx, Program};
use super::refarr::{self, np_err, unsupported, Arr, Fail, R};
use super::refshape::{self, Item};
use super::value::{Outcome, DT};
use ndarray::{ArrayD, IxDyn};
use std::collections::HashMap;

#[derive(Clone, Debug)]
pub enum V {
    A(Arr),
    Tuple(Vec<V>),
    Str(String),
    None,
}

pub type Env = HashMap<String, V>;

pub fn outcome(r: R<Arr>) -> Outcome {
    match r {
        Ok(a) => Outcome::Ok(a.to_res()),
        Err(Fail::NumPy(m)) => Outcome::Err(m),
        Err(Fail::AresOnly(m)) => Outcome::AresOnly(m),
        Err(Fail::Unsupported(m)) => Outcome::Unsupported(m),
    }
}

/// Evaluates every statement in order, then the result. Also says whether a documented
/// deviation from NumPy decided the value (then NumPy is not compared).
pub fn run_noting_deviations(p: &Program) -> (R<Arr>, bool) {
    refarr::take_deviation();
    let mut r = run(p);
    if r.is_ok() {
        // NumPy computes it; ares refuses an op that needs a data-dependent length.
        if let Some(m) = super::refdd::analyse(p).refused {
            r = Err(Fail::AresOnly(m));
        }
    }
    (r, refarr::take_deviation())
}

pub fn run(p: &Program) -> R<Arr> {
    let mut env = Env::new();
    for (name, e) in &p.stmts {
        let v = eval(e, &env)?;
        env.insert(name.clone(), v);
    }
    arr(eval(&p.result, &env)?)
}

pub fn arr(v: V) -> R<Arr> {
    match v {
        V::A(a) => Ok(a),
        _ => np_err("expected an array"),
    }
}

/// A Python integer (a 0-d int64); floats and bools are refused as NumPy's `operator.index`.
pub fn int(v: &V) -> R<i64> {
    match v {
        V::A(Arr::I(a)) if a.ndim() == 0 => Ok(a[IxDyn(&[])]),
        _ => np_err("TypeError: expected an integer"),
    }
}

pub fn ints(v: &V) -> R<Vec<i64>> {
    match v {
        V::Tuple(items) => items.iter().map(int).collect(),
        other => Ok(vec![int(other)?]),
    }
}

pub fn shape(v: &V) -> R<Vec<usize>> {
    let d = ints(v)?;
    if d.iter().any(|x| *x < 0) {
        return np_err("negative dimensions are not allowed");
    }
    Ok(d.into_iter().map(|x| x as usize).collect())
}

/// A Python number argument (arange, linspace, full): int or float.
fn number(v: &V) -> R<Arr> {
    match v {
        V::A(a) if a.shape().is_empty() && a.dtype() != DT::Bool => Ok(a.clone()),
        _ => unsupported("non-numeric scalar argument"),
    }
}

fn f64_of(a: &Arr) -> f64 {
    a.to_f()[IxDyn(&[])]
}

fn dtype(v: &V) -> R<DT> {
    match v {
        V::Str(s) => DT::parse(s).map_or_else(|| np_err("unknown dtype"), Ok),
        _ => np_err("dtype must be a string"),
    }
}

pub fn eval(e: &Expr, env: &Env) -> R<V> {
    Ok(match e {
        Expr::Int(i) => V::A(Arr::scalar_i(*i)),
        Expr::Float(f) => V::A(Arr::scalar_f(*f)),
        Expr::Bool(b) => V::A(Arr::scalar_b(*b)),
        Expr::Str(s) => V::Str(s.clone()),
        Expr::NoneLit => V::None,
        Expr::Tuple(items) => V::Tuple(items.iter().map(|x| eval(x, env)).collect::<R<_>>()?),
        Expr::Name(n) => env.get(n).cloned().expect("generator binds names"),
        Expr::Neg(x) => V::A(refarr::unary("negative", &arr(eval(x, env)?)?)?),
        Expr::Invert(x) => V::A(super::refnew::invert(&arr(eval(x, env)?)?)?),
        Expr::Bin(BinOp::MatMul, a, b, _) => {
            V::A(refarr::matmul(&arr(eval(a, env)?)?, &arr(eval(b, env)?)?)?)
        }
        Expr::Bin(op, a, b, _) => V::A(super::refnew::binary(
            *op,
            &arr(eval(a, env)?)?,
            &arr(eval(b, env)?)?,
        )?),
        Expr::T(x) => V::A(refshape::transpose(&arr(eval(x, env)?)?, None)?),
        Expr::Mask(x, m) => V::A(super::refdd::mask(
            &arr(eval(x, env)?)?,
            &arr(eval(m, env)?)?,
        )?),
        Expr::Shape(x) => V::Tuple(
            arr(eval(x, env)?)?
                .shape()
                .iter()
                .map(|d| V::A(Arr::scalar_i(*d as i64)))
                .collect(),
        ),
        Expr::Index(x, items) => {
            let items: Vec<Item> = items
                .iter()
                .map(|i| match i {
                    Idx::At(k) => Item::At(*k),
                    Idx::Slice(a, b, c) => Item::Slice(*a, *b, *c),
                    Idx::NewAxis => Item::NewAxis,
                })
                .collect();
            match (eval(x, env)?, items.as_slice()) {
                (V::Tuple(parts), [Item::At(k)]) => {
                    let n = parts.len() as i64;
                    if *k < -n || *k >= n {
                        return np_err("list index out of range");
                    }
                    parts[(if *k < 0 { k + n } else { *k }) as usize].clone()
                }
                (v, _) => V::A(refshape::index(&arr(v)?, &items)?),
            }
        }
        Expr::Call {
            func, args, kwargs, ..
        } => {
            let pos: Vec<V> = args.iter().map(|a| eval(a, env)).collect::<R<_>>()?;
            let kw: Vec<(String, V)> = kwargs
                .iter()
                .map(|(k, v)| Ok((k.clone(), eval(v, env)?)))
                .collect::<R<_>>()?;
            let get = |i: usize, name: &str| -> Option<V> {
                kw.iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
                    .or_else(|| pos.get(i).cloned())
            };
            if func == "split" {
                return super::refmore::split(&pos, &get);
            }
            V::A(call(func, &pos, &get)?)
        }
    })
}

fn call(func: &str, pos: &[V], get: &dyn Fn(usize, &str) -> Option<V>) -> R<Arr> {
    let a0 = || arr(get(0, "a").expect("first argument"));
    if let Some(op) = BinOp::ALL.iter().find(|o| o.func() == func) {
        let (x, y) = (a0()?, arr(pos[1].clone())?);
        return if *op == BinOp::MatMul {
            refarr::matmul(&x, &y)
        } else {
            super::refnew::binary(*op, &x, &y)
        };
    }
    match func {
        "negative" | "abs" | "absolute" | "sqrt" | "exp" | "log" | "sin" | "cos" => {
            refarr::unary(func, &a0()?)
        }
        f if super::ops::unary_functions().contains(&f) => refarr::unary(f, &a0()?),
        "dot" => refarr::dot(&a0()?, &arr(pos[1].clone())?),
        "invert" => super::refnew::invert(&a0()?),
        "zeros" | "ones" | "full" => {
            let sh = shape(&pos[0])?;
            let fill = match func {
                "zeros" => Arr::scalar_i(0),
                "ones" => Arr::scalar_i(1),
                _ => arr(pos[1].clone())?,
            };
            let dt = match get(usize::MAX, "dtype") {
                Some(v) => dtype(&v)?,
                None if func == "full" => fill.dtype(),
                None => DT::F64,
            };
            let fill = fill.astype(dt)?;
            let len: usize = sh.iter().product();
            let f = fill.to_res();
            Ok(refshape::reshape(
                &match f.vals {
                    super::value::Vals::B(v) => Arr::B(ArrayD::from_elem(IxDyn(&[len]), v[0])),
                    super::value::Vals::I(v) => Arr::I(ArrayD::from_elem(IxDyn(&[len]), v[0])),
                    super::value::Vals::F(v) => Arr::F(ArrayD::from_elem(IxDyn(&[len]), v[0])),
                },
                &sh,
            ))
        }
        "arange" => arange(pos),
        "linspace" => {
            let (start, stop) = (f64_of(&number(&pos[0])?), f64_of(&number(&pos[1])?));
            let num = match get(2, "num") {
                Some(v) => int(&v)?,
                None => 50,
            };
            if num < 0 {
                return np_err("Number of samples must be non-negative");
            }
            let endpoint = match get(usize::MAX, "endpoint") {
                None => true,
                Some(V::A(Arr::B(b))) if b.ndim() == 0 => b[IxDyn(&[])],
                Some(_) => return unsupported("endpoint that is not a bool"),
            };
            let div = if endpoint { num - 1 } else { num } as f64;
            let step = (stop - start) / div;
            let mut v: Vec<f64> = (0..num)
                .map(|i| {
                    let i = i as f64;
                    if div <= 0.0 {
                        // One sample: NumPy's step is NaN and y = i * delta + start.
                        i * (stop - start) + start
                    } else if step == 0.0 {
                        i / div * (stop - start) + start
                    } else {
                        i * step + start
                    }
                })
                .collect();
            if endpoint && num > 1 {
                v[num as usize - 1] = stop;
            }
            Ok(Arr::F(
                ArrayD::from_shape_vec(IxDyn(&[v.len()]), v).unwrap(),
            ))
        }
        "sum" | "prod" | "min" | "max" | "amin" | "amax" | "mean" | "var" | "std" | "all"
        | "any" => {
            let x = a0()?;
            let axes = match get(1, "axis") {
                None | Some(V::None) => None,
                // NumPy's ufunc reductions accept a plain 0 or -1 on 0-d arrays (legacy).
                Some(v @ V::A(_))
                    if x.shape().is_empty()
                        && matches!(int(&v), Ok(0 | -1))
                        && !matches!(func, "mean" | "var" | "std") =>
                {
                    Some(vec![])
                }
                Some(v) => Some(ints(&v)?),
            };
            let keep = match get(usize::MAX, "keepdims") {
                None => false,
                Some(V::A(Arr::B(b))) if b.ndim() == 0 => b[IxDyn(&[])],
                Some(_) => return unsupported("keepdims that is not a bool"),
            };
            let ddof = match get(usize::MAX, "ddof") {
                None => 0,
                Some(v) => int(&v)?,
            };
            refshape::reduce(func, &x, axes.as_deref(), keep, ddof)
        }
        "transpose" => {
            let axes = match get(1, "axes") {
                None | Some(V::None) => None,
                Some(v) => Some(ints(&v)?),
            };
            refshape::transpose(&a0()?, axes.as_deref())
        }
        "concatenate" => {
            let V::Tuple(items) = &pos[0] else {
                return unsupported("concatenate of a non-tuple");
            };
            let items: Vec<Arr> = items.iter().cloned().map(arr).collect::<R<_>>()?;
            let axis = match get(1, "axis") {
                Some(v) => int(&v)?,
                None => 0,
            };
            refshape::concatenate(&items, axis)
        }
        "rechunk" => a0(),
        "astype" => a0()?.astype(dtype(&get(1, "dtype").expect("dtype"))?),
        "reshape" => {
            let x = a0()?;
            let dims = if pos.len() > 2 {
                pos[1..].iter().map(int).collect::<R<Vec<_>>>()?
            } else {
                ints(&get(1, "shape").expect("shape"))?
            };
            let target = refshape::reshape_shape(x.len(), &dims)?;
            Ok(refshape::reshape(&x, &target))
        }
        f => super::refmore::call(f, pos, get),
    }
}

fn arange(pos: &[V]) -> R<Arr> {
    let nums: Vec<Arr> = pos.iter().map(number).collect::<R<_>>()?;
    let (start, stop, step) = match nums.as_slice() {
        [b] => (Arr::scalar_i(0), b.clone(), Arr::scalar_i(1)),
        [a, b] => (a.clone(), b.clone(), Arr::scalar_i(1)),
        [a, b, c] => (a.clone(), b.clone(), c.clone()),
        _ => return unsupported("arange arity"),
    };
    if [&start, &stop, &step].iter().all(|a| a.dtype() == DT::I64) {
        let (a, b, c) = (
            start.to_i()[IxDyn(&[])],
            stop.to_i()[IxDyn(&[])],
            step.to_i()[IxDyn(&[])],
        );
        if c == 0 {
            return np_err("Maximum allowed size exceeded");
        }
        let n = ((b as i128 - a as i128 + c as i128 - c.signum() as i128) / c as i128).max(0);
        let v: Vec<i64> = (0..n as i64).map(|i| a + i * c).collect();
        return Ok(Arr::I(
            ArrayD::from_shape_vec(IxDyn(&[v.len()]), v).unwrap(),
        ));
    }
    let (a, b, c) = (f64_of(&start), f64_of(&stop), f64_of(&step));
    if c == 0.0 {
        return np_err("Maximum allowed size exceeded");
    }
    let n = ((b - a) / c).ceil().max(0.0) as usize;
    // NumPy fills `start + i * delta` with `delta` = (start + step) - start.
    let delta = (a + c) - a;
    let v: Vec<f64> = (0..n).map(|i| a + i as f64 * delta).collect();
    Ok(Arr::F(ArrayD::from_shape_vec(IxDyn(&[n]), v).unwrap()))
}
