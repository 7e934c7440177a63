//! The tensor API of the `fft` extension: each function as NumPy's `numpy.fft` composes it
//! from one-axis transforms ([`Op::Fft`]), with NumPy's defaults for `n`/`s` and `axes`.
//! `fftshift`/`ifftshift` are rolls (two slices concatenated); `fftfreq`/`rfftfreq` are
//! `arange` times `1 / (n d)`, NumPy's exact values.

use super::spec::{FftKind, FftNorm, FftSpec};
use crate::array::{fmt_shape, DType, Scalar};
use crate::error::{AresError, Result};
use crate::ops::{Op, OpArgs};
use crate::tensor::{concatenate, SliceArg, Tensor};

fn kind_name(kind: FftKind, n_dim: bool) -> &'static str {
    match (kind, n_dim) {
        (FftKind::Forward, false) => "fft.fft",
        (FftKind::Inverse, false) => "fft.ifft",
        (FftKind::RealForward, false) => "fft.rfft",
        (FftKind::RealInverse, false) => "fft.irfft",
        (FftKind::Forward, true) => "fft.fftn",
        (FftKind::Inverse, true) => "fft.ifftn",
        (FftKind::RealForward, true) => "fft.rfftn",
        (FftKind::RealInverse, true) => "fft.irfftn",
    }
}

/// NumPy's default length: the axis' own, or `2 (m - 1)` for the inverse real transform.
fn default_n(kind: FftKind, m: usize) -> usize {
    match kind {
        FftKind::RealInverse => 2 * m.saturating_sub(1),
        _ => m,
    }
}

fn positive_n(name: &'static str, n: i64) -> Result<usize> {
    usize::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
        AresError::arg(
            name,
            format!("invalid number of data points ({n}) specified"),
        )
    })
}

impl Tensor {
    fn fft_axis_of(&self, name: &'static str, axis: i64) -> Result<usize> {
        let ndim = self.ndim() as i64;
        let a = if axis < 0 { axis + ndim } else { axis };
        if a < 0 || a >= ndim {
            return Err(AresError::arg(
                name,
                format!(
                    "axis {axis} is out of bounds for a tensor of shape {}",
                    fmt_shape(self.shape())
                ),
            ));
        }
        Ok(a as usize)
    }

    /// One transform along `axis` (`fft`, `ifft`, `rfft`, `irfft`), `n` as NumPy's.
    pub fn fft1(&self, kind: FftKind, n: Option<i64>, axis: i64, norm: FftNorm) -> Result<Tensor> {
        let name = kind_name(kind, false);
        let axis = self.fft_axis_of(name, axis)?;
        let n = match n {
            Some(n) => positive_n(name, n)?,
            None => positive_n(name, default_n(kind, self.shape()[axis]) as i64)?,
        };
        let spec = FftSpec {
            kind,
            axis,
            n,
            norm,
        };
        Tensor::new(Op::Fft, OpArgs::Fft(spec), vec![self.clone()])
    }

    /// `fftn`, `ifftn`, `rfftn`, `irfftn`: one transform per axis of `axes` (all, or the
    /// last `len(s)`), lengths `s` (the axes' own by default), as `numpy.fft` computes
    /// them; the real transform along the last of `axes`.
    pub fn fftn(
        &self,
        kind: FftKind,
        s: Option<&[i64]>,
        axes: Option<&[i64]>,
        norm: FftNorm,
    ) -> Result<Tensor> {
        let name = kind_name(kind, true);
        let ndim = self.ndim() as i64;
        let axes: Vec<i64> = match (axes, s) {
            (Some(a), _) => a.to_vec(),
            (None, Some(s)) => (ndim - s.len() as i64..ndim).collect(),
            (None, None) => (0..ndim).collect(),
        };
        let axes: Vec<usize> = axes
            .iter()
            .map(|a| self.fft_axis_of(name, *a))
            .collect::<Result<_>>()?;
        let mut seen = vec![false; self.ndim()];
        if axes.iter().any(|a| std::mem::replace(&mut seen[*a], true)) {
            return Err(AresError::arg(name, "repeated axes in axes"));
        }
        let lengths: Vec<Option<i64>> = match s {
            Some(s) if s.len() != axes.len() => {
                return Err(AresError::arg(
                    name,
                    format!(
                        "s has {} lengths but axes {} axes: they must be as many",
                        s.len(),
                        axes.len()
                    ),
                ))
            }
            // `-1` in `s` (the array API's): the axis' own length.
            Some(s) => s.iter().map(|n| (*n != -1).then_some(*n)).collect(),
            None => vec![None; axes.len()],
        };
        if axes.is_empty() {
            return Ok(self.clone());
        }
        let n_of = |x: &Tensor, i: usize, k: FftKind| -> Option<i64> {
            lengths[i].or(Some(default_n(k, x.shape()[axes[i]]) as i64))
        };
        let last = axes.len() - 1;
        let mut x = self.clone();
        match kind {
            FftKind::Forward | FftKind::Inverse => {
                for i in (0..axes.len()).rev() {
                    x = x.fft1(kind, n_of(&x, i, kind), axes[i] as i64, norm)?;
                }
            }
            FftKind::RealForward => {
                x = x.fft1(kind, n_of(&x, last, kind), axes[last] as i64, norm)?;
                for i in 0..last {
                    x = x.fft1(FftKind::Forward, n_of(&x, i, kind), axes[i] as i64, norm)?;
                }
            }
            FftKind::RealInverse => {
                for i in 0..last {
                    x = x.fft1(FftKind::Inverse, n_of(&x, i, kind), axes[i] as i64, norm)?;
                }
                x = x.fft1(kind, n_of(&x, last, kind), axes[last] as i64, norm)?;
            }
        }
        Ok(x)
    }

    /// The complex conjugate (a real tensor is its own).
    fn conjugate(&self) -> Result<Tensor> {
        if self.dtype().is_complex() {
            self.unary(Op::Conj)
        } else {
            Ok(self.clone())
        }
    }

    /// NumPy's `hfft`: `irfft(conj(x), n)` with the normalization's direction swapped; a
    /// real result of length `n` (default `2 (m - 1)`).
    pub fn hfft(&self, n: Option<i64>, axis: i64, norm: FftNorm) -> Result<Tensor> {
        let x = self.astype(self.dtype().to_complex())?.conjugate()?;
        x.fft1(FftKind::RealInverse, n, axis, norm.swapped())
            .map_err(|e| rename(e, "fft.irfft", "fft.hfft"))
    }

    /// NumPy's `ihfft`: `conj(rfft(x, n))` with the normalization's direction swapped.
    pub fn ihfft(&self, n: Option<i64>, axis: i64, norm: FftNorm) -> Result<Tensor> {
        self.fft1(FftKind::RealForward, n, axis, norm.swapped())
            .map_err(|e| rename(e, "fft.rfft", "fft.ihfft"))?
            .conjugate()
    }

    /// `x` rolled by `shift` along `axis`: `concat(x[n-k:], x[:n-k])`, `k = shift mod n`.
    fn roll_axis(&self, shift: i64, axis: usize) -> Result<Tensor> {
        let n = self.shape()[axis] as i64;
        if n == 0 {
            return Ok(self.clone());
        }
        let k = shift.rem_euclid(n);
        if k == 0 {
            return Ok(self.clone());
        }
        let part = |start: Option<i64>, stop: Option<i64>| {
            let mut index = vec![SliceArg::FULL; self.ndim()];
            index[axis] = SliceArg::Range {
                start,
                stop,
                step: None,
            };
            self.slice(&index)
        };
        concatenate(
            &[part(Some(n - k), None)?, part(None, Some(n - k))?],
            axis as i64,
        )
    }

    /// `fftshift` (`inverse`: `ifftshift`) over `axes` (all by default).
    pub fn fftshift(&self, axes: Option<&[i64]>, inverse: bool) -> Result<Tensor> {
        let name = if inverse {
            "fft.ifftshift"
        } else {
            "fft.fftshift"
        };
        let axes: Vec<usize> = match axes {
            Some(a) => a
                .iter()
                .map(|a| self.fft_axis_of(name, *a))
                .collect::<Result<_>>()?,
            None => (0..self.ndim()).collect(),
        };
        let mut x = self.clone();
        for a in axes {
            let half = (self.shape()[a] / 2) as i64;
            x = x.roll_axis(if inverse { -half } else { half }, a)?;
        }
        Ok(x)
    }
}

fn rename(e: AresError, from: &str, to: &str) -> AresError {
    AresError::arg("fft", e.to_string().replace(from, to))
}

/// `fftfreq(n, d)`: `[0, 1, ..., (n-1)//2, -(n//2), ..., -1] * (1 / (n d))` (`rfftfreq`:
/// `[0, ..., n//2] * (1 / (n d))`), in float64 or `dtype`.
pub fn fftfreq(n: i64, d: f64, real: bool, dtype: Option<DType>) -> Result<Tensor> {
    let name = if real { "fft.rfftfreq" } else { "fft.fftfreq" };
    let n = usize::try_from(n)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| AresError::arg(name, format!("n must be a positive integer, got {n}")))?;
    if let Some(t) = dtype.filter(|t| !t.is_float()) {
        return Err(AresError::dtype(
            name,
            format!("dtype must be a real floating-point dtype, got {t}"),
        ));
    }
    let val = 1.0 / (n as f64 * d);
    let ints = |start: i64, stop: i64| {
        crate::tensor::arange(
            Scalar::I64(start),
            Scalar::I64(stop),
            Scalar::I64(1),
            n.max(1),
        )
    };
    let k = if real {
        ints(0, (n / 2) as i64 + 1)?
    } else {
        let positive = ints(0, ((n - 1) / 2) as i64 + 1)?;
        if n / 2 == 0 {
            positive
        } else {
            concatenate(&[positive, ints(-((n / 2) as i64), 0)?], 0)?.rechunk(n)?
        }
    };
    let f = k.binary_scalar(Op::Mul, Scalar::F64(val), false)?;
    match dtype {
        Some(t) if t != DType::F64 => f.astype(t),
        _ => Ok(f),
    }
}
