//! The map-reduce shuffle (issue 11): sort/argsort against an independent evaluation on random
//! shapes and chunkings, the dask#3872 graph's size, the supervisor's shuffle bookkeeping
//! (virtual proxy, one fetch list per reducer, release after the last reducer, lineage
//! recovery of only the lost mapper), and real clusters, one losing a worker between the map
//! and the reduce stages.

mod common;
/// The cases, in `tests/shuffle/`: each uses this file's helpers (`use crate::*`).
mod shuffle {
    mod bookkeeping;
}

use ares::config::TaskConfig;
use ares::protocol::{SubtaskReport, TaskStatus};
use ares::supervisor::task_processor::state::{TaskOut, TaskState};
use ares_core::array::ArrayData;
use ares_core::ids::{ChunkIdx, SubtaskIdx, TaskId, WorkerId};
use ares_core::ops::Op;
use ares_core::prepare::{prepare, uniform_cluster};
use ares_core::tensor::{self, Tensor};
use common::cluster::Cluster;
use proptest::prelude::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// NumPy's order: by value, NaN last; ties keep their positions (a stable argsort).
fn order(a: f64, b: f64) -> std::cmp::Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        _ => a.partial_cmp(&b).unwrap(),
    }
}

/// Independent sort and stable argsort of every row of the last axis.
fn reference(x: &ArrayData, arg: bool) -> Vec<f64> {
    let v: Vec<f64> = x.iter_f64().collect();
    let row = *x.shape().last().unwrap();
    let mut out = Vec::with_capacity(v.len());
    for lane in v.chunks(row.max(1)) {
        let mut idx: Vec<usize> = (0..lane.len()).collect();
        idx.sort_by(|a, b| order(lane[*a], lane[*b]));
        out.extend(idx.iter().map(|i| if arg { *i as f64 } else { lane[*i] }));
    }
    out
}

fn same(got: &ArrayData, want: &[f64], what: &str) {
    let got: Vec<f64> = got.iter_f64().collect();
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g.is_nan() && w.is_nan()) || g == w,
            "{what}: element {i}: got {g}, want {w}"
        );
    }
}

/// Inputs with duplicates, NaN, a single repeated value (every value in one reducer).
fn input(kind: u8, shape: &[usize], chunk: &[usize], seed: u64) -> String {
    let s = shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let c = chunk
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let r = format!("rand(({s},), chunk=({c},), seed={seed})");
    match kind % 4 {
        0 => r,
        1 => format!("log({r} - 0.3)"),
        2 => format!("astype({r} * 5, 'int64') - 2"),
        _ => format!("astype({r} * 0, 'int64') + 7"),
    }
}

fn check_sort(program: &str, config: &TaskConfig) {
    let x = ares_core::expr::evaluate(program).unwrap();
    let data = common::run(&x, config, 2, 2);
    for arg in [false, true] {
        let t = if arg { x.argsort() } else { x.sort() }.unwrap();
        assert_eq!(t.shape(), x.shape());
        let got = common::run(&t, config, 2, 2);
        let what = format!("{}({program})", if arg { "argsort" } else { "sort" });
        assert_eq!(got.shape(), x.shape(), "{what}");
        same(&got, &reference(&data, arg), &what);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn sort_of_1d_matches_the_reference(
        n in 0usize..120,
        chunk in 1usize..40,
        kind in 0u8..4,
        seed in 0u64..1000,
        fuse in any::<bool>(),
    ) {
        let config = TaskConfig { fuse_enabled: fuse, ..TaskConfig::default() };
        check_sort(&input(kind, &[n], &[chunk.min(n.max(1))], seed), &config);
    }

    #[test]
    fn sort_of_nd_along_the_last_axis_matches_the_reference(
        rows in 1usize..6,
        cols in 1usize..30,
        chunk in (1usize..6, 1usize..12),
        kind in 0u8..4,
        seed in 0u64..1000,
    ) {
        check_sort(
            &input(kind, &[rows, cols], &[chunk.0, chunk.1], seed),
            &TaskConfig::default(),
        );
    }
}

/// Independent sort / stable argsort of a 2-D `x` along axis 0, ascending or descending
/// (the array API's stable descending order: ties keep their order, NaN first).
fn reference_axis0(x: &ArrayData, arg: bool, descending: bool) -> Vec<f64> {
    let (rows, cols) = (x.shape()[0], x.shape()[1]);
    let v: Vec<f64> = x.iter_f64().collect();
    let mut out = vec![0.0; v.len()];
    for c in 0..cols {
        let col: Vec<f64> = (0..rows).map(|r| v[r * cols + c]).collect();
        let mut idx: Vec<usize> = (0..rows).collect();
        idx.sort_by(|a, b| {
            let o = order(col[*a], col[*b]);
            if descending {
                o.reverse()
            } else {
                o
            }
        });
        for (r, i) in idx.iter().enumerate() {
            out[r * cols + c] = if arg { *i as f64 } else { col[*i] };
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn sort_along_axis_0_and_descending_match_the_reference(
        rows in 1usize..30,
        cols in 1usize..6,
        chunk in (1usize..12, 1usize..6),
        kind in 0u8..4,
        seed in 0u64..1000,
        descending in any::<bool>(),
    ) {
        let program = input(kind, &[rows, cols], &[chunk.0, chunk.1], seed);
        let x = ares_core::expr::evaluate(&program).unwrap();
        let config = TaskConfig::default();
        let data = common::run(&x, &config, 2, 2);
        for arg in [false, true] {
            let t = x.sort_along(0, descending, arg).unwrap();
            let got = common::run(&t, &config, 2, 2);
            let what = format!("sort_along(0, descending={descending}, arg={arg}) of {program}");
            prop_assert_eq!(got.shape(), x.shape());
            same(&got, &reference_axis0(&data, arg, descending), &what);
        }
    }
}

/// Independent sort / stable argsort of `x` along `axis` (any N-D shape), ascending or
/// descending: every lane `(o, ·, i)` of the C-order `(outer, n, inner)` view.
fn reference_along(x: &ArrayData, axis: usize, arg: bool, descending: bool) -> Vec<f64> {
    let shape = x.shape();
    let n = shape[axis];
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let v: Vec<f64> = x.iter_f64().collect();
    let mut out = vec![0.0; v.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let mut idx: Vec<usize> = (0..n).collect();
            idx.sort_by(|a, b| {
                let c = order(v[at(*a)], v[at(*b)]);
                if descending {
                    c.reverse()
                } else {
                    c
                }
            });
            for (k, j) in idx.iter().enumerate() {
                out[at(k)] = if arg { *j as f64 } else { v[at(*j)] };
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any axis of a 3-D tensor, chunked along every axis (the sorted one made whole, the
    /// others cut to keep the chunk size), with NaN, ties and every dtype.
    #[test]
    fn sort_along_any_axis_of_3d_matches_the_reference(
        shape in (1usize..7, 1usize..9, 1usize..7),
        chunk in (1usize..4, 1usize..5, 1usize..4),
        axis in 0usize..3,
        kind in 0u8..4,
        seed in 0u64..1000,
        descending in any::<bool>(),
    ) {
        let program = input(
            kind,
            &[shape.0, shape.1, shape.2],
            &[chunk.0, chunk.1, chunk.2],
            seed,
        );
        let x = ares_core::expr::evaluate(&program).unwrap();
        let config = TaskConfig::default();
        let data = common::run(&x, &config, 2, 2);
        for arg in [false, true] {
            let t = x.sort_along(axis as i64, descending, arg).unwrap();
            let got = common::run(&t, &config, 2, 2);
            let what = format!(
                "sort_along({axis}, descending={descending}, arg={arg}) of {program}"
            );
            prop_assert_eq!(got.shape(), x.shape());
            same(&got, &reference_along(&data, axis, arg, descending), &what);
        }
    }
}

/// Lanes long enough for the radix sort, along axis 0 and 1 of chunked 2-D tensors.
#[test]
fn long_lanes_along_axis_0_and_1_match_the_reference() {
    for (p, axis) in [
        ("log(rand((900, 37), chunk=(100, 10), seed=12) - 0.3)", 0),
        (
            "astype(rand((700, 13), chunk=(64, 5), seed=13) * 9, 'int64') - 4",
            0,
        ),
        ("log(rand((11, 1300), chunk=(3, 200), seed=14) - 0.3)", 1),
    ] {
        let x = ares_core::expr::evaluate(p).unwrap();
        let config = TaskConfig::default();
        let data = common::run(&x, &config, 2, 2);
        for (arg, descending) in [(false, false), (true, false), (false, true), (true, true)] {
            let t = x.sort_along(axis, descending, arg).unwrap();
            let got = common::run(&t, &config, 2, 2);
            let what = format!("sort_along({axis}, descending={descending}, arg={arg}) of {p}");
            same(
                &got,
                &reference_along(&data, axis as usize, arg, descending),
                &what,
            );
        }
    }
}

#[test]
fn chunks_of_one_and_every_value_in_one_reducer() {
    for p in [
        "rand(50, chunk=1, seed=3)",
        "astype(rand(40, chunk=1, seed=4) * 0, 'int64')",
        "astype(rand(64, chunk=5, seed=5) * 0, 'int64') + 1",
        "rand(30, chunk=30, seed=6)",
        "astype(rand(33, chunk=4, seed=7) > 0.5, 'bool')",
    ] {
        check_sort(p, &TaskConfig::default());
    }
}

/// Buckets long enough for the radix sort (256 values and up) and many splitters per cell of
/// the mappers' bucket table: negative values, NaN, -inf, float and int ties.
#[test]
fn long_buckets_with_nan_and_ties_match_the_reference() {
    for p in [
        "log(rand(20000, chunk=1500, seed=9) - 0.3)",
        "astype(astype(rand(20000, chunk=1700, seed=10) * 40, 'int64'), 'float64') - 20",
        "astype(rand(15000, chunk=1000, seed=11) * 3, 'int64') * 1000000000000 - 7",
    ] {
        check_sort(p, &TaskConfig::default());
    }
}

#[test]
fn a_shuffle_graph_is_linear_in_mappers_plus_reducers() {
    let (n, m) = (1000usize, 1000usize);
    let t = tensor::shuffle_bench(n as u32, m as u32, 1).unwrap();
    let graph = Tensor::graph(&[&t]);
    assert_eq!(graph.nodes.len(), 1, "the client sends one node");
    let p = prepare(
        &graph,
        &TaskConfig::default(),
        &uniform_cluster(2, 2),
        TaskId(1),
    )
    .unwrap();
    let g = &p.subtasks;
    assert_eq!(g.chunks.len(), n + 1 + m);
    let edges: usize = (0..g.chunks.len())
        .map(|c| g.chunks.inputs(ChunkIdx(c as u32)).len())
        .sum();
    assert_eq!(edges, n + m, "chunk edges");
    assert!(
        g.preds.edges() <= n + m,
        "subtask edges {}",
        g.preds.edges()
    );
    // One proxy subtask, alone; every reducer a subtask of its own.
    let proxies: Vec<usize> = (0..g.len())
        .filter(|s| ares_core::graph::shuffle::is_proxy_subtask(&g.chunks, g.members.row(*s)))
        .collect();
    assert_eq!(proxies.len(), 1);
    assert_eq!(g.succs.row(proxies[0]).len(), m);
}

fn run(c: &mut ares::api::NativeClient, t: &Tensor) -> ArrayData {
    use ares::api::TaskApi;
    let task = c.submit_tileable_graph(&Tensor::graph(&[t]), None).unwrap();
    let info = c.wait_task(task, Duration::from_secs(120)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{:?}", info.error);
    let r = c.fetch(task).unwrap().remove(0);
    c.cancel_task(task).unwrap();
    r
}

fn bench_result(n: u32, m: u32, rows: u64) -> Vec<f64> {
    ares_core::ops::family::shuffle::kernels::bench_expected(n, m, rows)
        .iter()
        .flatten()
        .map(|v| *v as f64)
        .collect()
}

#[test]
fn shuffles_on_a_cluster_match_the_reference() {
    let cluster = Cluster::start(3, 1);
    let mut c = cluster.client();
    let t = tensor::shuffle_bench(30, 20, 200).unwrap();
    same(
        &run(&mut c, &t),
        &bench_result(30, 20, 200),
        "shuffle_bench",
    );
    let x = ares_core::expr::evaluate("log(rand(5000, chunk=333, seed=2) - 0.1)").unwrap();
    let data = common::run(&x, &TaskConfig::default(), 1, 1);
    same(
        &run(&mut c, &x.sort().unwrap()),
        &reference(&data, false),
        "sort",
    );
    same(
        &run(&mut c, &x.argsort().unwrap()),
        &reference(&data, true),
        "argsort",
    );
}

#[test]
fn a_worker_killed_between_map_and_reduce_does_not_change_the_result() {
    use ares::api::TaskApi;
    let mut cluster = Cluster::start(3, 1);
    let mut c = cluster.client();
    // Mappers are quick; 24 reducers each sort 100,000 values.
    let (n, m, rows) = (24u32, 24u32, 100_000u64);
    let t = tensor::shuffle_bench(n, m, rows).unwrap();
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    let mapped = (n + 1) as f64 / (n + 1 + m) as f64;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let info = c.get_task_result(task).unwrap();
        assert!(
            !info.status.is_terminal(),
            "ended before the kill: make it bigger"
        );
        if info.progress >= mapped {
            break;
        }
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(2));
    }
    cluster.nodes[1].kill().unwrap();
    let info = c.wait_task(task, Duration::from_secs(120)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{:?}", info.error);
    assert!(info.retries > 0, "the lost mappers ran again");
    let got = c.fetch(task).unwrap().remove(0);
    same(&got, &bench_result(n, m, rows), "after losing a worker");
}
