//! `var`/`std` against a high-precision reference, through the whole pipeline.
//!
//! Why a test of its own: the one-pass variance (per-chunk moments merged with Chan's
//! formula, `ops::family::reduction::moments`) is only worth having if it stays exact where the textbook
//! one-pass formula `E[x²] - E[x]²` collapses: data with a large mean (`1e9 + rand`), where
//! `x²` is ~1e18 and a double keeps ~1e2 of absolute precision, 1000× the variance itself.
//! The merge also has corner cases a uniform chunking never reaches: chunks of one element
//! (`M2 = 0`, the mean is the value), ragged chunk lengths, trees of any fan-in.
//!
//! The reference is independent of the kernels and more precise than any double algorithm:
//! the whole-array evaluator (`common::reference`) gives the input values, and the variance of
//! those exact doubles is computed in double-double arithmetic (error-free sums and products,
//! ~106 bits), so a disagreement beyond 1e-12 relative is ares', not the reference's.

mod common;

use ares::config::TaskConfig;
use ares_core::array::Scalar;
use ares_core::ops::{ChunkSpec, Op};
use ares_core::tensor::{self, Tensor};
use common::{reference, run};
use ndarray::{ArrayD, Axis};
use proptest::prelude::*;

/// A double-double number `hi + lo`, |lo| ≤ ulp(hi) / 2.
#[derive(Clone, Copy, Debug)]
struct Dd(f64, f64);

/// `a + b` exactly, as a rounded sum and its error (Knuth's TwoSum).
fn two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    let bb = s - a;
    Dd(s, (a - (s - bb)) + (b - bb))
}

impl Dd {
    const ZERO: Dd = Dd(0.0, 0.0);

    fn add(self, o: Dd) -> Dd {
        let s = two_sum(self.0, o.0);
        let t = two_sum(self.1, o.1);
        let s = two_sum(s.0, s.1 + t.0);
        two_sum(s.0, s.1 + t.1)
    }

    fn mul(self, o: Dd) -> Dd {
        let p = self.0 * o.0;
        let e = self.0.mul_add(o.0, -p);
        two_sum(p, e + (self.0 * o.1 + self.1 * o.0))
    }

    fn div_f64(self, d: f64) -> Dd {
        let q1 = self.0 / d;
        // The remainder self - q1 * d, exactly enough: q1 * d by fma.
        let r = Dd(self.0, self.1).add(Dd(-q1 * d, -(q1.mul_add(d, -(q1 * d)))));
        let q2 = (r.0 + r.1) / d;
        two_sum(q1, q2)
    }
}

/// `Σ (x - mean)² / max(n - ddof, 0)` in double-double, rounded once at the end.
fn dd_variance(values: &[f64], ddof: usize) -> f64 {
    let n = values.len() as f64;
    let sum = values.iter().fold(Dd::ZERO, |acc, v| acc.add(Dd(*v, 0.0)));
    let mean = sum.div_f64(n);
    let m2 = values.iter().fold(Dd::ZERO, |acc, v| {
        let d = Dd(*v, 0.0).add(Dd(-mean.0, -mean.1));
        acc.add(d.mul(d))
    });
    let denom = (n - ddof as f64).max(0.0);
    if denom == 0.0 {
        return (m2.0 + m2.1) / denom;
    }
    let q = m2.div_f64(denom);
    q.0 + q.1
}

/// The reference result: `axis` None reduces everything, else one value per kept position.
fn reference_var(x: &ArrayD<f64>, axis: Option<usize>, ddof: usize, std: bool) -> ArrayD<f64> {
    let finish = |v: f64| if std { v.sqrt() } else { v };
    match axis {
        None => {
            let values: Vec<f64> = x.iter().copied().collect();
            ArrayD::from_elem(ndarray::IxDyn(&[]), finish(dd_variance(&values, ddof)))
        }
        Some(a) => x.map_axis(Axis(a), |lane| {
            let values: Vec<f64> = lane.iter().copied().collect();
            finish(dd_variance(&values, ddof))
        }),
    }
}

/// Chunk lengths adding up to `n`, from `cuts` (each taken modulo the room left, plus 1):
/// ragged, with runs of length 1 whenever a cut is small.
fn lengths(n: usize, cuts: &[usize]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut left = n;
    for c in cuts.iter().cycle() {
        if left == 0 {
            break;
        }
        let len = 1 + c % left;
        out.push(len);
        left -= len;
    }
    out
}

/// `offset + scale * rand(shape)` with explicit chunk lengths.
fn data(shape: &[usize; 2], cuts: &[usize], seed: u64, offset: f64, scale: f64) -> Tensor {
    let spec = ChunkSpec::Explicit(vec![lengths(shape[0], cuts), lengths(shape[1], &cuts[1..])]);
    tensor::rand(shape, spec, Some(seed))
        .unwrap()
        .binary_scalar(Op::Mul, Scalar::F64(scale), false)
        .unwrap()
        .binary_scalar(Op::Add, Scalar::F64(offset), false)
        .unwrap()
}

fn assert_rel(got: &ares_core::array::ArrayData, want: &ArrayD<f64>, tol: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    for (i, (g, w)) in got.iter_f64().zip(want.iter()).enumerate() {
        let ok = (g.is_nan() && w.is_nan()) || g == *w || (g - w).abs() <= tol * w.abs();
        assert!(ok, "{what}: element {i}: got {g:e}, want {w:e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Any chunking, any tree fan-in, large means: within 1e-12 of the double-double
    /// reference (NumPy's own two-pass result is within a few ulps of it too).
    #[test]
    fn var_and_std_match_a_double_double_reference(
        rows in 1usize..48,
        cols in 1usize..6,
        cuts in prop::collection::vec(0usize..12, 2..8),
        seed in any::<u64>(),
        offset in prop::sample::select(vec![0.0, 1e9, -3e12, 7.5e14]),
        scale in prop::sample::select(vec![1.0, 1e-3, 1e4]),
        axis in prop::option::of(0usize..2),
        ddof in 0usize..2,
        std in any::<bool>(),
        combine in 2usize..6,
    ) {
        let x = data(&[rows, cols], &cuts, seed, offset, scale);
        let values = reference::evaluate(&Tensor::graph(&[&x])).remove(0);
        let axes = axis.map(|a| vec![a as i64]);
        let t = if std {
            x.std(axes.as_deref(), false, ddof).unwrap()
        } else {
            x.var(axes.as_deref(), false, ddof).unwrap()
        };
        let want = reference_var(&values, axis, ddof, std);
        for (fuse, workers, slots) in [(true, 2, 2), (false, 1, 1)] {
            let config = TaskConfig { fuse_enabled: fuse, combine_size: combine, ..TaskConfig::default() };
            let got = run(&t, &config, workers, slots);
            assert_rel(&got, &want, 1e-12, &format!("{rows}x{cols} cuts {cuts:?} +{offset:e} axis {axis:?} ddof {ddof} fuse {fuse}"));
        }
    }
}

/// The case the issue names: `1e9 + rand` in chunks of one element, of three, and ragged,
/// where `E[x²] - E[x]²` in doubles is wrong by orders of magnitude more than the variance.
#[test]
fn a_large_mean_costs_no_precision() {
    let n = 4001;
    for chunk in [
        ChunkSpec::Uniform(1),
        ChunkSpec::Uniform(3),
        ChunkSpec::Uniform(1000),
        ChunkSpec::Explicit(vec![lengths(n, &[0, 0, 5, 999, 17, 0, 2000])]),
    ] {
        let x = tensor::rand(&[n], chunk.clone(), Some(42))
            .unwrap()
            .binary_scalar(Op::Add, Scalar::F64(1e9), false)
            .unwrap();
        let values = reference::evaluate(&Tensor::graph(&[&x])).remove(0);
        let want = reference_var(&values, None, 0, false);
        let got = run(
            &x.var(None, false, 0).unwrap(),
            &TaskConfig::default(),
            2,
            2,
        );
        assert_rel(
            &got,
            &want,
            1e-13,
            &format!("1e9 + rand({n}), chunk {chunk}"),
        );
        // The variance of uniform [0, 1) data is ~1/12, and the textbook formula is far off.
        let v: Vec<f64> = values.iter().copied().collect();
        let mean = v.iter().sum::<f64>() / n as f64;
        let naive = v.iter().map(|x| x * x).sum::<f64>() / n as f64 - mean * mean;
        let exact = *want.iter().next().unwrap();
        assert!((exact - 1.0 / 12.0).abs() < 0.01);
        assert!(
            (naive - exact).abs() > 0.5 * exact,
            "naive {naive}: the data should defeat it"
        );
    }
}

#[test]
fn the_double_double_reference_is_exact_on_known_values() {
    // 1e9 + i/1000 for i < 1001: variance 1e-6 (1001² - 1) / 12 = 0.0835.
    let ramp: Vec<f64> = (0..1001).map(|i| 1e9 + i as f64 / 1000.0).collect();
    // The values are doubles near 1e9 (ulp 1.2e-7), so 1e-9 of slack for their rounding.
    assert!((dd_variance(&ramp, 0) - 0.0835).abs() < 1e-9);
    assert_eq!(dd_variance(&[5.0; 7], 1), 0.0);
    assert_eq!(dd_variance(&[1.0, 3.0], 1), 2.0);
    assert!(dd_variance(&[1.0], 1).is_nan());
}
