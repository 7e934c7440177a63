//! Data-dependent shapes in stages, with real supervisor and worker processes: programs that
//! go on from `x[mask]` and `unique(...)` give NumPy's numbers (computed here independently),
//! a length that does not fit fails the task naming the op, and a staged task can be
//! cancelled.

mod common;

use ares::api::{NativeClient, TaskApi};
use ares::protocol::TaskStatus;
use ares_core::array::ArrayData;
use ares_core::tensor::Tensor;
use common::cluster::Cluster;
use std::time::Duration;

fn run(c: &mut NativeClient, expr: &str) -> Result<ArrayData, String> {
    let t = ares_core::expr::evaluate(expr).map_err(|e| e.to_string())?;
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .map_err(|e| e.to_string())?;
    let info = c.wait_task(task, Duration::from_secs(120)).unwrap();
    if info.status != TaskStatus::Succeeded {
        return Err(info.error.unwrap_or_default());
    }
    let got = c.fetch(task).unwrap().remove(0);
    c.cancel_task(task).unwrap();
    Ok(got)
}

fn scalar(d: ArrayData) -> f64 {
    d.to_f64().iter().next().copied().unwrap()
}

/// `sin(arange(n)) * 1000`, as the programs build it.
fn x(n: usize) -> Vec<f64> {
    (0..n).map(|i| (i as f64).sin() * 1000.0).collect()
}

fn close(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "got {got}, want {want}"
    );
}

#[test]
fn programs_that_go_on_from_a_mask_give_numpys_numbers() {
    let cluster = Cluster::start(2, 2);
    let mut c = cluster.client();
    let xs = x(200_000);
    let pre = "x = sin(arange(200000, chunk=7000)) * 1000; ";

    // The program: a reduction of x[mask].
    let want: f64 = xs.iter().filter(|v| **v > 500.0).sum();
    close(
        scalar(run(&mut c, &format!("{pre}sum(x[x > 500])")).unwrap()),
        want,
    );

    // mean divides by the count of what the mask kept, not by the bound (200000).
    let kept: Vec<f64> = xs.iter().copied().filter(|v| *v > 0.0).collect();
    let want = kept.iter().sum::<f64>() / kept.len() as f64;
    close(
        scalar(run(&mut c, &format!("{pre}mean(x[x > 0])")).unwrap()),
        want,
    );

    // Three stages: the outer mask, the inner mask, then the sum of an elementwise result.
    let m: Vec<f64> = xs.iter().copied().filter(|v| *v > 500.0).collect();
    let want: f64 = m.iter().filter(|v| **v > 900.0).map(|v| v * 2.0).sum();
    let got = run(&mut c, &format!("{pre}m = x[x > 500]; sum(m[m > 900] * 2)")).unwrap();
    close(scalar(got), want);

    // The length itself: how many values `unique` found (0..99999 / 7, truncated).
    let got = run(
        &mut c,
        "a = arange(100000, chunk=1000); u = unique(astype(a / 7, \"int64\")); sum(u * 0 + 1)",
    )
    .unwrap();
    assert_eq!(scalar(got), 14_286.0);

    // nonzero of a 3-D mask: one index array per dimension, from the flat positions.
    let t: Vec<f64> = (0..24).map(|i| (i as f64).sin()).collect();
    let want: f64 = (0..24)
        .filter(|i| t[*i] > 0.5)
        .map(|i| ((i / 12) * 100 + (i / 4 % 3) * 10 + i % 4) as f64)
        .sum();
    let got = run(
        &mut c,
        "x = reshape(sin(arange(24, chunk=5)), (2, 3, 4)); n = nonzero(x > 0.5); \
         sum(n[0] * 100 + n[1] * 10 + n[2])",
    )
    .unwrap();
    close(scalar(got), want);

    // unique_all of a 2-D tensor: NumPy's values, first indices, inverse and counts.
    let ints: Vec<i64> = (0..30).map(|i| ((i as f64).sin() * 3.0) as i64).collect();
    let mut values = ints.clone();
    values.sort_unstable();
    values.dedup();
    let first: Vec<f64> = values
        .iter()
        .map(|v| ints.iter().position(|x| x == v).unwrap() as f64)
        .collect();
    let inverse: Vec<f64> = ints
        .iter()
        .map(|x| values.iter().position(|v| v == x).unwrap() as f64)
        .collect();
    let counts: Vec<f64> = values
        .iter()
        .map(|v| ints.iter().filter(|x| *x == v).count() as f64)
        .collect();
    let upre =
        "x = reshape(astype(sin(arange(30, chunk=7)) * 3, \"int64\"), (5, 6)); u = unique_all(x); ";
    for (i, want) in [(1, first), (2, inverse), (3, counts)] {
        let got = run(&mut c, &format!("{upre}u[{i}]")).unwrap();
        assert_eq!(
            got.to_f64().iter().copied().collect::<Vec<_>>(),
            want,
            "unique_all[{i}]"
        );
    }

    // A 1-D mask along the first axis of a 3-D tensor selects whole rows (xarray's time
    // selection), in C order, with the real row count; reductions go on from it.
    let got = run(
        &mut c,
        "t = reshape(sin(arange(1400, chunk=300)), (40, 5, 7)); \
         m = sin(arange(40, chunk=9)) > 0.2; t[m]",
    )
    .unwrap();
    let rows: Vec<usize> = (0..40).filter(|r| (*r as f64).sin() > 0.2).collect();
    let want: Vec<f64> = rows
        .iter()
        .flat_map(|r| (r * 35..(r + 1) * 35).map(|i| (i as f64).sin()))
        .collect();
    assert_eq!(got.shape(), &[rows.len(), 5, 7]);
    assert_eq!(got.to_f64().iter().copied().collect::<Vec<_>>(), want);
    let got = run(
        &mut c,
        "t = reshape(sin(arange(1400, chunk=300)), (40, 5, 7)); \
         m = sin(arange(40, chunk=9)) > 0.2; mean(t[m])",
    )
    .unwrap();
    close(scalar(got), want.iter().sum::<f64>() / want.len() as f64);

    // A 1-D result after the stage: every element, in order, with its real length.
    let got = run(&mut c, &format!("{pre}x[x > 990] * 2")).unwrap();
    let want: Vec<f64> = xs.iter().filter(|v| **v > 990.0).map(|v| v * 2.0).collect();
    assert_eq!(got.shape(), &[want.len()]);
    assert_eq!(got.to_f64().iter().copied().collect::<Vec<_>>(), want);
}

/// `np.compress`: along axis 0 of a 3-D tensor (whole rows), a condition shorter than the
/// axis (false beyond it), a non-bool condition, `axis=None` (the flattened tensor), a
/// reduction going on from the result; and the errors NumPy gives, or names the workaround.
#[test]
fn compress_gives_numpys_slices_and_names_what_it_refuses() {
    let cluster = Cluster::start(1, 2);
    let mut c = cluster.client();
    let t: Vec<f64> = (0..1400).map(|i| (i as f64).sin()).collect();
    let pre = "t = reshape(sin(arange(1400, chunk=300)), (40, 5, 7)); \
               m = sin(arange(40, chunk=9)) > 0.2; ";
    let rows =
        |len: usize| -> Vec<usize> { (0..len).filter(|r| (*r as f64).sin() > 0.2).collect() };
    let rows_of = |rows: &[usize]| -> Vec<f64> {
        rows.iter()
            .flat_map(|r| t[r * 35..(r + 1) * 35].iter().copied())
            .collect()
    };
    for (expr, len) in [
        ("compress(m, t, axis=0)", 40),
        ("compress(m[:23], t, axis=0)", 23),
        ("compress(astype(m, \"int64\") * 3, t, axis=-3)", 40),
    ] {
        let got = run(&mut c, &format!("{pre}{expr}")).unwrap();
        let r = rows(len);
        assert_eq!(got.shape(), &[r.len(), 5, 7], "{expr}");
        assert_eq!(
            got.to_f64().iter().copied().collect::<Vec<_>>(),
            rows_of(&r),
            "{expr}"
        );
    }
    // A reduction over the rows of the result.
    let got = run(&mut c, &format!("{pre}sum(compress(m, t, axis=0), axis=0)")).unwrap();
    let r = rows_of(&rows(40));
    let want: Vec<f64> = (0..35)
        .map(|k| r.iter().skip(k).step_by(35).sum::<f64>())
        .collect();
    for (g, w) in got.to_f64().iter().zip(&want) {
        close(*g, *w);
    }
    // axis=None: the first 300 elements of the flattened tensor where the condition holds.
    let got = run(
        &mut c,
        &format!("{pre}compress(cos(arange(300, chunk=70)) > 0, t)"),
    )
    .unwrap();
    let want: Vec<f64> = (0..300)
        .filter(|i| (*i as f64).cos() > 0.0)
        .map(|i| t[i])
        .collect();
    assert_eq!(got.to_f64().iter().copied().collect::<Vec<_>>(), want);
    for (expr, says) in [
        (
            "compress(sin(arange(41)) > 0, t, axis=0)",
            "more than the 40",
        ),
        (
            "compress(sin(arange(5)) > 0, t, axis=1)",
            "transpose(a, (1, 0, 2))",
        ),
        ("compress(t > 0, t, axis=0)", "1-d"),
        ("compress(m, t, axis=3)", "out of bounds"),
    ] {
        let e = ares_core::expr::evaluate(&format!("{pre}{expr}")).unwrap_err();
        assert!(e.to_string().contains(says), "{expr}: {e}");
    }
}

/// Sorting a data-dependent tensor along either axis: the stage gives the rows, then the
/// lanes sort with the real row count.
#[test]
fn a_data_dependent_tensor_sorts_along_any_axis() {
    let cluster = Cluster::start(1, 2);
    let mut c = cluster.client();
    let pre = "t = reshape(sin(arange(400, chunk=90)) * 10, (100, 4)); \
               s = t[sin(arange(100, chunk=30)) > 0]; ";
    let rows: Vec<usize> = (0..100).filter(|r| (*r as f64).sin() > 0.0).collect();
    let s: Vec<Vec<f64>> = rows
        .iter()
        .map(|r| (0..4).map(|k| ((r * 4 + k) as f64).sin() * 10.0).collect())
        .collect();
    let got = run(&mut c, &format!("{pre}sort(s, axis=0)")).unwrap();
    assert_eq!(got.shape(), &[rows.len(), 4]);
    let got: Vec<f64> = got.to_f64().iter().copied().collect();
    for k in 0..4 {
        let mut col: Vec<f64> = s.iter().map(|row| row[k]).collect();
        col.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let g: Vec<f64> = got.iter().skip(k).step_by(4).copied().collect();
        assert_eq!(g, col, "column {k}");
    }
    let got = run(&mut c, &format!("{pre}argsort(s, axis=1, descending=True)")).unwrap();
    let got: Vec<f64> = got.to_f64().iter().copied().collect();
    for (i, row) in s.iter().enumerate() {
        let mut idx: Vec<usize> = (0..4).collect();
        idx.sort_by(|a, b| row[*b].partial_cmp(&row[*a]).unwrap());
        let want: Vec<f64> = idx.iter().map(|j| *j as f64).collect();
        assert_eq!(&got[i * 4..(i + 1) * 4], &want[..], "row {i}");
    }
}

#[test]
fn a_length_that_does_not_fit_fails_naming_the_op_and_the_lengths() {
    let cluster = Cluster::start(1, 1);
    let mut c = cluster.client();
    let e = run(
        &mut c,
        "x = sin(arange(2000, chunk=100)); x[x > 0] + x[x < 0]",
    )
    .unwrap_err();
    assert!(
        e.contains("add") && e.contains("(999,)") && e.contains("(1000,)"),
        "{e}"
    );
    // An op that needs the length waits for it, then fails as NumPy's would if it does
    // not fit (999 elements in rows of 10).
    let e = run(
        &mut c,
        "x = sin(arange(2000, chunk=100)); reshape(x[x > 0], (-1, 10))",
    )
    .unwrap_err();
    assert!(e.contains("reshape") && e.contains("(999,)"), "{e}");
    // A reduction without identity of a length found empty fails as NumPy's does, never
    // giving the identity; with an identity, it gives it.
    let e = run(&mut c, "x = arange(100, chunk=10); min(x[x > 555])").unwrap_err();
    assert!(e.contains("zero-size array to reduction operation"), "{e}");
    let e = run(&mut c, "x = arange(100, chunk=10); argmin(x[x > 555])").unwrap_err();
    assert!(e.contains("empty sequence"), "{e}");
    close(
        scalar(run(&mut c, "x = arange(100, chunk=10); sum(x[x > 555])").unwrap()),
        0.0,
    );
    close(
        scalar(run(&mut c, "x = arange(100, chunk=10); argmax(x[x < 15])").unwrap()),
        14.0,
    );
    let got = run(&mut c, "x = arange(100, chunk=10); cumsum(x[x > 95])").unwrap();
    assert_eq!(
        got.to_f64().iter().copied().collect::<Vec<_>>(),
        [96.0, 193.0, 291.0, 390.0]
    );
    // The cluster goes on serving.
    close(
        scalar(run(&mut c, "sum(arange(10, chunk=3))").unwrap()),
        45.0,
    );
}

#[test]
fn a_staged_task_is_cancelled_and_a_1d_result_comes_back_whole() {
    let cluster = Cluster::start(2, 1);
    let mut c = cluster.client();
    let t = ares_core::expr::evaluate(
        "x = rand(2000000, chunk=10000, seed=1); m = x[x > 0.5]; sum(m[m > 0.75])",
    )
    .unwrap();
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    let info = c.cancel_task(task).unwrap();
    assert_eq!(info.status, TaskStatus::Cancelled, "{info:?}");
    let info = c.wait_task(task, Duration::from_secs(30)).unwrap();
    assert_eq!(info.status, TaskStatus::Cancelled);
    assert!(c.fetch(task).is_err(), "a cancelled task has no result");

    // A 1-D result of a later stage comes back whole, in order.
    let xs = x(50_000);
    let want: Vec<f64> = xs.iter().copied().filter(|v| *v > 0.0).collect();
    let got = run(
        &mut c,
        "x = sin(arange(50000, chunk=3000)) * 1000; x[x > 0] + 0",
    )
    .unwrap();
    assert_eq!(got.to_f64().iter().copied().collect::<Vec<_>>(), want);
}

/// A worker dies once the first stage has run: the chunks it held are the input of the next
/// stage, which gets them back from lineage (the first stage's task recomputes them), and
/// the result is still NumPy's.
#[test]
fn a_worker_lost_between_stages_changes_nothing() {
    let mut cluster = Cluster::start(3, 1);
    let mut c = cluster.client();
    // Three stages: m; then sort(m) and its mask; then the sum.
    let program = "x = sin(arange(3000000, chunk=100000)) * 1000; m = x[x > 0]; \
                   s = sort(m); sum(s[s > 500])";
    let t = ares_core::expr::evaluate(program).unwrap();
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    // The first stage is the next task of the session.
    let first = ares_core::ids::TaskId(task.0 + 1);
    let info = c.wait_task(first, Duration::from_secs(120)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    let victim = cluster.nodes.remove(1);
    let mut victim = victim;
    victim.kill().unwrap();
    victim.wait().unwrap();
    let info = c.wait_task(task, Duration::from_secs(180)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    let want: f64 = x(3_000_000).iter().filter(|v| **v > 500.0).sum();
    close(scalar(c.fetch(task).unwrap().remove(0)), want);
}
