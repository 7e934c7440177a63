//! Rounding and the sign: `floor`, `ceil`, `trunc`, `round`, `sign`, `signbit`, and the
//! two-operand `copysign` and `nextafter`.
//!
//! The rounding functions keep integers (NumPy 2 and the array API standard: `floor` of an
//! int64 is that int64, exactly, also beyond 2^53), so their integer loops are the identity.
//! `round` rounds halves to even (`round(2.5)` is 2, `round(-0.5)` is -0), as NumPy's `rint`
//! and C's `nearbyint` in the default rounding mode. Every float loop is exact, so float32
//! runs in float64 at no cost, except `nextafter`, whose step is one float32 ulp.

use super::{truth, BinaryUfunc, UnaryUfunc};

/// A rounding function: its float loop, integers kept as they are.
macro_rules! rounding {
    ($($name:ident: $f:expr;)*) => {
        $(
            pub struct $name;
            impl UnaryUfunc for $name {
                fn f64(x: f64) -> f64 {
                    let f: fn(f64) -> f64 = $f;
                    f(x)
                }
                fn i64(x: i64) -> i64 {
                    x
                }
                fn i32(x: i32) -> i32 {
                    x
                }
                fn u64(x: u64) -> u64 {
                    x
                }
                fn bool(x: bool) -> bool {
                    x
                }
            }
        )*
    };
}

rounding! {
    Floor: f64::floor;
    Ceil: f64::ceil;
    Trunc: f64::trunc;
    Round: f64::round_ties_even;
}

/// -1, 0 or 1; NaN stays NaN and both zeros give +0 (NumPy's loop: `x > 0 ? 1 : x < 0 ? -1 :
/// x == 0 ? 0 : x`).
pub struct Sign;
impl UnaryUfunc for Sign {
    fn f64(x: f64) -> f64 {
        if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else if x == 0.0 {
            0.0
        } else {
            x
        }
    }
    fn i64(x: i64) -> i64 {
        x.signum()
    }
    fn u64(x: u64) -> u64 {
        u64::from(x != 0)
    }
}

/// Whether the sign bit is set: true for -0.0 and a NaN with its sign bit, and for negative
/// integers (read in float64, whose sign is theirs).
pub struct SignBit;
impl UnaryUfunc for SignBit {
    fn f64(x: f64) -> f64 {
        truth(x.is_sign_negative())
    }
}

/// The magnitude of `x1` with the sign of `x2` (a NaN's sign bit counts).
pub struct CopySign;
impl BinaryUfunc for CopySign {
    fn f64(x: f64, y: f64) -> f64 {
        x.copysign(y)
    }
}

/// The next representable value after `x1` towards `x2` (C's `nextafter`): NaN if either is
/// NaN, `x2` itself when they are equal (so `nextafter(0.0, -0.0)` is -0.0), the smallest
/// subnormal of `x2`'s sign after a zero.
pub struct NextAfter;

macro_rules! next_after {
    ($x:expr, $y:expr) => {{
        let (x, y) = ($x, $y);
        if x.is_nan() || y.is_nan() {
            x + y
        } else if x == y {
            y
        } else if x < y {
            x.next_up()
        } else {
            x.next_down()
        }
    }};
}

impl BinaryUfunc for NextAfter {
    const F32_IS_ROUNDED_F64: bool = false;

    fn f64(x: f64, y: f64) -> f64 {
        next_after!(x, y)
    }
    fn f32(x: f32, y: f32) -> f32 {
        next_after!(x, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_takes_halves_to_even() {
        let r: Vec<f64> = [0.5, 1.5, 2.5, -0.5, -2.5, 2.4999999999999996]
            .iter()
            .map(|x| Round::f64(*x))
            .collect();
        assert_eq!(r, [0.0, 2.0, 2.0, -0.0, -2.0, 2.0]);
        assert!(Round::f64(-0.5).is_sign_negative());
        assert_eq!(Floor::i64(i64::MAX), i64::MAX);
    }

    #[test]
    fn nextafter_steps_one_ulp_of_the_dtype() {
        assert_eq!(NextAfter::f64(1.0, 2.0), 1.0 + f64::EPSILON);
        assert_eq!(NextAfter::f32(1.0, 2.0), 1.0 + f32::EPSILON);
        assert_eq!(NextAfter::f64(0.0, -1.0), -f64::from_bits(1));
        assert!(NextAfter::f64(0.0, -0.0).is_sign_negative());
        assert!(NextAfter::f32(f32::NAN, 1.0).is_nan());
    }
}
