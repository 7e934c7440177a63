//! The tensor API of the `fft` extension: each function as NumPy's `numpy.fft` composes it
//! from one-axis transforms ([`Op::Fft`]), with NumPy's defaults for `n`/`s` and `axes`.
//! `fftshift`/`ifftshift` are rolls (two slices concatenated); `fftfreq`/`rfftfreq` are
//! `arange` times `1 / (n d)`, NumPy's exact values.

use super::spec::{FftKind, FftNorm, FftSpec};
use crate::array::{fmt_shape, DType, Scalar};
use crate::error::{AresError, Result};
use crate::ops::{Op, OpArgs};
use crate::tensor::{concatenate, Tensor};

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
        let last = axes.len() - 1;
        // NumPy's defaults: each axis' own length, `2 (m - 1)` for the last of `irfftn`'s.
        let n_of = |x: &Tensor, i: usize, k: FftKind| -> Option<i64> {
            let m = x.shape()[axes[i]];
            lengths[i].or(Some(if i == last { default_n(k, m) } else { m } as i64))
        };
        // One transform of axis `axes[i]`, of kind `k` (`kind`'s defaults for its length).
        let step =
            |x: Tensor, i: usize, k: FftKind| x.fft1(k, n_of(&x, i, kind), axes[i] as i64, norm);
        let mut x = self.clone();
        match kind {
            FftKind::Forward | FftKind::Inverse => {
                for i in (0..axes.len()).rev() {
                    x = step(x, i, kind)?;
                }
            }
            FftKind::RealForward => {
                x = step(x, last, kind)?;
                for i in 0..last {
                    x = step(x, i, FftKind::Forward)?;
                }
            }
            FftKind::RealInverse => {
                for i in 0..last {
                    x = step(x, i, FftKind::Inverse)?;
                }
                x = step(x, last, kind)?;
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

#[cfg(test)]
mod tests {
    use crate::array::{ArrayData, Complex64};
    use std::f64::consts::PI;

    /// Runs the program (its last expression) on the local executor, 2 slots.
    fn run(program: &str) -> crate::Result<ArrayData> {
        let t =
            crate::expr::evaluate(program).map_err(|e| crate::AresError::arg("test", e.message))?;
        Ok(crate::executor::compute(&[&t], &Default::default(), 2)?.remove(0))
    }

    fn complex(a: &ArrayData) -> Vec<Complex64> {
        match a {
            ArrayData::C128(z) => z.iter().copied().collect(),
            other => other.iter_f64().map(|v| Complex64::new(v, 0.0)).collect(),
        }
    }

    /// The values of `arange(r*c).reshape(r, c) % 7 - 3`, as the programs make them.
    fn input(r: usize, c: usize) -> Vec<f64> {
        (0..r * c).map(|i| (i % 7) as f64 - 3.0).collect()
    }

    fn dft(x: &[Complex64], inverse: bool) -> Vec<Complex64> {
        let n = x.len();
        let sign = if inverse { 1.0 } else { -1.0 };
        (0..n)
            .map(|k| {
                (0..n)
                    .map(|j| {
                        x[j] * Complex64::from_polar(
                            1.0,
                            sign * 2.0 * PI * (j * k) as f64 / n as f64,
                        )
                    })
                    .sum()
            })
            .collect()
    }

    fn close(got: &[Complex64], want: &[Complex64]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).norm() < 1e-9, "{g} vs {w}");
        }
    }

    /// fftn of a matrix chunked both ways, against the direct 2-D DFT (rows then columns).
    #[test]
    fn fftn_over_chunks_equals_the_direct_dft() {
        let (r, c) = (9, 10);
        let got =
            run("x = (arange(90, chunk=13) % 7 - 3).reshape(9, 10).rechunk((4, 3)); fft.fftn(x)")
                .unwrap();
        assert_eq!(got.shape(), &[r, c]);
        let x: Vec<Complex64> = input(r, c)
            .iter()
            .map(|v| Complex64::new(*v, 0.0))
            .collect();
        let mut rows: Vec<Complex64> = x.chunks(c).flat_map(|row| dft(row, false)).collect();
        for j in 0..c {
            let col: Vec<Complex64> = (0..r).map(|i| rows[i * c + j]).collect();
            for (i, v) in dft(&col, false).into_iter().enumerate() {
                rows[i * c + j] = v;
            }
        }
        close(&complex(&got), &rows);
        // Along axis 0 alone, padded to 12, ortho.
        let got = run("x = (arange(90, chunk=13) % 7 - 3).reshape(9, 10).rechunk((4, 3)); fft.fft(x, n=12, axis=0, norm='ortho')").unwrap();
        assert_eq!(got.shape(), &[12, c]);
        let got = complex(&got);
        for j in 0..c {
            let mut col: Vec<Complex64> = (0..r).map(|i| x[i * c + j]).collect();
            col.resize(12, Complex64::new(0.0, 0.0));
            let want: Vec<Complex64> = dft(&col, false).iter().map(|v| v / 12f64.sqrt()).collect();
            let column: Vec<Complex64> = (0..12).map(|i| got[i * c + j]).collect();
            close(&column, &want);
        }
    }

    #[test]
    fn real_and_hermitian_transforms_invert() {
        let x = input(6, 8);
        for program in [
            "x = (arange(48, chunk=5) % 7 - 3).reshape(6, 8); fft.irfftn(fft.rfftn(x), s=(6, 8))",
            "x = (arange(48, chunk=5) % 7 - 3).reshape(6, 8); real(fft.ifftn(fft.fftn(x, norm='forward'), norm='forward'))",
            "x = (arange(48, chunk=5) % 7 - 3).reshape(6, 8); fft.hfft(fft.ihfft(x), n=8)",
            "x = (arange(48, chunk=5) % 7 - 3).reshape(6, 8); fft.irfft(fft.rfft(x, axis=0), n=6, axis=0)",
        ] {
            let got = run(program).unwrap();
            assert_eq!(got.dtype(), crate::array::DType::F64, "{program}");
            for (g, w) in got.iter_f64().zip(&x) {
                assert!((g - w).abs() < 1e-12, "{program}: {g} vs {w}");
            }
        }
    }

    #[test]
    fn frequencies_and_shifts_are_numpys() {
        // np.fft.fftfreq(8, 0.5), np.fft.fftshift of it, np.fft.rfftfreq(7).
        let f = run("fft.fftfreq(8, d=0.5)").unwrap();
        assert_eq!(
            f.iter_f64().collect::<Vec<_>>(),
            [0.0, 0.25, 0.5, 0.75, -1.0, -0.75, -0.5, -0.25]
        );
        let s = run("fft.fftshift(fft.fftfreq(8, d=0.5))").unwrap();
        assert_eq!(
            s.iter_f64().collect::<Vec<_>>(),
            [-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75]
        );
        let back = run("fft.ifftshift(fft.fftshift(arange(15, chunk=4).reshape(3, 5)))").unwrap();
        assert_eq!(
            back.iter_f64().collect::<Vec<_>>(),
            (0..15).map(f64::from).collect::<Vec<_>>()
        );
        let r = run("fft.rfftfreq(7)").unwrap();
        let want: Vec<f64> = (0..4).map(|k| k as f64 * (1.0 / 7.0)).collect();
        assert_eq!(r.iter_f64().collect::<Vec<_>>(), want);
    }

    /// A rechunk of complex data that takes the shuffle (rows to columns: 16,384 pieces).
    #[test]
    fn complex_chunks_regrid_through_the_shuffle() {
        let got = run("x = arange(16384, chunk=128).reshape(128, 128).rechunk((1, 128)).astype('complex128'); \
             fft.ifft(fft.fft(x.rechunk((128, 1)), axis=0), axis=0)")
        .unwrap();
        let want: Vec<f64> = (0..16384).map(f64::from).collect();
        for (g, w) in complex(&got).iter().zip(&want) {
            assert!((g.re - w).abs() < 1e-9 && g.im.abs() < 1e-9, "{g} vs {w}");
        }
    }

    #[test]
    fn a_chunk_too_large_for_one_axis_is_refused_naming_its_size() {
        let e = run("fft.fft(zeros((100000, 100000), chunk=(1000, 1000)), axis=0)").unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("chunks of (100000, 1000) are 1525 MiB, over the 1024 MiB"),
            "{e}"
        );
    }
}
