//! The `fft` namespace of the expression language: `fft.fft(x, n=None, axis=-1,
//! norm='backward')` and `ifft`, `rfft`, `irfft`, `hfft`, `ihfft` alike; `fft.fftn(x, s=None,
//! axes=None, norm='backward')` and `ifftn`, `rfftn`, `irfftn`; `fft.fftfreq(n, d=1.0,
//! dtype=None)`, `fft.rfftfreq`; `fft.fftshift(x, axes=None)`, `fft.ifftshift` — NumPy's and
//! the array API's signatures (`ops::family::fft`).

use super::args::{to_axes, to_dtype, to_int, to_ints, Args};
use super::eval::{Ctx, Value};
use super::{err, ExprError, Pos};
use crate::array::Scalar;
use crate::ops::family::fft::spec::{FftKind, FftNorm};

fn norm_of(v: Option<(Value, Pos)>) -> Result<FftNorm, ExprError> {
    match v {
        None | Some((Value::None, _)) => Ok(FftNorm::Backward),
        Some((Value::Str(s), p)) => FftNorm::parse(&s).map_or_else(
            || {
                err(
                    p,
                    format!("invalid norm value {s:?}; should be \"backward\", \"ortho\" or \"forward\""),
                )
            },
            Ok,
        ),
        Some((_, p)) => err(p, "norm must be \"backward\", \"ortho\" or \"forward\""),
    }
}

fn opt_int(v: Option<(Value, Pos)>) -> Result<Option<i64>, ExprError> {
    match v {
        None | Some((Value::None, _)) => Ok(None),
        Some((v, p)) => to_int(&v, p).map(Some),
    }
}

impl Ctx {
    pub(super) fn call_fft(&mut self, name: &str, a: Args) -> Result<Value, ExprError> {
        let p = a.pos;
        let wrap = |r: crate::Result<crate::tensor::Tensor>| {
            r.map(Value::Tensor).or_else(|e| err(p, e.to_string()))
        };
        match name {
            "fft.fft" | "fft.ifft" | "fft.rfft" | "fft.irfft" | "fft.hfft" | "fft.ihfft" => {
                a.check(4, &["x", "n", "axis", "norm"])?;
                let x = a.tensor(0, "x")?;
                let n = opt_int(a.get(1, "n"))?;
                let axis = match a.get(2, "axis") {
                    None | Some((Value::None, _)) => -1,
                    Some((v, vp)) => to_int(&v, vp)?,
                };
                let norm = norm_of(a.get(3, "norm"))?;
                wrap(match name {
                    "fft.fft" => x.fft1(FftKind::Forward, n, axis, norm),
                    "fft.ifft" => x.fft1(FftKind::Inverse, n, axis, norm),
                    "fft.rfft" => x.fft1(FftKind::RealForward, n, axis, norm),
                    "fft.irfft" => x.fft1(FftKind::RealInverse, n, axis, norm),
                    "fft.hfft" => x.hfft(n, axis, norm),
                    _ => x.ihfft(n, axis, norm),
                })
            }
            "fft.fftn" | "fft.ifftn" | "fft.rfftn" | "fft.irfftn" => {
                a.check(4, &["x", "s", "axes", "norm"])?;
                let x = a.tensor(0, "x")?;
                let s = match a.get(1, "s") {
                    None | Some((Value::None, _)) => None,
                    Some((v, vp)) => Some(to_ints(&v, vp)?),
                };
                let axes = to_axes(a.get(2, "axes"))?;
                let norm = norm_of(a.get(3, "norm"))?;
                let kind = match name {
                    "fft.fftn" => FftKind::Forward,
                    "fft.ifftn" => FftKind::Inverse,
                    "fft.rfftn" => FftKind::RealForward,
                    _ => FftKind::RealInverse,
                };
                wrap(x.fftn(kind, s.as_deref(), axes.as_deref(), norm))
            }
            "fft.fftfreq" | "fft.rfftfreq" => {
                a.check(2, &["n", "d", "dtype", "device"])?;
                let (nv, np_) = a.need(0, "n")?;
                let n = to_int(&nv, np_)?;
                let d = match a.get(1, "d") {
                    None => 1.0,
                    Some((Value::Num(s @ (Scalar::I64(_) | Scalar::F64(_))), _)) => s.as_f64(),
                    Some((_, dp)) => return err(dp, "d must be a number"),
                };
                let dtype = to_dtype(a.get(usize::MAX, "dtype"))?;
                wrap(crate::ops::family::fft::fftfreq(
                    n,
                    d,
                    name == "fft.rfftfreq",
                    dtype,
                ))
            }
            "fft.fftshift" | "fft.ifftshift" => {
                a.check(2, &["x", "axes"])?;
                let x = a.tensor(0, "x")?;
                let axes = to_axes(a.get(1, "axes"))?;
                wrap(x.fftshift(axes.as_deref(), name == "fft.ifftshift"))
            }
            _ => err(p, format!("unknown function {name}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::expr::evaluate;

    #[test]
    fn functions_take_numpys_arguments_and_refuse_bad_ones() {
        let r = evaluate("x = ones((8, 6), chunk=(3, 4)); fft.rfft(x, axis=0)").unwrap();
        assert_eq!(r.shape(), &[5, 6]);
        let r = evaluate("fft.irfftn(ones((4, 5), chunk=2), s=(4, 8))").unwrap();
        assert_eq!(r.shape(), &[4, 8]);
        let r = evaluate("fft.fftshift(fft.fftfreq(7, d=0.5))").unwrap();
        assert_eq!(r.shape(), &[7]);
        for (program, message) in [
            ("fft.fft(ones(4), norm='sideways')", "invalid norm value"),
            ("fft.fft(ones(4), n=0)", "invalid number of data points (0)"),
            ("fft.irfft(ones(1))", "invalid number of data points (0)"),
            ("fft.fft(ones(4), axis=1)", "axis 1 is out of bounds"),
            (
                "fft.fftn(ones((2, 2)), s=(2, 2, 2), axes=(0, 1))",
                "s has 3 lengths",
            ),
            ("fft.fftfreq(0)", "n must be a positive integer"),
            (
                "fft.rfft(fft.fft(ones(4)))",
                "needs a real input, got complex128",
            ),
            ("fft.fft(ones(4), 4, 0, 'ortho', 1)", "takes at most 4"),
        ] {
            let e = evaluate(program).unwrap_err();
            assert!(e.message.contains(message), "{program}: {e}");
        }
    }
}
