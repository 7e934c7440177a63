//! Complex division, reciprocal and square as NumPy's loops compute them.
//!
//! num-complex divides by the textbook `a conj(b) / |b|^2`, whose `|b|^2` overflows for
//! parts beyond 1e154 (`1 / (1e300 + 0j)` is 0, `1 / (inf + 0j)` NaN); NumPy scales by the
//! larger part of the divisor (Smith's method), which keeps the quotient's precision and
//! gives 0, not NaN, for an infinite divisor. `x / 0` is a complex infinity or NaN, part by
//! part. `square` is NumPy's `fma(x, x, -y^2) + 2xy i`, whose fused product keeps `-inf` (not
//! `inf - inf`) where only `y^2` overflows, and `+0` for `(-0)^2`.

use num_complex::Complex;
use num_traits::Float;

/// `a / b` (NumPy's `divide` loop).
pub fn div<T: Float>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    let (br, bi) = (b.re, b.im);
    if br.abs() >= bi.abs() {
        if br.is_zero() && bi.is_zero() {
            return Complex::new(a.re / br.abs(), a.im / br.abs());
        }
        let rat = bi / br;
        let scl = T::one() / (br + bi * rat);
        Complex::new((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl)
    } else {
        let rat = br / bi;
        let scl = T::one() / (bi + br * rat);
        Complex::new((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl)
    }
}

/// `1 / z` (NumPy's `reciprocal` loop).
pub fn recip<T: Float>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    if y.abs() <= x.abs() {
        let r = y / x;
        let d = x + y * r;
        Complex::new(T::one() / d, -r / d)
    } else {
        let r = x / y;
        let d = x * r + y;
        Complex::new(r / d, -T::one() / d)
    }
}

/// `z * z` (NumPy's `square` loop).
pub fn square<T: Float>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    Complex::new(x.mul_add(x, -(y * y)), x * y + y * x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex64 as C;

    #[test]
    fn division_scales_by_the_larger_part() {
        let q = div(C::new(1.0, 2.0), C::new(3.0, -4.0));
        assert!((q - C::new(-0.2, 0.4)).norm() < 1e-16, "{q}");
        // |b|^2 overflows in the textbook formula: 1e300/(1e300 + 1e300 i) = 0.5 - 0.5 i.
        let q = div(C::new(1e300, 0.0), C::new(1e300, 1e300));
        assert_eq!(q, C::new(0.5, -0.5));
        // An infinite divisor gives 0 (NaN before), a zero divisor a complex infinity.
        assert_eq!(recip(C::new(f64::INFINITY, 0.0)), C::new(0.0, -0.0));
        let z = div(C::new(1.0, -1.0), C::new(0.0, 0.0));
        assert_eq!(z, C::new(f64::INFINITY, f64::NEG_INFINITY));
        assert_eq!(recip(C::new(0.0, 2.0)), C::new(0.0, -0.5));
        assert_eq!(recip(C::new(-0.0, 1.0)), C::new(-0.0, -1.0));
    }

    #[test]
    fn square_is_numpys() {
        assert_eq!(square(C::new(1.0, 2.0)), C::new(-3.0, 4.0));
        assert_eq!(square(C::new(-0.0, 0.0)), C::new(0.0, -0.0));
        // y^2 overflows, x^2 does not: -inf, as NumPy (not inf - inf).
        let s = square(C::new(1e300, 1e300));
        assert_eq!(s, C::new(f64::NEG_INFINITY, f64::INFINITY));
    }
}
