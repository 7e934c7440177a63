//! Results in one form for every source (reference, NumPy, each ares mode), and the rules that
//! compare them: dtype and shape exactly, ints and bools exactly, floats with a relative
//! tolerance of 1e-9, NaN equal to NaN, infinities equal only with the same sign.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DT {
    Bool,
    I64,
    F64,
}

impl DT {
    pub fn name(self) -> &'static str {
        match self {
            DT::Bool => "bool",
            DT::I64 => "int64",
            DT::F64 => "float64",
        }
    }

    pub fn parse(s: &str) -> Option<DT> {
        Some(match s {
            "bool" => DT::Bool,
            "int64" => DT::I64,
            "float64" => DT::F64,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Vals {
    B(Vec<bool>),
    I(Vec<i64>),
    F(Vec<f64>),
}

/// A computed array: dtype, shape and the values in C order.
#[derive(Clone, Debug, PartialEq)]
pub struct Res {
    pub shape: Vec<usize>,
    pub vals: Vals,
}

impl Res {
    pub fn dtype(&self) -> DT {
        match self.vals {
            Vals::B(_) => DT::Bool,
            Vals::I(_) => DT::I64,
            Vals::F(_) => DT::F64,
        }
    }
}

fn list<T: fmt::Display>(v: &[T]) -> String {
    const MAX: usize = 24;
    let mut s: Vec<String> = v.iter().take(MAX).map(|x| x.to_string()).collect();
    if v.len() > MAX {
        s.push(format!("... ({} values)", v.len()));
    }
    format!("[{}]", s.join(", "))
}

impl fmt::Display for Res {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let vals = match &self.vals {
            Vals::B(v) => list(v),
            Vals::I(v) => list(v),
            Vals::F(v) => list(v),
        };
        write!(f, "{} {:?} {vals}", self.dtype().name(), self.shape)
    }
}

/// What one source made of a program.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Ok(Res),
    /// An error NumPy raises too (or ares' parser/preparation/kernels reported).
    Err(String),
    /// An error only ares raises, by a limitation its README documents; NumPy computes a
    /// value. At present one: an op that needs the length of `x[mask]` or `unique(...)`
    /// while the expression is built (slicing, reshape, concatenate, matmul...), which ares
    /// must refuse with the words of `refdd::REFUSAL` (reshapes that were not chunk-aligned
    /// were another until main regridded them).
    AresOnly(String),
    /// Outside what the test compares (a NumPy dtype ares does not have, an undefined cast).
    Unsupported(String),
    Panic(String),
    Hang(String),
}

impl Outcome {
    pub fn is_error(&self) -> bool {
        matches!(self, Outcome::Err(_) | Outcome::AresOnly(_))
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Ok(r) => write!(f, "{r}"),
            Outcome::Err(e) => write!(f, "error: {e}"),
            Outcome::AresOnly(e) => write!(f, "error (ares only): {e}"),
            Outcome::Unsupported(e) => write!(f, "unsupported: {e}"),
            Outcome::Panic(e) => write!(f, "PANIC: {e}"),
            Outcome::Hang(e) => write!(f, "HANG: {e}"),
        }
    }
}

pub fn close(g: f64, w: f64) -> bool {
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    if g.is_infinite() || w.is_infinite() {
        return g == w;
    }
    // A tiny absolute floor keeps exact-zero-versus-rounding-residue (1e-17) from failing.
    g == w || (g - w).abs() <= 1e-9 * g.abs().max(w.abs()) + 1e-12
}

/// Why `got` does not match `want`, or `None` when it does.
pub fn mismatch(got: &Res, want: &Res) -> Option<String> {
    if got.dtype() != want.dtype() {
        return Some(format!(
            "dtype {} != {}",
            got.dtype().name(),
            want.dtype().name()
        ));
    }
    if got.shape != want.shape {
        return Some(format!("shape {:?} != {:?}", got.shape, want.shape));
    }
    let bad = match (&got.vals, &want.vals) {
        (Vals::B(g), Vals::B(w)) => g.iter().zip(w).position(|(a, b)| a != b),
        (Vals::I(g), Vals::I(w)) => g.iter().zip(w).position(|(a, b)| a != b),
        (Vals::F(g), Vals::F(w)) => g.iter().zip(w).position(|(a, b)| !close(*a, *b)),
        _ => unreachable!("same dtype"),
    };
    bad.map(|i| format!("values differ at flat index {i}"))
}

/// Whether an ares outcome agrees with the expected one; `None` means it does.
pub fn judge(got: &Outcome, want: &Outcome) -> Option<String> {
    match (got, want) {
        (_, Outcome::Unsupported(_)) => None,
        (Outcome::Panic(_), _) => Some("ares panicked".into()),
        (Outcome::Hang(_), _) => Some("ares did not answer before the deadline".into()),
        (Outcome::Ok(g), Outcome::Ok(w)) => mismatch(g, w),
        (Outcome::Ok(_), w) if w.is_error() => {
            Some("ares computed a value; expected an error".into())
        }
        (g, Outcome::Ok(_)) if g.is_error() => Some("ares failed; expected a value".into()),
        (Outcome::Err(e), Outcome::AresOnly(_)) if e.contains(super::refdd::REFUSAL) => None,
        (g, Outcome::AresOnly(_)) if g.is_error() => Some(format!(
            "ares failed, but not with its documented refusal (\"{}\")",
            super::refdd::REFUSAL
        )),
        (g, w) if g.is_error() && w.is_error() => None,
        _ => Some("different outcomes".into()),
    }
}

/// `judge` for one of `ares::MODES`: the local executor refuses a program that runs in
/// stages (`staged`, from `refdd::analyse`), with the words of `refdd::LOCAL_REFUSAL`; only
/// a supervisor runs stages.
pub fn judge_mode(mode: &str, got: &Outcome, want: &Outcome, staged: bool) -> Option<String> {
    let local_refusal = matches!(got, Outcome::Err(e) if e.contains(super::refdd::LOCAL_REFUSAL));
    if local_refusal && staged && mode.starts_with("local") {
        return None;
    }
    judge(got, want)
}

/// Whether NumPy agrees with the reference (validates the reference itself).
pub fn judge_numpy(numpy: &Outcome, reference: &Outcome) -> Option<String> {
    match (numpy, reference) {
        (_, Outcome::Unsupported(_)) => None,
        (Outcome::Ok(_), Outcome::AresOnly(_)) => None,
        (Outcome::Err(_), Outcome::AresOnly(_)) => {
            Some("NumPy fails where only ares should".into())
        }
        (n, r) => judge(n, r).map(|m| format!("reference vs NumPy: {m}")),
    }
}
