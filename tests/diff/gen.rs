//! The random program generator: seeded (`Xoshiro256PlusPlus`, one seed per program, printed
//! with every disagreement) and shape-aware. It builds each node, evaluates it with the
//! reference to learn its shape and dtype, and retries a node that fails or is too big
//! (more than 60 elements), so most programs compute a value; `inject` then turns about one
//! program in eight into one NumPy rejects (see `errors.rs`).
//!
//! Covered: creation (zeros/ones/full/arange/linspace with dtypes and chunk sizes that do
//! not divide the shape, or explicit per-dim lengths), unary and binary elementwise
//! functions and operators, Python scalars (small, near 2^62, floats, bools) on either side,
//! broadcasting, reductions with every axis form, keepdims and ddof (as functions and
//! methods; also over operands of different ranks whose size-1 dims broadcast),
//! matmul/dot/`@`, transpose with axes and `.T`, concatenate, rechunk, reshape (whether or
//! not the chunks line up with the new rows), astype, slicing with steps, negative steps,
//! integers and `None`, zero-size and size-1 dimensions, named intermediate results used
//! more than once, the functions of `ops2.rs`, and `x[mask]` and `unique` with what goes on
//! from them (`gendd.rs`).

use super::ast::{call, ints, BinOp, Expr, Program};
use super::refarr::Arr;
use super::refeval::{self, Env, V};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

pub const MAX_ELEMS: usize = 60;

pub struct Gen {
    pub rng: Xoshiro256PlusPlus,
    env: Env,
    bound: Vec<String>,
    /// Bound names whose value is a tensor, not a number (`.shape` is a tensor's attribute).
    tensors: Vec<String>,
}

pub const BIG_INTS: [i64; 7] = [
    4611686018427387904,
    -4611686018427387904,
    4611686018427387907,
    9007199254740993,
    3037000499,
    9223372036854775807,
    -9223372036854775807,
];

impl Gen {
    pub fn new(seed: u64) -> Self {
        Self {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            env: Env::new(),
            bound: vec![],
            tensors: vec![],
        }
    }

    pub fn p(&mut self, prob: f64) -> bool {
        self.rng.gen_bool(prob)
    }

    fn pick<T: Clone>(&mut self, v: &[T]) -> T {
        v.choose(&mut self.rng).expect("non-empty").clone()
    }

    /// Evaluates with the reference; `Some` if it is an array of acceptable size.
    pub fn eval(&self, e: &Expr) -> Option<Arr> {
        match refeval::eval(e, &self.env) {
            Ok(V::A(a)) if a.len() <= MAX_ELEMS => Some(a),
            _ => None,
        }
    }

    pub fn dim(&mut self) -> usize {
        self.pick(&[0, 1, 1, 2, 2, 3, 3, 4, 5, 1, 2, 3, 4, 5, 3, 2, 4, 5, 6, 7])
    }

    pub fn shape(&mut self) -> Vec<usize> {
        let nd = self.pick(&[0, 1, 1, 1, 2, 2, 2, 2, 3, 3]);
        loop {
            let s: Vec<usize> = (0..nd).map(|_| self.dim()).collect();
            if s.iter().product::<usize>() <= MAX_ELEMS {
                return s;
            }
        }
    }

    fn shape_expr(&mut self, s: &[usize]) -> Expr {
        let v: Vec<i64> = s.iter().map(|d| *d as i64).collect();
        if v.len() == 1 && self.p(0.5) {
            Expr::Int(v[0])
        } else {
            ints(&v)
        }
    }

    /// A `chunk=` value for a shape: often not dividing it, sometimes one per dim.
    pub fn chunk(&mut self, s: &[usize]) -> Expr {
        if !s.is_empty() && !s.contains(&0) && self.p(0.15) {
            // Explicit lengths per dim, as dask's chunks=: ((2, 3), 4).
            let dims = s
                .iter()
                .map(|n| {
                    if self.p(0.3) {
                        return Expr::Int(self.rng.gen_range(1..5));
                    }
                    let mut left = *n as i64;
                    let mut parts = vec![];
                    while left > 0 {
                        let k = self.rng.gen_range(1..=left.min(4));
                        parts.push(k);
                        left -= k;
                    }
                    ints(&parts)
                })
                .collect();
            return Expr::Tuple(dims);
        }
        if s.len() > 1 && self.p(0.4) {
            ints(
                &s.iter()
                    .map(|_| self.rng.gen_range(1..5))
                    .collect::<Vec<i64>>(),
            )
        } else {
            Expr::Int(self.rng.gen_range(1..6))
        }
    }

    fn chunk_kw(&mut self, s: &[usize]) -> Vec<(&'static str, Expr)> {
        if self.p(0.85) {
            vec![("chunk", self.chunk(s))]
        } else {
            vec![]
        }
    }

    pub fn dyadic(&mut self) -> f64 {
        self.rng.gen_range(-24..25) as f64 / 4.0
    }

    /// A Python number: small or big int, float or bool.
    pub fn scalar(&mut self) -> Expr {
        match self.rng.gen_range(0..20) {
            0..=6 => Expr::Int(self.rng.gen_range(-5..6)),
            7 => Expr::Int(self.pick(&BIG_INTS)),
            8..=13 => Expr::Float(self.dyadic()),
            14 => Expr::Float(self.pick(&[
                1e-3,
                1e10,
                -0.0,
                0.1,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
            ])),
            _ => Expr::Bool(self.p(0.5)),
        }
    }

    /// Numbers alone, folded by ares while it reads the program: `True + 1`,
    /// `maximum(3, 2.5)`, `(-3) ** 41` (wraps), `-True` (an error).
    pub fn number_expr(&mut self) -> Expr {
        let x = self.scalar();
        match self.rng.gen_range(0..6) {
            0 => Expr::Neg(Box::new(x)),
            1 => {
                let f = self.pick(&["abs", "negative", "sqrt", "exp", "sin"]);
                call(f, vec![x], vec![])
            }
            _ => {
                let op = self.pick(&BinOp::ALL[..13]);
                let y = if op == BinOp::Pow && self.p(0.5) {
                    Expr::Int(self.rng.gen_range(-2..64))
                } else {
                    self.scalar()
                };
                let op_form = op.symbol().is_some() && self.p(0.6);
                Expr::Bin(op, Box::new(x), Box::new(y), op_form)
            }
        }
    }

    fn dtype_str(&mut self) -> Expr {
        Expr::Str(self.pick(&["bool", "int64", "float64"]).into())
    }

    /// A tensor made by a creation function, of shape `s` when given.
    pub fn leaf(&mut self, s: Option<Vec<usize>>) -> Expr {
        let s = s.unwrap_or_else(|| self.shape());
        let n: usize = s.iter().product();
        let kind = self.rng.gen_range(0..10);
        match kind {
            0 | 1 => {
                let mut kw = self.chunk_kw(&s);
                if self.p(0.6) {
                    kw.push(("dtype", self.dtype_str()));
                }
                let f = self.pick(&["zeros", "ones"]);
                call(f, vec![self.shape_expr(&s)], kw)
            }
            2 => {
                let fill = self.scalar();
                let mut kw = self.chunk_kw(&s);
                if self.p(0.3) {
                    kw.push(("dtype", self.dtype_str()));
                }
                call("full", vec![self.shape_expr(&s), fill], kw)
            }
            3 if s.len() == 1 && self.p(0.25) => super::ops2::linspace_open(self, n),
            3 if s.len() == 1 => {
                let (a, b) = (self.dyadic(), self.dyadic());
                let mut args = vec![Expr::Float(a), Expr::Float(b)];
                let num = Expr::Int(n as i64);
                if self.p(0.5) {
                    args.push(num);
                    call("linspace", args, self.chunk_kw(&s))
                } else {
                    let mut kw = vec![("num", num)];
                    kw.extend(self.chunk_kw(&s));
                    call("linspace", args, kw)
                }
            }
            _ => self.arange_leaf(s),
        }
    }

    /// `arange` with ints or floats, reshaped to `s` when it is not 1-D.
    fn arange_leaf(&mut self, s: Vec<usize>) -> Expr {
        let n = s.iter().product::<usize>() as i64;
        let floats = self.p(0.3);
        let start = self.rng.gen_range(-6..6);
        let step = self.pick(&[1, 1, 1, 2, -1, 3, -2]);
        let (a, b, c) = if floats {
            let st = self.pick(&[0.5, 0.25, 1.5, -0.75, 1.0]);
            let a = start as f64 / 2.0;
            // Stop half a step early: the length is still n, with no rounding at the edge.
            (
                Expr::Float(a),
                Expr::Float(a + st * n as f64 - st / 2.0),
                Expr::Float(st),
            )
        } else {
            (
                Expr::Int(start),
                Expr::Int(start + step * n),
                Expr::Int(step),
            )
        };
        let args = match (floats, start, step) {
            (false, 0, 1) if self.p(0.7) => vec![Expr::Int(n)],
            (false, _, 1) if self.p(0.5) => vec![a, b],
            _ => vec![a, b, c],
        };
        if s.len() == 1 {
            let kw = self.chunk_kw(&s);
            return call("arange", args, kw);
        }
        // One chunk (no chunk=), so the reshape is aligned; rechunk after it.
        let r = call(
            "reshape",
            vec![call("arange", args, vec![]), self.shape_expr(&s)],
            vec![],
        );
        let r = if self.p(0.7) && !s.is_empty() {
            let c = self.chunk(&s);
            call("rechunk", vec![r, c], vec![])
        } else {
            r
        };
        match self.rng.gen_range(0..6) {
            0 => Expr::Bin(
                BinOp::Gt,
                Box::new(r),
                Box::new(Expr::Int(self.rng.gen_range(-2..3))),
                true,
            ),
            1 => call("astype", vec![r, self.dtype_str()], vec![]),
            _ => r,
        }
    }

    /// A tensor: a bound name, a leaf, or an operation on smaller tensors.
    pub fn tensor(&mut self, depth: u32) -> (Expr, Arr) {
        for _ in 0..12 {
            let e = if depth == 0 || self.p(0.25) {
                if !self.tensors.is_empty() && self.p(0.05) {
                    // Creation from a named result's shape: `ones(v0.shape)`, `arange(v0.shape[0])`.
                    let v = Expr::Shape(Box::new(Expr::Name(self.pick(&self.tensors.clone()))));
                    if self.p(0.5) {
                        let f = self.pick(&["zeros", "ones"]);
                        let c = Expr::Int(self.rng.gen_range(1..4));
                        call(f, vec![v], vec![("chunk", c)])
                    } else {
                        let k = self.rng.gen_range(-1..2);
                        call(
                            "arange",
                            vec![Expr::Index(Box::new(v), vec![super::ast::Idx::At(k)])],
                            vec![],
                        )
                    }
                } else if !self.bound.is_empty() && self.p(0.3) {
                    Expr::Name(self.pick(&self.bound.clone()))
                } else if self.p(0.06) {
                    self.number_expr()
                } else if self.p(0.02) {
                    // A reduction of `x[m]` or `unique(x)`: a 0-d tensor like any other.
                    super::gendd::reduced(self)
                } else {
                    self.leaf(None)
                }
            } else {
                let (x, a) = self.tensor(depth - 1);
                super::ops::apply(self, x, &a, depth)
            };
            if let Some(a) = self.eval(&e) {
                return (e, a);
            }
        }
        let e = call("arange", vec![Expr::Int(3)], vec![]);
        let a = self.eval(&e).expect("arange(3)");
        (e, a)
    }

    /// Binds `e` (value `a`) to the next name `vN` of `stmts`; an ordinary `tensor` may use
    /// it, a data-dependent one (not `tensor`) only `gendd` (its length cannot be sliced,
    /// reshaped or read by `.shape`).
    pub fn bind(&mut self, stmts: &mut Vec<(String, Expr)>, e: Expr, a: Arr, tensor: bool) -> Expr {
        let name = format!("v{}", stmts.len());
        self.env.insert(name.clone(), V::A(a));
        if tensor {
            self.bound.push(name.clone());
            self.tensors.push(name.clone());
        }
        stmts.push((name.clone(), e));
        Expr::Name(name)
    }

    /// A whole program: up to two named intermediates, then the result (about one in
    /// fourteen goes on from a data-dependent length: `gendd`).
    pub fn program(&mut self) -> Program {
        let mut stmts = vec![];
        for i in 0..self.rng.gen_range(0..3) {
            let depth = self.rng.gen_range(0..3);
            let (e, a) = self.tensor(depth);
            let name = format!("v{i}");
            self.env.insert(name.clone(), V::A(a));
            self.bound.push(name.clone());
            let alias_of_number = matches!(&e, Expr::Name(n) if !self.tensors.contains(n));
            if !is_number(&e) && !alias_of_number {
                self.tensors.push(name.clone());
            }
            stmts.push((name, e));
        }
        let result = if self.p(super::gendd::share()) {
            super::gendd::result(self, &mut stmts)
        } else {
            let depth = self.rng.gen_range(1..4);
            let (mut result, _) = self.tensor(depth);
            if self.p(0.12) {
                result = super::errors::inject(self, result);
            }
            result
        };
        let mut p = Program { stmts, result };
        prune(&mut p);
        p
    }
}

/// Whether `e` is made of numbers only (ares folds it to a number, not a tensor).
fn is_number(e: &Expr) -> bool {
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) => true,
        Expr::Neg(x) | Expr::Invert(x) => is_number(x),
        Expr::Bin(_, a, b, _) => is_number(a) && is_number(b),
        Expr::Call { func, args, .. } => {
            matches!(func.as_str(), "abs" | "negative" | "sqrt" | "exp" | "sin")
                && args.iter().all(is_number)
        }
        _ => false,
    }
}

fn uses(e: &Expr, name: &str) -> bool {
    match e {
        Expr::Name(n) => n == name,
        Expr::Tuple(v) => v.iter().any(|x| uses(x, name)),
        Expr::Neg(x) | Expr::Invert(x) | Expr::T(x) | Expr::Shape(x) | Expr::Index(x, _) => {
            uses(x, name)
        }
        Expr::Bin(_, a, b, _) | Expr::Mask(a, b) => uses(a, name) || uses(b, name),
        Expr::Call { args, kwargs, .. } => {
            args.iter().any(|x| uses(x, name)) || kwargs.iter().any(|(_, v)| uses(v, name))
        }
        _ => false,
    }
}

/// Drops statements nothing uses: ares never computes them (as dask), NumPy would, so a
/// failing unused statement would be a difference by design, not a bug.
fn prune(p: &mut Program) {
    loop {
        let unused = p
            .stmts
            .iter()
            .position(|(n, _)| !uses(&p.result, n) && !p.stmts.iter().any(|(_, e)| uses(e, n)));
        match unused {
            Some(i) => {
                p.stmts.remove(i);
            }
            None => return,
        }
    }
}
