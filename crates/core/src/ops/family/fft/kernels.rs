//! The chunk kernel of one transform: every lane along the axis (whole in the chunk) is
//! copied into a buffer cut or padded to the transform's length, transformed by rustfft
//! (complex) or realfft (real input or output), scaled, and written out; lanes of a strided
//! axis are moved in and out of contiguous buffers in blocks, by cache-line tiles.
//!
//! Plans are made once per length and thread: each compute thread keeps one `FftPlanner`
//! and one `RealFftPlanner` per float type, which cache the plans they made, so a chunk
//! reuses the plan (and its twiddle factors) of every chunk of the same length before it,
//! and a chunk's lanes share one buffer and one scratch space. float32 and complex64
//! compute in `f32`, as NumPy's pocketfft does; everything else in `f64`.

use super::spec::{FftKind, FftSpec};
use crate::array::ArrayData;
use crate::kernels::{kerr, KResult};
use ndarray::{ArrayD, IxDyn};
use num_complex::Complex;
use num_traits::{Float, Zero};
use realfft::RealFftPlanner;
use rustfft::{FftNum, FftPlanner};
use std::cell::RefCell;

/// A float type with this thread's planners.
trait Planned: FftNum + Float + bytemuck::Zeroable {
    fn with_planners<R>(f: impl FnOnce(&mut FftPlanner<Self>, &mut RealFftPlanner<Self>) -> R)
        -> R;
}

/// This thread's planners of one float type, boxed: a thread-local holds only a pointer
/// (the Python extension is loaded with `dlopen`, where static TLS space is a few hundred
/// bytes in all).
type Planners<T> = RefCell<Option<Box<(FftPlanner<T>, RealFftPlanner<T>)>>>;

thread_local! {
    static PLANNERS_F64: Planners<f64> = const { RefCell::new(None) };
    static PLANNERS_F32: Planners<f32> = const { RefCell::new(None) };
}

fn with<T: FftNum, R>(
    planners: &Planners<T>,
    f: impl FnOnce(&mut FftPlanner<T>, &mut RealFftPlanner<T>) -> R,
) -> R {
    let mut slot = planners.borrow_mut();
    let (c, r) =
        &mut **slot.get_or_insert_with(|| Box::new((FftPlanner::new(), RealFftPlanner::new())));
    f(c, r)
}

impl Planned for f64 {
    fn with_planners<R>(f: impl FnOnce(&mut FftPlanner<f64>, &mut RealFftPlanner<f64>) -> R) -> R {
        PLANNERS_F64.with(|p| with(p, f))
    }
}

impl Planned for f32 {
    fn with_planners<R>(f: impl FnOnce(&mut FftPlanner<f32>, &mut RealFftPlanner<f32>) -> R) -> R {
        PLANNERS_F32.with(|p| with(p, f))
    }
}

/// The transform `spec` of one chunk holding the whole axis.
pub fn apply(spec: &FftSpec, x: &ArrayData) -> KResult<ArrayData> {
    if spec.axis >= x.shape().len() {
        return kerr(format!(
            "{}: axis {} of a {}-d chunk",
            spec.name(),
            spec.axis,
            x.shape().len()
        ));
    }
    let want = spec.compute_dtype(x.dtype());
    let x = if x.dtype() == want {
        std::borrow::Cow::Borrowed(x)
    } else {
        std::borrow::Cow::Owned(x.clone().cast(want))
    };
    Ok(match (spec.kind, x.as_ref()) {
        (FftKind::Forward | FftKind::Inverse, ArrayData::C64(a)) => ArrayData::C64(c2c(a, spec)?),
        (FftKind::Forward | FftKind::Inverse, ArrayData::C128(a)) => ArrayData::C128(c2c(a, spec)?),
        (FftKind::RealForward, ArrayData::F32(a)) => ArrayData::C64(r2c(a, spec)?),
        (FftKind::RealForward, ArrayData::F64(a)) => ArrayData::C128(r2c(a, spec)?),
        (FftKind::RealInverse, ArrayData::C64(a)) => ArrayData::F32(c2r(a, spec)?),
        (FftKind::RealInverse, ArrayData::C128(a)) => ArrayData::F64(c2r(a, spec)?),
        (_, other) => {
            return kerr(format!(
                "{}: a {} chunk reached the kernel",
                spec.name(),
                other.dtype()
            ))
        }
    })
}

/// Lanes transformed per block when the axis is not the last. A block's lanes are moved
/// between the chunk and contiguous lane buffers by [`transpose_tiles`]; its buffers (32
/// lanes of 4096 complex128: 2 MB) stay in the L2/L3 caches while it is transformed.
const LANES_PER_BLOCK: usize = 32;

/// The side of the square tiles [`transpose_tiles`] moves: 8 float64 are one 64-byte cache
/// line, so each tile reads 8 whole lines of the source and writes 8 whole lines of the
/// destination, where an element-by-element gather of a strided lane touches one element
/// per cache line (and per page: a 4096 × 4096 chunk's rows are 32 KB apart, so the walk
/// down a lane is TLB-bound).
const TILE: usize = 8;

/// `dst[c * dst_stride + r] = src[r * src_stride + c]` for `r < rows`, `c < cols`: a
/// transpose of a `rows × cols` window between two row-major buffers, by `TILE × TILE`
/// tiles (the edge tiles cut to what is left).
fn transpose_tiles<T: Copy>(
    src: &[T],
    src_stride: usize,
    (rows, cols): (usize, usize),
    dst: &mut [T],
    dst_stride: usize,
) {
    for r0 in (0..rows).step_by(TILE) {
        let h = TILE.min(rows - r0);
        for c0 in (0..cols).step_by(TILE) {
            let w = TILE.min(cols - c0);
            for c in c0..c0 + w {
                let out = &mut dst[c * dst_stride + r0..][..h];
                for (r, d) in out.iter_mut().enumerate() {
                    *d = src[(r0 + r) * src_stride + c];
                }
            }
        }
    }
}

/// Runs `f` on every lane along `axis`: the lane's first `in_len` values (zeros past the
/// axis' end) in a buffer `f` may overwrite, and the `out_len` values `f` writes, which
/// become the result's lane. Lanes are taken `LANES_PER_BLOCK` at a time, moved in and out
/// of contiguous buffers by tiles, so a strided axis is read and written a cache line at a
/// time. The result starts as zeroed pages (`calloc`: no pass to write zeros it would
/// overwrite anyway), advised to be huge ones by the global allocator
/// ([`crate::huge_pages`]).
fn transform_lanes<I, O>(
    x: &ArrayD<I>,
    axis: usize,
    in_len: usize,
    out_len: usize,
    mut f: impl FnMut(&mut [I], &mut [O]) -> KResult<()>,
) -> KResult<ArrayD<O>>
where
    I: Copy + Zero,
    O: Copy + Zero + bytemuck::Zeroable,
{
    let shape = x.shape();
    let (outer, m, inner) = (
        shape[..axis].iter().product::<usize>(),
        shape[axis],
        shape[axis + 1..].iter().product::<usize>(),
    );
    let xs = x.as_standard_layout();
    let src = xs.as_slice().unwrap_or(&[]);
    let mut out: Vec<O> = bytemuck::zeroed_vec(outer * out_len * inner);
    let take = m.min(in_len);
    let block = LANES_PER_BLOCK.min(inner.max(1));
    let mut ins = vec![I::zero(); block * in_len];
    let mut outs = vec![O::zero(); block * out_len];
    for o in 0..outer {
        let (base_in, base_out) = (o * m * inner, o * out_len * inner);
        for j0 in (0..inner).step_by(block) {
            let w = block.min(inner - j0);
            transpose_tiles(&src[base_in + j0..], inner, (take, w), &mut ins, in_len);
            for b in 0..w {
                let lane = &mut ins[b * in_len..(b + 1) * in_len];
                lane[take..].fill(I::zero());
                f(lane, &mut outs[b * out_len..(b + 1) * out_len])?;
            }
            let dst = &mut out[base_out + j0..];
            transpose_tiles(&outs, out_len, (w, out_len), dst, inner);
        }
    }
    let mut s = shape.to_vec();
    s[axis] = out_len;
    ArrayD::from_shape_vec(IxDyn(&s), out).or_else(|e| kerr(format!("fft output: {e}")))
}

fn scale_all<T: Float>(v: &mut [Complex<T>], scale: T) {
    if scale != T::one() {
        for z in v {
            *z = Complex::new(z.re * scale, z.im * scale);
        }
    }
}

fn c2c<T: Planned>(x: &ArrayD<Complex<T>>, spec: &FftSpec) -> KResult<ArrayD<Complex<T>>> {
    let n = spec.n;
    let fft = T::with_planners(|p, _| match spec.kind {
        FftKind::Inverse => p.plan_fft_inverse(n),
        _ => p.plan_fft_forward(n),
    });
    let scale = T::from(spec.scale()).unwrap_or_else(T::one);
    let mut scratch = vec![Complex::zero(); fft.get_inplace_scratch_len()];
    if spec.axis + 1 == x.ndim() {
        // Contiguous lanes: each copied into its place in the result and transformed there
        // (no buffer, one copy of the data fewer).
        let m = x.shape()[spec.axis];
        let xs = x.as_standard_layout();
        let src = xs.as_slice().unwrap_or(&[]);
        let lanes = x.shape()[..spec.axis].iter().product::<usize>();
        let mut out: Vec<Complex<T>> = bytemuck::zeroed_vec(lanes * n);
        let take = m.min(n);
        for (o, dst) in out.chunks_exact_mut(n).enumerate() {
            dst[..take].copy_from_slice(&src[o * m..o * m + take]);
            fft.process_with_scratch(dst, &mut scratch);
            scale_all(dst, scale);
        }
        let mut shape = x.shape().to_vec();
        shape[spec.axis] = n;
        return ArrayD::from_shape_vec(IxDyn(&shape), out)
            .or_else(|e| kerr(format!("fft output: {e}")));
    }
    transform_lanes(x, spec.axis, n, n, |buf, out| {
        fft.process_with_scratch(buf, &mut scratch);
        out.copy_from_slice(buf);
        scale_all(out, scale);
        Ok(())
    })
}

fn r2c<T: Planned>(x: &ArrayD<T>, spec: &FftSpec) -> KResult<ArrayD<Complex<T>>> {
    let n = spec.n;
    let fft = T::with_planners(|_, r| r.plan_fft_forward(n));
    let scale = T::from(spec.scale()).unwrap_or_else(T::one);
    let mut scratch = fft.make_scratch_vec();
    transform_lanes(x, spec.axis, n, spec.out_len(), |buf, out| {
        fft.process_with_scratch(buf, out, &mut scratch)
            .or_else(|e| kerr(format!("{}: {e}", spec.name())))?;
        scale_all(out, scale);
        Ok(())
    })
}

fn c2r<T: Planned>(x: &ArrayD<Complex<T>>, spec: &FftSpec) -> KResult<ArrayD<T>> {
    let n = spec.n;
    let fft = T::with_planners(|_, r| r.plan_fft_inverse(n));
    let scale = T::from(spec.scale()).unwrap_or_else(T::one);
    let mut scratch = fft.make_scratch_vec();
    transform_lanes(x, spec.axis, spec.in_len(), n, |buf, out| {
        // The imaginary parts of the zero (and Nyquist) frequency are ignored, as pocketfft
        // ignores them; realfft says so with `InputValues` after transforming.
        match fft.process_with_scratch(buf, out, &mut scratch) {
            Ok(()) | Err(realfft::FftError::InputValues(..)) => {}
            Err(e) => return kerr(format!("{}: {e}", spec.name())),
        }
        if scale != T::one() {
            for v in out.iter_mut() {
                *v = *v * scale;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::family::fft::spec::FftNorm;
    use ndarray::Axis;
    use num_complex::Complex64;
    use std::f64::consts::PI;

    /// The DFT by its definition, `X_k = scale · Σ_j x_j e^{∓2πi jk/n}` over the input cut or
    /// padded to `n`.
    fn dft(x: &[Complex64], n: usize, inverse: bool, scale: f64) -> Vec<Complex64> {
        let sign = if inverse { 1.0 } else { -1.0 };
        (0..n)
            .map(|k| {
                let s: Complex64 = (0..n.min(x.len()))
                    .map(|j| {
                        x[j] * Complex64::from_polar(
                            1.0,
                            sign * 2.0 * PI * (j * k) as f64 / n as f64,
                        )
                    })
                    .sum();
                s * scale
            })
            .collect()
    }

    fn signal(len: usize, seed: u64) -> Vec<Complex64> {
        (0..len)
            .map(|i| {
                let t = (i as u64 * 7919 + seed * 104729) % 1000;
                Complex64::new(
                    t as f64 / 100.0 - 5.0,
                    ((t * 31) % 997) as f64 / 50.0 - 10.0,
                )
            })
            .collect()
    }

    fn close(a: &[Complex64], b: &[Complex64]) {
        assert_eq!(a.len(), b.len());
        let norm: f64 = b.iter().map(|v| v.norm()).fold(1.0, f64::max);
        for (p, q) in a.iter().zip(b) {
            assert!((p - q).norm() < 1e-12 * norm, "{p} vs {q}");
        }
    }

    fn spec(kind: FftKind, axis: usize, n: usize, norm: FftNorm) -> FftSpec {
        FftSpec {
            kind,
            axis,
            n,
            norm,
        }
    }

    /// Both axes of a 2-D chunk, lengths prime and composite, cut and padded, every norm.
    #[test]
    fn complex_transforms_equal_the_direct_dft() {
        let (rows, cols) = (6, 7);
        let data = signal(rows * cols, 1);
        let x = ArrayD::from_shape_vec(IxDyn(&[rows, cols]), data.clone()).unwrap();
        for (axis, len) in [(0, rows), (1, cols)] {
            for n in [len, len - 2, len + 3, 1] {
                for norm in [FftNorm::Backward, FftNorm::Ortho, FftNorm::Forward] {
                    for kind in [FftKind::Forward, FftKind::Inverse] {
                        let s = spec(kind, axis, n, norm);
                        let got = apply(&s, &ArrayData::C128(x.clone())).unwrap();
                        let ArrayData::C128(got) = got else {
                            panic!("complex128")
                        };
                        for (lane, out) in
                            x.lanes(Axis(axis)).into_iter().zip(got.lanes(Axis(axis)))
                        {
                            let lane: Vec<_> = lane.to_vec();
                            let want = dft(&lane, n, kind == FftKind::Inverse, s.scale());
                            close(&out.to_vec(), &want);
                        }
                    }
                }
            }
        }
    }

    /// The tiled transpose against the element-by-element one: windows smaller than a tile,
    /// not multiples of it, and offset in wider buffers.
    #[test]
    fn tiled_transpose_equals_the_plain_one() {
        for (rows, cols) in [(1, 1), (3, 5), (8, 8), (9, 17), (16, 3), (29, 40)] {
            let (src_stride, dst_stride) = (cols + 3, rows + 5);
            let src: Vec<u32> = (0..rows * src_stride).map(|v| v as u32).collect();
            let mut got = vec![u32::MAX; cols * dst_stride];
            transpose_tiles(&src, src_stride, (rows, cols), &mut got, dst_stride);
            for c in 0..cols {
                for r in 0..dst_stride {
                    let want = match r < rows {
                        true => src[r * src_stride + c],
                        false => u32::MAX,
                    };
                    assert_eq!(got[c * dst_stride + r], want, "{rows}x{cols} at ({r}, {c})");
                }
            }
        }
    }

    /// A strided axis in several blocks of lanes (the last one partial), rows not a multiple
    /// of the tile, a leading axis: each lane against the direct DFT, complex and real,
    /// cut and padded.
    #[test]
    fn blocked_lanes_of_a_strided_axis_equal_the_direct_dft() {
        let shape = [2, 13, LANES_PER_BLOCK + 5];
        let data = signal(shape.iter().product(), 3);
        let x = ArrayD::from_shape_vec(IxDyn(&shape), data).unwrap();
        let re = x.mapv(|z| z.re);
        for n in [13, 9, 20] {
            let s = spec(FftKind::Forward, 1, n, FftNorm::Ortho);
            let ArrayData::C128(got) = apply(&s, &ArrayData::C128(x.clone())).unwrap() else {
                panic!("complex128")
            };
            for (lane, out) in x.lanes(Axis(1)).into_iter().zip(got.lanes(Axis(1))) {
                close(&out.to_vec(), &dft(&lane.to_vec(), n, false, s.scale()));
            }
            let s = spec(FftKind::RealForward, 1, n, FftNorm::Backward);
            let ArrayData::C128(got) = apply(&s, &ArrayData::F64(re.clone())).unwrap() else {
                panic!("complex128")
            };
            assert_eq!(got.shape(), &[2, n / 2 + 1, shape[2]]);
            for (lane, out) in re.lanes(Axis(1)).into_iter().zip(got.lanes(Axis(1))) {
                let lane: Vec<Complex64> = lane.iter().map(|v| Complex64::new(*v, 0.0)).collect();
                close(&out.to_vec(), &dft(&lane, n, false, 1.0)[..n / 2 + 1]);
            }
            // And back: irfft(rfft(x, n), n) along the strided axis is x cut or padded to n.
            let back = spec(FftKind::RealInverse, 1, n, FftNorm::Backward);
            let ArrayData::F64(y) = apply(&back, &ArrayData::C128(got)).unwrap() else {
                panic!("float64")
            };
            for (lane, out) in re.lanes(Axis(1)).into_iter().zip(y.lanes(Axis(1))) {
                for (j, v) in out.iter().enumerate() {
                    let want = lane.get(j).copied().unwrap_or(0.0);
                    assert!((v - want).abs() < 1e-12, "n={n} j={j}: {v} vs {want}");
                }
            }
        }
    }

    #[test]
    fn real_transforms_equal_the_direct_dft_and_invert() {
        let real: Vec<f64> = signal(11, 2).iter().map(|z| z.re).collect();
        let x = ArrayD::from_shape_vec(IxDyn(&[11]), real.clone()).unwrap();
        for n in [11, 8, 16, 1] {
            let s = spec(FftKind::RealForward, 0, n, FftNorm::Backward);
            let ArrayData::C128(got) = apply(&s, &ArrayData::F64(x.clone())).unwrap() else {
                panic!("complex128")
            };
            let as_c: Vec<Complex64> = real.iter().map(|v| Complex64::new(*v, 0.0)).collect();
            let want = dft(&as_c, n, false, 1.0);
            close(&got.iter().copied().collect::<Vec<_>>(), &want[..n / 2 + 1]);
            // irfft(rfft(x, n), n) is x cut or padded to n.
            let back = spec(FftKind::RealInverse, 0, n, FftNorm::Backward);
            let ArrayData::F64(y) = apply(&back, &ArrayData::C128(got)).unwrap() else {
                panic!("float64")
            };
            for (j, v) in y.iter().enumerate() {
                let want = if j < 11 { real[j] } else { 0.0 };
                assert!((v - want).abs() < 1e-12, "n={n} j={j}: {v} vs {want}");
            }
        }
        // float32 computes in float32 and gives complex64.
        let s = spec(FftKind::RealForward, 0, 11, FftNorm::Ortho);
        let got = apply(
            &s,
            &ArrayData::F64(x.clone()).cast(crate::array::DType::F32),
        )
        .unwrap();
        assert_eq!(got.dtype(), crate::array::DType::C64);
    }
}
