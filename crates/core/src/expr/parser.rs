//! Recursive-descent parser with Python's precedence:
//! comparison < `|` < `^` < `&` < `<< >>` < `+ -` < `* / // % @` < unary `- + ~` < `**`
//! (right-assoc) < call, index, attribute.

use super::lexer::Tok;
use super::{err, ExprError, Pos};

pub use super::ast::{Expr, IndexItem, Keyword, Stmt};

/// Deepest nesting a program may have: parentheses, calls, operator chains, unary signs and
/// postfix chains all count. Parsing and evaluation recurse along the nesting, so this bound
/// is what keeps any input from overflowing a thread's stack.
pub const MAX_DEPTH: usize = 256;

struct Parser<'a> {
    toks: &'a [(Tok, Pos)],
    i: usize,
    /// Nesting of the expression being parsed, checked against [`MAX_DEPTH`].
    depth: usize,
}

pub fn parse(toks: &[(Tok, Pos)]) -> Result<Vec<Stmt>, ExprError> {
    let mut p = Parser {
        toks,
        i: 0,
        depth: 0,
    };
    let mut stmts = Vec::new();
    loop {
        while p.eat(";") {}
        if p.peek() == &Tok::End {
            break;
        }
        let targets = p.targets();
        stmts.push(Stmt {
            targets,
            expr: p.expr()?,
        });
        if !p.eat(";") && p.peek() != &Tok::End {
            return err(
                p.pos(),
                format!("expected ';' or end of input, found {}", describe(p.peek())),
            );
        }
    }
    if stmts.is_empty() {
        return err(p.pos(), "empty program");
    }
    Ok(stmts)
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Int(i) => format!("number {i}"),
        Tok::Float(f) => format!("number {f}"),
        Tok::Str(s) => format!("string {s:?}"),
        Tok::Name(n) => format!("name {n:?}"),
        Tok::Sym(s) => format!("'{s}'"),
        Tok::End => "end of input".into(),
    }
}

impl Parser<'_> {
    /// The names a statement assigns: `name =` or `a, b, ... =` (consumed), else none (the
    /// statement is an expression; nothing is consumed).
    fn targets(&mut self) -> Vec<(String, Pos)> {
        let mut names = Vec::new();
        let mut at = self.i;
        loop {
            let Some((Tok::Name(n), pos)) = self.toks.get(at) else {
                return Vec::new();
            };
            names.push((n.clone(), *pos));
            match self.toks.get(at + 1).map(|t| &t.0) {
                Some(Tok::Sym("=")) => break,
                Some(Tok::Sym(",")) => at += 2,
                _ => return Vec::new(),
            }
        }
        self.i = at + 2;
        names
    }

    fn peek(&self) -> &Tok {
        &self.toks[self.i].0
    }
    fn pos(&self) -> Pos {
        self.toks[self.i].1
    }
    fn eat(&mut self, sym: &str) -> bool {
        if matches!(self.peek(), Tok::Sym(s) if *s == sym) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, sym: &str) -> Result<(), ExprError> {
        if self.eat(sym) {
            Ok(())
        } else {
            err(
                self.pos(),
                format!("expected '{sym}', found {}", describe(self.peek())),
            )
        }
    }

    /// Goes `levels` deeper; fails past [`MAX_DEPTH`]. Callers give the levels back with
    /// [`Parser::leave`].
    fn enter(&mut self, levels: usize) -> Result<(), ExprError> {
        self.depth += levels;
        if self.depth > MAX_DEPTH {
            return err(
                self.pos(),
                format!("expression nested deeper than {MAX_DEPTH} levels"),
            );
        }
        Ok(())
    }

    fn leave(&mut self, levels: usize) {
        self.depth -= levels;
    }

    fn expr(&mut self) -> Result<Expr, ExprError> {
        self.enter(1)?;
        // A level takes about a dozen frames: grow the stack rather than assume its size.
        let e = stacker::maybe_grow(64 << 10, 1 << 20, || self.comparison());
        self.leave(1);
        e
    }

    fn comparison(&mut self) -> Result<Expr, ExprError> {
        let lhs = self.bit_or()?;
        for op in ["==", "!=", "<=", ">=", "<", ">"] {
            let pos = self.pos();
            if self.eat(op) {
                let rhs = self.bit_or()?;
                return Ok(Expr::Binary(op_name(op), Box::new(lhs), Box::new(rhs), pos));
            }
        }
        Ok(lhs)
    }

    fn binary_level(
        &mut self,
        ops: &[&'static str],
        next: fn(&mut Self) -> Result<Expr, ExprError>,
    ) -> Result<Expr, ExprError> {
        // Each operator of a chain nests the tree one level deeper (`1+1+1` is `(1+1)+1`).
        let mut chain = 0;
        let result = (|| {
            let mut lhs = next(self)?;
            'outer: loop {
                for op in ops {
                    let pos = self.pos();
                    if self.eat(op) {
                        chain += 1;
                        self.enter(1)?;
                        let rhs = next(self)?;
                        lhs = Expr::Binary(op_name(op), Box::new(lhs), Box::new(rhs), pos);
                        continue 'outer;
                    }
                }
                return Ok(lhs);
            }
        })();
        self.leave(chain);
        result
    }

    fn bit_or(&mut self) -> Result<Expr, ExprError> {
        self.binary_level(&["|"], Self::bit_xor)
    }
    fn bit_xor(&mut self) -> Result<Expr, ExprError> {
        self.binary_level(&["^"], Self::bit_and)
    }
    fn bit_and(&mut self) -> Result<Expr, ExprError> {
        self.binary_level(&["&"], Self::shift)
    }
    fn shift(&mut self) -> Result<Expr, ExprError> {
        self.binary_level(&["<<", ">>"], Self::additive)
    }
    fn additive(&mut self) -> Result<Expr, ExprError> {
        self.binary_level(&["+", "-"], Self::term)
    }
    fn term(&mut self) -> Result<Expr, ExprError> {
        self.binary_level(&["*", "/", "//", "%", "@"], Self::unary)
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        let pos = self.pos();
        let sign = if self.eat("-") {
            Some("-")
        } else if self.eat("+") {
            Some("+")
        } else if self.eat("~") {
            Some("~")
        } else {
            None
        };
        let Some(sign) = sign else {
            return self.power();
        };
        self.enter(1)?;
        let operand = stacker::maybe_grow(64 << 10, 1 << 20, || self.unary());
        self.leave(1);
        Ok(match sign {
            "-" => Expr::Neg(Box::new(operand?), pos),
            "~" => Expr::Invert(Box::new(operand?), pos),
            _ => operand?,
        })
    }

    fn power(&mut self) -> Result<Expr, ExprError> {
        let base = self.postfix()?;
        let pos = self.pos();
        if self.eat("**") {
            self.enter(1)?;
            let exp = stacker::maybe_grow(64 << 10, 1 << 20, || self.unary());
            self.leave(1);
            return Ok(Expr::Binary("power", Box::new(base), Box::new(exp?), pos));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Result<Expr, ExprError> {
        let mut e = self.primary()?;
        let mut chain = 0;
        let result = loop {
            if let Err(e) = self.enter(1) {
                break Err(e);
            }
            chain += 1;
            match self.postfix_step(e) {
                Ok((next, true)) => e = next,
                Ok((done, false)) => break Ok(done),
                Err(x) => break Err(x),
            }
        };
        self.leave(chain);
        result
    }

    /// One call, index or attribute after `e`; `false` when there is none.
    fn postfix_step(&mut self, e: Expr) -> Result<(Expr, bool), ExprError> {
        let pos = self.pos();
        let next = if self.eat("(") {
            let (args, kwargs) = self.call_args()?;
            Expr::Call {
                func: Box::new(e),
                args,
                kwargs,
                pos,
            }
        } else if self.eat("[") {
            let mut items = vec![self.index_item()?];
            while self.eat(",") {
                if matches!(self.peek(), Tok::Sym("]")) {
                    break;
                }
                items.push(self.index_item()?);
            }
            self.expect("]")?;
            Expr::Index(Box::new(e), items, pos)
        } else if self.eat(".") {
            match self.peek().clone() {
                Tok::Name(n) => {
                    self.i += 1;
                    Expr::Attr(Box::new(e), n, pos)
                }
                other => {
                    return err(
                        self.pos(),
                        format!("expected an attribute name, found {}", describe(&other)),
                    )
                }
            }
        } else {
            return Ok((e, false));
        };
        Ok((next, true))
    }

    fn call_args(&mut self) -> Result<(Vec<Expr>, Vec<Keyword>), ExprError> {
        let (mut args, mut kwargs) = (Vec::new(), Vec::new());
        while !self.eat(")") {
            let pos = self.pos();
            match (self.peek().clone(), self.toks.get(self.i + 1).map(|t| &t.0)) {
                (Tok::Name(n), Some(Tok::Sym("="))) => {
                    self.i += 2;
                    kwargs.push((n, self.expr()?, pos));
                }
                _ if !kwargs.is_empty() => {
                    return err(pos, "positional argument after keyword argument")
                }
                _ => args.push(self.expr()?),
            }
            if !self.eat(",") {
                self.expect(")")?;
                break;
            }
        }
        Ok((args, kwargs))
    }

    fn index_item(&mut self) -> Result<IndexItem, ExprError> {
        let bound = |p: &mut Self| -> Result<Option<Expr>, ExprError> {
            if matches!(p.peek(), Tok::Sym(":" | "," | "]")) {
                Ok(None)
            } else {
                p.expr().map(Some)
            }
        };
        let start = bound(self)?;
        if !self.eat(":") {
            return start
                .map(IndexItem::At)
                .map_or_else(|| err(self.pos(), "expected an index"), Ok);
        }
        let stop = bound(self)?;
        let step = if self.eat(":") { bound(self)? } else { None };
        Ok(IndexItem::Slice(start, stop, step))
    }

    fn primary(&mut self) -> Result<Expr, ExprError> {
        let pos = self.pos();
        let tok = self.peek().clone();
        self.i += 1;
        Ok(match tok {
            Tok::Int(i) => Expr::Int(i, pos),
            Tok::Float(f) => Expr::Float(f, pos),
            Tok::Str(s) => Expr::Str(s, pos),
            Tok::Name(n) => Expr::Name(n, pos),
            Tok::Sym("(") => {
                if self.eat(")") {
                    return Ok(Expr::Tuple(vec![], pos));
                }
                let first = self.expr()?;
                if !self.eat(",") {
                    self.expect(")")?;
                    return Ok(first);
                }
                let mut items = vec![first];
                while !self.eat(")") {
                    items.push(self.expr()?);
                    if !self.eat(",") {
                        self.expect(")")?;
                        break;
                    }
                }
                Expr::Tuple(items, pos)
            }
            other => {
                self.i -= 1;
                return err(
                    pos,
                    format!("expected an expression, found {}", describe(&other)),
                );
            }
        })
    }
}

/// Operator symbols map to the numpy function they call.
fn op_name(sym: &str) -> &'static str {
    match sym {
        "+" => "add",
        "-" => "subtract",
        "*" => "multiply",
        "/" => "divide",
        "//" => "floor_divide",
        "%" => "remainder",
        "@" => "matmul",
        "==" => "equal",
        "!=" => "not_equal",
        "<" => "less",
        "<=" => "less_equal",
        ">" => "greater",
        "&" => "bitwise_and",
        "|" => "bitwise_or",
        "^" => "bitwise_xor",
        "<<" => "left_shift",
        ">>" => "right_shift",
        _ => "greater_equal",
    }
}
