//! The generator's operations on a tensor it has already built (and evaluated): elementwise
//! functions and operators with broadcast partners or Python scalars, reductions in every
//! axis form (also over operands of different ranks whose size-1 dims broadcast), matmul,
//! transpose, concatenate, rechunk, reshape, astype and indexing.

use super::ast::{call, ints, BinOp, Expr, Idx};
use super::gen::Gen;
use super::refarr::Arr;
use rand::seq::SliceRandom;
use rand::Rng;

/// The unary ufuncs drawn on any numeric tensor, read from the op registry's ufunc table:
/// those that keep the dtype or give a float (`isnan`... and `invert` are drawn in `ops2`).
/// A ufunc added to the table is drawn here, and the reference must learn it.
pub fn unary_functions() -> Vec<&'static str> {
    use ares_core::ops::family::elementwise::{Rule, UnaryRule, UFUNCS};
    UFUNCS
        .iter()
        .filter(|u| {
            matches!(
                u.rule,
                Rule::Unary(
                    UnaryRule::Same | UnaryRule::NoBool | UnaryRule::Float | UnaryRule::Round
                )
            )
        })
        .flat_map(|u| u.names.iter().copied())
        .collect()
}

/// The reductions (`f(a, axis, keepdims)`), read from the op registry.
pub fn reduce_functions() -> Vec<&'static str> {
    ares_core::ops::registry::functions()
        .iter()
        .filter(|l| l.function.form == ares_core::ops::registry::Form::Reduce)
        .map(|l| l.function.name)
        .collect()
}

fn b(e: Expr) -> Box<Expr> {
    Box::new(e)
}

/// A shape that broadcasts with `s`: some dims set to 1, maybe leading dims dropped or added.
fn broadcastable(g: &mut Gen, s: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = s.iter().map(|d| if g.p(0.3) { 1 } else { *d }).collect();
    if !out.is_empty() && g.p(0.3) {
        out.remove(0);
    }
    if out.len() < 3 && g.p(0.1) {
        out.insert(0, 2);
    }
    out
}

fn binary(g: &mut Gen, x: Expr, a: &Arr, depth: u32) -> Expr {
    let op = if g.p(0.25) {
        *BinOp::MORE.choose(&mut g.rng).unwrap()
    } else {
        *BinOp::ALL[..13].choose(&mut g.rng).unwrap()
    };
    let other = if g.p(0.45) {
        g.scalar()
    } else if depth > 1 && g.p(0.3) {
        g.tensor(depth - 2).0
    } else {
        let s = broadcastable(g, &a.shape());
        g.leaf(Some(s))
    };
    let (l, r) = if g.p(0.3) { (other, x) } else { (x, other) };
    let op_form = op.symbol().is_some() && g.p(0.6);
    Expr::Bin(op, b(l), b(r), op_form)
}

/// Operands of different ranks whose size-1 dims broadcast against each other and against
/// chunked operands (`ones((4, 1, 1), chunk=4) + ones((11, 1), chunk=10) + arange(12,
/// chunk=1)`), then a reduction over some axes, often the last one alone. A column operand
/// (only its first dim longer than 1) and a row of small chunks along the last axis make
/// ndarray lay the elementwise chunks out in Fortran order, which every later kernel (the
/// combine tree's last level among them) must accept. `x` joins in when its shape fits.
fn broadcast_reduce(g: &mut Gen, x: Expr, a: &Arr) -> Option<Expr> {
    let s = a.shape();
    let mut target = if !s.is_empty() && s.len() <= 3 && g.p(0.3) {
        s.clone()
    } else {
        let nd = if g.p(0.7) { 3 } else { 2 };
        (0..nd).map(|_| g.rng.gen_range(1..6)).collect()
    };
    if target.len() < 3 && g.p(0.3) {
        target.insert(0, g.rng.gen_range(2..5));
    }
    let nd = target.len();
    let mut shapes: Vec<Vec<usize>> = vec![];
    if g.p(0.8) {
        // A column: (t0, 1, 1).
        let mut column = vec![1; nd];
        column[0] = target[0];
        shapes.push(column);
    }
    for _ in 0..g.rng.gen_range(1..3) {
        // A lower-rank operand, its dims kept or set to 1 (the last one mostly).
        let rank = g.rng.gen_range(1..nd.max(2));
        let mut shape: Vec<usize> = target[nd - rank..].to_vec();
        for (i, d) in shape.iter_mut().enumerate() {
            if g.p(if i + 1 == rank { 0.7 } else { 0.3 }) {
                *d = 1;
            }
        }
        shapes.push(shape);
    }
    let mut operands: Vec<Expr> = shapes.into_iter().map(|s| g.leaf(Some(s))).collect();
    if g.p(0.8) {
        // The last axis alone, in chunks of 1 or 2.
        let n = target[nd - 1];
        let chunk = Expr::Int(g.rng.gen_range(1..3));
        operands.push(call(
            "arange",
            vec![Expr::Int(n as i64)],
            vec![("chunk", chunk)],
        ));
    }
    if target.ends_with(&s) && g.p(0.3) {
        operands.push(x);
    }
    if g.p(0.3) {
        operands.shuffle(&mut g.rng);
    }
    let mut terms = operands.into_iter();
    let mut sum = terms.next()?;
    for t in terms {
        let op = *[BinOp::Add, BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Max]
            .choose(&mut g.rng)
            .unwrap();
        sum = Expr::Bin(op, b(sum), b(t), op.symbol().is_some());
    }
    let value = g.eval(&sum)?;
    if g.p(0.5) {
        // Along the last axis only: the partials of its chunks meet in a combine tree.
        let f = *["sum", "max", "mean", "var"].choose(&mut g.rng).unwrap();
        let last = value.shape().len() as i64 - 1;
        let axis = Expr::Int(if g.p(0.5) { -1 } else { last });
        return Some(call(f, vec![sum], vec![("axis", axis)]));
    }
    Some(reduction(g, sum, &value))
}

fn axis_form(g: &mut Gen, nd: usize) -> Option<Expr> {
    let signed = |g: &mut Gen, d: usize| -> Expr {
        if g.p(0.3) {
            Expr::Int(d as i64 - nd as i64)
        } else {
            Expr::Int(d as i64)
        }
    };
    match g.rng.gen_range(0..6) {
        0 => None,
        1 => Some(Expr::NoneLit),
        2 => Some(Expr::Tuple(vec![])),
        3 if nd > 0 => {
            let mut dims: Vec<usize> = (0..nd).filter(|_| g.p(0.5)).collect();
            dims.shuffle(&mut g.rng);
            Some(Expr::Tuple(
                dims.into_iter().map(|d| signed(g, d)).collect(),
            ))
        }
        _ if nd > 0 => {
            let d = g.rng.gen_range(0..nd);
            Some(signed(g, d))
        }
        _ => None,
    }
}

pub fn reduction(g: &mut Gen, x: Expr, a: &Arr) -> Expr {
    let f = *reduce_functions().choose(&mut g.rng).unwrap();
    let nd = a.shape().len();
    let mut args = vec![x];
    let mut kw: Vec<(String, Expr)> = vec![];
    if let Some(ax) = axis_form(g, nd) {
        if g.p(0.3) {
            args.push(ax);
        } else {
            kw.push(("axis".into(), ax));
        }
    }
    if g.p(0.3) {
        kw.push(("keepdims".into(), Expr::Bool(g.p(0.7))));
    }
    if matches!(f, "var" | "std") && g.p(0.4) {
        kw.push(("ddof".into(), Expr::Int(g.rng.gen_range(0..3))));
    }
    Expr::Call {
        func: f.into(),
        args,
        kwargs: kw,
        method: g.p(0.35),
    }
}

fn matmul(g: &mut Gen, x: Expr, a: &Arr) -> Option<Expr> {
    let s = a.shape();
    if s.len() != 2 {
        return None;
    }
    let n = g.rng.gen_range(0..5);
    let y = g.leaf(Some(vec![s[1], n]));
    Some(match g.rng.gen_range(0..4) {
        0 => Expr::Bin(BinOp::MatMul, b(x), b(y), true),
        1 => Expr::Bin(BinOp::MatMul, b(x), b(y), false),
        2 => call("dot", vec![x, y], vec![]),
        _ => Expr::Call {
            func: "dot".into(),
            args: vec![x, y],
            kwargs: vec![],
            method: true,
        },
    })
}

fn transpose(g: &mut Gen, x: Expr, a: &Arr) -> Expr {
    let nd = a.shape().len();
    match g.rng.gen_range(0..4) {
        // `.T` of a number (`(1 + 2).T`) is not ares' to take: a number has no attributes.
        0 if nd > 0 => Expr::T(b(x)),
        0 => call("transpose", vec![x], vec![]),
        1 => call("transpose", vec![x], vec![]),
        _ => {
            let mut perm: Vec<i64> = (0..nd as i64).collect();
            perm.shuffle(&mut g.rng);
            if g.p(0.5) {
                call("transpose", vec![x], vec![("axes", ints(&perm))])
            } else {
                call("transpose", vec![x, ints(&perm)], vec![])
            }
        }
    }
}

fn concatenate(g: &mut Gen, x: Expr, a: &Arr) -> Option<Expr> {
    let s = a.shape();
    if s.is_empty() {
        return None;
    }
    let ax = g.rng.gen_range(0..s.len());
    let mut items = vec![x];
    for _ in 0..g.rng.gen_range(1..3) {
        let mut t = s.clone();
        t[ax] = g.rng.gen_range(0..4);
        items.push(g.leaf(Some(t)));
    }
    items.shuffle(&mut g.rng);
    let axis = if g.p(0.3) {
        ax as i64 - s.len() as i64
    } else {
        ax as i64
    };
    let kw = if axis == 0 && g.p(0.5) {
        vec![]
    } else {
        vec![("axis", Expr::Int(axis))]
    };
    Some(call("concatenate", vec![Expr::Tuple(items)], kw))
}

/// A target shape for `n` elements: random factors, maybe a -1 and some 1s.
pub fn factor_shape(g: &mut Gen, n: usize) -> Vec<i64> {
    let mut dims = vec![];
    let mut left = n;
    for _ in 0..g.rng.gen_range(0..3) {
        let divs: Vec<usize> = (1..=left.max(1))
            .filter(|d| left == 0 || left.is_multiple_of(*d))
            .collect();
        let d = *divs.choose(&mut g.rng).unwrap();
        dims.push(d as i64);
        left = left.checked_div(d).unwrap_or(0);
    }
    dims.push(left as i64);
    dims.shuffle(&mut g.rng);
    if n > 0 && g.p(0.3) {
        let i = g.rng.gen_range(0..dims.len());
        dims[i] = -1;
    }
    dims
}

fn reshape(g: &mut Gen, x: Expr, a: &Arr) -> Expr {
    let dims = factor_shape(g, a.len());
    let src = if g.p(0.3) {
        call("rechunk", vec![x, Expr::Int(64)], vec![])
    } else {
        x
    };
    if dims.len() > 1 && g.p(0.3) {
        let mut args = vec![src];
        args.extend(dims.iter().map(|d| Expr::Int(*d)));
        return Expr::Call {
            func: "reshape".into(),
            args,
            kwargs: vec![],
            method: true,
        };
    }
    call("reshape", vec![src, ints(&dims)], vec![])
}

/// A 1-D `arange(n, chunk=c)` reshaped: the chunks line up with the new rows or not.
pub fn reshape_1d(g: &mut Gen) -> Expr {
    let n = g.rng.gen_range(0..25);
    let dims = factor_shape(g, n);
    let c = g.rng.gen_range(1..7);
    call(
        "reshape",
        vec![
            call(
                "arange",
                vec![Expr::Int(n as i64)],
                vec![("chunk", Expr::Int(c))],
            ),
            ints(&dims),
        ],
        vec![],
    )
}

fn index(g: &mut Gen, x: Expr, a: &Arr) -> Expr {
    let s = a.shape();
    let used = g.rng.gen_range(0..=s.len());
    let mut items = vec![];
    for &n in &s[..used] {
        let n = n as i64;
        items.push(match g.rng.gen_range(0..5) {
            0 if n > 0 => Idx::At(g.rng.gen_range(-n..n)),
            _ => {
                let bound = |g: &mut Gen| g.p(0.5).then(|| g.rng.gen_range(-n - 1..=n + 1));
                let (lo, hi) = (bound(g), bound(g));
                let step = *[None, Some(1), Some(2), Some(3), Some(-1), Some(-2)]
                    .choose(&mut g.rng)
                    .unwrap();
                Idx::Slice(lo, hi, step)
            }
        });
    }
    for _ in 0..g.rng.gen_range(0..3) {
        if g.p(0.5) {
            let at = g.rng.gen_range(0..=items.len());
            items.insert(at, Idx::NewAxis);
        }
    }
    if items.is_empty() {
        items.push(Idx::NewAxis);
    }
    Expr::Index(b(x), items)
}

/// One random operation on `x` (whose reference value is `a`).
pub fn apply(g: &mut Gen, x: Expr, a: &Arr, depth: u32) -> Expr {
    loop {
        let e = match g.rng.gen_range(0..33) {
            32 => match broadcast_reduce(g, x.clone(), a) {
                Some(e) => e,
                None => continue,
            },
            22..=26 => match super::ops2::apply(g, x.clone(), a) {
                Some(e) => e,
                None => continue,
            },
            0..=2 => {
                let f = *unary_functions().choose(&mut g.rng).unwrap();
                if f == "negative" && g.p(0.5) {
                    Expr::Neg(b(x.clone()))
                } else {
                    call(f, vec![x.clone()], vec![])
                }
            }
            3..=8 | 27..=29 => binary(g, x.clone(), a, depth),
            9..=12 => reduction(g, x.clone(), a),
            13 | 14 => match matmul(g, x.clone(), a) {
                Some(e) => e,
                None => continue,
            },
            15 => transpose(g, x.clone(), a),
            16 => match concatenate(g, x.clone(), a) {
                Some(e) => e,
                None => continue,
            },
            17 if !a.shape().is_empty() => {
                let c = g.chunk(&a.shape());
                call("rechunk", vec![x.clone(), c], vec![])
            }
            18 => reshape(g, x.clone(), a),
            19 => reshape_1d(g),
            20 => {
                let dt = Expr::Str(
                    ["bool", "int64", "float64"]
                        .choose(&mut g.rng)
                        .unwrap()
                        .to_string(),
                );
                Expr::Call {
                    func: "astype".into(),
                    args: vec![x.clone(), dt],
                    kwargs: vec![],
                    method: g.p(0.5),
                }
            }
            _ => index(g, x.clone(), a),
        };
        return e;
    }
}
