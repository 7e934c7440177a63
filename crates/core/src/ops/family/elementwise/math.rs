//! The ufuncs' arithmetic: one unit type per row of the ufunc table, named as its [`Op`]
//! variant, implementing [`UnaryUfunc`] or [`BinaryUfunc`].
//!
//! A kernel is a handful of scalar functions, one per dtype loop; the array kernels
//! (`kernels`) and the fused kernel's lanes (`crate::kernels::lanes`) are generic over them
//! and reach them through [`with_unary`](super::with_unary) /
//! [`with_binary`](super::with_binary), so every loop is monomorphic and vectorizes as a
//! hand-written one. Only `f64` is required: it is the float64 loop and the fused lane (where
//! float32 rides as float64 and bools as 0.0/1.0; comparisons and predicates answer 0.0 or
//! 1.0). The other loops default to it, which is exact for float32 (one rounding of the
//! float64 result), for bools, and for every integer result below 2^53; an op whose integer
//! loop must be exact beyond that (wrapping arithmetic, bit operations) writes its `i64`.
//! `i32` defaults to the `i64` loop truncated, which is exactly int32's wrapping arithmetic;
//! so do the other narrow integers (`i8`, `i16`, `u8`, `u16`, `u32`: int64 holds all their
//! values, so its comparisons, divisions and shifts are theirs too, and its wrapping
//! arithmetic truncated is theirs modulo 2^bits). `u64` cannot ride in int64 (its order,
//! division and right shift differ beyond 2^63): it defaults to the float64 loop as `i64`
//! does, and an op whose `i64` is exact writes its `u64` too.
//! Which loops run at all is the row's dtype rule (`dtypes`): a float-only op never reaches
//! `i64`.
//!
//! [`Op`]: crate::ops::Op

mod division;
mod rounding;
mod transcendental;

pub use division::{FloorDivide, Reciprocal, Remainder, Square};
pub use rounding::{Ceil, CopySign, Floor, NextAfter, Round, Sign, SignBit, Trunc};
pub use transcendental::{
    Acos, Acosh, Asin, Asinh, Atan, Atan2, Atanh, Cosh, Expm1, Hypot, Log10, Log1p, Log2,
    LogAddExp, Sinh, Tan, Tanh,
};

/// A one-operand ufunc's loops.
pub trait UnaryUfunc {
    /// Whether the float32 loop is the float64 loop rounded once to float32, as the default
    /// `f32` is: the fused kernel then runs float32 values through the float64 loop. An op
    /// whose float32 loop is its own says `false`, and its lane runs that loop.
    const F32_IS_ROUNDED_F64: bool = true;

    fn f64(x: f64) -> f64;

    fn f32(x: f32) -> f32 {
        Self::f64(f64::from(x)) as f32
    }

    fn i64(x: i64) -> i64 {
        Self::f64(x as f64) as i64
    }

    fn i32(x: i32) -> i32 {
        Self::i64(i64::from(x)) as i32
    }

    fn i16(x: i16) -> i16 {
        Self::i64(i64::from(x)) as i16
    }

    fn i8(x: i8) -> i8 {
        Self::i64(i64::from(x)) as i8
    }

    fn u32(x: u32) -> u32 {
        Self::i64(i64::from(x)) as u32
    }

    fn u16(x: u16) -> u16 {
        Self::i64(i64::from(x)) as u16
    }

    fn u8(x: u8) -> u8 {
        Self::i64(i64::from(x)) as u8
    }

    fn u64(x: u64) -> u64 {
        Self::f64(x as f64) as u64
    }

    fn bool(x: bool) -> bool {
        Self::f64(f64::from(u8::from(x))) != 0.0
    }
}

/// A two-operand ufunc's loops (both operands already in the dtype the op computes in).
pub trait BinaryUfunc {
    /// As [`UnaryUfunc::F32_IS_ROUNDED_F64`]: `false` for an op with a float32 loop of its
    /// own (`nextafter` steps by a float32 ulp; `floor_divide` rounds as float32 does).
    const F32_IS_ROUNDED_F64: bool = true;

    fn f64(x: f64, y: f64) -> f64;

    fn f32(x: f32, y: f32) -> f32 {
        Self::f64(f64::from(x), f64::from(y)) as f32
    }

    fn i64(x: i64, y: i64) -> i64 {
        Self::f64(x as f64, y as f64) as i64
    }

    fn i32(x: i32, y: i32) -> i32 {
        Self::i64(i64::from(x), i64::from(y)) as i32
    }

    fn i16(x: i16, y: i16) -> i16 {
        Self::i64(i64::from(x), i64::from(y)) as i16
    }

    fn i8(x: i8, y: i8) -> i8 {
        Self::i64(i64::from(x), i64::from(y)) as i8
    }

    fn u32(x: u32, y: u32) -> u32 {
        Self::i64(i64::from(x), i64::from(y)) as u32
    }

    fn u16(x: u16, y: u16) -> u16 {
        Self::i64(i64::from(x), i64::from(y)) as u16
    }

    fn u8(x: u8, y: u8) -> u8 {
        Self::i64(i64::from(x), i64::from(y)) as u8
    }

    fn u64(x: u64, y: u64) -> u64 {
        Self::f64(x as f64, y as f64) as u64
    }

    fn bool(x: bool, y: bool) -> bool {
        Self::f64(f64::from(u8::from(x)), f64::from(u8::from(y))) != 0.0
    }
}

/// Code generic over a unary ufunc's kernel, run by [`with_unary`](super::with_unary).
pub trait UnaryVisitor {
    type Out;
    fn visit<K: UnaryUfunc>(self) -> Self::Out;
}

/// Code generic over a binary ufunc's kernel, run by [`with_binary`](super::with_binary).
pub trait BinaryVisitor {
    type Out;
    fn visit<K: BinaryUfunc>(self) -> Self::Out;
}

/// numpy's `maximum`/`minimum` propagate NaN; of two equal operands they give the second
/// (x86's `maxpd`/`minpd`, which NumPy's loops are), so `maximum(-0.0, 0.0)` is 0.0 and
/// `maximum(0.0, -0.0)` is -0.0.
#[inline]
pub fn fmax(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else if x > y {
        x
    } else {
        y
    }
}

#[inline]
pub fn fmin(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else if x < y {
        x
    } else {
        y
    }
}

/// `p ** q` for `q >= 0` modulo 2^64, as NumPy's int64 power (square and multiply over the
/// whole exponent, so exponents past `u32::MAX` wrap like NumPy's too). The int32 loop is its
/// low half: multiplication modulo 2^64 keeps every product's residue modulo 2^32.
pub fn wrapping_pow_i64(p: i64, q: i64) -> i64 {
    let (mut base, mut exp, mut acc) = (p, q as u64, 1i64);
    while exp > 0 {
        if exp & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exp >>= 1;
    }
    acc
}

/// 1.0 for true, 0.0 for false: what comparisons and predicates give in a lane.
#[inline]
fn truth(b: bool) -> f64 {
    f64::from(u8::from(b))
}

pub struct Neg;
impl UnaryUfunc for Neg {
    fn f64(x: f64) -> f64 {
        -x
    }
    fn i64(x: i64) -> i64 {
        x.wrapping_neg()
    }
    fn u64(x: u64) -> u64 {
        x.wrapping_neg()
    }
}

pub struct Abs;
impl UnaryUfunc for Abs {
    fn f64(x: f64) -> f64 {
        x.abs()
    }
    fn i64(x: i64) -> i64 {
        x.wrapping_abs()
    }
    fn u64(x: u64) -> u64 {
        x
    }
}

pub struct Sqrt;
impl UnaryUfunc for Sqrt {
    fn f64(x: f64) -> f64 {
        x.sqrt()
    }
    fn f32(x: f32) -> f32 {
        x.sqrt()
    }
}

pub struct Exp;
impl UnaryUfunc for Exp {
    fn f64(x: f64) -> f64 {
        x.exp()
    }
}

pub struct Log;
impl UnaryUfunc for Log {
    fn f64(x: f64) -> f64 {
        x.ln()
    }
}

pub struct Sin;
impl UnaryUfunc for Sin {
    fn f64(x: f64) -> f64 {
        x.sin()
    }
}

pub struct Cos;
impl UnaryUfunc for Cos {
    fn f64(x: f64) -> f64 {
        x.cos()
    }
}

/// Predicates answer for integers and bools with their value at 0 (every integer is finite).
pub struct IsNan;
impl UnaryUfunc for IsNan {
    fn f64(x: f64) -> f64 {
        truth(x.is_nan())
    }
}

pub struct IsInf;
impl UnaryUfunc for IsInf {
    fn f64(x: f64) -> f64 {
        truth(x.is_infinite())
    }
}

pub struct IsFinite;
impl UnaryUfunc for IsFinite {
    fn f64(x: f64) -> f64 {
        truth(x.is_finite())
    }
}

/// The lane carries bools (no float reaches `~`): logical not.
pub struct Invert;
impl UnaryUfunc for Invert {
    fn f64(x: f64) -> f64 {
        truth(x == 0.0)
    }
    fn i64(x: i64) -> i64 {
        !x
    }
    fn u64(x: u64) -> u64 {
        !x
    }
}

pub struct Add;
impl BinaryUfunc for Add {
    fn f64(x: f64, y: f64) -> f64 {
        x + y
    }
    fn f32(x: f32, y: f32) -> f32 {
        x + y
    }
    fn i64(x: i64, y: i64) -> i64 {
        x.wrapping_add(y)
    }
    fn u64(x: u64, y: u64) -> u64 {
        x.wrapping_add(y)
    }
}

pub struct Sub;
impl BinaryUfunc for Sub {
    fn f64(x: f64, y: f64) -> f64 {
        x - y
    }
    fn f32(x: f32, y: f32) -> f32 {
        x - y
    }
    fn i64(x: i64, y: i64) -> i64 {
        x.wrapping_sub(y)
    }
    fn u64(x: u64, y: u64) -> u64 {
        x.wrapping_sub(y)
    }
}

pub struct Mul;
impl BinaryUfunc for Mul {
    fn f64(x: f64, y: f64) -> f64 {
        x * y
    }
    fn f32(x: f32, y: f32) -> f32 {
        x * y
    }
    fn i64(x: i64, y: i64) -> i64 {
        x.wrapping_mul(y)
    }
    fn u64(x: u64, y: u64) -> u64 {
        x.wrapping_mul(y)
    }
}

/// True division: integers and bools are divided as float64 (the dtype rule casts them).
pub struct Div;
impl BinaryUfunc for Div {
    fn f64(x: f64, y: f64) -> f64 {
        x / y
    }
    fn f32(x: f32, y: f32) -> f32 {
        x / y
    }
}

/// float32 power is computed in float64 and rounded once (as the fused kernel computes it).
pub struct Pow;
impl BinaryUfunc for Pow {
    fn f64(x: f64, y: f64) -> f64 {
        x.powf(y)
    }
    fn i64(x: i64, y: i64) -> i64 {
        wrapping_pow_i64(x, y)
    }
    fn u64(x: u64, y: u64) -> u64 {
        // Multiplication modulo 2^64 is the same for both signs' bits.
        wrapping_pow_i64(x as i64, y as i64) as u64
    }
}

pub struct Maximum;
impl BinaryUfunc for Maximum {
    fn f64(x: f64, y: f64) -> f64 {
        fmax(x, y)
    }
    fn i64(x: i64, y: i64) -> i64 {
        x.max(y)
    }
    fn u64(x: u64, y: u64) -> u64 {
        x.max(y)
    }
}

pub struct Minimum;
impl BinaryUfunc for Minimum {
    fn f64(x: f64, y: f64) -> f64 {
        fmin(x, y)
    }
    fn i64(x: i64, y: i64) -> i64 {
        x.min(y)
    }
    fn u64(x: u64, y: u64) -> u64 {
        x.min(y)
    }
}

/// The six comparisons: 1 or 0 in every loop (the array kernel reads them as bools).
macro_rules! comparison {
    ($name:ident, $cmp:tt) => {
        pub struct $name;
        impl BinaryUfunc for $name {
            fn f64(x: f64, y: f64) -> f64 {
                truth(x $cmp y)
            }
            fn i64(x: i64, y: i64) -> i64 {
                i64::from(x $cmp y)
            }
            fn u64(x: u64, y: u64) -> u64 {
                u64::from(x $cmp y)
            }
        }
    };
}

comparison!(Eq, ==);
comparison!(Ne, !=);
comparison!(Lt, <);
comparison!(Le, <=);
comparison!(Gt, >);
comparison!(Ge, >=);

/// `&`, `|`, `^`: bitwise on integers; the lane carries bools only (logical).
macro_rules! bitwise {
    ($name:ident, $bit:tt, $logical:expr) => {
        pub struct $name;
        impl BinaryUfunc for $name {
            fn f64(x: f64, y: f64) -> f64 {
                let logical: fn(bool, bool) -> bool = $logical;
                truth(logical(x != 0.0, y != 0.0))
            }
            fn i64(x: i64, y: i64) -> i64 {
                x $bit y
            }
            fn u64(x: u64, y: u64) -> u64 {
                x $bit y
            }
        }
    };
}

bitwise!(BitAnd, &, |p, q| p && q);
bitwise!(BitOr, |, |p, q| p || q);
bitwise!(BitXor, ^, |p, q| p != q);

/// NumPy's shifts read the count as unsigned: a count of at least the bit width, or a
/// negative one, shifts every bit out, leaving 0 (`<<`, and `>>` of a non-negative value) or
/// -1 (`>>` of a negative value, which shifts in sign bits). NumPy defines them so on every
/// platform (`np.left_shift(np.int64(5), np.int64(-1))` is 0), where C leaves them undefined.
/// The int32 loop is the int64 one truncated: a count of 32 to 63 shifts the low 32 bits out
/// (or fills them with sign bits) as a 32-bit shift past the width does. Shifts take
/// integers only, so their float loop never runs (no lane carries integers).
pub struct LeftShift;
impl BinaryUfunc for LeftShift {
    fn f64(x: f64, y: f64) -> f64 {
        Self::i64(x as i64, y as i64) as f64
    }
    fn i64(x: i64, y: i64) -> i64 {
        u32::try_from(y)
            .ok()
            .and_then(|s| x.checked_shl(s))
            .unwrap_or(0)
    }
    fn u64(x: u64, y: u64) -> u64 {
        u32::try_from(y)
            .ok()
            .and_then(|s| x.checked_shl(s))
            .unwrap_or(0)
    }
}

pub struct RightShift;
impl BinaryUfunc for RightShift {
    fn f64(x: f64, y: f64) -> f64 {
        Self::i64(x as i64, y as i64) as f64
    }
    fn i64(x: i64, y: i64) -> i64 {
        u32::try_from(y)
            .ok()
            .and_then(|s| x.checked_shr(s))
            .unwrap_or(if x < 0 { -1 } else { 0 })
    }
    /// Logical: an unsigned value shifts in zeros.
    fn u64(x: u64, y: u64) -> u64 {
        u32::try_from(y)
            .ok()
            .and_then(|s| x.checked_shr(s))
            .unwrap_or(0)
    }
}
