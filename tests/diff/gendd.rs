//! The generator's data-dependent lengths: `x[m]` (`m` a bool tensor of `x`'s shape: a
//! comparison of `x` with one of its own values or a Python number, a conjunction of two,
//! `isnan`, another tensor's comparison, a cast) and `unique(x)`, then what may go on from
//! them without their length: elementwise functions and operators with Python numbers, with
//! each other when they come from the same selection (`v1 * 2 + v1`, `sin(v1) - sort(v1)`),
//! or with length-1 and 0-d operands; `clip`, `where`, the logical, bitwise and `is*`
//! functions, `astype`; `sort`, `unique`, scans along axis 0, nested masks (`v1[v1 > c]`);
//! every reduction (axis None, 0, -1, `(0,)`, `()`, keepdims, ddof) and `argmin`/`argmax`,
//! alone or as a 0-d operand of an ordinary program; named intermediates used more than
//! once. Lengths that may not fit once known (`x[m1] + x[m2]`, `x[m] + arange(n)`) are drawn
//! without a retry, so that NumPy's broadcast error is compared too.
//!
//! A few programs apply an op that needs the length (slicing, `reshape`, `concatenate`,
//! `rechunk`, `.T`, matmul, `expand_dims`, `stack`): it waits for the stage that computes
//! it, and must give NumPy's value. So must an operand whose length fits the real length
//! but not the bound (`x[x > 8] + ones(3)`, `x` of 10 elements).

use super::ast::{call, ints, BinOp, Expr, Idx};
use super::gen::Gen;
use super::refarr::Arr;
use super::value::DT;
use rand::seq::SliceRandom;
use rand::Rng;

/// The share of programs whose result `result` draws: 7 %, or `ARES_DIFF_DD_SHARE` (0 to 1,
/// for a run of these alone). Reductions of `x[m]` also appear inside ordinary programs.
pub fn share() -> f64 {
    std::env::var("ARES_DIFF_DD_SHARE").map_or(0.07, |v| v.parse().expect("ARES_DIFF_DD_SHARE"))
}

fn b(e: Expr) -> Box<Expr> {
    Box::new(e)
}

/// A data-dependent tensor: its expression, its reference value (1-D), and the bounds ares
/// gives its length in turn: the size of the tensor it was selected from, then, each time
/// a stage computes a data-dependent tensor it was selected from (`v[v > c]`), the real
/// length of that one.
#[derive(Clone)]
pub struct Dd {
    pub e: Expr,
    pub a: Arr,
    pub bounds: Vec<usize>,
}

/// A tensor to select from, of at least one dimension.
fn base(g: &mut Gen, depth: u32) -> (Expr, Arr) {
    for _ in 0..8 {
        let (e, a) = if depth == 0 {
            let e = g.leaf(None);
            match g.eval(&e) {
                Some(a) => (e, a),
                None => continue,
            }
        } else {
            g.tensor(depth)
        };
        if !a.shape().is_empty() {
            return (e, a);
        }
    }
    let e = call("arange", vec![Expr::Int(7)], vec![("chunk", Expr::Int(3))]);
    let a = g.eval(&e).expect("arange(7)");
    (e, a)
}

/// One of `a`'s own values (so that a comparison splits it), or a Python number.
fn threshold(g: &mut Gen, a: &Arr) -> Expr {
    if a.len() == 0 || g.p(0.25) {
        return g.scalar();
    }
    let i = g.rng.gen_range(0..a.len());
    match a {
        Arr::B(x) => Expr::Bool(*x.iter().nth(i).unwrap()),
        // `-9223372036854775808` is not a literal in ares (nor in Python: `-` applies to a
        // number too large for int64).
        Arr::I(x) => match *x.iter().nth(i).unwrap() {
            i64::MIN => Expr::Int(i64::MIN + 1),
            v => Expr::Int(v),
        },
        Arr::F(x) => Expr::Float(*x.iter().nth(i).unwrap()),
    }
}

fn compare(g: &mut Gen, x: Expr, a: &Arr) -> Expr {
    let op = *[
        BinOp::Gt,
        BinOp::Gt,
        BinOp::Lt,
        BinOp::Ge,
        BinOp::Le,
        BinOp::Ne,
        BinOp::Eq,
    ]
    .choose(&mut g.rng)
    .unwrap();
    let c = threshold(g, a);
    let (l, r) = if g.p(0.2) { (c, x) } else { (x, c) };
    Expr::Bin(op, b(l), b(r), g.p(0.7))
}

/// A bool tensor of the shape of `x` (value `a`), computed from `x` alone when `x` is
/// data-dependent (`dd`: another tensor would have the length of the bound).
fn mask(g: &mut Gen, x: &Expr, a: &Arr, dd: bool) -> Expr {
    let s = a.shape();
    match g.rng.gen_range(0..10) {
        1 if dd => compare(g, x.clone(), a),
        0 => {
            let op = *[BinOp::BitAnd, BinOp::BitOr, BinOp::BitXor]
                .choose(&mut g.rng)
                .unwrap();
            let (p, q) = (compare(g, x.clone(), a), compare(g, x.clone(), a));
            Expr::Bin(op, b(p), b(q), g.p(0.7))
        }
        1 => {
            let y = g.leaf(Some(s.clone()));
            match g.eval(&y) {
                Some(ya) if g.p(0.6) => compare(g, y, &ya),
                _ => call("astype", vec![y, Expr::Str("bool".into())], vec![]),
            }
        }
        2 => {
            let f = *["isnan", "isfinite", "logical_not"]
                .choose(&mut g.rng)
                .unwrap();
            if f == "logical_not" {
                call(f, vec![compare(g, x.clone(), a)], vec![])
            } else {
                call(f, vec![x.clone()], vec![])
            }
        }
        3 if a.dtype() == DT::Bool => {
            if g.p(0.5) {
                x.clone()
            } else {
                Expr::Invert(b(x.clone()))
            }
        }
        _ => compare(g, x.clone(), a),
    }
}

/// `x[m]` or `unique(x)`.
fn source(g: &mut Gen, x: Expr, a: &Arr) -> Option<Dd> {
    let e = if g.p(0.7) {
        let m = mask(g, &x, a, false);
        Expr::Mask(b(x), b(m))
    } else if g.p(0.85) {
        call("unique", vec![x], vec![])
    } else {
        Expr::Call {
            func: "unique".into(),
            args: vec![x],
            kwargs: vec![],
            method: true,
        }
    };
    let v = g.eval(&e)?;
    Some(Dd {
        e,
        a: v,
        bounds: vec![a.len()],
    })
}

/// A Python number, or a 0-d or length-1 tensor (broadcasts against any length).
fn partner(g: &mut Gen) -> Expr {
    match g.rng.gen_range(0..8) {
        0 => {
            let f = g.scalar();
            call("full", vec![ints(&[1]), f], vec![("chunk", Expr::Int(1))])
        }
        1 => call("ones", vec![Expr::Int(1)], vec![]),
        2 => {
            let (x, _) = g.tensor(1);
            let f = *["sum", "max", "mean"].choose(&mut g.rng).unwrap();
            call(f, vec![x], vec![])
        }
        3 => call("arange", vec![Expr::Int(1)], vec![("chunk", Expr::Int(1))]),
        _ => g.scalar(),
    }
}

fn cast(g: &mut Gen, x: Expr) -> Expr {
    let dt = *["bool", "int64", "float64"].choose(&mut g.rng).unwrap();
    Expr::Call {
        func: "astype".into(),
        args: vec![x, Expr::Str(dt.into())],
        kwargs: vec![],
        method: g.p(0.4),
    }
}

/// An op on `d` that keeps its length (`same`) or may change it (`unique`, a nested mask).
fn step(g: &mut Gen, d: &Dd, depth: u32, same: bool) -> Expr {
    let x = d.e.clone();
    let kinds = if same { 11 } else { 14 };
    match g.rng.gen_range(0..kinds) {
        0 | 1 => {
            let f = *super::ops::unary_functions().choose(&mut g.rng).unwrap();
            if f == "negative" && g.p(0.5) {
                Expr::Neg(b(x))
            } else {
                call(f, vec![x], vec![])
            }
        }
        2..=4 => {
            let op = *BinOp::ALL[..13].choose(&mut g.rng).unwrap();
            let y = if g.p(0.7) { g.scalar() } else { partner(g) };
            let (l, r) = if g.p(0.3) { (y, x) } else { (x, y) };
            Expr::Bin(op, b(l), b(r), op.symbol().is_some() && g.p(0.7))
        }
        5 | 6 => {
            // Two tensors of the same selection: the same length whatever the data.
            let p = grow(g, d, depth.saturating_sub(1), true);
            let q = grow(g, d, depth.saturating_sub(1), true);
            let op = *BinOp::ALL[..13].choose(&mut g.rng).unwrap();
            Expr::Bin(op, b(p.e), b(q.e), op.symbol().is_some() && g.p(0.7))
        }
        7 => match g.rng.gen_range(0..8) {
            0 => {
                let (lo, hi) = (g.scalar(), g.scalar());
                call("clip", vec![x, lo, hi], vec![])
            }
            1 => {
                let c = compare(g, x.clone(), &d.a);
                let y = g.scalar();
                let (p, q) = if g.p(0.5) { (x, y) } else { (y, x) };
                call("where", vec![c, p, q], vec![])
            }
            2 => {
                let f = *["logical_and", "logical_or", "logical_xor"]
                    .choose(&mut g.rng)
                    .unwrap();
                let c = compare(g, x.clone(), &d.a);
                call(f, vec![x, c], vec![])
            }
            3 => {
                let f = *["isnan", "isinf", "isfinite", "logical_not"]
                    .choose(&mut g.rng)
                    .unwrap();
                call(f, vec![x], vec![])
            }
            4 | 5 => {
                let op = *[
                    BinOp::BitAnd,
                    BinOp::BitOr,
                    BinOp::BitXor,
                    BinOp::LeftShift,
                    BinOp::RightShift,
                ]
                .choose(&mut g.rng)
                .unwrap();
                let x = if d.a.dtype() == DT::F64 {
                    call("astype", vec![x, Expr::Str("int64".into())], vec![])
                } else {
                    x
                };
                let y = Expr::Int(g.rng.gen_range(0..4));
                Expr::Bin(op, b(x), b(y), g.p(0.6))
            }
            6 => {
                let x = if d.a.dtype() == DT::F64 {
                    call("astype", vec![x, Expr::Str("int64".into())], vec![])
                } else {
                    x
                };
                Expr::Invert(b(x))
            }
            _ => cast(g, x),
        },
        8 => call("sort", vec![x], vec![]),
        9 => {
            let f = *["cumsum", "cumprod"].choose(&mut g.rng).unwrap();
            let axis = if g.p(0.3) {
                vec![]
            } else {
                vec![(
                    "axis".to_string(),
                    Expr::Int(*[0, -1].choose(&mut g.rng).unwrap()),
                )]
            };
            Expr::Call {
                func: f.into(),
                args: vec![x],
                kwargs: axis,
                method: g.p(0.3),
            }
        }
        10 => {
            // A reduction over no axis keeps the length.
            let f = *["sum", "max", "any"].choose(&mut g.rng).unwrap();
            call(f, vec![x], vec![("axis", Expr::Tuple(vec![]))])
        }
        11 | 12 => {
            // A nested mask: `y[y > c]`.
            let m = mask(g, &x, &d.a, true);
            Expr::Mask(b(x), b(m))
        }
        _ => call("unique", vec![x], vec![]),
    }
}

/// `depth` ops on `d`, each checked with the reference (retried when it fails or when a
/// length that must stay does not).
pub fn grow(g: &mut Gen, d: &Dd, depth: u32, same: bool) -> Dd {
    let mut d = d.clone();
    for _ in 0..depth {
        for _ in 0..8 {
            let e = step(g, &d, depth, same);
            match g.eval(&e) {
                Some(a) if a.shape().len() == 1 && (!same || a.len() == d.a.len()) => {
                    let mut bounds = d.bounds.clone();
                    let unique = matches!(&e, Expr::Call { func, .. } if func == "unique");
                    if matches!(e, Expr::Mask(..)) || unique {
                        bounds.push(d.a.len());
                    }
                    d = Dd { e, a, bounds };
                    break;
                }
                _ => {}
            }
        }
    }
    d
}

/// A reduction of `d` (as `ops::reduction` draws it), or `argmin`/`argmax`.
fn reduce(g: &mut Gen, d: &Dd) -> Expr {
    for _ in 0..8 {
        if g.p(0.15) {
            let f = *["argmin", "argmax"].choose(&mut g.rng).unwrap();
            let kw = match g.rng.gen_range(0..3) {
                0 => vec![],
                1 => vec![("axis".to_string(), Expr::Int(0))],
                _ => vec![("axis".to_string(), Expr::Int(-1))],
            };
            return Expr::Call {
                func: f.into(),
                args: vec![d.e.clone()],
                kwargs: kw,
                method: g.p(0.3),
            };
        }
        let e = super::ops::reduction(g, d.e.clone(), &d.a);
        let Expr::Call { kwargs, args, .. } = &e else {
            unreachable!("a call")
        };
        // `axis=()` keeps the length (`step` draws it): the result must have a known one.
        let axis = kwargs.iter().find(|(k, _)| k == "axis").map(|(_, v)| v);
        if matches!(axis.or(args.get(1)), Some(Expr::Tuple(v)) if v.is_empty()) {
            continue;
        }
        return e;
    }
    call("sum", vec![d.e.clone()], vec![])
}

/// An op that needs the length: it waits for the stage that computes it.
fn refused(g: &mut Gen, d: &Dd) -> Expr {
    let x = d.e.clone();
    let n = d.a.len() as i64;
    let e = match g.rng.gen_range(0..9) {
        0 => {
            let lo = g.rng.gen_range(-2..3);
            let step = *[None, Some(2), Some(-1)].choose(&mut g.rng).unwrap();
            Expr::Index(b(x), vec![Idx::Slice(Some(lo), None, step)])
        }
        1 if n > 0 => Expr::Index(b(x), vec![Idx::At(g.rng.gen_range(-n..n))]),
        1 | 2 => Expr::Index(b(x), vec![Idx::NewAxis]),
        3 => {
            if g.p(0.5) {
                call("reshape", vec![x, ints(&[-1, 1])], vec![])
            } else {
                Expr::Call {
                    func: "reshape".into(),
                    args: vec![x, Expr::Int(1), Expr::Int(-1)],
                    kwargs: vec![],
                    method: true,
                }
            }
        }
        4 => {
            let k = g.rng.gen_range(0..4);
            let y = g.leaf(Some(vec![k]));
            call("concatenate", vec![Expr::Tuple(vec![x, y])], vec![])
        }
        5 => call("rechunk", vec![x, Expr::Int(g.rng.gen_range(1..4))], vec![]),
        6 => {
            if g.p(0.5) {
                Expr::T(b(x))
            } else {
                call("transpose", vec![x], vec![])
            }
        }
        7 => {
            let y = grow(g, d, 1, true).e;
            if g.p(0.5) {
                Expr::Bin(BinOp::MatMul, b(x), b(y), true)
            } else {
                call("dot", vec![x, y], vec![])
            }
        }
        _ => {
            if g.p(0.5) {
                call("expand_dims", vec![x, Expr::Int(0)], vec![])
            } else {
                call("stack", vec![Expr::Tuple(vec![x.clone(), x])], vec![])
            }
        }
    };
    if g.p(0.3) {
        call("sum", vec![e], vec![])
    } else {
        e
    }
}

/// A 0-d tensor reduced from a data-dependent one, for ordinary programs.
pub fn reduced(g: &mut Gen) -> Expr {
    let (x, a) = base(g, 0);
    let Some(d) = source(g, x, &a) else {
        return call("arange", vec![Expr::Int(3)], vec![]);
    };
    let depth = g.rng.gen_range(0..2);
    let d = grow(g, &d, depth, false);
    reduce(g, &d)
}

/// The result of a program on data-dependent lengths; its statements go to `stmts`.
pub fn result(g: &mut Gen, stmts: &mut Vec<(String, Expr)>) -> Expr {
    let depth = g.rng.gen_range(0..3);
    let (mut x, a) = base(g, depth);
    if g.p(0.6) && !matches!(x, Expr::Name(_)) {
        // Named: the mask reads it again.
        x = g.bind(stmts, x, a.clone(), true);
    }
    let Some(src) = source(g, x.clone(), &a) else {
        return x;
    };
    let mut d = src.clone();
    if g.p(0.5) {
        d.e = g.bind(stmts, d.e.clone(), d.a.clone(), false);
    }
    let depth = g.rng.gen_range(0..3);
    let mut d = grow(g, &d, depth, false);
    if g.p(0.3) {
        // Named again and used more than once: `v2 = v1 * 2; v2[v2 > c] + v2[v2 > c]`.
        d.e = g.bind(stmts, d.e.clone(), d.a.clone(), false);
        let more = g.rng.gen_range(1..3);
        d = grow(g, &d, more, false);
    }
    let op = *[BinOp::Add, BinOp::Mul, BinOp::Sub, BinOp::Max]
        .choose(&mut g.rng)
        .unwrap();
    match g.rng.gen_range(0..20) {
        0..=5 => reduce(g, &d),
        6 | 7 => {
            // A 0-d operand of an ordinary tensor.
            let r = reduce(g, &d);
            let (y, _) = g.tensor(1);
            let (l, r) = if g.p(0.5) { (r, y) } else { (y, r) };
            Expr::Bin(op, b(l), b(r), op.symbol().is_some())
        }
        8 => {
            // Another selection of the same tensor: fits only if the lengths do. Both
            // bounds are the tensor's size; the other's real length is known after the
            // first stage.
            let other = source(g, x, &a).unwrap_or(src);
            Expr::Bin(op, b(d.e), b(other.e), op.symbol().is_some())
        }
        9 => {
            // A tensor of one of the lengths (or another: fits if the real length is 1).
            let mut lens = d.bounds.clone();
            lens.extend([d.a.len(), 3]);
            let len = *lens.choose(&mut g.rng).unwrap();
            let y = g.leaf(Some(vec![len]));
            let (l, r) = if g.p(0.3) { (y, d.e) } else { (d.e, y) };
            Expr::Bin(op, b(l), b(r), op.symbol().is_some())
        }
        10..=12 => refused(g, &d),
        _ => d.e,
    }
}
