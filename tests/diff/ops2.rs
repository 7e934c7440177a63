//! The generator's operations for the functions issue 12 added: logical functions, all/any,
//! clip, expand_dims, squeeze, broadcast_to, stack, split, inner, 1-D matmul/dot, negative
//! transpose axes, `linspace(..., endpoint=False)`, and the bitwise ufuncs and operators
//! (`& | ^ ~`, the shifts `<< >>`).

use super::ast::{call, ints, BinOp, Expr, Idx};
use super::gen::Gen;
use super::refarr::Arr;
use rand::seq::SliceRandom;
use rand::Rng;

fn b(e: Expr) -> Box<Expr> {
    Box::new(e)
}

fn signed(g: &mut Gen, d: usize, nd: usize) -> Expr {
    if g.p(0.3) {
        Expr::Int(d as i64 - nd as i64)
    } else {
        Expr::Int(d as i64)
    }
}

/// One of the newer operations on `x` (value `a`), or `None` if none fits its shape.
pub fn apply(g: &mut Gen, x: Expr, a: &Arr) -> Option<Expr> {
    let s = a.shape();
    let nd = s.len();
    Some(match g.rng.gen_range(0..20) {
        0 => {
            let f = *["logical_and", "logical_or", "logical_xor"]
                .choose(&mut g.rng)
                .unwrap();
            let y = if g.p(0.4) {
                g.scalar()
            } else {
                g.leaf(Some(s.clone()))
            };
            call(f, vec![x, y], vec![])
        }
        1 => call("logical_not", vec![x], vec![]),
        2 => {
            let bound = |g: &mut Gen| if g.p(0.25) { Expr::NoneLit } else { g.scalar() };
            let (lo, hi) = (bound(g), bound(g));
            if g.p(0.5) {
                call("clip", vec![x, lo, hi], vec![])
            } else {
                call("clip", vec![x], vec![("a_min", lo), ("a_max", hi)])
            }
        }
        3 => {
            let k = g.rng.gen_range(1..3);
            let out = nd + k;
            let mut axes: Vec<usize> = (0..out).collect();
            axes.shuffle(&mut g.rng);
            let axes: Vec<Expr> = axes[..k].iter().map(|d| signed(g, *d, out)).collect();
            let axis = if k == 1 && g.p(0.5) {
                axes[0].clone()
            } else {
                Expr::Tuple(axes)
            };
            call("expand_dims", vec![x, axis], vec![])
        }
        4 => {
            let ones: Vec<usize> = (0..nd).filter(|d| s[*d] == 1 || g.p(0.1)).collect();
            match ones.choose(&mut g.rng) {
                Some(d) if g.p(0.6) => {
                    let ax = signed(g, *d, nd);
                    call("squeeze", vec![x], vec![("axis", ax)])
                }
                _ => call("squeeze", vec![x], vec![]),
            }
        }
        5 => {
            let mut t: Vec<i64> = s
                .iter()
                .map(|d| {
                    if *d == 1 && g.p(0.5) {
                        g.rng.gen_range(0..4)
                    } else {
                        *d as i64
                    }
                })
                .collect();
            if t.len() < 3 && g.p(0.5) {
                t.insert(0, g.rng.gen_range(1..3));
            }
            if t.iter().product::<i64>() > 60 {
                return None;
            }
            call("broadcast_to", vec![x, ints(&t)], vec![])
        }
        6 => {
            let mut items = vec![x];
            for _ in 0..g.rng.gen_range(1..3) {
                items.push(g.leaf(Some(s.clone())));
            }
            items.shuffle(&mut g.rng);
            let ax = g.rng.gen_range(0..=nd);
            let ax = signed(g, ax, nd + 1);
            call("stack", vec![Expr::Tuple(items)], vec![("axis", ax)])
        }
        7 if nd > 0 => {
            let d = g.rng.gen_range(0..nd);
            let n = s[d] as i64;
            let sections = if g.p(0.5) {
                let divs: Vec<i64> = (1..=n.max(1)).filter(|k| n % k == 0).collect();
                Expr::Int(*divs.choose(&mut g.rng).unwrap())
            } else {
                let k = g.rng.gen_range(1..3);
                Expr::Tuple(
                    (0..k)
                        .map(|_| Expr::Int(g.rng.gen_range(-n - 1..=n + 1)))
                        .collect(),
                )
            };
            let parts = match &sections {
                Expr::Int(k) => *k,
                Expr::Tuple(v) => v.len() as i64 + 1,
                _ => 1,
            };
            let at = g.rng.gen_range(-parts..parts);
            let ax = signed(g, d, nd);
            Expr::Index(
                b(call("split", vec![x, sections], vec![("axis", ax)])),
                vec![Idx::At(at)],
            )
        }
        8 if (1..=3).contains(&nd) => {
            // N-D operands: the other axes of both, in order.
            let k = s[nd - 1];
            let mut other: Vec<usize> = (0..g.rng.gen_range(0..3))
                .map(|_| g.rng.gen_range(0..4))
                .collect();
            other.push(k);
            let y = g.leaf(Some(other));
            call("inner", vec![x, y], vec![])
        }
        9 if (1..=2).contains(&nd) => {
            // 1-D operands: a row on the left, a column on the right.
            let k = s[nd - 1];
            let y = if g.p(0.5) {
                g.leaf(Some(vec![k]))
            } else {
                let n = g.rng.gen_range(0..4);
                g.leaf(Some(vec![k, n]))
            };
            match g.rng.gen_range(0..3) {
                0 => Expr::Bin(BinOp::MatMul, b(x), b(y), true),
                1 => call("dot", vec![x, y], vec![]),
                _ => call("matmul", vec![x, y], vec![]),
            }
        }
        10 => {
            let mut perm: Vec<usize> = (0..nd).collect();
            perm.shuffle(&mut g.rng);
            let axes: Vec<Expr> = perm.iter().map(|d| signed(g, *d, nd)).collect();
            call("transpose", vec![x], vec![("axes", Expr::Tuple(axes))])
        }
        11 => {
            let f = *["isnan", "isinf", "isfinite"].choose(&mut g.rng).unwrap();
            call(f, vec![x], vec![])
        }
        12 => {
            let f = *["cumsum", "cumprod"].choose(&mut g.rng).unwrap();
            let kw = if nd > 0 && g.p(0.6) {
                let d = g.rng.gen_range(0..nd);
                vec![("axis".to_string(), signed(g, d, nd))]
            } else {
                vec![]
            };
            Expr::Call {
                func: f.into(),
                args: vec![x],
                kwargs: kw,
                method: g.p(0.3),
            }
        }
        13 => {
            let cond = if g.p(0.5) {
                Expr::Bin(BinOp::Gt, b(x.clone()), b(g.scalar()), true)
            } else {
                let c = g.leaf(Some(s.clone()));
                call("astype", vec![c, Expr::Str("bool".into())], vec![])
            };
            let other = if g.p(0.5) {
                g.scalar()
            } else {
                g.leaf(Some(s.clone()))
            };
            let (p, q) = if g.p(0.5) { (x, other) } else { (other, x) };
            call("where", vec![cond, p, q], vec![])
        }
        14 => {
            let f = *["argmin", "argmax"].choose(&mut g.rng).unwrap();
            let mut kw = vec![];
            if nd > 0 && g.p(0.6) {
                let d = g.rng.gen_range(0..nd);
                kw.push(("axis".to_string(), signed(g, d, nd)));
            }
            if g.p(0.3) {
                kw.push(("keepdims".to_string(), Expr::Bool(g.p(0.5))));
            }
            Expr::Call {
                func: f.into(),
                args: vec![x],
                kwargs: kw,
                method: g.p(0.3),
            }
        }
        15 if nd >= 1 => {
            // Stacks of matrices: batch dims broadcast, on either side.
            let k = s[nd - 1];
            let mut other: Vec<usize> = if nd > 2 && g.p(0.7) {
                s[..nd - 2]
                    .iter()
                    .map(|d| if g.p(0.3) { 1 } else { *d })
                    .collect()
            } else {
                vec![g.rng.gen_range(1..3)]
            };
            other.extend([k, g.rng.gen_range(0..3)]);
            let y = g.leaf(Some(other));
            if g.p(0.5) {
                Expr::Bin(BinOp::MatMul, b(x), b(y), true)
            } else {
                call("matmul", vec![x, y], vec![])
            }
        }
        16 if nd >= 1 => {
            let k = s[nd - 1];
            let mut other: Vec<usize> = (0..g.rng.gen_range(0..2))
                .map(|_| g.rng.gen_range(1..3))
                .collect();
            other.extend([k, g.rng.gen_range(1..3)]);
            call("dot", vec![x, g.leaf(Some(other))], vec![])
        }
        17 => {
            // Sum over n axis pairs; b has the picked dims plus one extra at position e.
            let n = g.rng.gen_range(0..=nd.min(2));
            let mut picked: Vec<usize> = (0..nd).collect();
            picked.shuffle(&mut g.rng);
            picked.truncate(n);
            let (extra, e) = (g.rng.gen_range(0..3), g.rng.gen_range(0..=n));
            let mut other: Vec<usize> = picked.iter().map(|d| s[*d]).collect();
            other.insert(e, extra);
            let bx: Vec<i64> = (0..=n).filter(|i| *i != e).map(|i| i as i64).collect();
            let y = g.leaf(Some(other));
            let last_n: Vec<usize> = (nd - n..nd).collect();
            let axes = if picked == last_n && e == n && g.p(0.5) {
                Expr::Int(n as i64)
            } else {
                let ax: Vec<i64> = picked.iter().map(|d| *d as i64).collect();
                Expr::Tuple(vec![ints(&ax), ints(&bx)])
            };
            call("tensordot", vec![x, y], vec![("axes", axes)])
        }
        18 => {
            let op = *[
                BinOp::BitAnd,
                BinOp::BitOr,
                BinOp::BitXor,
                BinOp::LeftShift,
                BinOp::RightShift,
            ]
            .choose(&mut g.rng)
            .unwrap();
            let x = integral(g, x, a.dtype());
            let y = if g.p(0.4) {
                g.scalar()
            } else {
                let y = g.leaf(Some(s.clone()));
                // Shift counts are mostly int64 (two bools do not shift in ares).
                let bools = if op.is_shift() { 0.15 } else { 0.5 };
                let kind = if g.p(bools) { "bool" } else { "int64" };
                call("astype", vec![y, Expr::Str(kind.into())], vec![])
            };
            let (p, q) = if g.p(0.5) { (x, y) } else { (y, x) };
            Expr::Bin(op, b(p), b(q), g.p(0.6))
        }
        19 => {
            let x = integral(g, x, a.dtype());
            if g.p(0.6) {
                Expr::Invert(b(x))
            } else {
                call("invert", vec![x], vec![])
            }
        }
        _ => return None,
    })
}

/// `x` as bool or int64 (mostly; a float is kept now and then, which both sides refuse).
fn integral(g: &mut Gen, x: Expr, dtype: super::value::DT) -> Expr {
    if dtype != super::value::DT::F64 || g.p(0.1) {
        return x;
    }
    let kind = if g.p(0.5) { "bool" } else { "int64" };
    call("astype", vec![x, Expr::Str(kind.into())], vec![])
}

/// `linspace(a, b, n, endpoint=False)`.
pub fn linspace_open(g: &mut Gen, n: usize) -> Expr {
    let (a, b) = (g.dyadic(), g.dyadic());
    let c = g.chunk(&[n]);
    call(
        "linspace",
        vec![Expr::Float(a), Expr::Float(b), Expr::Int(n as i64)],
        vec![("endpoint", Expr::Bool(false)), ("chunk", c)],
    )
}
