//! The FFT kernels against `numpy.fft` (BENCHMARKS.md, "FFT"): one thread, best of 5.
//!
//! `cargo bench -p ares-core --bench fft` prints the time of
//! * `fft` of 2^22 complex128 values (one chunk: the transform kernel alone), and
//! * `rfft` along axis 0 of a 4096 × 4096 float64 matrix: the kernel on the whole matrix,
//!   and the chunked tensor (`chunk=(4096, 512)`: eight chunks, each whole along the axis)
//!   through `prepare` and the local executor on one slot,
//!
//! to compare with `python benches/fft/numpy_fft.py` run beside it (same values: a normal
//! draw; the transform's time does not depend on them).

use ares_core::array::{ArrayData, Complex64};
use ares_core::config::TaskConfig;
use ares_core::executor::execute;
use ares_core::ids::TaskId;
use ares_core::ops::family::fft::kernels::apply;
use ares_core::ops::family::fft::spec::{FftKind, FftNorm, FftSpec};
use ares_core::prepare::{prepare, uniform_cluster};
use ares_core::tensor::Tensor;
use ndarray::{ArrayD, IxDyn};
use std::time::Instant;

/// Large buffers in huge pages, as in the `ares` binary ([`ares_core::huge_pages`]).
#[global_allocator]
static GLOBAL: ares_core::huge_pages::HugePageAlloc<std::alloc::System> =
    ares_core::huge_pages::HugePageAlloc(std::alloc::System);

fn best(mut f: impl FnMut()) -> f64 {
    f(); // plans made, pages touched
    (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn values(n: usize) -> Vec<f64> {
    // A cheap deterministic signal (an LCG), the FFT's cost does not depend on the values.
    let mut s = 1u64;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect()
}

fn main() {
    let n = 1 << 22;
    let v = values(2 * n);
    let z: Vec<Complex64> = v.chunks(2).map(|p| Complex64::new(p[0], p[1])).collect();
    let x = ArrayData::C128(ArrayD::from_shape_vec(IxDyn(&[n]), z).unwrap());
    let spec = FftSpec {
        kind: FftKind::Forward,
        axis: 0,
        n,
        norm: FftNorm::Backward,
    };
    let t = best(|| {
        std::hint::black_box(apply(&spec, &x).unwrap());
    });
    println!("fft 2^22 complex128, kernel: {t:.4} s");

    let m = 4096;
    let a = ArrayData::F64(ArrayD::from_shape_vec(IxDyn(&[m, m]), values(m * m)).unwrap());
    let spec = FftSpec {
        kind: FftKind::RealForward,
        axis: 0,
        n: m,
        norm: FftNorm::Backward,
    };
    let t = best(|| {
        std::hint::black_box(apply(&spec, &a).unwrap());
    });
    println!("rfft axis 0 of 4096 x 4096 float64, kernel on one chunk: {t:.4} s");

    let program = "x = randn((4096, 4096), chunk=(4096, 512), seed=1); fft.rfft(x, axis=0)";
    let baseline = "randn((4096, 4096), chunk=(4096, 512), seed=1)";
    for (what, text) in [("with the draw", program), ("the draw alone", baseline)] {
        let t = ares_core::expr::evaluate(text).unwrap();
        let graph = Tensor::graph(&[&t]);
        let p = prepare(
            &graph,
            &TaskConfig::default(),
            &uniform_cluster(1, 1),
            TaskId(1),
        )
        .unwrap();
        let secs = best(|| {
            std::hint::black_box(execute(&p.subtasks, 1).unwrap());
        });
        println!("rfft axis 0 of 4096 x 4096, chunks (4096, 512), local executor 1 slot, {what}: {secs:.4} s");
    }
}
