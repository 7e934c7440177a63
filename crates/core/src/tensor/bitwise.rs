//! NumPy's bitwise functions and the Rust operators for them (`&`, `|`, `^`, `!`, `<<`,
//! `>>`), `clip`, and `transpose` with NumPy's signed axes.
//!
//! The bitwise ops are primitives (`Op::BitAnd`...), not compositions: on int64 they are
//! bitwise, which no other op computes, and on bools they are NumPy's logical loops, which
//! the fused kernel runs in its bool lanes. Floats are refused when the expression is built,
//! as NumPy refuses them. The shifts (`Op::LeftShift`, `Op::RightShift`) take integers only:
//! their results are integers, which the fused kernel's lanes never carry, so they always run
//! in the ordinary elementwise kernel.

use super::Tensor;
use crate::array::Scalar;
use crate::error::{AresError, Result};
use crate::ops::Op;
use smallvec::SmallVec;
use std::ops::{BitAnd, BitOr, BitXor, Not, Shl, Shr};

impl Tensor {
    pub fn bitwise_and(&self, other: &Tensor) -> Result<Tensor> {
        self.elementwise(Op::BitAnd, other)
    }

    pub fn bitwise_or(&self, other: &Tensor) -> Result<Tensor> {
        self.elementwise(Op::BitOr, other)
    }

    pub fn bitwise_xor(&self, other: &Tensor) -> Result<Tensor> {
        self.elementwise(Op::BitXor, other)
    }

    /// NumPy's `left_shift` (`bitwise_left_shift`): `x << n`, 0 once `n` reaches the bit
    /// width or is negative.
    pub fn left_shift(&self, other: &Tensor) -> Result<Tensor> {
        self.elementwise(Op::LeftShift, other)
    }

    /// NumPy's `right_shift` (`bitwise_right_shift`): `x >> n` with the sign shifted in, 0 or
    /// -1 once `n` reaches the bit width or is negative.
    pub fn right_shift(&self, other: &Tensor) -> Result<Tensor> {
        self.elementwise(Op::RightShift, other)
    }

    /// `~x`: bitwise not of int64, logical not of bool.
    pub fn invert(&self) -> Result<Tensor> {
        self.unary(Op::Invert)
    }

    /// `clip(x, lo, hi)` with tensor bounds (either may be absent): `maximum` with `lo`, then
    /// `minimum` with `hi`, so NaN in any operand propagates as NumPy's `clip` does; `x`
    /// itself where the result equals it (the sign of its zero).
    pub fn clip(&self, lo: Option<&Tensor>, hi: Option<&Tensor>) -> Result<Tensor> {
        if lo.is_none() && hi.is_none() {
            return Err(AresError::arg(
                "clip",
                "needs a_min or a_max (both are None)",
            ));
        }
        let low = match lo {
            Some(lo) => self.elementwise(Op::Maximum, lo)?,
            None => self.clone(),
        };
        let clipped = match hi {
            Some(hi) => low.elementwise(Op::Minimum, hi)?,
            None => low,
        };
        self.kept_where_equal(clipped)
    }

    /// `clipped` with this tensor's own elements where they are equal: NumPy's `clip` keeps
    /// `x` when it is within the bounds, so `clip(-0.0, 0, 0)` is -0.0 (`maximum` would give
    /// the bound's 0.0). A NaN stays NaN (it equals nothing).
    pub(crate) fn kept_where_equal(&self, clipped: Tensor) -> Result<Tensor> {
        let same = clipped.elementwise(Op::Eq, self)?;
        super::compose::select(&same, self, &clipped)
    }

    /// `clip` with number bounds (Python numbers: weak, so `clip(int_x, 0, 2.5)` is float64
    /// as in NumPy 2).
    pub fn clip_scalar(&self, lo: Option<Scalar>, hi: Option<Scalar>) -> Result<Tensor> {
        if lo.is_none() && hi.is_none() {
            return Err(AresError::arg(
                "clip",
                "needs a_min or a_max (both are None)",
            ));
        }
        let low = match lo {
            Some(lo) => self.binary_scalar(Op::Maximum, lo, false)?,
            None => self.clone(),
        };
        let clipped = match hi {
            Some(hi) => low.binary_scalar(Op::Minimum, hi, false)?,
            None => low,
        };
        self.kept_where_equal(clipped)
    }

    /// `transpose` with NumPy's axes: a permutation of `0..ndim` where `-1` is the last axis.
    /// Each axis is checked against the dimension count before it is normalized.
    pub fn permute_dims(&self, axes: &[i64]) -> Result<Tensor> {
        let ndim = self.ndim() as i64;
        if axes.len() as i64 != ndim {
            return Err(AresError::arg(
                "transpose",
                format!("axes {axes:?} do not match a tensor of {ndim} dimensions"),
            ));
        }
        let perm = axes
            .iter()
            .map(|&a| {
                let b = if a < 0 { a + ndim } else { a };
                if (0..ndim).contains(&b) {
                    Ok(b as usize)
                } else {
                    Err(AresError::arg(
                        "transpose",
                        format!("axis {a} is out of bounds for a tensor of dimension {ndim}"),
                    ))
                }
            })
            .collect::<Result<SmallVec<[usize; 4]>>>()?;
        self.transpose(Some(&perm))
    }
}

macro_rules! bitwise_operator {
    ($trait:ident, $method:ident, $op:expr) => {
        impl $trait<&Tensor> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                self.elementwise($op, rhs)
            }
        }
        impl $trait<bool> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: bool) -> Result<Tensor> {
                self.binary_scalar($op, Scalar::Bool(rhs), false)
            }
        }
        impl $trait<i64> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: i64) -> Result<Tensor> {
                self.binary_scalar($op, Scalar::I64(rhs), false)
            }
        }
    };
}

bitwise_operator!(BitAnd, bitand, Op::BitAnd);
bitwise_operator!(BitOr, bitor, Op::BitOr);
bitwise_operator!(BitXor, bitxor, Op::BitXor);
bitwise_operator!(Shl, shl, Op::LeftShift);
bitwise_operator!(Shr, shr, Op::RightShift);

/// `!&x` is NumPy's `~x`.
impl Not for &Tensor {
    type Output = Result<Tensor>;
    fn not(self) -> Result<Tensor> {
        self.invert()
    }
}

#[cfg(test)]
mod tests {
    use crate::array::{DType, Scalar};
    use crate::tensor::{arange, full};

    #[test]
    fn bitwise_dtypes_follow_numpy_and_floats_are_refused() {
        let ints = arange(Scalar::I64(0), Scalar::I64(6), Scalar::I64(1), 4).unwrap();
        let flags = ints.binary_scalar(crate::ops::Op::Gt, Scalar::I64(2), false);
        let flags = flags.unwrap();
        assert_eq!((&ints & 3).unwrap().dtype(), DType::I64);
        assert_eq!((&flags | true).unwrap().dtype(), DType::Bool);
        assert_eq!((&flags ^ &ints).unwrap().dtype(), DType::I64);
        assert_eq!((!&flags).unwrap().dtype(), DType::Bool);
        let floats = full(&[6], Scalar::F64(1.0), 2).unwrap();
        let e = (&floats & &ints).unwrap_err().to_string();
        assert!(
            e.starts_with("bitwise_and:") && e.contains("float64"),
            "{e}"
        );
        assert!((!&floats).unwrap_err().to_string().starts_with("invert:"));
        let wide = full(&[2, 6], Scalar::I64(1), 2).unwrap();
        let e = (&wide & &full(&[4], Scalar::I64(1), 2).unwrap()).unwrap_err();
        assert!(e.to_string().contains("(2, 6) (4,)"), "{e}");
    }

    #[test]
    fn shifts_take_integers_only() {
        let ints = arange(Scalar::I64(0), Scalar::I64(6), Scalar::I64(1), 4).unwrap();
        assert_eq!((&ints << 3).unwrap().dtype(), DType::I64);
        assert_eq!((&ints >> &ints).unwrap().dtype(), DType::I64);
        assert_eq!(ints.left_shift(&ints).unwrap().shape(), &[6]);
        let flags = ints.binary_scalar(crate::ops::Op::Gt, Scalar::I64(2), false);
        let flags = flags.unwrap();
        assert_eq!((&flags << 1).unwrap().dtype(), DType::I64);
        // Two bools shift as NumPy's int8.
        assert_eq!((&flags << true).unwrap().dtype(), DType::I8);
        assert_eq!((&flags >> &flags).unwrap().dtype(), DType::I8);
        let floats = full(&[6], Scalar::F64(1.0), 2).unwrap();
        let e = ints.right_shift(&floats).unwrap_err().to_string();
        assert!(e.starts_with("right_shift: ufunc 'right_shift'"), "{e}");
    }

    #[test]
    fn clip_needs_a_bound_and_promotes_like_maximum() {
        let ints = arange(Scalar::I64(0), Scalar::I64(6), Scalar::I64(1), 4).unwrap();
        assert!(ints.clip_scalar(None, None).is_err());
        assert!(ints.clip(None, None).is_err());
        let c = ints.clip_scalar(Some(Scalar::I64(1)), Some(Scalar::F64(2.5)));
        assert_eq!(c.unwrap().dtype(), DType::F64);
        let c = ints.clip_scalar(Some(Scalar::I64(1)), None).unwrap();
        assert_eq!((c.dtype(), c.shape()), (DType::I64, &[6][..]));
    }

    #[test]
    fn permute_dims_takes_negative_axes_and_checks_each() {
        let x = full(&[2, 3, 4], Scalar::F64(0.0), 2).unwrap();
        assert_eq!(x.permute_dims(&[-1, 0, -2]).unwrap().shape(), &[4, 2, 3]);
        for bad in [&[-4i64, 0, 1][..], &[3, 0, 1], &[0, 1], &[-1, 2, 0]] {
            let e = x.permute_dims(bad).unwrap_err().to_string();
            assert!(e.starts_with("transpose:"), "{bad:?}: {e}");
        }
    }
}
