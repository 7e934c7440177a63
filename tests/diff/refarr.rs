//! The reference's arrays and elementwise rules, written from NumPy 2's documentation and
//! sharing no code with ares: its own broadcasting, its own dtype promotion
//! (`bool < int64 < float64`), int64 arithmetic that wraps, true division in float64,
//! NaN-propagating `maximum`/`minimum`.
//!
//! NEP 50 (Python numbers are weak scalars) is implied: with only bool, int64 and float64,
//! a weak Python int/float/bool takes exactly the dtype of its kind (`int64_array * 2.5` is
//! float64, `bool_array + 1` is int64, `int64_array + True` is int64), which is what
//! promoting it as the 0-d array it becomes gives. Results NumPy would give in a dtype ares
//! does not have (`sqrt` of bools is float16, `bool ** bool` is int8) are `Unsupported`.

use super::ast::BinOp;
use super::value::{Res, Vals, DT};
use ndarray::{ArrayD, IxDyn, Zip};

#[derive(Clone, Debug, PartialEq)]
pub enum Arr {
    B(ArrayD<bool>),
    I(ArrayD<i64>),
    F(ArrayD<f64>),
}

/// Why the reference has no value: NumPy raises, only ares raises (documented limitation), or
/// the case is outside the comparison.
#[derive(Clone, Debug, PartialEq)]
pub enum Fail {
    NumPy(String),
    AresOnly(String),
    Unsupported(String),
}

pub type R<T> = Result<T, Fail>;

pub fn np_err<T>(m: impl Into<String>) -> R<T> {
    Err(Fail::NumPy(m.into()))
}

pub fn unsupported<T>(m: impl Into<String>) -> R<T> {
    Err(Fail::Unsupported(m.into()))
}

impl Arr {
    pub fn dtype(&self) -> DT {
        match self {
            Arr::B(_) => DT::Bool,
            Arr::I(_) => DT::I64,
            Arr::F(_) => DT::F64,
        }
    }

    pub fn shape(&self) -> Vec<usize> {
        match self {
            Arr::B(a) => a.shape().to_vec(),
            Arr::I(a) => a.shape().to_vec(),
            Arr::F(a) => a.shape().to_vec(),
        }
    }

    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    pub fn scalar_b(b: bool) -> Arr {
        Arr::B(ArrayD::from_elem(IxDyn(&[]), b))
    }

    pub fn scalar_i(i: i64) -> Arr {
        Arr::I(ArrayD::from_elem(IxDyn(&[]), i))
    }

    pub fn scalar_f(f: f64) -> Arr {
        Arr::F(ArrayD::from_elem(IxDyn(&[]), f))
    }

    pub fn to_f(&self) -> ArrayD<f64> {
        match self {
            Arr::B(a) => a.mapv(|x| x as u8 as f64),
            Arr::I(a) => a.mapv(|x| x as f64),
            Arr::F(a) => a.clone(),
        }
    }

    pub fn to_i(&self) -> ArrayD<i64> {
        match self {
            Arr::B(a) => a.mapv(|x| x as i64),
            Arr::I(a) => a.clone(),
            Arr::F(_) => unreachable!("float to int goes through astype"),
        }
    }

    pub fn to_b(&self) -> ArrayD<bool> {
        match self {
            Arr::B(a) => a.clone(),
            Arr::I(a) => a.mapv(|x| x != 0),
            Arr::F(a) => a.mapv(|x| x != 0.0),
        }
    }

    /// `astype`: float to int is defined only for finite values inside int64's range.
    pub fn astype(&self, to: DT) -> R<Arr> {
        Ok(match (to, self) {
            (DT::Bool, a) => Arr::B(a.to_b()),
            (DT::F64, a) => Arr::F(a.to_f()),
            (DT::I64, Arr::F(a)) => {
                // NaN, inf and out-of-range casts are undefined in NumPy; above 2^53 a
                // one-ulp difference in a math function changes the integer.
                if a.iter()
                    .any(|x| !x.is_finite() || x.abs() >= 9007199254740992.0)
                {
                    return unsupported("float to int64 of a non-finite or huge value");
                }
                Arr::I(a.mapv(|x| x.trunc() as i64))
            }
            (DT::I64, a) => Arr::I(a.to_i()),
        })
    }

    pub fn to_res(&self) -> Res {
        let shape = self.shape();
        let vals = match self {
            Arr::B(a) => Vals::B(a.iter().copied().collect()),
            Arr::I(a) => Vals::I(a.iter().copied().collect()),
            Arr::F(a) => Vals::F(a.iter().copied().collect()),
        };
        Res { shape, vals }
    }
}

pub fn promote(a: DT, b: DT) -> DT {
    let rank = |d| match d {
        DT::Bool => 0,
        DT::I64 => 1,
        DT::F64 => 2,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// NumPy's broadcasting: align from the right; each pair of dims is equal or one is 1.
pub fn broadcast_shape(a: &[usize], b: &[usize]) -> R<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i < n - a.len() {
            1
        } else {
            a[i - (n - a.len())]
        };
        let y = if i < n - b.len() {
            1
        } else {
            b[i - (n - b.len())]
        };
        out[i] = match (x, y) {
            _ if x == y => x,
            (1, _) => y,
            (_, 1) => x,
            _ => return np_err(format!("operands could not be broadcast: {a:?} {b:?}")),
        };
    }
    Ok(out)
}

fn zip<T: Clone, U: Clone, V>(
    a: &ArrayD<T>,
    b: &ArrayD<U>,
    shape: &[usize],
    f: impl Fn(T, U) -> V,
) -> ArrayD<V> {
    let x = a.broadcast(IxDyn(shape)).expect("broadcast");
    let y = b.broadcast(IxDyn(shape)).expect("broadcast");
    Zip::from(&x)
        .and(&y)
        .map_collect(|p, q| f(p.clone(), q.clone()))
}

/// Integer power with wrapping, by squaring (exponent >= 0).
pub fn ipow(mut base: i64, mut e: i64) -> i64 {
    let mut acc: i64 = 1;
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        e >>= 1;
    }
    acc
}

fn fmax(a: f64, b: f64) -> f64 {
    if a.is_nan() || a >= b {
        a
    } else {
        b
    }
}

fn fmin(a: f64, b: f64) -> f64 {
    if a.is_nan() || a <= b {
        a
    } else {
        b
    }
}

fn compare<T: PartialOrd>(op: BinOp, a: T, b: T) -> bool {
    match op {
        BinOp::Eq => a == b,
        BinOp::Ne => a != b,
        BinOp::Lt => a < b,
        BinOp::Le => a <= b,
        BinOp::Gt => a > b,
        _ => a >= b,
    }
}

/// An elementwise binary ufunc (everything but matmul and the bitwise ones: `refnew`).
pub fn binary(op: BinOp, a: &Arr, b: &Arr) -> R<Arr> {
    let shape = broadcast_shape(&a.shape(), &b.shape())?;
    let dt = promote(a.dtype(), b.dtype());
    if op.is_comparison() {
        return Ok(Arr::B(match dt {
            DT::F64 => zip(&a.to_f(), &b.to_f(), &shape, |x, y| compare(op, x, y)),
            _ => zip(&a.to_i(), &b.to_i(), &shape, |x, y| compare(op, x, y)),
        }));
    }
    if op == BinOp::Div {
        return Ok(Arr::F(zip(&a.to_f(), &b.to_f(), &shape, |x, y| x / y)));
    }
    Ok(match dt {
        DT::Bool => {
            let (x, y) = (a.to_b(), b.to_b());
            Arr::B(match op {
                BinOp::Add | BinOp::Max => zip(&x, &y, &shape, |p, q| p | q),
                BinOp::Mul | BinOp::Min => zip(&x, &y, &shape, |p, q| p & q),
                BinOp::Sub => return np_err("numpy boolean subtract is not supported"),
                BinOp::Pow => {
                    // Documented deviation: NumPy gives int8, ares int64.
                    deviation();
                    return Ok(Arr::I(zip(&a.to_i(), &b.to_i(), &shape, ipow)));
                }
                _ => unreachable!(),
            })
        }
        DT::I64 => {
            let (x, y) = (a.to_i(), b.to_i());
            if op == BinOp::Pow && y.iter().any(|e| *e < 0) && !shape.contains(&0) {
                // NumPy checks the exponent operand before broadcasting.
                return np_err("Integers to negative integer powers are not allowed.");
            }
            Arr::I(zip(&x, &y, &shape, |p, q| match op {
                BinOp::Add => p.wrapping_add(q),
                BinOp::Sub => p.wrapping_sub(q),
                BinOp::Mul => p.wrapping_mul(q),
                BinOp::Pow => ipow(p, q),
                BinOp::Max => p.max(q),
                BinOp::Min => p.min(q),
                _ => unreachable!(),
            }))
        }
        DT::F64 => Arr::F(zip(&a.to_f(), &b.to_f(), &shape, |p, q| match op {
            BinOp::Add => p + q,
            BinOp::Sub => p - q,
            BinOp::Mul => p * q,
            BinOp::Pow => p.powf(q),
            BinOp::Max => fmax(p, q),
            BinOp::Min => fmin(p, q),
            _ => unreachable!(),
        })),
    })
}

/// Elementwise unary functions by their NumPy name.
pub fn unary(name: &str, a: &Arr) -> R<Arr> {
    // NumPy 1's names of the array API's functions.
    let name = match name {
        "arccos" => "acos",
        "arcsin" => "asin",
        "arctan" => "atan",
        "arccosh" => "acosh",
        "arcsinh" => "asinh",
        "arctanh" => "atanh",
        n => n,
    };
    Ok(match (name, a) {
        ("negative", Arr::B(_)) => {
            return np_err("The numpy boolean negative, the `-` operator, is not supported")
        }
        ("negative", Arr::I(x)) => Arr::I(x.mapv(i64::wrapping_neg)),
        ("negative", Arr::F(x)) => Arr::F(x.mapv(|v| -v)),
        ("abs" | "absolute", Arr::B(x)) => Arr::B(x.clone()),
        ("abs" | "absolute", Arr::I(x)) => Arr::I(x.mapv(i64::wrapping_abs)),
        ("abs" | "absolute", Arr::F(x)) => Arr::F(x.mapv(f64::abs)),
        // NumPy 2 keeps integers and bools in floor, ceil and trunc.
        ("floor" | "ceil" | "trunc", Arr::B(_) | Arr::I(_)) => a.clone(),
        ("round", Arr::I(_)) => a.clone(),
        ("round", Arr::F(x)) => Arr::F(x.mapv(f64::round_ties_even)),
        ("round", Arr::B(x)) => {
            // Documented deviation: NumPy gives float16, ares float64.
            deviation();
            Arr::F(x.mapv(|v| f64::from(u8::from(v))))
        }
        ("floor", Arr::F(x)) => Arr::F(x.mapv(f64::floor)),
        ("ceil", Arr::F(x)) => Arr::F(x.mapv(f64::ceil)),
        ("trunc", Arr::F(x)) => Arr::F(x.mapv(f64::trunc)),
        ("sign", Arr::B(_)) => {
            return np_err("ufunc 'sign' did not contain a loop with signature matching types")
        }
        ("sign", Arr::I(x)) => Arr::I(x.mapv(i64::signum)),
        ("sign", Arr::F(x)) => Arr::F(x.mapv(|v| {
            if v.is_nan() {
                v
            } else if v > 0.0 {
                1.0
            } else if v < 0.0 {
                -1.0
            } else {
                0.0
            }
        })),
        // NumPy gives int8 for bools, a dtype ares does not have.
        ("square" | "reciprocal", Arr::B(_)) => return unsupported("square/reciprocal of bools"),
        ("square", Arr::I(x)) => Arr::I(x.mapv(|v| v.wrapping_mul(v))),
        ("square", Arr::F(x)) => Arr::F(x.mapv(|v| v * v)),
        // C's integer division 1 / x; NumPy's loop gives the minimum for 0 on x86-64.
        ("reciprocal", Arr::I(x)) => Arr::I(x.mapv(|v| match v {
            0 => i64::MIN,
            1 => 1,
            -1 => -1,
            _ => 0,
        })),
        ("reciprocal", Arr::F(x)) => Arr::F(x.mapv(|v| 1.0 / v)),
        (f, x) => {
            let x_f = x.to_f();
            let periodic = matches!(f, "sin" | "cos" | "tan");
            if periodic && x_f.iter().any(|v| v.is_finite() && v.abs() > 1e4) {
                // A one-ulp difference in an input above 1e4 (from exp, say) moves sin/cos
                // by more than the tolerance.
                return unsupported("sin/cos of a huge argument");
            }
            if x.dtype() == DT::Bool {
                // Documented deviation: NumPy gives float16, ares float64.
                deviation();
            }
            let g: fn(f64) -> f64 = match f {
                "sqrt" => f64::sqrt,
                "exp" => f64::exp,
                "log" => f64::ln,
                "sin" => f64::sin,
                "cos" => f64::cos,
                "tan" => f64::tan,
                "acos" => f64::acos,
                "asin" => f64::asin,
                "atan" => f64::atan,
                "acosh" => f64::acosh,
                "asinh" => f64::asinh,
                "atanh" => f64::atanh,
                "cosh" => f64::cosh,
                "sinh" => f64::sinh,
                "tanh" => f64::tanh,
                "expm1" => f64::exp_m1,
                "log1p" => f64::ln_1p,
                "log2" => f64::log2,
                "log10" => f64::log10,
                _ => unreachable!("unary {f}"),
            };
            Arr::F(x_f.mapv(g))
        }
    })
}

thread_local! {
    static DEVIATION: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Notes that the value follows one of ares' documented deviations from NumPy (a dtype
/// ares lacks), so NumPy is not asked about this program.
pub fn deviation() {
    DEVIATION.with(|d| d.set(true));
}

/// Whether `deviation` was called since the last call of `take_deviation`.
pub fn take_deviation() -> bool {
    DEVIATION.with(|d| d.replace(false))
}

/// `dot`: a 0-d operand multiplies; otherwise as `matmul`.
pub fn dot(a: &Arr, b: &Arr) -> R<Arr> {
    if a.shape().is_empty() || b.shape().is_empty() {
        return binary(BinOp::Mul, a, b);
    }
    if a.shape().len() > 2 || b.shape().len() > 2 {
        return super::reflinalg::dot_nd(a, b);
    }
    matmul(a, b)
}

/// `matmul` of 1-D or 2-D operands: a 1-D left operand is a row, a 1-D right one a column,
/// and the added axis is removed from the result.
pub fn matmul(a: &Arr, b: &Arr) -> R<Arr> {
    let (sa, sb) = (a.shape(), b.shape());
    if sa.is_empty() || sb.is_empty() {
        return np_err("matmul: Input operand does not have enough dimensions");
    }
    if sa.len() > 2 || sb.len() > 2 {
        return super::reflinalg::matmul_nd(a, b);
    }
    if sa.len() == 1 || sb.len() == 1 {
        let a2 = if sa.len() == 1 {
            super::refshape::reshape(a, &[1, sa[0]])
        } else {
            a.clone()
        };
        let b2 = if sb.len() == 1 {
            super::refshape::reshape(b, &[sb[0], 1])
        } else {
            b.clone()
        };
        let r = matmul(&a2, &b2)?;
        let rs = r.shape();
        let mut out = vec![];
        if sa.len() == 2 {
            out.push(rs[0]);
        }
        if sb.len() == 2 {
            out.push(rs[1]);
        }
        return Ok(super::refshape::reshape(&r, &out));
    }
    if sa[1] != sb[0] {
        return np_err(format!("matmul: mismatch in core dimension {sa:?} {sb:?}"));
    }
    let (m, k, n) = (sa[0], sa[1], sb[1]);
    let non_finite = |x: &Arr| matches!(x, Arr::F(v) if v.iter().any(|f| !f.is_finite()));
    if non_finite(a) || non_finite(b) {
        // NumPy's BLAS paths disagree among themselves on NaN * 0 (gemv gives 0).
        return unsupported("float matrix product with NaN or inf operands");
    }
    Ok(match promote(a.dtype(), b.dtype()) {
        DT::Bool => {
            let (x, y) = (a.to_b(), b.to_b());
            Arr::B(ArrayD::from_shape_fn(IxDyn(&[m, n]), |ix| {
                (0..k).any(|t| x[[ix[0], t]] && y[[t, ix[1]]])
            }))
        }
        DT::I64 => {
            let (x, y) = (a.to_i(), b.to_i());
            Arr::I(ArrayD::from_shape_fn(IxDyn(&[m, n]), |ix| {
                (0..k).fold(0i64, |s, t| {
                    s.wrapping_add(x[[ix[0], t]].wrapping_mul(y[[t, ix[1]]]))
                })
            }))
        }
        DT::F64 => {
            let (x, y) = (a.to_f(), b.to_f());
            Arr::F(ArrayD::from_shape_fn(IxDyn(&[m, n]), |ix| {
                (0..k).fold(0.0, |s, t| s + x[[ix[0], t]] * y[[t, ix[1]]])
            }))
        }
    })
}
