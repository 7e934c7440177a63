//! Operations built on the shuffle whose result depends on the values (issue 11): `unique`
//! (with counts), `searchsorted`, integer-array indexing (`take`, `x[idx]`) and boolean-mask
//! indexing (`x[mask]`), each against an independent evaluation of the same input on random
//! shapes and chunkings (chunks of one, empty pieces, every value in one reducer, NaN and
//! signed zeros), the errors, and a real cluster, also with a worker killed mid-job.

mod common;

use ares::array::ArrayData;
use ares::config::TaskConfig;
use ares::protocol::TaskStatus;
use ares::tensor::Tensor;
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
    ares::expr::evaluate(program).unwrap_or_else(|e| panic!("{program}: {e}"))
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

#[test]
fn take_refuses_indices_out_of_range_with_the_index_and_length() {
    for (program, want) in [
        (
            "take(arange(10, chunk=3), arange(12, chunk=5))",
            "index 10 is out of bounds for size 10",
        ),
        (
            "take(ones((3, 4), chunk=2), arange(6) - 10, axis=1)",
            "index -10 is out of bounds for axis 1 with size 4",
        ),
        (
            "x = arange(5); x[arange(3) + 4]",
            "index 5 is out of bounds for axis 0 with size 5",
        ),
    ] {
        let t = eval(program);
        let graph = Tensor::graph(&[&t]);
        let prepared = ares::prepare::prepare(
            &graph,
            &TaskConfig::default(),
            &ares::prepare::uniform_cluster(2, 2),
            ares::ids::TaskId(1),
        )
        .unwrap();
        let Err(e) = ares::executor::execute(&prepared.subtasks, 2) else {
            panic!("{program} ran")
        };
        assert!(e.to_string().contains(want), "{program}: {e}");
    }
}

#[test]
fn chunks_of_one_and_every_value_in_one_reducer() {
    for x in [
        "rand(50, chunk=1, seed=3)",
        "astype(rand(40, chunk=1, seed=4) * 0, 'int64')",
        "astype(rand(64, chunk=5, seed=5) * 0, 'int64') + 1",
        "astype(rand(1000, chunk=7, seed=2) * 13, 'int64')",
        "astype(rand(33, chunk=4, seed=7) > 0.5, 'bool')",
        "rand(0, chunk=4, seed=1)",
    ] {
        check_unique(x, true);
    }
}

#[test]
fn data_dependent_lengths_are_results_only() {
    for (program, want) in [
        (
            "unique(arange(5)) + 1",
            "the length of unique(...) depends on the data",
        ),
        (
            "x = arange(5); sum(x[x > 2])",
            "the length of x[mask] depends on the data",
        ),
        ("x = arange(6); x[x > 2.5]", ""),
        (
            "x = ones((2, 3)); x[ones(3) > 0]",
            "boolean index of shape (3,)",
        ),
        ("searchsorted(ones((2, 2)), 1)", "a must be 1-D"),
        (
            "x = arange(5); x[x * 1.5]",
            "must be of integer (or boolean) type",
        ),
    ] {
        match ares::expr::evaluate(program) {
            Ok(_) => assert!(want.is_empty(), "{program} built"),
            Err(e) => assert!(
                !want.is_empty() && e.to_string().contains(want),
                "{program}: {e}"
            ),
        }
    }
}

fn on_cluster(c: &mut ares::api::NativeClient, t: &Tensor) -> ArrayData {
    use ares::api::TaskApi;
    let task = c.submit_tileable_graph(&Tensor::graph(&[t]), None).unwrap();
    let info = c.wait_task(task, Duration::from_secs(120)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{:?}", info.error);
    let r = c.fetch(task).unwrap().remove(0);
    c.cancel_task(task).unwrap();
    r
}

#[test]
fn a_cluster_computes_unique_masks_and_lookups() {
    let cluster = Cluster::start(3, 1);
    let mut c = cluster.client();
    let x = "astype(rand(20000, chunk=1500, seed=9) * 700, 'int64') - 300";
    let data = run(&eval(x), true);
    let (values, counts) = unique_reference(&data);
    same(
        &on_cluster(&mut c, &eval(&format!("unique({x})"))),
        &values,
        "unique",
    );
    same(
        &on_cluster(
            &mut c,
            &eval(&format!("unique({x}, return_counts=True)[1]")),
        ),
        &counts,
        "unique counts",
    );
    let idx = "astype(rand(3000, chunk=250, seed=4) * 40000, 'int64') - 20000";
    let idx_data: Vec<i64> = run(&eval(idx), true).iter_f64().map(|v| v as i64).collect();
    let flat: Vec<f64> = data.iter_f64().collect();
    same(
        &on_cluster(&mut c, &eval(&format!("take({x}, {idx})"))),
        &take_reference(&flat, &[20000], &idx_data, None),
        "take",
    );
    // An index out of range fails the task with the index and the length.
    {
        use ares::api::TaskApi;
        let t = eval(&format!("take({x}, arange(5) + 19998)"));
        let task = c
            .submit_tileable_graph(&Tensor::graph(&[&t]), None)
            .unwrap();
        let info = c.wait_task(task, Duration::from_secs(120)).unwrap();
        assert_eq!(info.status, TaskStatus::Failed);
        let e = format!("{:?}", info.error);
        assert!(
            e.contains("index 20000 is out of bounds for size 20000"),
            "{e}"
        );
    }
    let want: Vec<f64> = data.iter_f64().filter(|v| *v > 100.0).collect();
    same(
        &on_cluster(&mut c, &eval(&format!("x = {x}; x[x > 100]"))),
        &want,
        "x[x > 100]",
    );
}

/// NumPy's answer for `expr` over `x` (a float64 array, NaN allowed), flattened; `None`
/// (with a note) where python3 with NumPy is missing.
fn numpy(x: &[f64], idx: &[i64], expr: &str) -> Option<Vec<f64>> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let script = format!(
        "import sys, numpy as np\nx, idx = sys.stdin.read().split('|')\n\
         x = np.array([float(v) for v in x.split()])\n\
         idx = np.array([int(v) for v in idx.split()], dtype=np.int64)\n\
         r = np.asarray({expr})\nprint(' '.join(repr(float(v)) for v in r.ravel()))\n"
    );
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let text: Vec<String> = x.iter().map(|v| format!("{v:?}")).collect();
    let ids: Vec<String> = idx.iter().map(|v| v.to_string()).collect();
    let input = format!("{}|{}", text.join(" "), ids.join(" "));
    child.stdin.take()?.write_all(input.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    if !out.status.success() {
        eprintln!("note: python3 with numpy is not available: skipping the NumPy spot check");
        return None;
    }
    String::from_utf8(out.stdout)
        .ok()?
        .split_whitespace()
        .map(|v| v.parse::<f64>().ok())
        .collect()
}

#[test]
fn numpy_agrees_where_it_is_installed() {
    let x = "where(rand(3000, chunk=211, seed=3) > 0.9, log(rand(3000, chunk=211, seed=4) - 0.5), \
             astype(rand(3000, chunk=211, seed=5) * 40, 'int64') - 20.0)";
    let data: Vec<f64> = run(&eval(x), true).iter_f64().collect();
    let (idx, ids) = indices(3000, 500, 77, 11);
    for (program, py) in [
        (format!("unique({x})"), "np.unique(x)"),
        (
            format!("unique({x}, return_counts=True)[1]"),
            "np.unique(x, return_counts=True)[1]",
        ),
        (format!("take({x}, {idx})"), "np.take(x, idx)"),
        (format!("x = {x}; x[x > 3]"), "x[x > 3]"),
        (
            format!("x = {x}; searchsorted(sort(x), x, side='right')"),
            "np.searchsorted(np.sort(x), x, side='right')",
        ),
    ] {
        let Some(want) = numpy(&data, &ids, py) else {
            return;
        };
        same(&run(&eval(&program), true), &want, py);
    }
}

/// Submits `t`, kills worker 1 once a third of the subtasks are done (the mappers' pieces
/// spread over the workers, reducers still to run), and returns the result and whether the
/// kill landed before the task ended.
fn with_a_worker_killed(t: &Tensor) -> (ArrayData, bool) {
    use ares::api::TaskApi;
    let mut cluster = Cluster::start(3, 1);
    let mut c = cluster.client();
    let task = c.submit_tileable_graph(&Tensor::graph(&[t]), None).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let landed = loop {
        let info = c.get_task_result(task).unwrap();
        if info.status.is_terminal() {
            break false;
        }
        if info.progress >= 1.0 / 3.0 {
            break true;
        }
        assert!(std::time::Instant::now() < deadline, "no progress");
        std::thread::sleep(Duration::from_millis(2));
    };
    cluster.nodes[1].kill().unwrap();
    let info = c.wait_task(task, Duration::from_secs(120)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{:?}", info.error);
    eprintln!("killed before the end: {landed}, retries: {}", info.retries);
    if landed {
        assert!(info.retries > 0, "the lost worker's subtasks ran again");
    }
    (c.fetch(task).unwrap().remove(0), landed)
}

#[test]
fn unique_and_take_survive_a_worker_killed_between_map_and_reduce() {
    // Large enough that the debug build's mappers take a while: 40 chunks of 50,000.
    let x = "astype(rand(2000000, chunk=50000, seed=3) * 100000, 'int64')";
    let data = run(&eval(x), true);
    let (values, counts) = unique_reference(&data);
    let (got, landed_unique) =
        with_a_worker_killed(&eval(&format!("unique({x}, return_counts=True)[1]")));
    same(&got, &counts, "unique counts after losing a worker");
    let (got, _) = with_a_worker_killed(&eval(&format!("unique({x})")));
    same(&got, &values, "unique after losing a worker");
    let idx = "astype(rand(400000, chunk=20000, seed=5) * 2000000, 'int64')";
    let idx_data: Vec<i64> = run(&eval(idx), true).iter_f64().map(|v| v as i64).collect();
    let flat: Vec<f64> = data.iter_f64().collect();
    let (got, landed_take) = with_a_worker_killed(&eval(&format!("take({x}, {idx})")));
    same(
        &got,
        &take_reference(&flat, &[2000000], &idx_data, None),
        "take after losing a worker",
    );
    assert!(
        landed_unique || landed_take,
        "every job ended before the kill: make the inputs bigger"
    );
}
