//! The selection against a full sort: the kernels run as the tiled graph runs them (chunks
//! sampled, brackets, counts summed, gathered, picked), on data made to stress them.

use super::kernels::{brackets, count, gather, pick, sample, whole, Key};
use super::SAMPLE;

/// splitmix64 for test data (independent of the kernels' generator's use).
fn rng(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The steps of the tiled graph over `x` cut in chunks of `chunk`, with `total` samples.
fn select<T: Key>(x: &[T], chunk: usize, total: usize, ranks: &[u64]) -> Vec<T> {
    let n = x.len();
    let chunks: Vec<&[T]> = x.chunks(chunk.max(1)).collect();
    let mut merged = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        merged.extend(sample(c, (c.len() * total).div_ceil(n), i as u64));
    }
    let b = brackets(merged, n as u64, ranks);
    let mut totals = vec![0i64; b.len() * 2 + 1];
    for c in &chunks {
        for (t, v) in totals.iter_mut().zip(count(c, &b)) {
            *t += v;
        }
    }
    let pieces: Vec<Vec<T>> = chunks
        .iter()
        .map(|c| gather(c, &b, &totals, n as u64, ranks).unwrap())
        .collect();
    let pieces: Vec<&[T]> = pieces.iter().map(|p| p.as_slice()).collect();
    pick(&b, &totals, n as u64, ranks, &pieces).unwrap()
}

/// Ranks of a NaN-last full sort.
fn sorted_f64(x: &[f64], ranks: &[u64]) -> Vec<f64> {
    let mut s = x.to_vec();
    s.sort_by(|a, b| a.total_cmp(b).then(std::cmp::Ordering::Equal));
    s.sort_by(|a, b| match (a.is_nan(), b.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        _ => a.partial_cmp(b).unwrap(),
    });
    ranks.iter().map(|r| s[*r as usize]).collect()
}

fn sorted_int<T: Ord + Copy>(x: &[T], ranks: &[u64]) -> Vec<T> {
    let mut s = x.to_vec();
    s.sort();
    ranks.iter().map(|r| s[*r as usize]).collect()
}

/// Equal as numbers, NaN equal to NaN (the sign of zero aside: -0.0 == 0.0, as a sort).
fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || x.is_nan() && y.is_nan())
}

/// Every interesting rank of `n` values: both ends, the middle ones, quartiles.
fn ranks_for(n: usize) -> Vec<u64> {
    let n = n as u64;
    let mut r = vec![
        0,
        n - 1,
        n / 2,
        (n - 1) / 2,
        n / 4,
        3 * n / 4,
        n / 100,
        n - 1 - n / 100,
    ];
    r.sort_unstable();
    r.dedup();
    r
}

fn check_f64(name: &str, x: &[f64], chunk: usize, total: usize) {
    let ranks = ranks_for(x.len());
    let got = select(x, chunk, total, &ranks);
    let want = sorted_f64(x, &ranks);
    assert!(same(&got, &want), "{name}: {got:?} != {want:?}");
    let got = whole(x, &ranks).unwrap();
    assert!(same(&got, &want), "{name} (whole): {got:?} != {want:?}");
    for r in &ranks {
        let one = select(x, chunk, total, &[*r]);
        assert!(same(&one, &sorted_f64(x, &[*r])), "{name} rank {r}");
    }
}

fn uniform(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| (rng(&mut s) >> 11) as f64 / (1u64 << 53) as f64)
        .collect()
}

#[test]
fn random_data_equals_a_full_sort() {
    for (n, chunk, total) in [
        (100_000, 7_000, 4096),
        (100_000, 100_000, 4096),
        (50_001, 1000, 256),
        (1000, 10, 1000),
        (20_000, 3000, SAMPLE),
    ] {
        check_f64(
            &format!("uniform {n}/{chunk}"),
            &uniform(n, n as u64),
            chunk,
            total,
        );
    }
    let mut s = 7;
    let normal: Vec<f64> = (0..30_000)
        .map(|_| ((rng(&mut s) >> 11) as f64 / (1u64 << 53) as f64 - 0.5).powi(3) * 1e9)
        .collect();
    check_f64("cubed", &normal, 4000, 2048);
}

#[test]
fn duplicates_and_equal_values() {
    let mut s = 3;
    let few: Vec<f64> = (0..40_000).map(|_| (rng(&mut s) % 5) as f64).collect();
    check_f64("five values", &few, 3000, 1024);
    check_f64("all equal", &vec![2.5; 10_000], 999, 512);
    let mut mostly = vec![1.0; 10_000];
    mostly[17] = -3.0;
    mostly[9000] = 8.0;
    check_f64("all equal but two", &mostly, 1000, 512);
    let zeros: Vec<f64> = (0..1000)
        .map(|i| if i % 2 == 0 { 0.0 } else { -0.0 })
        .collect();
    check_f64("signed zeros", &zeros, 100, 64);
}

#[test]
fn ordered_data() {
    let up: Vec<f64> = (0..50_000).map(|i| i as f64).collect();
    let down: Vec<f64> = up.iter().rev().copied().collect();
    check_f64("sorted", &up, 5000, 1024);
    check_f64("reversed", &down, 5000, 1024);
    let organ: Vec<f64> = (0..50_000).map(|i| (i as f64 - 25_000.0).abs()).collect();
    check_f64("organ pipe", &organ, 4000, 1024);
}

#[test]
fn nan_and_infinities() {
    let mut x = uniform(20_000, 11);
    x[5] = f64::NAN;
    x[19_999] = f64::NAN;
    x[100] = f64::INFINITY;
    x[200] = f64::NEG_INFINITY;
    x[300] = f64::NEG_INFINITY;
    check_f64("two NaN", &x, 3000, 1024);
    check_f64("all NaN", &vec![f64::NAN; 1000], 100, 64);
    let half: Vec<f64> = (0..4000)
        .map(|i| if i % 2 == 0 { f64::NAN } else { i as f64 })
        .collect();
    check_f64("half NaN", &half, 300, 256);
    let inf: Vec<f64> = (0..3000)
        .map(|i| match i % 3 {
            0 => f64::INFINITY,
            1 => f64::NEG_INFINITY,
            _ => i as f64,
        })
        .collect();
    check_f64("infinities", &inf, 250, 256);
}

#[test]
fn tiny_tensors() {
    for x in [
        vec![4.0],
        vec![2.0, 1.0],
        vec![f64::NAN, 1.0],
        vec![1.0, 1.0],
    ] {
        check_f64("tiny", &x, 1, 2);
        check_f64("tiny one chunk", &x, 2, 2);
    }
}

#[test]
fn integers_at_their_extremes() {
    let mut s = 5;
    let mut ints: Vec<i64> = (0..30_000).map(|_| rng(&mut s) as i64).collect();
    ints[10] = i64::MIN;
    ints[20] = i64::MAX;
    ints[30] = i64::MIN;
    let ranks = ranks_for(ints.len());
    assert_eq!(select(&ints, 2000, 1024, &ranks), sorted_int(&ints, &ranks));
    let small: Vec<i64> = (0..30_000).map(|_| (rng(&mut s) % 7) as i64 - 3).collect();
    assert_eq!(
        select(&small, 2000, 1024, &ranks),
        sorted_int(&small, &ranks)
    );
    let unsigned: Vec<u64> = (0..30_000)
        .map(|i| {
            if i % 3 == 0 {
                u64::MAX
            } else {
                rng(&mut s) % 4
            }
        })
        .collect();
    assert_eq!(
        select(&unsigned, 2000, 1024, &ranks),
        sorted_int(&unsigned, &ranks)
    );
}

/// A bracket that misses the ranks (as an unlucky sample would draw it): the fallback
/// gathers every value and the answer stays exact.
#[test]
fn a_missed_bracket_falls_back_to_every_value() {
    let x: Vec<f64> = (0..10_000).rev().map(|i| i as f64).collect();
    let b = vec![1.0, 9.0];
    let totals = count(&x, &b);
    assert_eq!(totals, vec![1, 2, 9, 10, 0]);
    let ranks = [5000, 9999, 3];
    let piece = gather(&x, &b, &totals, 10_000, &ranks).unwrap();
    assert_eq!(piece.len(), 10_000, "every value gathered");
    let got = pick(&b, &totals, 10_000, &ranks, &[&piece]).unwrap();
    assert_eq!(got, vec![5000.0, 9999.0, 3.0]);
}

/// The gathered values are a small part of the data.
#[test]
fn the_gather_is_small() {
    let x = uniform(1_000_000, 2);
    let chunks: Vec<&[f64]> = x.chunks(100_000).collect();
    let mut merged = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        merged.extend(sample(c, SAMPLE / 10, i as u64));
    }
    let ranks = [499_999, 500_000];
    let b = brackets(merged, 1_000_000, &ranks);
    assert_eq!(b.len(), 2, "one bracket for the two middle ranks");
    let totals = count(&x, &b);
    let piece = gather(&x, &b, &totals, 1_000_000, &ranks).unwrap();
    assert!(piece.len() < 30_000, "{} values gathered", piece.len());
    let got = pick(&b, &totals, 1_000_000, &ranks, &[&piece]).unwrap();
    assert_eq!(got, sorted_f64(&x, &ranks));
}

/// The values of `program`'s last expression on the local executor (chunked, two slots).
fn run(program: &str) -> Vec<f64> {
    let t = crate::expr::evaluate(program).unwrap_or_else(|e| panic!("{program}: {e}"));
    let mut results = crate::executor::compute(&[&t], &Default::default(), 2).unwrap();
    results.remove(0).to_f64().iter().copied().collect()
}

/// NumPy's `_lerp`.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    match t >= 0.5 {
        true => b - (b - a) * (1.0 - t),
        false => a + (b - a) * t,
    }
}

/// The tiled graph (samples, brackets, counts, gathers, picker) on the executor: median and
/// quantiles of the flattened tensor against the sorted values, to the bit.
#[test]
fn the_tiled_selection_equals_the_sorted_values() {
    let x = "x = rechunk(reshape(rand(60000, chunk=7000, seed=4), (300, 200)), (70, 90))";
    let mut v = run(&format!("{x}; x"));
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    assert_eq!(
        run(&format!("{x}; median(x)")),
        vec![(v[n / 2 - 1] + v[n / 2]) / 2.0]
    );
    let (g, i) = ((n - 1) as f64 * 0.3, ((n - 1) as f64 * 0.3) as usize);
    let want = lerp(v[i], v[i + 1], g - i as f64);
    assert_eq!(run(&format!("{x}; quantile(x, 0.3)")), vec![want]);
    assert_eq!(
        run(&format!("{x}; quantile(x, (0, 1))")),
        vec![v[0], v[n - 1]]
    );
    // Integers with many ties, and a NaN.
    let ints = "y = astype(floor(rand(50001, chunk=4000, seed=5) * 9.0) - 4, 'int32')";
    let mut w = run(&format!("{ints}; y"));
    w.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(run(&format!("{ints}; median(y)")), vec![w[25000]]);
    let nan =
        format!("{ints}; z = where(arange(50001, chunk=4000) == 777, nan, y * 1.0); median(z)");
    assert!(run(&nan)[0].is_nan());
    let direct = format!("{ints}; quantile(y, (0.01, 0.99))");
    let want: Vec<f64> = [0.01, 0.99]
        .iter()
        .map(|q| {
            let g = 50000.0 * q;
            let i = g as usize;
            lerp(w[i], w[i + 1], g - i as f64)
        })
        .collect();
    assert_eq!(run(&direct), want);
}
