//! What one `fft` op computes: the transform's kind, its axis, its length and its
//! normalization, and the result's shape and dtype that follow from them (NumPy's rules).
//!
//! Every function of the extension is made of this one op: `fftn` is one transform per
//! axis (as NumPy computes it), `hfft`/`ihfft` are `irfft`/`rfft` of the conjugate with the
//! normalization's direction swapped.

use crate::array::{fmt_shape, DType, Shape};
use crate::error::{AresError, Result};
use serde::{Deserialize, Serialize};

/// The transform along the axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FftKind {
    /// Complex to complex, `exp(-2πi jk/n)` (`fft`).
    Forward,
    /// Complex to complex, `exp(+2πi jk/n)` (`ifft`).
    Inverse,
    /// Real to the `n/2 + 1` non-negative frequencies (`rfft`).
    RealForward,
    /// The `n/2 + 1` non-negative frequencies of a real signal back to its `n` values
    /// (`irfft`).
    RealInverse,
}

/// NumPy's `norm=`: which direction is scaled, by `1/n` or both by `1/sqrt(n)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FftNorm {
    Backward,
    Ortho,
    Forward,
}

impl FftNorm {
    pub fn parse(name: &str) -> Option<FftNorm> {
        match name {
            "backward" => Some(FftNorm::Backward),
            "ortho" => Some(FftNorm::Ortho),
            "forward" => Some(FftNorm::Forward),
            _ => None,
        }
    }

    /// The other direction's normalization (`hfft` is an inverse real transform scaled as
    /// a forward one).
    pub fn swapped(self) -> FftNorm {
        match self {
            FftNorm::Backward => FftNorm::Forward,
            FftNorm::Ortho => FftNorm::Ortho,
            FftNorm::Forward => FftNorm::Backward,
        }
    }
}

/// One transform: `kind` along `axis`, of length `n` (the input is cut or padded with zeros
/// to `n`, or to `n/2 + 1` for [`FftKind::RealInverse`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FftSpec {
    pub kind: FftKind,
    pub axis: usize,
    pub n: usize,
    pub norm: FftNorm,
}

impl FftSpec {
    /// The function's name in errors.
    pub fn name(&self) -> &'static str {
        match self.kind {
            FftKind::Forward => "fft.fft",
            FftKind::Inverse => "fft.ifft",
            FftKind::RealForward => "fft.rfft",
            FftKind::RealInverse => "fft.irfft",
        }
    }

    /// How many input values along the axis the transform reads (the rest are cut, and
    /// missing ones are zeros).
    pub fn in_len(&self) -> usize {
        match self.kind {
            FftKind::RealInverse => self.n / 2 + 1,
            _ => self.n,
        }
    }

    /// The result's length along the axis.
    pub fn out_len(&self) -> usize {
        match self.kind {
            FftKind::RealForward => self.n / 2 + 1,
            _ => self.n,
        }
    }

    /// The factor every output value is multiplied by.
    pub fn scale(&self) -> f64 {
        let n = self.n as f64;
        let inverse = matches!(self.kind, FftKind::Inverse | FftKind::RealInverse);
        match (self.norm, inverse) {
            (FftNorm::Ortho, _) => 1.0 / n.sqrt(),
            (FftNorm::Backward, true) | (FftNorm::Forward, false) => 1.0 / n,
            _ => 1.0,
        }
    }

    /// The result's shape and dtype for an input of `shape` and `dtype`: complex results in
    /// complex64 for float32/complex64 input, else complex128; `irfft` gives the real dtype
    /// of its complex input's parts. `rfft` of a complex input is refused (the standard's
    /// input is real; NumPy drops the imaginary part with a warning).
    pub fn infer(&self, shape: &[usize], dtype: DType) -> Result<(Shape, DType)> {
        let name = self.name();
        if self.axis >= shape.len() {
            return Err(AresError::arg(
                name,
                format!(
                    "axis {} is out of bounds for a tensor of shape {}",
                    self.axis,
                    fmt_shape(shape)
                ),
            ));
        }
        if self.n == 0 {
            return Err(AresError::arg(
                name,
                "invalid number of data points (0) specified",
            ));
        }
        let out = match self.kind {
            FftKind::Forward | FftKind::Inverse => dtype.to_complex(),
            FftKind::RealForward if dtype.is_complex() => {
                return Err(AresError::dtype(
                    name,
                    format!("needs a real input, got {dtype}; use fft.fft for complex data"),
                ))
            }
            FftKind::RealForward => dtype.to_complex(),
            FftKind::RealInverse => dtype.to_complex().real_part(),
        };
        let mut s: Shape = shape.into();
        s[self.axis] = self.out_len();
        Ok((s, out))
    }

    /// The dtype the kernel reads: the complex dtype of the input for complex transforms,
    /// the real one for `rfft`.
    pub fn compute_dtype(&self, dtype: DType) -> DType {
        match self.kind {
            FftKind::RealForward => dtype.to_complex().real_part(),
            _ => dtype.to_complex(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_dtypes_and_scales_are_numpys() {
        let spec = |kind, n, norm| FftSpec {
            kind,
            axis: 1,
            n,
            norm,
        };
        let f = spec(FftKind::RealForward, 10, FftNorm::Backward);
        let (s, d) = f.infer(&[3, 7], DType::F32).unwrap();
        assert_eq!((s.as_slice(), d), (&[3, 6][..], DType::C64));
        let i = spec(FftKind::RealInverse, 9, FftNorm::Backward);
        assert_eq!(i.in_len(), 5);
        assert_eq!(i.infer(&[3, 5], DType::C128).unwrap().1, DType::F64);
        assert_eq!(i.scale(), 1.0 / 9.0);
        assert_eq!(spec(FftKind::Forward, 4, FftNorm::Forward).scale(), 0.25);
        assert_eq!(spec(FftKind::Forward, 4, FftNorm::Ortho).scale(), 0.5);
        assert_eq!(spec(FftKind::Inverse, 4, FftNorm::Forward).scale(), 1.0);
        assert_eq!(
            spec(FftKind::Forward, 4, FftNorm::Backward)
                .infer(&[2, 2], DType::I64)
                .unwrap()
                .1,
            DType::C128
        );
        let e = f.infer(&[3, 7], DType::C128).unwrap_err().to_string();
        assert!(e.contains("needs a real input, got complex128"), "{e}");
        let e = spec(FftKind::Forward, 0, FftNorm::Backward)
            .infer(&[3, 7], DType::F64)
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid number of data points (0)"), "{e}");
        assert!(f.infer(&[3], DType::F64).is_err());
    }
}
