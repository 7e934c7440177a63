//! Errors that name the bad index, chunks of one, lengths known only at run time, a real cluster (also against NumPy where it is installed), and a worker killed between map and reduce.

use crate::*;

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
        let prepared = ares_core::prepare::prepare(
            &graph,
            &TaskConfig::default(),
            &ares_core::prepare::uniform_cluster(2, 2),
            ares_core::ids::TaskId(1),
        )
        .unwrap();
        let Err(e) = ares_core::executor::execute(&prepared.subtasks, 2) else {
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
fn data_dependent_lengths_are_built_and_bad_indexes_refused() {
    for (program, want) in [
        // These run in stages (tests/stages.rs and tests/regressions.rs check their numbers):
        // slicing and reshaping wait for the length.
        ("unique(arange(5)) + 1", ""),
        ("x = arange(5); sum(x[x > 2])", ""),
        ("unique(arange(5))[1:]", ""),
        ("x = arange(5); reshape(x[x > 2] * 2, (1, -1))", ""),
        // Past the bound, an index cannot fit whatever the length.
        ("x = arange(5); x[x > 2][5]", "index 5 is out of bounds"),
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
        match ares_core::expr::evaluate(program) {
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
        (
            format!("x = {x}; searchsorted(sort(x), x[::-7])"),
            "np.searchsorted(np.sort(x), x[::-7])",
        ),
        (
            format!("x = {x}; compress(x > 3, x)"),
            "np.compress(x > 3, x)",
        ),
        (
            format!("x = {x}; sort(reshape(x, (60, 50)), axis=0)"),
            "np.sort(x.reshape(60, 50), axis=0)",
        ),
        (
            format!("x = {x}; argsort(reshape(x, (60, 5, 10)), axis=1)"),
            "np.argsort(x.reshape(60, 5, 10), axis=1, kind='stable')",
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
