//! The data of one chunk: an ndarray of one of the thirteen dtypes, its casts (NumPy's
//! `astype`: integers wrap, floats truncate), element access, and the macros that apply code
//! to whichever ndarray it holds.

use super::{numel, Complex32, Complex64, DType, Scalar};
use ndarray::ArrayD;

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
}
