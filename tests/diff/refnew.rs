//! The reference for the functions added after issue 12: `isnan isinf isfinite`, `cumsum
//! cumprod` (running totals from the first element, bools as int64, ints wrapping), `where`
//! (the promoted dtype of `x` and `y`), and `argmin argmax` (first occurrence, first NaN wins,
//! flattened without an axis, an error on zero elements), the bitwise ufuncs (logical on
//! bools, two's complement on int64, refused on floats) and the shifts (int64 only), from
//! NumPy's documentation.

use super::ast::BinOp;
use super::refarr::{self, np_err, unsupported, Arr, R};
use super::refeval::{arr, int, ints, V};
use super::refshape::{self, norm_axis};
use ndarray::{ArrayD, Axis, IxDyn, Zip};

type Get<'a> = &'a dyn Fn(usize, &str) -> Option<V>;

/// Any elementwise binary ufunc: the bitwise ones here, the others in `refarr`.
pub fn binary(op: BinOp, a: &Arr, b: &Arr) -> R<Arr> {
    if op.is_shift() {
        return shift(op, a, b);
    }
    if matches!(op, BinOp::FloorDiv | BinOp::Mod) {
        return floor_divide(op, a, b);
    }
    if BinOp::MORE.contains(&op) {
        return float_binary(op, a, b);
    }
    match op.is_bitwise() {
        true => bitwise(op, a, b),
        false => refarr::binary(op, a, b),
    }
}

/// `left_shift`/`right_shift` (`<< >>`) on int64 (a bool with an int64 counts as int64).
/// NumPy reads the count as unsigned: one of 64 or more, or a negative one, shifts every bit
/// out (0, or -1 for `>>` of a negative value). Two bools: NumPy gives int8, which ares does
/// not have and refuses (a documented deviation).
pub fn shift(op: BinOp, a: &Arr, b: &Arr) -> R<Arr> {
    let shape = refarr::broadcast_shape(&a.shape(), &b.shape())?;
    let dim = IxDyn(&shape);
    let refused = || {
        np_err(format!(
            "ufunc '{}' not supported for the input types",
            op.func()
        ))
    };
    if matches!(a, Arr::F(_)) || matches!(b, Arr::F(_)) {
        return refused();
    }
    if matches!((a, b), (Arr::B(_), Arr::B(_))) {
        refarr::deviation();
        return refused();
    }
    let (x, y) = (a.to_i(), b.to_i());
    let (x, y) = (x.broadcast(dim.clone()).unwrap(), y.broadcast(dim).unwrap());
    Ok(Arr::I(Zip::from(&x).and(&y).map_collect(|p, q| {
        match (op, (0..64).contains(q)) {
            (BinOp::LeftShift, true) => p << q,
            (BinOp::LeftShift, false) => 0,
            (_, true) => p >> q,
            (_, false) => -((*p < 0) as i64),
        }
    })))
}

/// `bitwise_and/or/xor` (`& | ^`): the operands promoted as any binary ufunc's.
pub fn bitwise(op: BinOp, a: &Arr, b: &Arr) -> R<Arr> {
    let shape = refarr::broadcast_shape(&a.shape(), &b.shape())?;
    let dim = IxDyn(&shape);
    let both_bool = matches!((a, b), (Arr::B(_), Arr::B(_)));
    if matches!(a, Arr::F(_)) || matches!(b, Arr::F(_)) {
        return np_err(format!(
            "ufunc '{}' not supported for the input types",
            op.func()
        ));
    }
    if both_bool {
        let (x, y) = (a.to_b(), b.to_b());
        let (x, y) = (x.broadcast(dim.clone()).unwrap(), y.broadcast(dim).unwrap());
        return Ok(Arr::B(Zip::from(&x).and(&y).map_collect(|p, q| match op {
            BinOp::BitAnd => *p && *q,
            BinOp::BitOr => *p || *q,
            _ => p != q,
        })));
    }
    let (x, y) = (a.to_i(), b.to_i());
    let (x, y) = (x.broadcast(dim.clone()).unwrap(), y.broadcast(dim).unwrap());
    Ok(Arr::I(Zip::from(&x).and(&y).map_collect(|p, q| match op {
        BinOp::BitAnd => p & q,
        BinOp::BitOr => p | q,
        _ => p ^ q,
    })))
}

/// `invert` (`~`): logical not of bools, bitwise not of int64.
pub fn invert(a: &Arr) -> R<Arr> {
    Ok(match a {
        Arr::B(x) => Arr::B(x.mapv(|v| !v)),
        Arr::I(x) => Arr::I(x.mapv(|v| !v)),
        Arr::F(_) => return np_err("ufunc 'invert' not supported for the input types"),
    })
}

fn flat(a: &Arr) -> Arr {
    refshape::reshape(a, &[a.len()])
}

fn running<T: Copy>(x: &ArrayD<T>, ax: usize, f: impl Fn(T, T) -> T) -> ArrayD<T> {
    let mut out = x.clone();
    for mut lane in out.lanes_mut(Axis(ax)) {
        for i in 1..lane.len() {
            lane[i] = f(lane[i - 1], lane[i]);
        }
    }
    out
}

fn arg(f: &str, a: &Arr) -> R<i64> {
    let v = a.to_f();
    if v.is_empty() {
        return np_err(format!("attempt to get {f} of an empty sequence"));
    }
    let max = f == "argmax";
    let mut best = 0;
    let vals: Vec<f64> = v.iter().copied().collect();
    let ints: Option<Vec<i64>> = match a {
        Arr::F(_) => None,
        _ => Some(a.to_i().iter().copied().collect()),
    };
    for i in 1..vals.len() {
        let better = match &ints {
            Some(iv) => (max && iv[i] > iv[best]) || (!max && iv[i] < iv[best]),
            None => {
                let (x, b) = (vals[i], vals[best]);
                !b.is_nan() && (x.is_nan() || (max && x > b) || (!max && x < b))
            }
        };
        if better {
            best = i;
        }
    }
    Ok(best as i64)
}

pub fn call(f: &str, pos: &[V], get: Get) -> R<Arr> {
    let a0 = || arr(pos[0].clone());
    match f {
        "isnan" | "isinf" | "isfinite" => {
            let x = a0()?.to_f();
            Ok(Arr::B(x.mapv(|v| match f {
                "isnan" => v.is_nan(),
                "isinf" => v.is_infinite(),
                _ => v.is_finite(),
            })))
        }
        "cumsum" | "cumprod" => {
            let x = a0()?;
            let (x, ax) = match get(1, "axis") {
                None | Some(V::None) => (flat(&x), 0),
                Some(v) => {
                    let ax = norm_axis(int(&v)?, x.shape().len())?;
                    (x, ax)
                }
            };
            let sum = f == "cumsum";
            Ok(match &x {
                Arr::F(v) => Arr::F(running(v, ax, |p, q| if sum { p + q } else { p * q })),
                _ => Arr::I(running(&x.to_i(), ax, |p, q| {
                    if sum {
                        p.wrapping_add(q)
                    } else {
                        p.wrapping_mul(q)
                    }
                })),
            })
        }
        "where" => {
            let (c, x, y) = (a0()?, arr(pos[1].clone())?, arr(pos[2].clone())?);
            let sh = refarr::broadcast_shape(&c.shape(), &x.shape())?;
            let sh = refarr::broadcast_shape(&sh, &y.shape())?;
            let dt = refarr::promote(x.dtype(), y.dtype());
            let (x, y) = (x.astype(dt)?, y.astype(dt)?);
            let c = c.to_b();
            let c = c.broadcast(IxDyn(&sh)).unwrap();
            fn pick<T: Clone>(
                c: &ndarray::ArrayViewD<bool>,
                x: &ArrayD<T>,
                y: &ArrayD<T>,
                sh: &[usize],
            ) -> ArrayD<T> {
                let (x, y) = (
                    x.broadcast(IxDyn(sh)).unwrap(),
                    y.broadcast(IxDyn(sh)).unwrap(),
                );
                Zip::from(c)
                    .and(&x)
                    .and(&y)
                    .map_collect(|c, p, q| if *c { p.clone() } else { q.clone() })
            }
            Ok(match (&x, &y) {
                (Arr::B(p), Arr::B(q)) => Arr::B(pick(&c, p, q, &sh)),
                (Arr::I(p), Arr::I(q)) => Arr::I(pick(&c, p, q, &sh)),
                (Arr::F(p), Arr::F(q)) => Arr::F(pick(&c, p, q, &sh)),
                _ => unreachable!("same dtype"),
            })
        }
        "argmin" | "argmax" => {
            let x = a0()?;
            let keep = match get(usize::MAX, "keepdims") {
                None => false,
                Some(V::A(Arr::B(b))) if b.ndim() == 0 => b[IxDyn(&[])],
                Some(_) => return unsupported("keepdims that is not a bool"),
            };
            let s = x.shape();
            match get(1, "axis") {
                None | Some(V::None) => {
                    let i = arg(f, &x)?;
                    let sh: Vec<usize> = if keep { vec![1; s.len()] } else { vec![] };
                    Ok(Arr::I(ArrayD::from_elem(IxDyn(&sh), i)))
                }
                Some(v) => {
                    let ax = norm_axis(int(&v)?, s.len())?;
                    if s[ax] == 0 {
                        return np_err(format!("attempt to get {f} of an empty sequence"));
                    }
                    // Move the axis last, find per row.
                    let mut perm: Vec<i64> =
                        (0..s.len() as i64).filter(|d| *d != ax as i64).collect();
                    perm.push(ax as i64);
                    let t = refshape::transpose(&x, Some(&perm))?;
                    let n = s[ax];
                    let rows = t.len() / n;
                    let flat_t = refshape::reshape(&t, &[rows, n]);
                    let mut out = vec![];
                    for r in 0..rows {
                        let row = refshape::index(&flat_t, &[refshape::Item::At(r as i64)])?;
                        out.push(arg(f, &row)?);
                    }
                    let sh: Vec<usize> = (0..s.len())
                        .filter_map(|d| {
                            if d == ax {
                                keep.then_some(1)
                            } else {
                                Some(s[d])
                            }
                        })
                        .collect();
                    Ok(Arr::I(ArrayD::from_shape_vec(IxDyn(&sh), out).unwrap()))
                }
            }
        }
        "tensordot" => {
            let (a, b) = (a0()?, arr(pos[1].clone())?);
            let (xa, xb) = match get(2, "axes") {
                None => tensordot_n(&a, 2),
                Some(V::Tuple(pair)) if pair.len() == 2 => (ints(&pair[0])?, ints(&pair[1])?),
                Some(v) => {
                    let n = int(&v)?;
                    if n < 0 || n as usize > a.shape().len() || n as usize > b.shape().len() {
                        return np_err("tensordot: axes out of range");
                    }
                    tensordot_n(&a, n as usize)
                }
            };
            super::reflinalg::tensordot(&a, &b, &xa, &xb)
        }
        f => super::refdd::call(f, pos, get),
    }
}

/// `axes=n`: the last `n` axes of `a` with the first `n` of `b`.
fn tensordot_n(a: &Arr, n: usize) -> (Vec<i64>, Vec<i64>) {
    let nd = a.shape().len() as i64;
    let n = n as i64;
    ((nd - n..nd).collect(), (0..n).collect())
}

/// Python's float `//` and `%` (CPython's `float_divmod`, which NumPy's loops follow): the
/// remainder is `fmod` moved to the divisor's sign (a zero one a zero of that sign), the
/// quotient `(x - mod) / y` floored and nudged to the nearest integer. A zero divisor, which
/// Python refuses, gives NumPy's `x / y` and a NaN remainder.
fn py_divmod(x: f64, y: f64) -> (f64, f64) {
    if y == 0.0 {
        return (x / y, f64::NAN);
    }
    let mut m = x % y;
    let mut div = (x - m) / y;
    if m != 0.0 {
        if (y < 0.0) != (m < 0.0) {
            m += y;
            div -= 1.0;
        }
    } else {
        m = 0.0f64.copysign(y);
    }
    let q = if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 {
            f + 1.0
        } else {
            f
        }
    } else {
        0.0f64.copysign(x / y)
    };
    (q, m)
}

/// `floor_divide` / `remainder` (`//`, `%`): floats as Python's, integers rounded toward
/// negative infinity with the divisor's sign, 0 for a zero divisor (NumPy warns), `MIN // -1`
/// wrapping to `MIN`. Two bools: NumPy gives int8, ares int64 (a documented deviation).
pub fn floor_divide(op: BinOp, a: &Arr, b: &Arr) -> R<Arr> {
    let shape = refarr::broadcast_shape(&a.shape(), &b.shape())?;
    let dim = IxDyn(&shape);
    let quotient = op == BinOp::FloorDiv;
    if matches!(a, Arr::F(_)) || matches!(b, Arr::F(_)) {
        let (x, y) = (a.to_f(), b.to_f());
        let (x, y) = (x.broadcast(dim.clone()).unwrap(), y.broadcast(dim).unwrap());
        return Ok(Arr::F(Zip::from(&x).and(&y).map_collect(|p, q| {
            let (d, m) = py_divmod(*p, *q);
            if quotient {
                d
            } else {
                m
            }
        })));
    }
    if matches!((a, b), (Arr::B(_), Arr::B(_))) {
        refarr::deviation();
    }
    let (x, y) = (a.to_i(), b.to_i());
    let (x, y) = (x.broadcast(dim.clone()).unwrap(), y.broadcast(dim).unwrap());
    Ok(Arr::I(Zip::from(&x).and(&y).map_collect(|p, q| {
        let (p, q) = (i128::from(*p), i128::from(*q));
        if q == 0 {
            return 0;
        }
        let d = p.div_euclid(q) - i128::from(q < 0 && p.rem_euclid(q) != 0);
        let m = p - d * q;
        (if quotient { d } else { m }) as i64
    })))
}

/// `log(exp(x) + exp(y))`, computed from the larger operand so nothing overflows.
fn logaddexp(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == y {
        return x + std::f64::consts::LN_2;
    }
    let (hi, lo) = if x > y { (x, y) } else { (y, x) };
    hi + (lo - hi).exp().ln_1p()
}

/// The float-valued functions of two operands: float64 whatever the operands (two bools:
/// NumPy gives float16, ares float64, a documented deviation).
pub fn float_binary(op: BinOp, a: &Arr, b: &Arr) -> R<Arr> {
    let shape = refarr::broadcast_shape(&a.shape(), &b.shape())?;
    let dim = IxDyn(&shape);
    if matches!((a, b), (Arr::B(_), Arr::B(_))) {
        refarr::deviation();
    }
    let f: fn(f64, f64) -> f64 = match op {
        BinOp::Atan2 => f64::atan2,
        BinOp::Hypot => f64::hypot,
        BinOp::LogAddExp => logaddexp,
        BinOp::CopySign => f64::copysign,
        _ => |x: f64, y: f64| {
            if x.is_nan() || y.is_nan() {
                f64::NAN
            } else if x == y {
                y
            } else if x < y {
                x.next_up()
            } else {
                x.next_down()
            }
        },
    };
    let (x, y) = (a.to_f(), b.to_f());
    let (x, y) = (x.broadcast(dim.clone()).unwrap(), y.broadcast(dim).unwrap());
    Ok(Arr::F(Zip::from(&x).and(&y).map_collect(|p, q| f(*p, *q))))
}
