//! Division's relatives: `floor_divide` and `remainder` (Python's `//` and `%`), `square`
//! and `reciprocal`.
//!
//! `floor_divide` and `remainder` follow NumPy's loops exactly, sign conventions and
//! edge cases included, because users compare against them:
//! - integers: the quotient rounds toward negative infinity and the remainder takes the
//!   divisor's sign; division by zero gives 0 for both (NumPy warns); `MIN // -1` wraps to
//!   `MIN` (NumPy warns of the overflow) and `MIN % -1` is 0;
//! - floats: NumPy's `npy_divmod`: the remainder is `fmod` moved to the divisor's sign (a
//!   zero remainder is a zero of the divisor's sign), the quotient `(x1 - mod) / x2` floored
//!   and nudged to the nearest integer; a zero divisor gives `x1 / x2` (±inf or NaN) and a
//!   NaN remainder, an infinite dividend NaN for both. float32 computes in float32, as
//!   NumPy's float32 loop (its rounding differs from float64's rounded).
//!
//! `reciprocal` of integers is C's integer division `1 / x`, as NumPy's loop: 1 and -1 keep
//! their value, other values give 0, and 0 gives the dtype's minimum for int32 and int64
//! and 0 for the others (what NumPy's loops give on x86-64; the 8- and 16-bit ones are the
//! int64 loop truncated, whose minimum's low bits are 0).

use super::{BinaryUfunc, UnaryUfunc};

/// NumPy's `npy_divmod` for one float type: `(floor quotient, remainder)`.
macro_rules! divmod {
    ($name:ident, $t:ty) => {
        fn $name(a: $t, b: $t) -> ($t, $t) {
            let m = a % b;
            if b == 0.0 {
                return (a / b, m);
            }
            let mut div = (a - m) / b;
            let mut m = m;
            if m != 0.0 {
                if (b < 0.0) != (m < 0.0) {
                    m += b;
                    div -= 1.0;
                }
            } else {
                m = (0.0 as $t).copysign(b);
            }
            let floordiv = if div != 0.0 {
                let f = div.floor();
                if div - f > 0.5 {
                    f + 1.0
                } else {
                    f
                }
            } else {
                (0.0 as $t).copysign(a / b)
            };
            (floordiv, m)
        }
    };
}

divmod!(divmod_f64, f64);
divmod!(divmod_f32, f32);

pub struct FloorDivide;
impl BinaryUfunc for FloorDivide {
    const F32_IS_ROUNDED_F64: bool = false;

    fn f64(x: f64, y: f64) -> f64 {
        divmod_f64(x, y).0
    }
    fn f32(x: f32, y: f32) -> f32 {
        divmod_f32(x, y).0
    }
    fn i64(x: i64, y: i64) -> i64 {
        if y == 0 {
            return 0;
        }
        let q = x.wrapping_div(y);
        if x.wrapping_rem(y) != 0 && ((x < 0) != (y < 0)) {
            q - 1
        } else {
            q
        }
    }
    fn i32(x: i32, y: i32) -> i32 {
        Self::i64(i64::from(x), i64::from(y)) as i32
    }
    fn u64(x: u64, y: u64) -> u64 {
        x.checked_div(y).unwrap_or(0)
    }
}

pub struct Remainder;
impl BinaryUfunc for Remainder {
    const F32_IS_ROUNDED_F64: bool = false;

    fn f64(x: f64, y: f64) -> f64 {
        divmod_f64(x, y).1
    }
    fn f32(x: f32, y: f32) -> f32 {
        divmod_f32(x, y).1
    }
    fn i64(x: i64, y: i64) -> i64 {
        if y == 0 {
            return 0;
        }
        let r = x.wrapping_rem(y);
        if r != 0 && ((r < 0) != (y < 0)) {
            r + y
        } else {
            r
        }
    }
    fn u64(x: u64, y: u64) -> u64 {
        x.checked_rem(y).unwrap_or(0)
    }
}

pub struct Square;
impl UnaryUfunc for Square {
    fn f64(x: f64) -> f64 {
        x * x
    }
    fn i64(x: i64) -> i64 {
        x.wrapping_mul(x)
    }
    fn u64(x: u64) -> u64 {
        x.wrapping_mul(x)
    }
}

pub struct Reciprocal;
impl UnaryUfunc for Reciprocal {
    fn f64(x: f64) -> f64 {
        1.0 / x
    }
    fn i64(x: i64) -> i64 {
        1i64.checked_div(x).unwrap_or(i64::MIN)
    }
    fn i32(x: i32) -> i32 {
        1i32.checked_div(x).unwrap_or(i32::MIN)
    }
    fn u64(x: u64) -> u64 {
        1u64.checked_div(x).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_floors_and_takes_the_divisors_sign() {
        let cases = [
            (7, 2, 3, 1),
            (-7, 2, -4, 1),
            (7, -2, -4, -1),
            (-7, -2, 3, -1),
        ];
        for (x, y, q, r) in cases {
            assert_eq!((FloorDivide::i64(x, y), Remainder::i64(x, y)), (q, r));
        }
        assert_eq!(FloorDivide::i64(i64::MIN, -1), i64::MIN);
        assert_eq!(Remainder::i64(i64::MIN, -1), 0);
        assert_eq!(FloorDivide::i32(i32::MIN, -1), i32::MIN);
        assert_eq!((FloorDivide::i64(5, 0), Remainder::i64(5, 0)), (0, 0));
    }
}
