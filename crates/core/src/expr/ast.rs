//! The syntax tree of a program: what the parser builds and the evaluator walks. Every node
//! keeps the position it was written at, so an error found while evaluating it names the
//! line and column.

use super::Pos;

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Int(i64, Pos),
    Float(f64, Pos),
    Str(String, Pos),
    Name(String, Pos),
    Tuple(Vec<Expr>, Pos),
    Neg(Box<Expr>, Pos),
    /// `~x`: NumPy's `invert` (bitwise not of integers, logical not of bools).
    Invert(Box<Expr>, Pos),
    Binary(&'static str, Box<Expr>, Box<Expr>, Pos),
    Call {
        func: Box<Expr>,
        args: Vec<Expr>,
        kwargs: Vec<(String, Expr, Pos)>,
        pos: Pos,
    },
    Attr(Box<Expr>, String, Pos),
    Index(Box<Expr>, Vec<IndexItem>, Pos),
}

#[derive(Clone, Debug, PartialEq)]
pub enum IndexItem {
    Slice(Option<Expr>, Option<Expr>, Option<Expr>),
    At(Expr),
}

impl Expr {
    pub fn pos(&self) -> Pos {
        match self {
            Expr::Int(_, p)
            | Expr::Float(_, p)
            | Expr::Str(_, p)
            | Expr::Name(_, p)
            | Expr::Tuple(_, p)
            | Expr::Neg(_, p)
            | Expr::Invert(_, p) => *p,
            Expr::Binary(_, _, _, p) | Expr::Attr(_, _, p) | Expr::Index(_, _, p) => *p,
            Expr::Call { pos, .. } => *pos,
        }
    }
}

/// A keyword argument: name, value and where it was written.
pub type Keyword = (String, Expr, Pos);

/// `target = expr`, `a, b = expr` (a tuple unpacked, as `q, r = linalg.qr(x)`) or a bare
/// expression (no targets).
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub targets: Vec<(String, Pos)>,
    pub expr: Expr,
}
