//! Element types, scalars, shapes and the in-memory chunk representation.
//!
//! ares computes on three dtypes, as numpy would: `bool`, `int64` and `float64`. A chunk's
//! data is an [`ArrayData`], an ndarray of one of them. Type promotion follows numpy's rules
//! for these three types (`bool < int64 < float64`).

use ndarray::ArrayD;
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
}

impl DType {
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I64 => "int64",
            DType::F64 => "float64",
        }
    }

    pub fn parse(name: &str) -> Option<DType> {
        match name {
            "bool" => Some(DType::Bool),
            "int64" | "int" | "i64" => Some(DType::I64),
            "float64" | "float" | "f64" => Some(DType::F64),
            _ => None,
        }
    }

    /// numpy promotion of two operands.
    pub fn promote(self, other: DType) -> DType {
        self.max(other)
    }

    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::I64 | DType::F64 => 8,
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
    F64(f64),
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
}

impl ArrayData {
    pub fn dtype(&self) -> DType {
        match self {
            ArrayData::Bool(_) => DType::Bool,
            ArrayData::I64(_) => DType::I64,
            ArrayData::F64(_) => DType::F64,
        }
    }

    pub fn shape(&self) -> &[usize] {
        match self {
            ArrayData::Bool(a) => a.shape(),
            ArrayData::I64(a) => a.shape(),
            ArrayData::F64(a) => a.shape(),
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

    /// Bytes of element data.
    pub fn nbytes(&self) -> usize {
        self.len() * self.dtype().itemsize()
    }

    /// Converts to `dtype` (numpy `astype`; float to int truncates toward zero).
    pub fn cast(self, dtype: DType) -> ArrayData {
        if self.dtype() == dtype {
            return self;
        }
        match dtype {
            DType::F64 => ArrayData::F64(self.to_f64()),
            DType::I64 => ArrayData::I64(match self {
                ArrayData::Bool(a) => a.mapv(|v| v as i64),
                ArrayData::I64(a) => a,
                ArrayData::F64(a) => a.mapv(|v| v as i64),
            }),
            DType::Bool => ArrayData::Bool(match self {
                ArrayData::Bool(a) => a,
                ArrayData::I64(a) => a.mapv(|v| v != 0),
                ArrayData::F64(a) => a.mapv(|v| v != 0.0),
            }),
        }
    }

    /// A float64 copy (or the array itself when already float64).
    pub fn to_f64(self) -> ArrayD<f64> {
        match self {
            ArrayData::Bool(a) => a.mapv(|v| v as u8 as f64),
            ArrayData::I64(a) => a.mapv(|v| v as f64),
            ArrayData::F64(a) => a,
        }
    }

    /// The element at a flat C-order position as a scalar (for summaries and tests).
    pub fn get_flat(&self, i: usize) -> Option<Scalar> {
        match self {
            ArrayData::Bool(a) => a.iter().nth(i).map(|v| Scalar::Bool(*v)),
            ArrayData::I64(a) => a.iter().nth(i).map(|v| Scalar::I64(*v)),
            ArrayData::F64(a) => a.iter().nth(i).map(|v| Scalar::F64(*v)),
        }
    }

    /// All elements as f64 in C order.
    pub fn iter_f64(&self) -> Box<dyn Iterator<Item = f64> + '_> {
        match self {
            ArrayData::Bool(a) => Box::new(a.iter().map(|v| *v as u8 as f64)),
            ArrayData::I64(a) => Box::new(a.iter().map(|v| *v as f64)),
            ArrayData::F64(a) => Box::new(a.iter().copied()),
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
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_follows_numpy_for_three_dtypes() {
        assert_eq!(DType::Bool.promote(DType::I64), DType::I64);
        assert_eq!(DType::I64.promote(DType::F64), DType::F64);
        assert_eq!(DType::Bool.promote(DType::Bool), DType::Bool);
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
