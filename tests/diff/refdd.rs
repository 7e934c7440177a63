//! The reference for data-dependent lengths, from NumPy 2's documentation: `x[m]` (a bool
//! mask of `x`'s shape selects the elements where it is true, 1-D in C order), `unique`
//! (the sorted distinct values of the flattened array; `-0.0 == 0.0`, and with
//! `equal_nan=True`, the default, one NaN, last) and `sort` (along the last axis, NaN last).
//!
//! Also what ares does with such a length, read from the program alone (`analyse`): whether
//! a data-dependent tensor is consumed further (the program runs in stages, which only a
//! supervisor does: the local executor refuses it; ops that need the length, such as
//! slicing, reshape, concatenate, matmul, rechunk or `.T`, wait for that stage), and
//! whether the program reads `.shape` of one while the expression is built: ares refuses
//! that at once, NumPy computes it, an accepted difference (`Outcome::AresOnly`, checked
//! against ares' refusal text in `value::judge`).

use super::ast::{BinOp, Expr, Program};
use super::refarr::{np_err, unsupported, Arr, R};
use super::refeval::{arr, V};
use ndarray::{ArrayD, Axis, IxDyn};
use std::cmp::Ordering;
use std::collections::HashMap;

type Get<'a> = &'a dyn Fn(usize, &str) -> Option<V>;

/// The substring of ares' refusal of an op that needs a data-dependent length while the
/// expression is built.
pub const REFUSAL: &str = "while the expression is built";

/// The substring of the local executor's refusal of a program that runs in stages.
pub const LOCAL_REFUSAL: &str = "runs in stages, which a supervisor does";

fn vec1<T>(v: Vec<T>) -> ArrayD<T> {
    ArrayD::from_shape_vec(IxDyn(&[v.len()]), v).unwrap()
}

/// `x[m]`: `m` must be a bool array of `x`'s shape (the generator draws no other).
pub fn mask(x: &Arr, m: &Arr) -> R<Arr> {
    let Arr::B(m) = m else {
        return unsupported("a mask that is not bool");
    };
    if m.shape() != x.shape().as_slice() {
        return np_err("IndexError: boolean index did not match indexed array");
    }
    if m.ndim() == 0 {
        return unsupported("a 0-d mask");
    }
    fn pick<T: Clone>(x: &ArrayD<T>, m: &ArrayD<bool>) -> ArrayD<T> {
        vec1(
            x.iter()
                .zip(m.iter())
                .filter(|(_, k)| **k)
                .map(|(v, _)| v.clone())
                .collect(),
        )
    }
    Ok(match x {
        Arr::B(a) => Arr::B(pick(a, m)),
        Arr::I(a) => Arr::I(pick(a, m)),
        Arr::F(a) => Arr::F(pick(a, m)),
    })
}

/// NumPy's sort order for floats: NaN after everything, `-0.0` equal to `0.0`.
fn fcmp(a: &f64, b: &f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(b).unwrap(),
    }
}

fn sorted(a: &Arr) -> Arr {
    fn rows<T: Clone>(x: &ArrayD<T>, cmp: impl Fn(&T, &T) -> Ordering + Copy) -> ArrayD<T> {
        let mut out = x.clone();
        let last = Axis(x.ndim() - 1);
        for mut lane in out.lanes_mut(last) {
            let mut v: Vec<T> = lane.iter().cloned().collect();
            v.sort_by(cmp);
            for (d, s) in lane.iter_mut().zip(v) {
                *d = s;
            }
        }
        out
    }
    match a {
        Arr::B(x) => Arr::B(rows(x, bool::cmp)),
        Arr::I(x) => Arr::I(rows(x, i64::cmp)),
        Arr::F(x) => Arr::F(rows(x, fcmp)),
    }
}

fn unique(a: &Arr) -> Arr {
    let flat = |a: &Arr| super::refshape::reshape(a, &[a.len()]);
    match sorted(&flat(a)) {
        Arr::B(x) => {
            let mut v: Vec<bool> = x.iter().copied().collect();
            v.dedup();
            Arr::B(vec1(v))
        }
        Arr::I(x) => {
            let mut v: Vec<i64> = x.iter().copied().collect();
            v.dedup();
            Arr::I(vec1(v))
        }
        Arr::F(x) => {
            let mut v: Vec<f64> = x.iter().copied().collect();
            // `==` merges -0.0 and 0.0; NaNs (all last) merge into one.
            v.dedup_by(|b, a| a == b || (a.is_nan() && b.is_nan()));
            Arr::F(vec1(v))
        }
    }
}

pub fn call(f: &str, pos: &[V], get: Get) -> R<Arr> {
    let a0 = || arr(pos[0].clone());
    match f {
        "unique" => Ok(unique(&a0()?)),
        "sort" => {
            let x = a0()?;
            if get(1, "axis").is_some() {
                return unsupported("sort with an axis");
            }
            if x.shape().is_empty() {
                return np_err("AxisError: axis -1 is out of bounds for array of dimension 0");
            }
            Ok(sorted(&x))
        }
        f => unsupported(format!("function {f}")),
    }
}

/// What ares makes of a program's data-dependent lengths.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Analysis {
    /// A data-dependent tensor is consumed by another op: the program runs in stages.
    pub staged: bool,
    /// The first op that needs a data-dependent length while the expression is built.
    pub refused: Option<String>,
    /// The program has a data-dependent length at all (`x[m]`, `unique`).
    pub present: bool,
}

/// Ops through which a data-dependent length flows unchanged (elementwise, scans, sort) or
/// is made anew (`unique`).
const KEEPS_LENGTH: &[&str] = &[
    "clip",
    "where",
    "astype",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "isnan",
    "isinf",
    "isfinite",
    "invert",
    "cumsum",
    "cumprod",
    "sort",
    "unique",
];

const REDUCTIONS: &[&str] = &[
    "sum", "prod", "min", "max", "amin", "amax", "mean", "var", "std", "all", "any", "argmin",
    "argmax",
];

fn elementwise(f: &str) -> bool {
    BinOp::ALL
        .iter()
        .any(|o| o.func() == f && *o != BinOp::MatMul)
        || matches!(
            f,
            "negative" | "abs" | "absolute" | "sqrt" | "exp" | "log" | "sin" | "cos"
        )
        || super::ops::unary_functions().contains(&f)
}

struct Walk<'a> {
    names: &'a HashMap<String, bool>,
    out: Analysis,
}

impl Walk<'_> {
    fn refuse(&mut self, op: &str) {
        self.out.staged = true;
        if self.out.refused.is_none() {
            self.out.refused = Some(format!("{op}: needs the length of a data-dependent tensor"));
        }
    }

    /// Whether the length of `e` depends on the data; notes what consumes such a length.
    fn dd(&mut self, e: &Expr) -> bool {
        match e {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Str(_) | Expr::NoneLit => false,
            Expr::Name(n) => self.names.get(n).copied().unwrap_or(false),
            Expr::Tuple(items) => {
                // Only the arguments of the ops below (concatenate, stack, shapes).
                let v: Vec<bool> = items.iter().map(|x| self.dd(x)).collect();
                v.into_iter().any(|b| b)
            }
            Expr::Neg(x) | Expr::Invert(x) => self.consumed(x),
            Expr::Bin(BinOp::MatMul, a, b, _) => {
                let (p, q) = (self.dd(a), self.dd(b));
                // Waits for the stage that computes the length.
                self.out.staged |= p || q;
                false
            }
            Expr::Bin(_, a, b, _) => {
                let (p, q) = (self.consumed(a), self.consumed(b));
                p || q
            }
            Expr::Mask(x, m) => {
                self.out.present = true;
                let (p, q) = (self.dd(x), self.dd(m));
                if p || q {
                    self.out.staged = true;
                }
                true
            }
            Expr::T(x) | Expr::Index(x, _) => {
                // Made again once the stage has computed the length (`tensor::wait`).
                self.out.staged |= self.dd(x);
                false
            }
            Expr::Shape(x) => {
                if self.dd(x) {
                    self.refuse("shape");
                }
                false
            }
            Expr::Call {
                func, args, kwargs, ..
            } => {
                let mut any = false;
                for a in args.iter().chain(kwargs.iter().map(|(_, v)| v)) {
                    any |= self.dd(a);
                }
                let f = func.as_str();
                if f == "unique" {
                    self.out.present = true;
                    self.out.staged |= any;
                    return true;
                }
                if !any {
                    return false;
                }
                if elementwise(f) || KEEPS_LENGTH.contains(&f) {
                    self.out.staged = true;
                    return true;
                }
                if REDUCTIONS.contains(&f) {
                    self.out.staged = true;
                    // A 1-D data-dependent operand: over axis 0 (-1, None) the length is gone;
                    // `axis=()` keeps it.
                    let axis = kwargs
                        .iter()
                        .find(|(k, _)| k == "axis")
                        .map(|(_, v)| v)
                        .or(args.get(1));
                    return matches!(axis, Some(Expr::Tuple(v)) if v.is_empty());
                }
                // Reshapes, concatenations, rechunks, matmuls... wait for the stage.
                self.out.staged = true;
                false
            }
        }
    }

    /// `dd(e)`, noting that an op consumes it.
    fn consumed(&mut self, e: &Expr) -> bool {
        let d = self.dd(e);
        if d {
            self.out.staged = true;
        }
        d
    }
}

pub fn analyse(p: &Program) -> Analysis {
    let mut names = HashMap::new();
    let mut out = Analysis::default();
    for (name, e) in &p.stmts {
        let mut w = Walk {
            names: &names,
            out: out.clone(),
        };
        let d = w.dd(e);
        out = w.out;
        names.insert(name.clone(), d);
    }
    let mut w = Walk { names: &names, out };
    w.dd(&p.result);
    w.out
}
