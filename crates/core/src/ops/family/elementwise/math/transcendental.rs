//! The float-valued functions: inverse and hyperbolic trigonometry, `tan`, `expm1`, `log1p`,
//! `log2`, `log10`, and the two-operand `atan2`, `hypot`, `logaddexp`.
//!
//! Each computes in float64 (float32 rides as float64, rounded once: the dtype rule gives
//! float32 for float32 and float64 for integers and bools, so only the float64 loop is
//! written). Most are the C library's, as NumPy's are (std calls it); `asinh`, `acosh` and
//! `atanh` are musl's (the `libm` crate), as std's own formulas overflow (`acosh(1e308)` is
//! 709.9, not infinity); `acosh` below 1 is NaN before musl sees it (musl reads `|x|`). Their special cases (NaN, ±0, ±inf, out of domain) are C99's
//! Annex F, which the array API standard's special cases restate.

use super::{BinaryUfunc, UnaryUfunc};

/// A unary ufunc computed by one float64 function.
macro_rules! float_fn {
    ($($name:ident: $f:expr;)*) => {
        $(
            pub struct $name;
            impl UnaryUfunc for $name {
                fn f64(x: f64) -> f64 {
                    let f: fn(f64) -> f64 = $f;
                    f(x)
                }
            }
        )*
    };
}

float_fn! {
    Acos: f64::acos;
    Asin: f64::asin;
    Atan: f64::atan;
    // musl's acosh reads |x| for its range: NaN below 1 is C99's answer.
    Acosh: |x| if x < 1.0 { f64::NAN } else { libm::acosh(x) };
    Asinh: libm::asinh;
    Atanh: libm::atanh;
    Cosh: f64::cosh;
    Sinh: f64::sinh;
    Tan: f64::tan;
    Tanh: f64::tanh;
    Expm1: f64::exp_m1;
    Log1p: f64::ln_1p;
    Log2: f64::log2;
    Log10: f64::log10;
}

/// The quadrant-aware arc tangent of `x1 / x2` (C's `atan2`).
pub struct Atan2;
impl BinaryUfunc for Atan2 {
    fn f64(x: f64, y: f64) -> f64 {
        x.atan2(y)
    }
}

/// `sqrt(x1² + x2²)` without overflow or underflow on the way (C's `hypot`: infinite if
/// either leg is, even with a NaN beside it).
pub struct Hypot;
impl BinaryUfunc for Hypot {
    fn f64(x: f64, y: f64) -> f64 {
        x.hypot(y)
    }
}

/// `log(exp(x1) + exp(x2))` without overflow, as NumPy's `npy_logaddexp`: equal operands
/// (infinities of one sign too) give `x + log(2)`; otherwise the larger plus
/// `log1p(exp(-|difference|))`; a NaN difference (a NaN operand, or `inf` and `inf` of
/// opposite signs cannot be: their difference is infinite) propagates.
pub struct LogAddExp;
impl BinaryUfunc for LogAddExp {
    fn f64(x: f64, y: f64) -> f64 {
        if x == y {
            return x + std::f64::consts::LN_2;
        }
        let d = x - y;
        if d > 0.0 {
            x + (-d).exp().ln_1p()
        } else if d <= 0.0 {
            y + d.exp().ln_1p()
        } else {
            d
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_hyperbolics_do_not_overflow() {
        assert!((Acosh::f64(1e308) - 709.889_355_822_726).abs() < 1e-9);
        assert!((Asinh::f64(-1e308) + 709.889_355_822_726).abs() < 1e-9);
        assert_eq!(Atanh::f64(1.0), f64::INFINITY);
        for x in [
            0.5,
            -1.0,
            -3.0,
            -44_925_242.0,
            -1e10,
            -1e300,
            f64::NEG_INFINITY,
        ] {
            assert!(Acosh::f64(x).is_nan(), "acosh({x})");
        }
        assert_eq!(Asinh::f64(-3.0), -Asinh::f64(3.0));
        assert_eq!(Atanh::f64(-0.5), -Atanh::f64(0.5));
        assert!(Atanh::f64(-3.0).is_nan() && Atanh::f64(1e10).is_nan());
    }

    #[test]
    fn logaddexp_keeps_infinities_and_nan() {
        let inf = f64::INFINITY;
        assert_eq!(LogAddExp::f64(inf, inf), inf);
        assert_eq!(LogAddExp::f64(-inf, -inf), -inf);
        assert_eq!(LogAddExp::f64(inf, -inf), inf);
        assert_eq!(LogAddExp::f64(-inf, 3.0), 3.0);
        assert!(LogAddExp::f64(f64::NAN, inf).is_nan());
        assert!((LogAddExp::f64(1000.0, 1000.0) - 1_000.693_147_180_56).abs() < 1e-9);
    }
}
