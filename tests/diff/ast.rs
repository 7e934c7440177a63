//! The program AST the generator builds, and its two renderings: ares' expression language and
//! an equivalent Python/NumPy program.
//!
//! The AST is ours, not ares' parser's: the reference evaluator interprets it directly, so a
//! bug in ares' parser or evaluator cannot hide behind a shared representation. In the NumPy
//! rendering every operator becomes its ufunc (`a + b` → `np.add(a, b)`, `-x` →
//! `np.negative(x)`), because ares applies NumPy's rules to numbers as well as tensors
//! (`-True` is an error, `True + True` is `True`), which Python's own operators on Python
//! numbers would not.

use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Max,
    Min,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    MatMul,
    BitAnd,
    BitOr,
    BitXor,
    LeftShift,
    RightShift,
    FloorDiv,
    Mod,
    Atan2,
    Hypot,
    LogAddExp,
    CopySign,
    NextAfter,
}

impl BinOp {
    pub const ALL: [BinOp; 26] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Pow,
        BinOp::Max,
        BinOp::Min,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::MatMul,
        BinOp::BitAnd,
        BinOp::BitOr,
        BinOp::BitXor,
        BinOp::LeftShift,
        BinOp::RightShift,
        BinOp::FloorDiv,
        BinOp::Mod,
        BinOp::Atan2,
        BinOp::Hypot,
        BinOp::LogAddExp,
        BinOp::CopySign,
        BinOp::NextAfter,
    ];

    /// The division relatives and float-valued functions of two operands (`ALL[19..]`).
    pub const MORE: [BinOp; 7] = [
        BinOp::FloorDiv,
        BinOp::Mod,
        BinOp::Atan2,
        BinOp::Hypot,
        BinOp::LogAddExp,
        BinOp::CopySign,
        BinOp::NextAfter,
    ];

    /// The operator symbol, if the language has one.
    pub fn symbol(self) -> Option<&'static str> {
        Some(match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Pow => "**",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::MatMul => "@",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::LeftShift => "<<",
            BinOp::RightShift => ">>",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Max
            | BinOp::Min
            | BinOp::Atan2
            | BinOp::Hypot
            | BinOp::LogAddExp
            | BinOp::CopySign
            | BinOp::NextAfter => return None,
        })
    }

    /// The function name, in ares and in NumPy.
    pub fn func(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "subtract",
            BinOp::Mul => "multiply",
            BinOp::Div => "divide",
            BinOp::Pow => "power",
            BinOp::Max => "maximum",
            BinOp::Min => "minimum",
            BinOp::Eq => "equal",
            BinOp::Ne => "not_equal",
            BinOp::Lt => "less",
            BinOp::Le => "less_equal",
            BinOp::Gt => "greater",
            BinOp::Ge => "greater_equal",
            BinOp::MatMul => "matmul",
            BinOp::BitAnd => "bitwise_and",
            BinOp::BitOr => "bitwise_or",
            BinOp::BitXor => "bitwise_xor",
            BinOp::LeftShift => "left_shift",
            BinOp::RightShift => "right_shift",
            BinOp::FloorDiv => "floor_divide",
            BinOp::Mod => "remainder",
            BinOp::Atan2 => "atan2",
            BinOp::Hypot => "hypot",
            BinOp::LogAddExp => "logaddexp",
            BinOp::CopySign => "copysign",
            BinOp::NextAfter => "nextafter",
        }
    }

    pub fn is_bitwise(self) -> bool {
        matches!(self, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor)
    }

    pub fn is_shift(self) -> bool {
        matches!(self, BinOp::LeftShift | BinOp::RightShift)
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// One item of an index: `3`, `a:b:c`, `None`.
#[derive(Clone, Debug, PartialEq)]
pub enum Idx {
    At(i64),
    Slice(Option<i64>, Option<i64>, Option<i64>),
    NewAxis,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    NoneLit,
    Tuple(Vec<Expr>),
    Name(String),
    /// Unary minus, `-x`.
    Neg(Box<Expr>),
    /// `~x` (NumPy's `invert`).
    Invert(Box<Expr>),
    /// `a op b` when `op_form`, else `func(a, b)`.
    Bin(BinOp, Box<Expr>, Box<Expr>, bool),
    /// `func(args, kw=...)`, or `args[0].func(args[1..], kw=...)` when `method`.
    Call {
        func: String,
        args: Vec<Expr>,
        kwargs: Vec<(String, Expr)>,
        method: bool,
    },
    Index(Box<Expr>, Vec<Idx>),
    /// `x.T`
    T(Box<Expr>),
    /// `x.shape`, a tuple of ints (`x.shape[0]` is an `Index` of it).
    Shape(Box<Expr>),
    /// `x[m]` with `m` a bool tensor of `x`'s shape: the selected elements, 1-D in C order
    /// (a length that depends on the data).
    Mask(Box<Expr>, Box<Expr>),
}

/// Statements `name = expr`, then the result expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub stmts: Vec<(String, Expr)>,
    pub result: Expr,
}

pub fn call(func: &str, args: Vec<Expr>, kwargs: Vec<(&str, Expr)>) -> Expr {
    Expr::Call {
        func: func.into(),
        args,
        kwargs: kwargs.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        method: false,
    }
}

pub fn ints(v: &[i64]) -> Expr {
    Expr::Tuple(v.iter().map(|i| Expr::Int(*i)).collect())
}

fn float_text(f: f64, lang: Lang) -> String {
    let np = if lang == Lang::NumPy { "np." } else { "" };
    if f.is_nan() {
        return format!("{np}nan");
    }
    if f.is_infinite() {
        let sign = if f < 0.0 { "-" } else { "" };
        return format!("({sign}{np}inf)");
    }
    let s = format!("{f:?}");
    if f.is_sign_negative() {
        format!("({s})")
    } else {
        s
    }
}

fn tuple_text(items: &[String]) -> String {
    match items.len() {
        1 => format!("({},)", items[0]),
        _ => format!("({})", items.join(", ")),
    }
}

fn idx_text(items: &[Idx]) -> String {
    let one = |b: &Option<i64>| b.map(|i| i.to_string()).unwrap_or_default();
    items
        .iter()
        .map(|it| match it {
            Idx::At(i) => i.to_string(),
            Idx::NewAxis => "None".into(),
            Idx::Slice(a, b, None) => format!("{}:{}", one(a), one(b)),
            Idx::Slice(a, b, c) => format!("{}:{}:{}", one(a), one(b), one(c)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Which language to render.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Ares,
    NumPy,
}

pub fn render(e: &Expr, lang: Lang) -> String {
    let r = |x: &Expr| render(x, lang);
    let np = lang == Lang::NumPy;
    match e {
        Expr::Int(i) if *i < 0 => format!("({i})"),
        Expr::Int(i) => i.to_string(),
        Expr::Float(f) => float_text(*f, lang),
        Expr::Bool(b) => if *b { "True" } else { "False" }.into(),
        Expr::Str(s) => format!("'{s}'"),
        Expr::NoneLit => "None".into(),
        Expr::Tuple(items) => tuple_text(&items.iter().map(r).collect::<Vec<_>>()),
        Expr::Name(n) => n.clone(),
        Expr::Neg(x) if np => format!("np.negative({})", r(x)),
        Expr::Neg(x) => format!("(-{})", r(x)),
        Expr::Invert(x) if np => format!("np.invert({})", r(x)),
        Expr::Invert(x) => format!("(~{})", r(x)),
        Expr::Bin(op, a, b, _) if np => format!("np.{}({}, {})", op.func(), r(a), r(b)),
        Expr::Bin(op, a, b, true) => {
            format!("({} {} {})", r(a), op.symbol().expect("operator"), r(b))
        }
        Expr::Bin(op, a, b, false) => format!("{}({}, {})", op.func(), r(a), r(b)),
        Expr::Call {
            func,
            args,
            kwargs,
            method,
        } => render_call(func, args, kwargs, *method, lang),
        Expr::Index(x, items) => format!("{}[{}]", r(x), idx_text(items)),
        Expr::T(x) if np => format!("np.transpose({})", r(x)),
        Expr::T(x) => format!("{}.T", r(x)),
        Expr::Shape(x) if np => format!("np.shape({})", r(x)),
        Expr::Shape(x) => format!("{}.shape", r(x)),
        Expr::Mask(x, m) => format!("{}[{}]", r(x), r(m)),
    }
}

fn render_call(
    func: &str,
    args: &[Expr],
    kwargs: &[(String, Expr)],
    method: bool,
    lang: Lang,
) -> String {
    let mut parts: Vec<String> = args.iter().map(|a| render(a, lang)).collect();
    if lang == Lang::NumPy {
        // NumPy has no chunks: drop `chunk=`, and `rechunk` is the identity.
        for (k, v) in kwargs {
            if k != "chunk" {
                parts.push(format!("{k}={}", render(v, lang)));
            }
        }
        return match func {
            "rechunk" => format!("np.asarray({})", parts[0]),
            "astype" => format!("np.asarray({}).astype({})", parts[0], parts[1]),
            "reshape" if args.len() > 2 => {
                let dims = tuple_text(&parts[1..args.len()]);
                let rest: Vec<String> = parts[args.len()..].to_vec();
                let mut all = vec![parts[0].clone(), dims];
                all.extend(rest);
                format!("np.reshape({})", all.join(", "))
            }
            f => format!("np.{f}({})", parts.join(", ")),
        };
    }
    for (k, v) in kwargs {
        parts.push(format!("{k}={}", render(v, lang)));
    }
    if method && !parts.is_empty() {
        let recv = parts.remove(0);
        return format!("{recv}.{func}({})", parts.join(", "));
    }
    format!("{func}({})", parts.join(", "))
}

impl Program {
    /// The program in ares' expression language, on one line.
    pub fn ares(&self) -> String {
        let mut s = String::new();
        for (name, e) in &self.stmts {
            write!(s, "{name} = {}; ", render(e, Lang::Ares)).unwrap();
        }
        s + &render(&self.result, Lang::Ares)
    }

    /// The body of a Python function that computes the same value with NumPy.
    pub fn numpy_body(&self) -> String {
        let mut s = String::new();
        for (name, e) in &self.stmts {
            writeln!(s, "    {name} = {}", render(e, Lang::NumPy)).unwrap();
        }
        writeln!(s, "    return {}", render(&self.result, Lang::NumPy)).unwrap();
        s
    }
}
