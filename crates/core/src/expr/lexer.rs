//! Tokens of the expression language, each with its position.

use super::{err, ExprError, Pos};

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Int(i64),
    Float(f64),
    Str(String),
    Name(String),
    /// Punctuation and operators: `( ) [ ] , : ; = . + - * / // % ** @ == != < <= > >= & | ^`,
    /// `~ << >>`.
    Sym(&'static str),
    End,
}

const SYMBOLS: [&str; 29] = [
    "**", "//", "==", "!=", "<=", ">=", "<<", ">>", "(", ")", "[", "]", ",", ":", ";", "=", ".",
    "+", "-", "*", "/", "%", "@", "<", ">", "&", "|", "^", "~",
];

pub fn tokenize(src: &str) -> Result<Vec<(Tok, Pos)>, ExprError> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0, 1, 1);
    while i < chars.len() {
        let c = chars[i];
        let pos = Pos { line, col };
        if c == '\n' {
            i += 1;
            line += 1;
            col = 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            col += 1;
            continue;
        }
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let mut is_float = false;
            while i < chars.len()
                && (chars[i].is_ascii_digit() || chars[i] == '_' || chars[i] == '.')
            {
                is_float |= chars[i] == '.';
                i += 1;
            }
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                is_float = true;
                i += 1;
                if i < chars.len() && (chars[i] == '+' || chars[i] == '-') {
                    i += 1;
                }
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let text: String = chars[start..i].iter().filter(|c| **c != '_').collect();
            let tok = if is_float {
                text.parse()
                    .map(Tok::Float)
                    .or_else(|_| err(pos, format!("invalid number {text:?}")))?
            } else {
                text.parse()
                    .map(Tok::Int)
                    .or_else(|_| err(pos, format!("integer {text} is too large")))?
            };
            out.push((tok, pos));
        } else if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Tok::Name(chars[start..i].iter().collect()), pos));
        } else if c == '"' || c == '\'' {
            i += 1;
            while i < chars.len() && chars[i] != c && chars[i] != '\n' {
                i += 1;
            }
            if i >= chars.len() || chars[i] != c {
                return err(pos, "unterminated string");
            }
            out.push((Tok::Str(chars[start + 1..i].iter().collect()), pos));
            i += 1;
        } else {
            let rest: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let Some(sym) = SYMBOLS.iter().find(|s| rest.starts_with(**s)) else {
                return err(pos, format!("unexpected character {c:?}"));
            };
            out.push((Tok::Sym(sym), pos));
            i += sym.len();
        }
        col += i - start;
    }
    out.push((Tok::End, Pos { line, col }));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_carry_positions() {
        let toks = tokenize("x = 1.5e3;\n y[::-2]**2").unwrap();
        assert_eq!(toks[2], (Tok::Float(1500.0), Pos { line: 1, col: 5 }));
        assert_eq!(toks[4], (Tok::Name("y".into()), Pos { line: 2, col: 2 }));
        assert!(toks.iter().any(|(t, _)| *t == Tok::Sym("**")));
        assert_eq!(tokenize("1_000_000").unwrap()[0].0, Tok::Int(1_000_000));
        let bits: Vec<Tok> = tokenize("~a&b|c^d")
            .unwrap()
            .into_iter()
            .map(|t| t.0)
            .collect();
        assert_eq!(bits[0], Tok::Sym("~"));
        assert_eq!(
            (&bits[2], &bits[4], &bits[6]),
            (&Tok::Sym("&"), &Tok::Sym("|"), &Tok::Sym("^"))
        );
        let shifts: Vec<Tok> = tokenize("a<<b>>c<=d<e")
            .unwrap()
            .into_iter()
            .map(|t| t.0)
            .collect();
        assert_eq!(
            (&shifts[1], &shifts[3], &shifts[5], &shifts[7]),
            (
                &Tok::Sym("<<"),
                &Tok::Sym(">>"),
                &Tok::Sym("<="),
                &Tok::Sym("<")
            )
        );
    }
}
