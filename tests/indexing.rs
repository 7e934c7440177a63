//! Operations built on the shuffle whose result depends on the values (issue 11): `unique`
//! (with counts), `searchsorted`, integer-array indexing (`take`, `x[idx]`) and boolean-mask
//! indexing (`x[mask]`), each against an independent evaluation of the same input on random
//! shapes and chunkings (chunks of one, empty pieces, every value in one reducer, NaN and
//! signed zeros), the errors, and a real cluster, also with a worker killed mid-job.

mod common;
/// The cases, in `tests/indexing/`: each uses this file's helpers (`use crate::*`).
mod indexing {
    mod errors_and_cluster;
}

use ares::config::TaskConfig;
use ares::protocol::TaskStatus;
use ares_core::array::ArrayData;
use ares_core::tensor::Tensor;
use common::cluster::Cluster;
use proptest::prelude::*;
use std::cmp::Ordering;
use std::time::Duration;

/// NumPy's order: by value, NaN last (`-0.0` equals `0.0`).
fn order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap(),
    }
}

/// Independent `np.unique(x, return_counts=True)` (one NaN, as NumPy 2).
fn unique_reference(x: &ArrayData) -> (Vec<f64>, Vec<f64>) {
    let mut v: Vec<f64> = x.iter_f64().collect();
    v.sort_by(|a, b| order(*a, *b));
    let (mut values, mut counts): (Vec<f64>, Vec<f64>) = (vec![], vec![]);
    for x in v {
        match values.last() {
            Some(l) if order(*l, x) == Ordering::Equal => *counts.last_mut().unwrap() += 1.0,
            _ => {
                values.push(x);
                counts.push(1.0);
            }
        }
    }
    (values, counts)
}

fn same(got: &ArrayData, want: &[f64], what: &str) {
    let got: Vec<f64> = got.iter_f64().collect();
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: length ({got:?} vs {want:?})"
    );
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g.is_nan() && w.is_nan()) || g == w,
            "{what}: element {i}: got {g}, want {w}"
        );
    }
}

/// Inputs with duplicates, NaN, signed zeros, a single repeated value, bools.
fn input(kind: u8, shape: &[usize], chunk: &[usize], seed: u64) -> String {
    let join = |v: &[usize]| {
        v.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let r = format!(
        "rand(({},), chunk=({},), seed={seed})",
        join(shape),
        join(chunk)
    );
    match kind % 6 {
        0 => r,
        1 => format!("log({r} - 0.3)"),
        2 => format!("astype({r} * 5, 'int64') - 2"),
        3 => format!("astype({r} * 0, 'int64') + 7"),
        4 => format!("where({r} > 0.6, 0.0, log({r} - 0.3) * 0)"),
        _ => format!("{r} > 0.5"),
    }
}

fn eval(program: &str) -> Tensor {
    ares_core::expr::evaluate(program).unwrap_or_else(|e| panic!("{program}: {e}"))
}

fn run(t: &Tensor, fuse: bool) -> ArrayData {
    let config = TaskConfig {
        fuse_enabled: fuse,
        ..TaskConfig::default()
    };
    common::run(t, &config, 2, 2)
}

fn check_unique(x: &str, fuse: bool) {
    let data = run(&eval(x), fuse);
    let (values, counts) = unique_reference(&data);
    let got = run(&eval(&format!("unique({x})")), fuse);
    same(&got, &values, &format!("unique({x})"));
    let got = run(&eval(&format!("unique({x}, return_counts=True)[0]")), fuse);
    same(
        &got,
        &values,
        &format!("unique({x}, return_counts=True)[0]"),
    );
    let got = run(&eval(&format!("unique({x}, return_counts=True)[1]")), fuse);
    same(
        &got,
        &counts,
        &format!("unique({x}, return_counts=True)[1]"),
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn unique_matches_the_reference(
        shape in (0usize..60, 1usize..4),
        chunk in (1usize..25, 1usize..4),
        kind in 0u8..6,
        seed in 0u64..1000,
        fuse in any::<bool>(),
    ) {
        let chunk = (chunk.0.min(shape.0.max(1)), chunk.1.min(shape.1));
        check_unique(&input(kind, &[shape.0, shape.1], &[chunk.0, chunk.1], seed), fuse);
    }

    #[test]
    fn mask_indexing_matches_the_reference(
        shape in (0usize..30, 1usize..6),
        chunk in (1usize..12, 1usize..6),
        kind in 0u8..5,
        seed in 0u64..1000,
        fuse in any::<bool>(),
    ) {
        let chunk = (chunk.0.min(shape.0.max(1)), chunk.1.min(shape.1));
        let x = input(kind, &[shape.0, shape.1], &[chunk.0, chunk.1], seed);
        let data = run(&eval(&x), fuse);
        let want: Vec<f64> = data.iter_f64().filter(|v| *v > 0.4).collect();
        let got = run(&eval(&format!("x = {x}; x[x > 0.4]")), fuse);
        same(&got, &want, &format!("x[x > 0.4] of {x}"));
    }

    #[test]
    fn searchsorted_matches_the_reference(
        n in 0usize..60,
        chunk in 1usize..20,
        m in 0usize..40,
        vchunk in 1usize..20,
        kind in 0u8..5,
        seed in 0u64..1000,
        right in any::<bool>(),
    ) {
        let a = input(kind, &[n], &[chunk.min(n.max(1))], seed);
        let v = input(kind, &[m], &[vchunk.min(m.max(1))], seed + 1);
        let mut sorted: Vec<f64> = run(&eval(&a), true).iter_f64().collect();
        sorted.sort_by(|x, y| order(*x, *y));
        let side = if right { "right" } else { "left" };
        let want: Vec<f64> = run(&eval(&v), true)
            .iter_f64()
            .map(|x| {
                sorted
                    .iter()
                    .filter(|s| match order(**s, x) {
                        Ordering::Less => true,
                        Ordering::Equal => right,
                        Ordering::Greater => false,
                    })
                    .count() as f64
            })
            .collect();
        let program = format!("searchsorted(sort({a}), {v}, side='{side}')");
        let got = run(&eval(&program), true);
        same(&got, &want, &program);
    }
}

/// Independent `np.searchsorted(sorted, v, side)`: counts over the whole sorted array.
fn searchsorted_reference(sorted: &[f64], v: &[f64], right: bool) -> Vec<f64> {
    v.iter()
        .map(|x| {
            sorted
                .iter()
                .filter(|s| match order(**s, *x) {
                    Ordering::Less => true,
                    Ordering::Equal => right,
                    Ordering::Greater => false,
                })
                .count() as f64
        })
        .collect()
}

/// Ties across the borders of the sorted chunks (runs of one value spanning several chunks),
/// NaN at the end, signed zeros, values outside the range and 2-D values; with both sides.
#[test]
fn searchsorted_with_ties_at_chunk_borders_and_2d_values() {
    // a: 0,0,0,1,1,1,...: every chunk of 4 starts or ends inside a run of 3.
    let a = "astype(astype(arange(60, chunk=4) / 3, 'int64'), 'float64') - 5";
    let sorted: Vec<f64> = (0..60).map(|i| (i / 3) as f64 - 5.0).collect();
    let with_nan = format!("concatenate(({a}, log(zeros(5, chunk=2) - 1)))");
    let mut sorted_nan = sorted.clone();
    sorted_nan.extend([f64::NAN; 5]);
    let v = "reshape(astype(astype(arange(48, chunk=7) / 2, 'int64'), 'float64') - 9, (6, 8))";
    let v_values: Vec<f64> = (0..48).map(|i| (i / 2) as f64 - 9.0).collect();
    let extra = "concatenate((zeros(1) * -1, log(zeros(2) - 1), 1 / zeros(2), -1 / zeros(1), arange(3) * 7.5 - 30))";
    let extra_values = [
        -0.0,
        f64::NAN,
        f64::NAN,
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -30.0,
        -22.5,
        -15.0,
    ];
    for right in [false, true] {
        let side = if right { "right" } else { "left" };
        for (sa, s) in [(a.to_string(), &sorted), (with_nan.clone(), &sorted_nan)] {
            for (vp, vv) in [(v, &v_values[..]), (extra, &extra_values[..])] {
                let program = format!("searchsorted({sa}, {vp}, side='{side}')");
                let got = run(&eval(&program), true);
                if vp == v {
                    assert_eq!(got.shape(), &[6, 8], "{program}");
                }
                same(&got, &searchsorted_reference(s, vv, right), &program);
            }
        }
    }
}

/// 100 sorted chunks and 100 values chunks: subtasks linear in the chunks (each values chunk
/// meets only the sorted chunks its values fall into, through two shuffles).
#[test]
fn searchsorted_of_100_chunks_each_is_linear_in_chunks() {
    use ares_core::ids::TaskId;
    use ares_core::prepare::{prepare, uniform_cluster};
    let t =
        eval("searchsorted(arange(100000, chunk=1000), rand(100000, chunk=1000, seed=1) * 100000)");
    let p = prepare(
        &Tensor::graph(&[&t]),
        &TaskConfig::default(),
        &uniform_cluster(2, 2),
        TaskId(1),
    )
    .unwrap();
    let n = p.subtasks.len();
    assert!(n <= 8 * 100 + 8, "{n} subtasks for 100 × 100 chunks");
}

/// Independent `np.take(x, idx, axis)` over a C-order buffer.
fn take_reference(x: &[f64], shape: &[usize], idx: &[i64], axis: Option<usize>) -> Vec<f64> {
    let (outer, n, inner): (usize, usize, usize) = match axis {
        None => (1, x.len(), 1),
        Some(a) => (
            shape[..a].iter().product(),
            shape[a],
            shape[a + 1..].iter().product(),
        ),
    };
    let mut out = Vec::new();
    for o in 0..outer {
        for i in idx {
            let j = if *i < 0 { *i + n as i64 } else { *i } as usize;
            for k in 0..inner {
                out.push(x[(o * n + j) * inner + k]);
            }
        }
    }
    out
}

/// `count` indices in `[-n, n)` (`n` > 0), as an expression of int64 chunks of `chunk`.
fn indices(n: usize, count: usize, chunk: usize, seed: u64) -> (String, Vec<i64>) {
    let p = format!(
        "astype(rand({count}, chunk={chunk}, seed={seed}) * {}, 'int64') - {n}",
        2 * n
    );
    let v: Vec<i64> = run(&eval(&p), true).iter_f64().map(|v| v as i64).collect();
    (p, v)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn take_matches_the_reference(
        shape in (1usize..20, 1usize..5, 1usize..4),
        chunk in (1usize..8, 1usize..5, 1usize..4),
        count in 0usize..30,
        ichunk in 1usize..10,
        axis in 0usize..4,
        kind in 0u8..6,
        seed in 0u64..1000,
        fuse in any::<bool>(),
    ) {
        let dims = [shape.0, shape.1, shape.2];
        let chunks = [chunk.0.min(dims[0]), chunk.1.min(dims[1]), chunk.2.min(dims[2])];
        let x = input(kind, &dims, &chunks, seed);
        let data: Vec<f64> = run(&eval(&x), fuse).iter_f64().collect();
        let axis = (axis < 3).then_some(axis);
        let n = axis.map_or(data.len(), |a| dims[a]);
        let (idx, want_idx) = indices(n, count, ichunk.min(count.max(1)), seed + 7);
        let want = take_reference(&data, &dims, &want_idx, axis);
        let a = axis.map_or("None".to_string(), |a| a.to_string());
        let program = format!("take({x}, {idx}, axis={a})");
        let got = run(&eval(&program), fuse);
        let mut want_shape = vec![count];
        if let Some(a) = axis {
            want_shape = dims[..a].iter().copied().chain([count]).chain(dims[a + 1..].iter().copied()).collect();
        }
        prop_assert_eq!(got.shape(), want_shape.as_slice());
        same(&got, &want, &program);
        if axis == Some(0) {
            let got = run(&eval(&format!("x = {x}; x[{idx}]")), fuse);
            same(&got, &want, "x[idx]");
        }
    }
}
