//! A scalar operand or fill value: bool, int64 or float64, hashed and compared bitwise.

use super::DType;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::hash::{Hash, Hasher};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_equality_is_bitwise() {
        assert_eq!(Scalar::F64(1.0), Scalar::F64(1.0));
        assert_ne!(Scalar::F64(1.0), Scalar::I64(1));
        assert_eq!(Scalar::F64(f64::NAN), Scalar::F64(f64::NAN));
    }
}
