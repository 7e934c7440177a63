//! Element types, scalars, shapes and the in-memory chunk representation.
//!
//! ares computes on the array API standard's thirteen dtypes, as NumPy would: `bool`, the
//! signed `int8`, `int16`, `int32`, `int64`, the unsigned `uint8` to `uint64`, `float32`,
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
    #[serde(rename = "int8")]
    I8,
    #[serde(rename = "int16")]
    I16,
    #[serde(rename = "uint8")]
    U8,
    #[serde(rename = "uint16")]
    U16,
    #[serde(rename = "uint32")]
    U32,
    #[serde(rename = "uint64")]
    U64,
}

/// The dtypes in a fixed order (for error messages, tables and tests).
pub const DTYPES: [DType; 13] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F32,
    DType::F64,
    DType::C64,
    DType::C128,
];

/// The real dtypes (all but the complex ones).
pub const REAL_DTYPES: [DType; 11] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F32,
    DType::F64,
];

/// The integer dtypes: NumPy's eight (signed and unsigned, 8 to 64 bits).
pub const INT_DTYPES: [DType; 8] = [
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
];

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
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
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
            // NumPy's names and codes where they name one type on every platform and mean
            // the same to NumPy and Rust: `i8` and `u8` are left out (NumPy's 8-byte
            // int64 and uint64, Rust's 1-byte types), as are `long`, `uintc`... (C's).
            "int8" | "i1" | "byte" => Some(DType::I8),
            "int16" | "i2" | "i16" | "short" => Some(DType::I16),
            "uint8" | "u1" | "ubyte" => Some(DType::U8),
            "uint16" | "u2" | "u16" | "ushort" => Some(DType::U16),
            "uint32" | "u4" | "u32" => Some(DType::U32),
            "uint64" | "uint" | "u64" => Some(DType::U64),
            _ => None,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    pub fn is_int(self) -> bool {
        self.int_kind().is_some()
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self.int_kind(), Some((false, _)))
    }

    /// An integer dtype's signedness and width in bits (`None` for the other kinds).
    pub fn int_kind(self) -> Option<(bool, u32)> {
        Some(match self {
            DType::I8 => (true, 8),
            DType::I16 => (true, 16),
            DType::I32 => (true, 32),
            DType::I64 => (true, 64),
            DType::U8 => (false, 8),
            DType::U16 => (false, 16),
            DType::U32 => (false, 32),
            DType::U64 => (false, 64),
            _ => return None,
        })
    }

    /// The integer dtype of a signedness and width (8, 16, 32 or 64 bits).
    fn int_of(signed: bool, bits: u32) -> DType {
        match (signed, bits) {
            (true, 8) => DType::I8,
            (true, 16) => DType::I16,
            (true, 32) => DType::I32,
            (true, _) => DType::I64,
            (false, 8) => DType::U8,
            (false, 16) => DType::U16,
            (false, 32) => DType::U32,
            (false, _) => DType::U64,
        }
    }

    /// An integer dtype's range `(min, max)` as NumPy's `iinfo` (`None` for other kinds).
    pub fn int_range(self) -> Option<(i128, i128)> {
        let (signed, bits) = self.int_kind()?;
        Some(if signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        })
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
    /// Every integer but uint64 computes in int64, which holds all its values (and whose
    /// wrapping arithmetic, cast back, is the narrow type's); uint64 computes in itself.
    pub fn wide(self) -> DType {
        match self {
            DType::I8 | DType::I16 | DType::I32 | DType::U8 | DType::U16 | DType::U32 => DType::I64,
            DType::F32 => DType::F64,
            DType::C64 => DType::C128,
            d => d,
        }
    }

    /// NumPy 2's promotion of two arrays: `bool` below everything; within a kind the wider
    /// type; a signed with an unsigned integer the signed type holding both (`int8` with
    /// `uint8` is `int16`; with `uint64` none does: `float64`); an integer with a float
    /// the float wide enough for both (8- and 16-bit integers fit `float32`, wider ones give
    /// `float64`), and likewise with the complex types, as `np.result_type` says.
    pub fn promote(self, other: DType) -> DType {
        use DType::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Bool, x) | (x, Bool) => x,
            (F32, F64) | (F64, F32) => F64,
            // A complex type: the complex type of its parts' promotion with the other's
            // (complex64 with an 8- or 16-bit integer stays complex64).
            (a, b) if a.is_complex() || b.is_complex() => {
                a.real_part().promote(b.real_part()).to_complex()
            }
            (F32, x) | (x, F32) if x.is_int() => match x.int_kind() {
                Some((_, bits)) if bits <= 16 => F32,
                _ => F64,
            },
            (a, b) => match (a.int_kind(), b.int_kind()) {
                (Some((sa, ba)), Some((sb, bb))) if sa == sb => DType::int_of(sa, ba.max(bb)),
                (Some((sa, ba)), Some((_, bb))) => {
                    let (signed, unsigned) = if sa { (ba, bb) } else { (bb, ba) };
                    if signed > unsigned {
                        DType::int_of(true, signed)
                    } else if unsigned < 64 {
                        DType::int_of(true, unsigned * 2)
                    } else {
                        F64
                    }
                }
                // One integer and float64.
                _ => F64,
            },
        }
    }

    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
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
    I8(ArrayD<i8>),
    I16(ArrayD<i16>),
    U8(ArrayD<u8>),
    U16(ArrayD<u16>),
    U32(ArrayD<u32>),
    U64(ArrayD<u64>),
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
            ArrayData::I8(_) => DType::I8,
            ArrayData::I16(_) => DType::I16,
            ArrayData::U8(_) => DType::U8,
            ArrayData::U16(_) => DType::U16,
            ArrayData::U32(_) => DType::U32,
            ArrayData::U64(_) => DType::U64,
        }
    }

    pub fn shape(&self) -> &[usize] {
        crate::with_array!(self, |a| a.shape())
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
    /// at the integer's range with NaN as 0, where NumPy's result is undefined; an integer
    /// to a narrower or differently signed one wraps modulo 2^bits as NumPy's does). A real value becomes a complex one with imaginary part
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
                    ArrayData::I8(a) => a.mapv(|v| v as $t),
                    ArrayData::I16(a) => a.mapv(|v| v as $t),
                    ArrayData::U8(a) => a.mapv(|v| v as $t),
                    ArrayData::U16(a) => a.mapv(|v| v as $t),
                    ArrayData::U32(a) => a.mapv(|v| v as $t),
                    ArrayData::U64(a) => a.mapv(|v| v as $t),
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
                    ArrayData::I8(a) => a.mapv(|v| num_complex::Complex::new(v as $t, 0.0)),
                    ArrayData::I16(a) => a.mapv(|v| num_complex::Complex::new(v as $t, 0.0)),
                    ArrayData::U8(a) => a.mapv(|v| num_complex::Complex::new(v as $t, 0.0)),
                    ArrayData::U16(a) => a.mapv(|v| num_complex::Complex::new(v as $t, 0.0)),
                    ArrayData::U32(a) => a.mapv(|v| num_complex::Complex::new(v as $t, 0.0)),
                    ArrayData::U64(a) => a.mapv(|v| num_complex::Complex::new(v as $t, 0.0)),
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
            DType::I8 => to!(i8, I8, |v| v as i8),
            DType::I16 => to!(i16, I16, |v| v as i16),
            DType::U8 => to!(u8, U8, |v| v as u8),
            DType::U16 => to!(u16, U16, |v| v as u16),
            DType::U32 => to!(u32, U32, |v| v as u32),
            DType::U64 => to!(u64, U64, |v| v as u64),
            DType::Bool => ArrayData::Bool(match self {
                ArrayData::Bool(a) => a,
                ArrayData::I64(a) => a.mapv(|v| v != 0),
                ArrayData::F64(a) => a.mapv(|v| v != 0.0),
                ArrayData::I32(a) => a.mapv(|v| v != 0),
                ArrayData::F32(a) => a.mapv(|v| v != 0.0),
                ArrayData::C64(a) => a.mapv(|v| v.re != 0.0 || v.im != 0.0),
                ArrayData::C128(a) => a.mapv(|v| v.re != 0.0 || v.im != 0.0),
                ArrayData::I8(a) => a.mapv(|v| v != 0),
                ArrayData::I16(a) => a.mapv(|v| v != 0),
                ArrayData::U8(a) => a.mapv(|v| v != 0),
                ArrayData::U16(a) => a.mapv(|v| v != 0),
                ArrayData::U32(a) => a.mapv(|v| v != 0),
                ArrayData::U64(a) => a.mapv(|v| v != 0),
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
            ArrayData::I8(a) => a.iter().nth(i).map(|v| Scalar::I64(i64::from(*v))),
            ArrayData::I16(a) => a.iter().nth(i).map(|v| Scalar::I64(i64::from(*v))),
            ArrayData::U8(a) => a.iter().nth(i).map(|v| Scalar::I64(i64::from(*v))),
            ArrayData::U16(a) => a.iter().nth(i).map(|v| Scalar::I64(i64::from(*v))),
            ArrayData::U32(a) => a.iter().nth(i).map(|v| Scalar::I64(i64::from(*v))),
            // A language number is at most an int64: a larger uint64 is read as a float.
            ArrayData::U64(a) => a.iter().nth(i).map(|v| match i64::try_from(*v) {
                Ok(x) => Scalar::I64(x),
                Err(_) => Scalar::F64(*v as f64),
            }),
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
            ArrayData::I8(a) => Box::new(a.iter().map(|v| f64::from(*v))),
            ArrayData::I16(a) => Box::new(a.iter().map(|v| f64::from(*v))),
            ArrayData::U8(a) => Box::new(a.iter().map(|v| f64::from(*v))),
            ArrayData::U16(a) => Box::new(a.iter().map(|v| f64::from(*v))),
            ArrayData::U32(a) => Box::new(a.iter().map(|v| f64::from(*v))),
            ArrayData::U64(a) => Box::new(a.iter().map(|v| *v as f64)),
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
            $crate::array::ArrayData::I8($a) => $crate::array::ArrayData::I8($body),
            $crate::array::ArrayData::I16($a) => $crate::array::ArrayData::I16($body),
            $crate::array::ArrayData::U8($a) => $crate::array::ArrayData::U8($body),
            $crate::array::ArrayData::U16($a) => $crate::array::ArrayData::U16($body),
            $crate::array::ArrayData::U32($a) => $crate::array::ArrayData::U32($body),
            $crate::array::ArrayData::U64($a) => $crate::array::ArrayData::U64($body),
        }
    };
}

/// Evaluates `$body` on the inner ndarray of an [`ArrayData`] whatever its dtype (a value
/// of one type for all, unlike [`map_array!`], which rewraps).
#[macro_export]
macro_rules! with_array {
    ($data:expr, |$a:ident| $body:expr) => {
        match $data {
            $crate::array::ArrayData::Bool($a) => $body,
            $crate::array::ArrayData::I64($a) => $body,
            $crate::array::ArrayData::F64($a) => $body,
            $crate::array::ArrayData::I32($a) => $body,
            $crate::array::ArrayData::F32($a) => $body,
            $crate::array::ArrayData::C64($a) => $body,
            $crate::array::ArrayData::C128($a) => $body,
            $crate::array::ArrayData::I8($a) => $body,
            $crate::array::ArrayData::I16($a) => $body,
            $crate::array::ArrayData::U8($a) => $body,
            $crate::array::ArrayData::U16($a) => $body,
            $crate::array::ArrayData::U32($a) => $body,
            $crate::array::ArrayData::U64($a) => $body,
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `np.result_type` over every pair of the thirteen dtypes (NumPy 2).
    #[test]
    fn promotion_follows_numpys_table() {
        use DType::*;
        #[rustfmt::skip]
        let table = [
            // bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64 complex128
            [Bool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, C64, C128], // bool
            [I8, I8, I16, I32, I64, I16, I32, I64, F64, F32, F64, C64, C128], // int8
            [I16, I16, I16, I32, I64, I16, I32, I64, F64, F32, F64, C64, C128], // int16
            [I32, I32, I32, I32, I64, I32, I32, I64, F64, F64, F64, C128, C128], // int32
            [I64, I64, I64, I64, I64, I64, I64, I64, F64, F64, F64, C128, C128], // int64
            [U8, I16, I16, I32, I64, U8, U16, U32, U64, F32, F64, C64, C128], // uint8
            [U16, I32, I32, I32, I64, U16, U16, U32, U64, F32, F64, C64, C128], // uint16
            [U32, I64, I64, I64, I64, U32, U32, U32, U64, F64, F64, C128, C128], // uint32
            [U64, F64, F64, F64, F64, U64, U64, U64, U64, F64, F64, C128, C128], // uint64
            [F32, F32, F32, F64, F64, F32, F32, F64, F64, F32, F64, C64, C128], // float32
            [F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, C128, C128], // float64
            [C64, C64, C64, C128, C128, C64, C64, C128, C128, C64, C128, C64, C128], // complex64
            [C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128], // complex128
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

    /// NumPy's `astype` among the integers wraps modulo 2^bits; floats truncate toward zero.
    #[test]
    fn narrow_integer_casts_wrap_as_numpy() {
        let ints = ArrayData::I64(
            ArrayD::from_shape_vec(ndarray::IxDyn(&[5]), vec![-1, 300, -129, 1 << 40, 65_537])
                .unwrap(),
        );
        let got = |d: DType| -> Vec<f64> { ints.clone().cast(d).iter_f64().collect() };
        // np.array([-1, 300, -129, 2**40, 65537]).astype(...)
        assert_eq!(got(DType::U8), [255.0, 44.0, 127.0, 0.0, 1.0]);
        assert_eq!(got(DType::I8), [-1.0, 44.0, 127.0, 0.0, 1.0]);
        assert_eq!(got(DType::I16), [-1.0, 300.0, -129.0, 0.0, 1.0]);
        assert_eq!(got(DType::U16), [65535.0, 300.0, 65407.0, 0.0, 1.0]);
        assert_eq!(
            got(DType::U32),
            [4294967295.0, 300.0, 4294967167.0, 0.0, 65537.0]
        );
        let u = ints.clone().cast(DType::U64);
        assert_eq!(u.get_flat(1), Some(Scalar::I64(300)));
        assert_eq!(u.get_flat(0), Some(Scalar::F64(u64::MAX as f64)));
        let ArrayData::U64(a) = u.cast(DType::I8).cast(DType::U64) else {
            panic!("uint64")
        };
        assert_eq!(a[[0]], u64::MAX);
        let f = ArrayData::F64(
            ArrayD::from_shape_vec(ndarray::IxDyn(&[2]), vec![200.9, -2.75]).unwrap(),
        );
        assert_eq!(
            f.cast(DType::I16).iter_f64().collect::<Vec<_>>(),
            [200.0, -2.0]
        );
        assert_eq!(DType::U8.int_range(), Some((0, 255)));
        assert_eq!(
            DType::I64.int_range(),
            Some((i64::MIN as i128, i64::MAX as i128))
        );
        assert_eq!(DType::parse("u1"), Some(DType::U8));
        assert_eq!(
            DType::parse("i8"),
            None,
            "NumPy's int64, Rust's int8: ambiguous"
        );
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
