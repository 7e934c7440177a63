//! The elementwise kernels of complex operands (`complex64`, `complex128`).
//!
//! The functions are the C library's, as NumPy's are, with C99 Annex G's special values for
//! infinite, NaN and zero parts ([`annex_g`]); division, reciprocal and square are NumPy's
//! loops ([`division`]). The ufunc table's loops are real (`f64`, `f32`, integers:
//! [`super::math`]); a complex operand takes this path instead, chosen by dtype in
//! [`super::kernels`]. Which ops are defined for complex and what they give (`abs` is real,
//! comparisons but `==`/`!=` are refused) is decided once, in [`super::dtypes`]: a kernel
//! here only meets the ops that passed it. complex64 computes in `Complex<f32>` throughout,
//! as NumPy's loops do.

use crate::array::ArrayData;
use crate::kernels::{kerr, KResult};
use crate::ops::Op;
use ndarray::ArrayD;
use num_complex::Complex;
use num_traits::{Float, One, Zero};

mod annex_g;
mod division;

/// A unary op on a complex array: a complex, real or bool result (see
/// [`super::dtypes::unary_dtype`]).
pub fn unary(op: Op, a: &ArrayData) -> KResult<ArrayData> {
    match a {
        ArrayData::C64(x) => Ok(match unary_loop(op, x)? {
            Out::Complex(z) => ArrayData::C64(z),
            Out::Real(r) => ArrayData::F32(r),
            Out::Bool(b) => ArrayData::Bool(b),
        }),
        ArrayData::C128(x) => Ok(match unary_loop(op, x)? {
            Out::Complex(z) => ArrayData::C128(z),
            Out::Real(r) => ArrayData::F64(r),
            Out::Bool(b) => ArrayData::Bool(b),
        }),
        other => kerr(format!(
            "{op}: the complex kernel got a {} operand",
            other.dtype()
        )),
    }
}

enum Out<T> {
    Complex(ArrayD<Complex<T>>),
    Real(ArrayD<T>),
    Bool(ArrayD<bool>),
}

fn unary_loop<T: annex_g::CMath>(op: Op, x: &ArrayD<Complex<T>>) -> KResult<Out<T>> {
    let c = |f: fn(Complex<T>) -> Complex<T>| Out::Complex(x.mapv(f));
    Ok(match op {
        Op::Neg => c(|z| -z),
        Op::Conj => c(|z| z.conj()),
        Op::Square => c(division::square),
        Op::Reciprocal => c(division::recip),
        Op::Sign => c(annex_g::sign),
        Op::Sqrt => c(annex_g::sqrt),
        Op::Exp => c(annex_g::exp),
        Op::Expm1 => c(annex_g::expm1),
        Op::Log => c(annex_g::log),
        Op::Log1p => c(annex_g::log1p),
        Op::Log2 => c(annex_g::log2),
        Op::Log10 => c(annex_g::log10),
        Op::Sin => c(annex_g::sin),
        Op::Cos => c(annex_g::cos),
        Op::Tan => c(annex_g::tan),
        Op::Sinh => c(annex_g::sinh),
        Op::Cosh => c(annex_g::cosh),
        Op::Tanh => c(annex_g::tanh),
        Op::Asin => c(annex_g::asin),
        Op::Acos => c(annex_g::acos),
        Op::Atan => c(annex_g::atan),
        Op::Asinh => c(annex_g::asinh),
        Op::Acosh => c(annex_g::acosh),
        Op::Atanh => c(annex_g::atanh),
        Op::Abs => Out::Real(x.mapv(|z| z.norm())),
        Op::RealPart => Out::Real(x.mapv(|z| z.re)),
        Op::ImagPart => Out::Real(x.mapv(|z| z.im)),
        // NumPy: NaN or infinite if either part is, finite if both are.
        Op::IsNan => Out::Bool(x.mapv(|z| z.re.is_nan() || z.im.is_nan())),
        Op::IsInf => Out::Bool(x.mapv(|z| z.re.is_infinite() || z.im.is_infinite())),
        Op::IsFinite => Out::Bool(x.mapv(|z| z.re.is_finite() && z.im.is_finite())),
        _ => return kerr(format!("{op} is not defined for complex operands")),
    })
}

/// A binary op on two complex arrays of one dtype, broadcast together (`zip` broadcasts).
pub fn binary(op: Op, a: &ArrayData, b: &ArrayData, zip: impl ZipComplex) -> KResult<ArrayData> {
    match (a, b) {
        (ArrayData::C64(x), ArrayData::C64(y)) => Ok(match binary_loop(op, x, y, &zip)? {
            Out::Complex(z) => ArrayData::C64(z),
            Out::Real(r) => ArrayData::F32(r),
            Out::Bool(v) => ArrayData::Bool(v),
        }),
        (ArrayData::C128(x), ArrayData::C128(y)) => Ok(match binary_loop(op, x, y, &zip)? {
            Out::Complex(z) => ArrayData::C128(z),
            Out::Real(r) => ArrayData::F64(r),
            Out::Bool(v) => ArrayData::Bool(v),
        }),
        _ => kerr(format!(
            "{op}: the complex kernel got operands {} and {}",
            a.dtype(),
            b.dtype()
        )),
    }
}

/// Broadcasting zip of two arrays (the elementwise family's, passed in so that this file
/// does not own a second copy).
pub trait ZipComplex {
    fn zip<A: Copy, B: Copy, O>(
        &self,
        a: &ArrayD<A>,
        b: &ArrayD<B>,
        f: impl Fn(A, B) -> O,
    ) -> KResult<ArrayD<O>>;
}

/// NumPy's complex power: `0 ** 0` is 1, an exponent with zero imaginary part and integer
/// real part up to 100 in size by repeated squaring (exact for Gaussian integers, as NumPy),
/// everything else `exp(y ln x)`.
fn pow<T: Float>(x: Complex<T>, y: Complex<T>) -> Complex<T> {
    if y.is_zero() {
        return Complex::one();
    }
    if y.im.is_zero() && y.re == y.re.round() && y.re.abs() <= T::from(100).unwrap_or(T::zero()) {
        let n = y.re.to_i32().unwrap_or(0);
        let p = x.powi(n.abs());
        return if n < 0 { division::recip(p) } else { p };
    }
    if x.is_zero() {
        // NumPy: 0 ** y is 0 for Re(y) > 0, else NaN.
        return if y.re > T::zero() {
            Complex::zero()
        } else {
            Complex::new(T::nan(), T::nan())
        };
    }
    x.powc(y)
}

fn binary_loop<T: Float>(
    op: Op,
    x: &ArrayD<Complex<T>>,
    y: &ArrayD<Complex<T>>,
    zip: &impl ZipComplex,
) -> KResult<Out<T>> {
    Ok(match op {
        Op::Add => Out::Complex(zip.zip(x, y, |p, q| p + q)?),
        Op::Sub => Out::Complex(zip.zip(x, y, |p, q| p - q)?),
        Op::Mul => Out::Complex(zip.zip(x, y, |p, q| p * q)?),
        Op::Div => Out::Complex(zip.zip(x, y, division::div)?),
        Op::Pow => Out::Complex(zip.zip(x, y, pow)?),
        Op::Eq => Out::Bool(zip.zip(x, y, |p, q| p == q)?),
        Op::Ne => Out::Bool(zip.zip(x, y, |p, q| p != q)?),
        _ => return kerr(format!("{op} is not defined for complex operands")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::DType;
    use crate::ops::family::elementwise::kernels;
    use crate::ops::OpArgs;
    use ndarray::IxDyn;
    use num_complex::Complex64;

    fn c128(v: &[(f64, f64)]) -> ArrayData {
        ArrayData::C128(
            ArrayD::from_shape_vec(
                IxDyn(&[v.len()]),
                v.iter().map(|(r, i)| Complex64::new(*r, *i)).collect(),
            )
            .unwrap(),
        )
    }

    fn values(a: &ArrayData) -> Vec<Complex64> {
        match a {
            ArrayData::C128(z) => z.iter().copied().collect(),
            ArrayData::C64(z) => z
                .iter()
                .map(|v| Complex64::new(v.re as f64, v.im as f64))
                .collect(),
            other => other.iter_f64().map(|v| Complex64::new(v, 0.0)).collect(),
        }
    }

    /// The functions against their definitions written out by hand (`exp(a+bi) = e^a (cos b
    /// + i sin b)`, `|z| = hypot`, `1/z = conj(z)/|z|^2`...).
    #[test]
    fn unary_functions_match_their_definitions() {
        let z = [(1.5, -2.0), (-0.25, 0.5), (3.0, 0.0), (0.0, -1.0)];
        let x = c128(&z);
        let exp = values(&kernels::unary(Op::Exp, &OpArgs::None, &x).unwrap());
        for ((a, b), e) in z.iter().zip(&exp) {
            let want = Complex64::new(a.exp() * b.cos(), a.exp() * b.sin());
            assert!((e - want).norm() < 1e-14 * want.norm(), "exp({a}+{b}j)");
        }
        let abs = kernels::unary(Op::Abs, &OpArgs::None, &x).unwrap();
        assert_eq!(abs.dtype(), DType::F64);
        for ((a, b), r) in z.iter().zip(abs.iter_f64()) {
            assert_eq!(r, a.hypot(*b));
        }
        let inv = values(&kernels::unary(Op::Reciprocal, &OpArgs::None, &x).unwrap());
        for ((a, b), r) in z.iter().zip(&inv) {
            let n = a * a + b * b;
            assert!((r - Complex64::new(a / n, -b / n)).norm() < 1e-15);
        }
        let sq = values(&kernels::unary(Op::Sqrt, &OpArgs::None, &x).unwrap());
        for ((a, b), r) in z.iter().zip(&sq) {
            assert!((r * r - Complex64::new(*a, *b)).norm() < 1e-14);
            assert!(r.re >= 0.0, "principal root");
        }
        let sign = values(&kernels::unary(Op::Sign, &OpArgs::None, &x).unwrap());
        assert!((sign[0] - Complex64::new(0.6, -0.8)).norm() < 1e-15);
        let im = kernels::unary(Op::ImagPart, &OpArgs::None, &x).unwrap();
        assert_eq!(
            im.iter_f64().collect::<Vec<_>>(),
            vec![-2.0, 0.5, 0.0, -1.0]
        );
        let conj = values(&kernels::unary(Op::Conj, &OpArgs::None, &x).unwrap());
        assert_eq!(conj[0], Complex64::new(1.5, 2.0));
    }

    #[test]
    fn special_values_follow_c99_and_numpy() {
        let x = c128(&[
            (f64::NAN, 0.0),
            (0.0, f64::INFINITY),
            (1.0, 2.0),
            (0.0, 0.0),
        ]);
        let b = |op| {
            kernels::unary(op, &OpArgs::None, &x)
                .unwrap()
                .iter_f64()
                .map(|v| v != 0.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(b(Op::IsNan), [true, false, false, false]);
        assert_eq!(b(Op::IsInf), [false, true, false, false]);
        assert_eq!(b(Op::IsFinite), [false, false, true, true]);
        // np.sign(0j) == 0, np.sign(complex(inf, 0)) == 1.
        let s = values(
            &kernels::unary(
                Op::Sign,
                &OpArgs::None,
                &c128(&[(0.0, 0.0), (f64::INFINITY, 0.0)]),
            )
            .unwrap(),
        );
        assert_eq!(s, [Complex64::new(0.0, 0.0), Complex64::new(1.0, 0.0)]);
        // The kernels run Annex G's functions (complex/annex_g.rs): sinh(inf + 0j) is
        // inf + 0j (num-complex's formula gave inf + NaN j), expm1 and log1p exist.
        let z = c128(&[(f64::INFINITY, 0.0), (-1.0, 0.0)]);
        let sinh = values(&kernels::unary(Op::Sinh, &OpArgs::None, &z).unwrap());
        assert_eq!(sinh[0], Complex64::new(f64::INFINITY, 0.0));
        let l = values(&kernels::unary(Op::Log1p, &OpArgs::None, &z).unwrap());
        assert_eq!(l[1], Complex64::new(f64::NEG_INFINITY, 0.0));
        let e = values(&kernels::unary(Op::Expm1, &OpArgs::None, &z).unwrap());
        assert_eq!(e[1].im, 0.0);
        assert!((e[1].re - (-1.0f64).exp_m1()).abs() < 1e-16);
    }

    #[test]
    fn arithmetic_promotes_and_powers_are_numpys() {
        let x = c128(&[(1.0, 2.0), (0.0, 0.0), (-3.0, 0.5)]);
        let r = ArrayData::F32(ArrayD::from_shape_vec(IxDyn(&[3]), vec![2.0, 0.0, -1.0]).unwrap());
        let prod = kernels::binary(Op::Mul, &x, &r).unwrap();
        assert_eq!(prod.dtype(), DType::C128);
        assert_eq!(
            values(&prod),
            [
                Complex64::new(2.0, 4.0),
                Complex64::new(0.0, 0.0),
                Complex64::new(3.0, -0.5)
            ]
        );
        let p = values(&kernels::binary(Op::Pow, &x, &r).unwrap());
        assert_eq!(p[0], Complex64::new(-3.0, 4.0), "(1+2j)**2 exactly");
        assert_eq!(p[1], Complex64::new(1.0, 0.0), "0**0");
        let q = Complex64::new(-3.0, 0.5);
        assert!((p[2] - 1.0 / q).norm() < 1e-15);
        let eq = kernels::binary(Op::Eq, &x, &x).unwrap();
        assert!(eq.iter_f64().all(|v| v == 1.0));
        let e = kernels::binary(Op::Lt, &x, &x).unwrap_err().0;
        assert!(e.contains("complex"), "{e}");
    }
}
