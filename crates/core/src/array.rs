//! Element types, scalars, shapes and the in-memory chunk representation.
//!
//! ares computes on seven dtypes, as NumPy would: `bool`, `int32`, `int64`, `float32`,
//! `float64`, and the complex `complex64` and `complex128` (pairs of float32 / float64, as
//! `num_complex::Complex32` / `Complex64`: the FFT's results and their arithmetic). A chunk's
//! data is an [`ArrayData`], an ndarray of one of them. Promotion of two arrays follows NumPy
//! 2's table for these types ([`DType::promote`]); Python numbers mixed with arrays follow
//! NEP 50's weak-scalar rules (`crate::ops::dtypes`).

use ndarray::ArrayD;
pub use num_complex::{Complex32, Complex64};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A shape or a multi-index: inline for up to four dimensions.
pub type Shape = SmallVec<[usize; 4]>;

/// Formats a shape as numpy does: `(3,)`, `(2, 3)`, `()`.
pub fn fmt_shape(shape: &[usize]) -> String {
    match shape {
        [] => "()".to_string(),
        [one] => format!("({one},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// Number of elements of a shape.
pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    Bool,
    #[serde(rename = "int64")]
    I64,
    #[serde(rename = "float64")]
    F64,
    #[serde(rename = "int32")]
    I32,
    #[serde(rename = "float32")]
    F32,
    #[serde(rename = "complex64")]
    C64,
    #[serde(rename = "complex128")]
    C128,
}

/// The dtypes in a fixed order (for error messages, tables and tests).
pub const DTYPES: [DType; 7] = [
    DType::Bool,
    DType::I32,
    DType::I64,
    DType::F32,
    DType::F64,
    DType::C64,
    DType::C128,
];

/// The real dtypes (all but the complex ones).
pub const REAL_DTYPES: [DType; 5] = [DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64];

impl DType {
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I64 => "int64",
            DType::F64 => "float64",
            DType::I32 => "int32",
            DType::F32 => "float32",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }

    pub fn parse(name: &str) -> Option<DType> {
        match name {
            "bool" => Some(DType::Bool),
            "int64" | "int" | "i64" => Some(DType::I64),
            "float64" | "float" | "f64" | "double" => Some(DType::F64),
            "int32" | "i32" => Some(DType::I32),
            "float32" | "f32" | "single" => Some(DType::F32),
            "complex64" | "c64" | "csingle" => Some(DType::C64),
            "complex128" | "complex" | "c128" | "cdouble" => Some(DType::C128),
            _ => None,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    pub fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::I64)
    }

    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// The real dtype of a complex one's parts (`complex64` → `float32`); a real dtype is
    /// its own.
    pub fn real_part(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }

    /// The complex dtype holding this one's values: `float32` → `complex64`, every other
    /// real dtype → `complex128` (as NumPy's `x + 0j`).
    pub fn to_complex(self) -> DType {
        match self {
            DType::F32 | DType::C64 => DType::C64,
            _ => DType::C128,
        }
    }

    /// The widest dtype of the same kind: kernels without a narrow loop compute in it.
    pub fn wide(self) -> DType {
        match self {
            DType::I32 => DType::I64,
            DType::F32 => DType::F64,
            DType::C64 => DType::C128,
            d => d,
        }
    }

    /// NumPy 2's promotion of two arrays: `bool` below everything; within a kind the wider
    /// type; an integer with a float gives the float wide enough for both (`int32` or
    /// `int64` with `float32` is `float64`, as `np.result_type` says).
    pub fn promote(self, other: DType) -> DType {
        use DType::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Bool, x) | (x, Bool) => x,
            (I32, I64) | (I64, I32) => I64,
            (F32, F64) | (F64, F32) => F64,
            // complex64 keeps float32's precision only with float32 (NumPy: complex64 with
            // float64 or any integer is complex128).
            (C64, F32) | (F32, C64) => C64,
            (C64 | C128, _) | (_, C64 | C128) => C128,
            // One integer and one float.
            _ => F64,
        }
    }

    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A scalar operand or fill value. Hash and equality are bitwise for floats so that scalars
/// can be part of the keys used by common-subexpression elimination.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scalar {
    Bool(bool),
    I64(i64),
    F64(#[serde(with = "crate::float_text")] f64),
}

impl Scalar {
    pub fn dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::I64(_) => DType::I64,
            Scalar::F64(_) => DType::F64,
        }
    }

    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as u8 as f64,
            Scalar::I64(i) => i as f64,
            Scalar::F64(x) => x,
        }
    }

    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => b as i64,
            Scalar::I64(i) => i,
            Scalar::F64(x) => x as i64,
        }
    }

    pub fn as_bool(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::I64(i) => i != 0,
            Scalar::F64(x) => x != 0.0,
        }
    }

    fn bits(self) -> (u8, u64) {
        match self {
            Scalar::Bool(b) => (0, b as u64),
            Scalar::I64(i) => (1, i as u64),
            Scalar::F64(x) => (2, x.to_bits()),
        }
    }
}

impl PartialEq for Scalar {
    fn eq(&self, other: &Self) -> bool {
        self.bits() == other.bits()
    }
}
impl Eq for Scalar {}
impl Hash for Scalar {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.bits().hash(state)
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            Scalar::I64(i) => write!(f, "{i}"),
            Scalar::F64(x) => write!(f, "{x:?}"),
        }
    }
}

/// The data of one chunk (or of a whole result tensor).
#[derive(Clone, Debug, PartialEq)]
pub enum ArrayData {
    Bool(ArrayD<bool>),
    I64(ArrayD<i64>),
    F64(ArrayD<f64>),
    I32(ArrayD<i32>),
    F32(ArrayD<f32>),
    C64(ArrayD<Complex32>),
    C128(ArrayD<Complex64>),
}

impl ArrayData {
    pub fn dtype(&self) -> DType {
        match self {
            ArrayData::Bool(_) => DType::Bool,
            ArrayData::I64(_) => DType::I64,
            ArrayData::F64(_) => DType::F64,
            ArrayData::I32(_) => DType::I32,
            ArrayData::F32(_) => DType::F32,
            ArrayData::C64(_) => DType::C64,
            ArrayData::C128(_) => DType::C128,
        }
    }

    pub fn shape(&self) -> &[usize] {
        match self {
            ArrayData::Bool(a) => a.shape(),
            ArrayData::I64(a) => a.shape(),
            ArrayData::F64(a) => a.shape(),
            ArrayData::I32(a) => a.shape(),
            ArrayData::F32(a) => a.shape(),
            ArrayData::C64(a) => a.shape(),
            ArrayData::C128(a) => a.shape(),
        }
    }

    pub fn len(&self) -> usize {
        numel(self.shape())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A 0-d array holding `value`.
    pub fn scalar(value: Scalar) -> ArrayData {
        let dim = ndarray::IxDyn(&[]);
        match value {
            Scalar::Bool(b) => ArrayData::Bool(ArrayD::from_elem(dim, b)),
            Scalar::I64(i) => ArrayData::I64(ArrayD::from_elem(dim, i)),
            Scalar::F64(x) => ArrayData::F64(ArrayD::from_elem(dim, x)),
        }
    }

    /// A 0-d array of `dtype` holding `value` converted as `astype` would.
    pub fn scalar_of(value: Scalar, dtype: DType) -> ArrayData {
        ArrayData::scalar(value).cast(dtype)
    }

    /// Bytes of element data.
    pub fn nbytes(&self) -> usize {
        self.len() * self.dtype().itemsize()
    }

    /// Converts to `dtype` (NumPy's `astype`: float to int truncates toward zero, saturating
    /// at the integer's range with NaN as 0, where NumPy's result is undefined; int64 to
    /// int32 wraps as NumPy's does). A real value becomes a complex one with imaginary part
    /// 0; a complex one becomes a bool by `!= 0`, and a real number by its real part, which
    /// only the kernels ask for (the user's `astype` of complex to a real dtype is refused
    /// when the tensor is built: `crate::ops::family::elementwise::dtypes::unary_dtype`).
    pub fn cast(self, dtype: DType) -> ArrayData {
        if self.dtype() == dtype {
            return self;
        }
        macro_rules! to {
            ($t:ty, $wrap:ident, $from_bool:expr) => {
                ArrayData::$wrap(match self {
                    ArrayData::Bool(a) => a.mapv($from_bool),
                    ArrayData::I64(a) => a.mapv(|v| v as $t),
                    ArrayData::F64(a) => a.mapv(|v| v as $t),
                    ArrayData::I32(a) => a.mapv(|v| v as $t),
                    ArrayData::F32(a) => a.mapv(|v| v as $t),
                    ArrayData::C64(a) => a.mapv(|v| v.re as $t),
                    ArrayData::C128(a) => a.mapv(|v| v.re as $t),
                })
            };
        }
        macro_rules! to_complex {
            ($t:ty, $wrap:ident) => {
                ArrayData::$wrap(match self {
                    ArrayData::Bool(a) => a.mapv(|v| num_complex::Complex::new(v as u8 as $t, 0.0)),
                    ArrayData::I64(a) => a.mapv(|v| num_complex::Complex::new(v as $t, 0.0)),
                    ArrayData::F64(a) => a.mapv(|v| num_complex::Complex::new(v as $t, 0.0)),
                    ArrayData::I32(a) => a.mapv(|v| num_complex::Complex::new(v as $t, 0.0)),
                    ArrayData::F32(a) => a.mapv(|v| num_complex::Complex::new(v as $t, 0.0)),
                    ArrayData::C64(a) => {
                        a.mapv(|v| num_complex::Complex::new(v.re as $t, v.im as $t))
                    }
                    ArrayData::C128(a) => {
                        a.mapv(|v| num_complex::Complex::new(v.re as $t, v.im as $t))
                    }
                })
            };
        }
        match dtype {
            DType::C64 => to_complex!(f32, C64),
            DType::C128 => to_complex!(f64, C128),
            DType::F64 => to!(f64, F64, |v| v as u8 as f64),
            DType::F32 => to!(f32, F32, |v| v as u8 as f32),
            DType::I64 => to!(i64, I64, |v| v as i64),
            DType::I32 => to!(i32, I32, |v| v as i32),
            DType::Bool => ArrayData::Bool(match self {
                ArrayData::Bool(a) => a,
                ArrayData::I64(a) => a.mapv(|v| v != 0),
                ArrayData::F64(a) => a.mapv(|v| v != 0.0),
                ArrayData::I32(a) => a.mapv(|v| v != 0),
                ArrayData::F32(a) => a.mapv(|v| v != 0.0),
                ArrayData::C64(a) => a.mapv(|v| v.re != 0.0 || v.im != 0.0),
                ArrayData::C128(a) => a.mapv(|v| v.re != 0.0 || v.im != 0.0),
            }),
        }
    }

    /// The array in its [`DType::wide`] dtype (itself when already 8 bytes or bool).
    pub fn widen(&self) -> std::borrow::Cow<'_, ArrayData> {
        match self.dtype().wide() {
            d if d == self.dtype() => std::borrow::Cow::Borrowed(self),
            d => std::borrow::Cow::Owned(self.clone().cast(d)),
        }
    }

    /// A float64 copy (or the array itself when already float64).
    pub fn to_f64(self) -> ArrayD<f64> {
        match self.cast(DType::F64) {
            ArrayData::F64(a) => a,
            _ => unreachable!("cast to float64"),
        }
    }

    /// The element at a flat C-order position as a scalar (for summaries and tests).
    pub fn get_flat(&self, i: usize) -> Option<Scalar> {
        match self {
            ArrayData::Bool(a) => a.iter().nth(i).map(|v| Scalar::Bool(*v)),
            ArrayData::I64(a) => a.iter().nth(i).map(|v| Scalar::I64(*v)),
            ArrayData::F64(a) => a.iter().nth(i).map(|v| Scalar::F64(*v)),
            ArrayData::I32(a) => a.iter().nth(i).map(|v| Scalar::I64(*v as i64)),
            ArrayData::F32(a) => a.iter().nth(i).map(|v| Scalar::F64(*v as f64)),
            // A number of the language is real: a complex element is read by its real part
            // (summaries format complex elements themselves: `crate::summary`).
            ArrayData::C64(a) => a.iter().nth(i).map(|v| Scalar::F64(v.re as f64)),
            ArrayData::C128(a) => a.iter().nth(i).map(|v| Scalar::F64(v.re)),
        }
    }

    /// All elements as f64 in C order (complex ones by their real part).
    pub fn iter_f64(&self) -> Box<dyn Iterator<Item = f64> + '_> {
        match self {
            ArrayData::Bool(a) => Box::new(a.iter().map(|v| *v as u8 as f64)),
            ArrayData::I64(a) => Box::new(a.iter().map(|v| *v as f64)),
            ArrayData::F64(a) => Box::new(a.iter().copied()),
            ArrayData::I32(a) => Box::new(a.iter().map(|v| *v as f64)),
            ArrayData::F32(a) => Box::new(a.iter().map(|v| *v as f64)),
            ArrayData::C64(a) => Box::new(a.iter().map(|v| v.re as f64)),
            ArrayData::C128(a) => Box::new(a.iter().map(|v| v.re)),
        }
    }
}

/// Applies `$body` to the inner ndarray of an [`ArrayData`] whatever its dtype, rewrapping
/// the result in the same variant.
#[macro_export]
macro_rules! map_array {
    ($data:expr, |$a:ident| $body:expr) => {
        match $data {
            $crate::array::ArrayData::Bool($a) => $crate::array::ArrayData::Bool($body),
            $crate::array::ArrayData::I64($a) => $crate::array::ArrayData::I64($body),
            $crate::array::ArrayData::F64($a) => $crate::array::ArrayData::F64($body),
            $crate::array::ArrayData::I32($a) => $crate::array::ArrayData::I32($body),
            $crate::array::ArrayData::F32($a) => $crate::array::ArrayData::F32($body),
            $crate::array::ArrayData::C64($a) => $crate::array::ArrayData::C64($body),
            $crate::array::ArrayData::C128($a) => $crate::array::ArrayData::C128($body),
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `np.result_type` over every pair of the seven dtypes (NumPy 2.4).
    #[test]
    fn promotion_follows_numpys_table() {
        use DType::*;
        let table = [
            //  bool  int32 int64 float32 float64 complex64 complex128
            [Bool, I32, I64, F32, F64, C64, C128],      // bool
            [I32, I32, I64, F64, F64, C128, C128],      // int32
            [I64, I64, I64, F64, F64, C128, C128],      // int64
            [F32, F64, F64, F32, F64, C64, C128],       // float32
            [F64, F64, F64, F64, F64, C128, C128],      // float64
            [C64, C128, C128, C64, C128, C64, C128],    // complex64
            [C128, C128, C128, C128, C128, C128, C128], // complex128
        ];
        for (i, a) in DTYPES.iter().enumerate() {
            for (j, b) in DTYPES.iter().enumerate() {
                assert_eq!(a.promote(*b), table[i][j], "{a} with {b}");
            }
        }
    }

    #[test]
    fn casts_wrap_and_truncate_as_numpy() {
        let big = ArrayData::I64(ArrayD::from_elem(ndarray::IxDyn(&[1]), (1i64 << 32) + 7));
        assert_eq!(big.cast(DType::I32).get_flat(0), Some(Scalar::I64(7)));
        let f = ArrayData::F64(ArrayD::from_elem(ndarray::IxDyn(&[1]), -2.75));
        assert_eq!(
            f.clone().cast(DType::I32).get_flat(0),
            Some(Scalar::I64(-2))
        );
        let third = ArrayData::F64(ArrayD::from_elem(ndarray::IxDyn(&[1]), 1.0 / 3.0));
        let back = third.cast(DType::F32).cast(DType::F64).get_flat(0).unwrap();
        assert_eq!(back.as_f64(), (1.0f32 / 3.0) as f64);
    }

    #[test]
    fn shapes_format_like_numpy() {
        assert_eq!(fmt_shape(&[]), "()");
        assert_eq!(fmt_shape(&[3]), "(3,)");
        assert_eq!(fmt_shape(&[2, 3]), "(2, 3)");
    }

    #[test]
    fn scalar_equality_is_bitwise() {
        assert_eq!(Scalar::F64(1.0), Scalar::F64(1.0));
        assert_ne!(Scalar::F64(1.0), Scalar::I64(1));
        assert_eq!(Scalar::F64(f64::NAN), Scalar::F64(f64::NAN));
    }
}
