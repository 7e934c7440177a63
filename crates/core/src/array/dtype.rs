//! The thirteen dtypes of the array API standard, their names, sizes and NumPy 2's promotion
//! table.

use serde::{Deserialize, Serialize};
use std::fmt;

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
}
