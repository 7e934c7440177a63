//! The family's numbers on the local executor (chunked, two slots) against direct loops
//! over the same values, NumPy's rules spelled out.

/// The values of `program` (its last expression), flattened, as float64.
fn run(program: &str) -> Vec<f64> {
    let t = crate::expr::evaluate(program).unwrap_or_else(|e| panic!("{program}: {e}"));
    let mut results = crate::executor::compute(&[&t], &Default::default(), 2).unwrap();
    results.remove(0).to_f64().iter().copied().collect()
}

fn same(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        let ok = (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-12 * w.abs().max(1.0);
        assert!(ok, "{got:?} vs {want:?}");
    }
}

/// `[[1, nan, 3, 4], [nan, nan, nan, nan], [7, 8, nan, 10]]` in chunks of (2, 3).
const X: &str = "a = arange(12, chunk=5) + 1.0; \
     x = rechunk(reshape(where((a == 2) | ((a > 4) & (a < 9)) | (a == 11), nan, \
     where(a > 8, a - 2, a)), (3, 4)), (2, 3))";

#[test]
fn nan_reductions_skip_nan_as_numpy() {
    let rows: [&[f64]; 3] = [&[1.0, 3.0, 4.0], &[], &[7.0, 8.0, 10.0]];
    let per_row = |f: &dyn Fn(&[f64]) -> f64| rows.iter().map(|r| f(r)).collect::<Vec<_>>();
    let mean = |r: &[f64]| r.iter().sum::<f64>() / r.len() as f64;
    let var = |r: &[f64], ddof: f64| {
        let m = mean(r);
        let dof = r.len() as f64 - ddof;
        match dof > 0.0 {
            true => r.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / dof,
            false => f64::NAN,
        }
    };
    same(
        &run(&format!("{X}; nansum(x, axis=1)")),
        &per_row(&|r| r.iter().sum()),
    );
    same(
        &run(&format!("{X}; nanprod(x, axis=1)")),
        &per_row(&|r| r.iter().product()),
    );
    same(&run(&format!("{X}; nanmean(x, axis=1)")), &per_row(&mean));
    let min = |r: &[f64]| r.iter().copied().reduce(f64::min).unwrap_or(f64::NAN);
    same(&run(&format!("{X}; nanmin(x, axis=-1)")), &per_row(&min));
    let max = |r: &[f64]| r.iter().copied().reduce(f64::max).unwrap_or(f64::NAN);
    same(
        &run(&format!("{X}; nanmax(x, 1, keepdims=True)")),
        &per_row(&max),
    );
    same(
        &run(&format!("{X}; nanvar(x, axis=1, ddof=1)")),
        &per_row(&|r| var(r, 1.0)),
    );
    same(
        &run(&format!("{X}; nanstd(x, axis=1)")),
        &per_row(&|r| var(r, 0.0).sqrt()),
    );
    same(&run(&format!("{X}; nanmean(x)")), &[33.0 / 6.0]);
    // Positions in each row among the values kept; -1 for a row of NaN only.
    same(
        &run(&format!("{X}; nanargmin(x, axis=1)")),
        &[0.0, -1.0, 0.0],
    );
    same(
        &run(&format!("{X}; nanargmax(x, axis=1)")),
        &[3.0, -1.0, 3.0],
    );
    same(&run(&format!("{X}; nanargmax(x)")), &[11.0]);
    same(&run(&format!("{X}; nanargmin(x[0:1])")), &[0.0]);
}

#[test]
fn order_statistics_are_numpys() {
    // A permutation of 0..10 scaled, in chunks of 3: sorted it is 0, 1.5, 3, ... 13.5.
    let v = "v = (arange(10, chunk=3) * 7 % 10) * 1.5";
    same(&run(&format!("{v}; median(v)")), &[6.75]);
    same(&run(&format!("{v}; median(v[:9])")), &[7.5]);
    // (n - 1) q = 9 * 0.3 = 2.7: between ranks 2 and 3 (3.0, 4.5), weight 0.7 (NumPy's
    // `b - (b - a)(1 - t)` from one half).
    let q = 9.0f64 * 0.3;
    let gamma = q - q.floor();
    let want = 4.5 - (4.5 - 3.0) * (1.0 - gamma);
    same(&run(&format!("{v}; quantile(v, 0.3)")), &[want]);
    same(
        &run(&format!("{v}; percentile(v, (0, 100.0, 50))")),
        &[0.0, 13.5, 6.75],
    );
    same(&run(&format!("{v}; quantile(v, (0, 1))")), &[0.0, 13.5]);
    // Along an axis of a 2-D tensor, and over two axes at once.
    let m = "m = reshape(arange(24, chunk=5) * 7 % 24, (4, 6))";
    let rows: Vec<Vec<f64>> = (0..4)
        .map(|r| {
            let mut row: Vec<f64> = (0..6).map(|c| ((r * 6 + c) * 7 % 24) as f64).collect();
            row.sort_by(f64::total_cmp);
            row
        })
        .collect();
    let medians: Vec<f64> = rows.iter().map(|r| (r[2] + r[3]) / 2.0).collect();
    same(&run(&format!("{m}; median(m, axis=1)")), &medians);
    same(&run(&format!("{m}; median(m, axis=(0, 1))")), &[11.5]);
    // A lane holding NaN gives NaN; the others their value.
    same(
        &run(&format!("{m}; median(where(m == 5, nan, m * 1.0), axis=1)")),
        &medians
            .iter()
            .enumerate()
            .map(|(r, v)| if rows[r].contains(&5.0) { f64::NAN } else { *v })
            .collect::<Vec<_>>(),
    );
}
