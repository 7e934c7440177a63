//! Programs NumPy rejects, so that ares must reject them too (at parse, evaluation,
//! preparation or execution) and never hang: negative integer powers, bool subtract and
//! negation, shapes that do not broadcast, axes out of range, duplicated or of the wrong
//! type, indices out of range, bad reshapes and transposes, mismatched concatenations and
//! matmuls, min/max of empty axes, and arguments of the wrong type (`ones((2.0, 3))`,
//! `linspace(0, 1, 5.0)`).

use super::ast::{call, ints, BinOp, Expr, Idx};
use super::gen::Gen;
use rand::Rng;

fn b(e: Expr) -> Box<Expr> {
    Box::new(e)
}

/// Wraps or replaces `x` (a valid tensor expression) with something that must fail. The
/// reference decides: when the attempt happens to be valid, the program is still kept.
pub fn inject(g: &mut Gen, x: Expr) -> Expr {
    let Some(a) = g.eval(&x) else { return x };
    let s = a.shape();
    let nd = s.len() as i64;
    let as_int = call("astype", vec![x.clone(), Expr::Str("int64".into())], vec![]);
    let as_bool = call("astype", vec![x.clone(), Expr::Str("bool".into())], vec![]);
    match g.rng.gen_range(0..16) {
        0 => Expr::Bin(BinOp::Pow, b(as_int), b(Expr::Int(-1)), true),
        1 => {
            let sh: Vec<i64> = s.iter().map(|d| *d as i64).collect();
            let neg = call(
                "full",
                vec![ints(&sh), Expr::Int(-1)],
                vec![("chunk", Expr::Int(1))],
            );
            Expr::Bin(BinOp::Pow, b(as_int), b(neg), g.p(0.5))
        }
        2 => Expr::Bin(BinOp::Sub, b(as_bool.clone()), b(Expr::Bool(true)), true),
        3 => Expr::Neg(b(as_bool)),
        4 => {
            let n = s.last().map_or(2, |d| *d as i64 + 2);
            let y = call("arange", vec![Expr::Int(n)], vec![("chunk", Expr::Int(2))]);
            Expr::Bin(BinOp::Add, b(x), b(y), true)
        }
        5 => call(
            "sum",
            vec![x],
            vec![("axis", Expr::Int(nd + g.rng.gen_range(0..2)))],
        ),
        6 => call("mean", vec![x], vec![("axis", Expr::Float(0.0))]),
        7 if nd > 0 => call("max", vec![x], vec![("axis", ints(&[0, -nd]))]),
        8 if nd > 0 => Expr::Index(b(x), vec![Idx::At(s[0] as i64)]),
        9 => Expr::Index(b(x), (0..=nd).map(|_| Idx::At(0)).collect()),
        10 if nd > 0 => Expr::Index(b(x), vec![Idx::Slice(None, None, Some(0))]),
        11 => {
            let n = a.len() as i64 + 1;
            call(
                "reshape",
                vec![
                    call("rechunk", vec![x, Expr::Int(64)], vec![]),
                    ints(&[n, -1]),
                ],
                vec![],
            )
        }
        12 => call(
            "transpose",
            vec![x],
            vec![("axes", ints(&vec![0; s.len().max(1)]))],
        ),
        13 => {
            let y = call(
                "ones",
                vec![ints(&[2, 3, 1])],
                vec![("chunk", Expr::Int(2))],
            );
            if g.p(0.5) {
                Expr::Bin(BinOp::MatMul, b(x), b(y), true)
            } else {
                call("concatenate", vec![Expr::Tuple(vec![x, y])], vec![])
            }
        }
        14 => {
            let n = g.rng.gen_range(0..3);
            call(
                "min",
                vec![call(
                    "zeros",
                    vec![ints(&[n, 0])],
                    vec![("chunk", Expr::Int(2))],
                )],
                vec![("axis", Expr::Int(1))],
            )
        }
        _ => match g.rng.gen_range(0..3) {
            0 => call(
                "ones",
                vec![Expr::Tuple(vec![Expr::Float(2.0), Expr::Int(3)])],
                vec![],
            ),
            1 => call(
                "linspace",
                vec![Expr::Int(0), Expr::Int(1), Expr::Float(5.0)],
                vec![],
            ),
            _ => call(
                "zeros",
                vec![Expr::Float(3.0)],
                vec![("chunk", Expr::Int(2))],
            ),
        },
    }
}
