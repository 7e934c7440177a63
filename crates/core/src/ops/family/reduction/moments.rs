//! One-pass variance: per-chunk moments merged with Chan et al.'s parallel formula.
//!
//! A chunk becomes, for every output position, `(n, pivot, offset, M2)`: the count, the mean
//! as `pivot + offset` (the pivot is one of the values), and the sum of squared deviations,
//! computed two-pass inside the chunk, which is in memory anyway. Partials merge pairwise
//! with Chan's formula, `delta = mean_b - mean_a`, `mean = mean_a + delta * n_b / n`,
//! `M2 = M2_a + M2_b + delta² * n_a * n_b / n`. Keeping the mean as pivot plus offset is what
//! keeps `delta` exact on data with a large mean (`1e9 + rand`): a mean rounded to a double
//! near 1e9 is only good to 1e-7, and the between-chunk term would inherit that error. The
//! variance is `M2 / max(n - ddof, 0)`, as NumPy's. Each input chunk is read once, so a
//! variance holds no more of its input than the chunks in flight (the two-pass formula over
//! the whole tensor held all of it).
//!
//! Partials are float64 arrays of the reduced shape (reduced axes kept as length 1) with a
//! trailing axis of [`FIELDS`].

use crate::array::ArrayData;
use crate::kernels::{KResult, KernelError};
use crate::ops::infer::reduced_shape;
use ndarray::{Array2, ArrayD, Axis, IxDyn};
use std::borrow::Cow;

/// Length of the trailing axis of a partial, and its fields.
pub const FIELDS: usize = 4;
const N: usize = 0;
const PIVOT: usize = 1;
const OFFSET: usize = 2;
const M2: usize = 3;

fn reshape<T>(a: ArrayD<T>, shape: &[usize]) -> KResult<ArrayD<T>> {
    a.into_shape_with_order(IxDyn(shape))
        .map_err(|e| KernelError(format!("moments: {e}")))
}

/// `(n, mean, M2)` over `axes` of one chunk.
pub fn map(x: &ArrayData, axes: &[usize]) -> KResult<ArrayData> {
    let x: Cow<'_, ArrayD<f64>> = match x {
        ArrayData::F64(a) => Cow::Borrowed(a),
        other => Cow::Owned(other.clone().to_f64()),
    };
    let ndim = x.ndim();
    let mut shape = reduced_shape(x.shape(), axes, true);
    shape.push(FIELDS);
    let kept: Vec<usize> = (0..ndim).filter(|d| !axes.contains(d)).collect();
    let order: Vec<usize> = kept.iter().chain(axes).copied().collect();
    let inner: usize = axes.iter().map(|a| x.shape()[*a]).product();
    let outer: usize = kept.iter().map(|d| x.shape()[*d]).product();
    // Reduced axes last and contiguous (a copy only when they are not already): one row per
    // output position.
    let permuted = x.view().permuted_axes(IxDyn(&order));
    let standard = permuted.as_standard_layout();
    let rows = standard
        .view()
        .into_shape_with_order((outer, inner))
        .map_err(|e| KernelError(format!("moments: {e}")))?;
    let mut out = Array2::<f64>::zeros((outer, FIELDS));
    for (row, mut m) in rows.outer_iter().zip(out.outer_iter_mut()) {
        let Some(&pivot) = row.first() else {
            continue;
        };
        let n = inner as f64;
        let row = row
            .as_slice()
            .expect("rows of a standard layout are contiguous");
        let offset = sum_by(row, |v| v - pivot) / n;
        m[N] = n;
        m[PIVOT] = pivot;
        m[OFFSET] = offset;
        m[M2] = sum_by(row, |v| (v - pivot - offset) * (v - pivot - offset));
    }
    Ok(ArrayData::F64(reshape(out.into_dyn(), &shape)?))
}

/// `Σ f(v)` with eight independent accumulators, so the loop vectorizes and is not one chain
/// of dependent additions (a sum in order took 19% of `std` over a Zarr store whose chunks
/// were being decompressed, 4x the time of these two passes). Like NumPy's pairwise sum, the
/// order of the additions is not left to right.
fn sum_by(s: &[f64], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0.0f64; 8];
    let blocks = s.chunks_exact(8);
    let rest = blocks.remainder();
    for b in blocks {
        for (a, v) in acc.iter_mut().zip(b) {
            *a += f(*v);
        }
    }
    let mut total =
        ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for v in rest {
        total += f(*v);
    }
    total
}

/// Merges partials of one shape with Chan's formula.
pub fn combine(inputs: &[&ArrayData]) -> KResult<ArrayData> {
    let mut parts = inputs.iter().map(|p| match p {
        ArrayData::F64(a) if a.shape().last() == Some(&FIELDS) => Ok(a),
        other => Err(KernelError(format!(
            "moments partials must be float64 (..., {FIELDS}), got {} {:?}",
            other.dtype(),
            other.shape()
        ))),
    });
    let first = parts
        .next()
        .ok_or_else(|| KernelError("combine of no moments".into()))??;
    let mut acc = first.clone();
    for part in parts {
        let part = part?;
        if part.shape() != acc.shape() {
            return Err(KernelError(format!(
                "moments partials of shapes {:?} and {:?}",
                acc.shape(),
                part.shape()
            )));
        }
        for (mut a, b) in acc
            .lanes_mut(Axis(acc.ndim() - 1))
            .into_iter()
            .zip(part.lanes(Axis(part.ndim() - 1)))
        {
            let (na, nb) = (a[N], b[N]);
            if nb == 0.0 {
                continue;
            }
            if na == 0.0 {
                a.assign(&b);
                continue;
            }
            let n = na + nb;
            let delta = (b[PIVOT] - a[PIVOT]) + (b[OFFSET] - a[OFFSET]);
            a[OFFSET] += delta * nb / n;
            a[M2] += b[M2] + delta * delta * na * nb / n;
            a[N] = n;
        }
    }
    Ok(ArrayData::F64(acc))
}

/// `M2 / max(n - ddof, 0)`, dropping the reduced `axes` unless `keepdims`.
pub fn variance(m: &ArrayData, axes: &[usize], keepdims: bool, ddof: u32) -> KResult<ArrayData> {
    let ArrayData::F64(m) = m else {
        return Err(KernelError("moments must be float64".into()));
    };
    let var = m.map_axis(Axis(m.ndim() - 1), |t| {
        t[M2] / (t[N] - ddof as f64).max(0.0)
    });
    if keepdims {
        return Ok(ArrayData::F64(var));
    }
    // `var` keeps its partial's layout, which need not be standard: drop the axes, not reshape.
    Ok(ArrayData::F64(super::kernels::drop_unit_axes(var, axes)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_pass(v: &[f64], ddof: f64) -> f64 {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (v.len() as f64 - ddof)
    }

    fn chunked(v: &[f64], chunk: usize, ddof: u32) -> f64 {
        let parts: Vec<ArrayData> = v
            .chunks(chunk)
            .map(|c| {
                map(
                    &ArrayData::F64(ArrayD::from_shape_vec(IxDyn(&[c.len()]), c.to_vec()).unwrap()),
                    &[0],
                )
                .unwrap()
            })
            .chain(std::iter::once(
                // An empty chunk (a zero-length concatenation piece) changes nothing.
                map(&ArrayData::F64(ArrayD::zeros(IxDyn(&[0]))), &[0]).unwrap(),
            ))
            .collect();
        let refs: Vec<&ArrayData> = parts.iter().collect();
        let merged = combine(&refs).unwrap();
        match variance(&merged, &[0], false, ddof).unwrap() {
            ArrayData::F64(a) => a.into_iter().next().unwrap(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn chunked_moments_agree_with_the_two_pass_variance_even_with_a_large_mean() {
        let ramp: Vec<f64> = (0..1001).map(|i| 1e9 + i as f64 / 1000.0).collect();
        let wiggle: Vec<f64> = (0..500)
            .map(|i| ((i * 37 % 101) as f64).sin() * 3.0 - 7.0)
            .collect();
        for (data, what) in [(&ramp, "1e9 + ramp"), (&wiggle, "wiggle")] {
            for chunk in [1, 7, 97, 1000] {
                for ddof in [0, 1] {
                    let (got, want) = (chunked(data, chunk, ddof), two_pass(data, ddof as f64));
                    assert!(
                        (got - want).abs() <= 1e-9 * want.abs(),
                        "{what} chunk {chunk}: {got} vs {want}"
                    );
                }
            }
        }
        // The exact variance of 1e9 + i/1000, i < 1001: 1e-6 * (1001² - 1) / 12.
        assert!((chunked(&ramp, 97, 0) - 0.0835).abs() < 1e-10);
    }

    #[test]
    fn the_eight_lane_sum_adds_every_element_once() {
        for n in 0..40usize {
            let v: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let want = (n * n.saturating_sub(1) / 2) as f64;
            assert_eq!(sum_by(&v, |x| x), want, "n = {n}");
            assert_eq!(sum_by(&v, |_| 1.0), n as f64, "n = {n}");
        }
    }

    #[test]
    fn variance_drops_reduced_axes_of_moments_in_fortran_order() {
        use ndarray::ShapeBuilder;
        // Moments of shape (2, 3, 1, FIELDS) in Fortran order: n = 2, M2 = 0..6.
        let mut m = ArrayD::<f64>::zeros(IxDyn(&[2, 3, 1, FIELDS]).f());
        for (k, mut t) in m.lanes_mut(Axis(3)).into_iter().enumerate() {
            t[N] = 2.0;
            t[M2] = k as f64;
        }
        let ArrayData::F64(var) = variance(&ArrayData::F64(m), &[2], false, 1).unwrap() else {
            unreachable!()
        };
        assert_eq!(var.shape(), &[2, 3]);
        let mut seen: Vec<f64> = var.iter().copied().collect();
        seen.sort_by(f64::total_cmp);
        assert_eq!(seen, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    }

    #[test]
    fn constant_data_has_exactly_zero_variance() {
        let v = vec![-4.611686018427388e18; 40];
        assert_eq!(chunked(&v, 3, 0), 0.0);
    }
}
