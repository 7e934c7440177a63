//! The array API's `fft` extension (issue 30): `fft ifft fftn ifftn rfft irfft rfftn irfftn
//! hfft ihfft fftfreq rfftfreq fftshift ifftshift`, named `fft.NAME` in the expression
//! language and `ar.fft.NAME` in Python, with NumPy's `n=`/`s=`, `axis=`/`axes=` and `norm=`.
//!
//! One op, [`Op::Fft`], computes one transform along one axis ([`spec`]); the
//! multi-dimensional and Hermitian functions and the helpers are composed of it and of the
//! tensor API's slicing, concatenation and `arange` ([`tensor`]). As dask does, the
//! transformed axis is rechunked into one chunk and the other axes keep their chunks
//! ([`tile`]), so the transform of each lane runs whole in one kernel ([`kernels`]: rustfft
//! and realfft, plans made once per length and thread). A chunk that would hold more than
//! [`FFT_CHUNK_BUDGET`] bytes is refused when the graph is tiled, naming its size and what to
//! rechunk.

pub mod kernels;
pub mod spec;
mod tensor;
mod tile;

pub use tensor::fftfreq;

use crate::array::{DType, Shape};
use crate::error::{AresError, Result};
use crate::ops::registry::{Function, OpFamily};
use crate::ops::{Family, Op, OpArgs};

/// The most bytes one chunk of a transform may hold (its input or its output, whichever is
/// larger): 1 GiB, 2^26 complex128 values. The worker's memory limit is checked beyond it
/// by the plan-time projection, as for every op.
pub const FFT_CHUNK_BUDGET: u64 = 1 << 30;

const FFT_FUNCTIONS: &[Function] = &[
    Function::other("fft.fft", "One-dimensional discrete Fourier Transform."),
    Function::other(
        "fft.ifft",
        "One-dimensional inverse discrete Fourier Transform.",
    ),
    Function::other("fft.fftn", "N-dimensional discrete Fourier Transform."),
    Function::other(
        "fft.ifftn",
        "N-dimensional inverse discrete Fourier Transform.",
    ),
    Function::other(
        "fft.rfft",
        "One-dimensional discrete Fourier Transform for real input.",
    ),
    Function::other(
        "fft.irfft",
        "Inverse of rfft: a real signal from its non-negative frequencies.",
    ),
    Function::other(
        "fft.rfftn",
        "N-dimensional discrete Fourier Transform for real input.",
    ),
    Function::other("fft.irfftn", "Inverse of rfftn."),
    Function::other(
        "fft.hfft",
        "FFT of a signal with Hermitian symmetry (a real spectrum).",
    ),
    Function::other(
        "fft.ihfft",
        "Inverse FFT of a signal with Hermitian symmetry.",
    ),
    Function::other(
        "fft.fftfreq",
        "The sample frequencies of the discrete Fourier Transform.",
    ),
    Function::other(
        "fft.rfftfreq",
        "The sample frequencies of rfft (non-negative ones).",
    ),
    Function::other(
        "fft.fftshift",
        "Shift the zero-frequency component to the center.",
    ),
    Function::other("fft.ifftshift", "The inverse of fftshift."),
];

pub struct FftFamily;

impl OpFamily for FftFamily {
    fn name(&self) -> &'static str {
        "fft"
    }

    fn owns(&self, op: Op) -> bool {
        matches!(op.family(), Family::Fft)
    }

    fn functions(&self) -> Vec<Function> {
        FFT_FUNCTIONS.to_vec()
    }
}

/// The shape and dtype of a transform.
pub(crate) fn infer(op: Op, args: &OpArgs, inputs: &[(&Shape, DType)]) -> Result<(Shape, DType)> {
    match (op, args, inputs) {
        (Op::Fft, OpArgs::Fft(spec), [(shape, dtype)]) => spec.infer(shape, *dtype),
        _ => Err(AresError::arg(
            op.name(),
            format!(
                "takes one input and its transform, got {} inputs and {args:?}",
                inputs.len()
            ),
        )),
    }
}
