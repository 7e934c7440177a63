//! `linalg.qr`, `linalg.svd`, `linalg.svdvals` and `linalg.svd_compressed` on a real embedded
//! cluster (a supervisor and two workers over loopback TCP), checked against an independent
//! evaluation: the whole matrix factored at once by faer through `ndarray` (`Q R = X`,
//! `QᵀQ = I`, R equal up to the signs of its rows, singular values equal), and the
//! differential test's reference (`reflinalg`-style products by the definition).

use ares::api::TaskApi;
use ares_core::array::ArrayData;
use ares_core::expr::evaluate;
use ares_core::tensor::Tensor;
use ndarray::{Array2, Ix2};
use std::time::Duration;

/// Runs the program's tensors named `outputs` on the cluster, as float64 matrices (a vector
/// as one row).
fn run(c: &mut ares::api::NativeClient, program: &str, outputs: &[&str]) -> Vec<Array2<f64>> {
    let tensors: Vec<Tensor> = outputs
        .iter()
        .map(|o| evaluate(&format!("{program}; {o}")).unwrap_or_else(|e| panic!("{o}: {e}")))
        .collect();
    let refs: Vec<&Tensor> = tensors.iter().collect();
    let task = c
        .submit_tileable_graph(&Tensor::graph(&refs), None)
        .unwrap();
    let info = c.wait_task(task, Duration::from_secs(300)).unwrap();
    assert_eq!(
        info.status,
        ares::protocol::TaskStatus::Succeeded,
        "{program}: {info:?}"
    );
    c.fetch(task)
        .unwrap()
        .into_iter()
        .map(|a: ArrayData| {
            let a = a.to_f64();
            let a = if a.ndim() == 1 {
                a.insert_axis(ndarray::Axis(0))
            } else {
                a
            };
            a.into_dimensionality::<Ix2>().unwrap()
        })
        .collect()
}

/// `a · b` by the definition (independent of the kernels under test).
fn product(a: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
    Array2::from_shape_fn((a.nrows(), b.ncols()), |(i, j)| {
        (0..a.ncols()).map(|t| a[[i, t]] * b[[t, j]]).sum()
    })
}

fn worst(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn faer_of(x: &Array2<f64>) -> faer::Mat<f64> {
    faer::Mat::from_fn(x.nrows(), x.ncols(), |i, j| x[[i, j]])
}

#[test]
fn factorizations_on_an_embedded_cluster_match_the_whole_matrix() {
    let config = ares::config::Config::default();
    let cluster = ares::node::EmbeddedCluster::start(&config, 2, 2).unwrap();
    let mut c = cluster.client(Duration::from_secs(10)).unwrap();

    // QR over 40 row chunks (a tree of three levels at fan-in 4), columns rechunked to one.
    let program = "x = randn((4000, 12), chunk=(100, 5), seed=3); q, r = linalg.qr(x)";
    let got = run(&mut c, program, &["q", "r", "x"]);
    let (q, r, x) = (&got[0], &got[1], &got[2]);
    assert_eq!((q.dim(), r.dim()), ((4000, 12), (12, 12)));
    assert!(worst(&product(q, r), x) < 1e-12, "Q R = X");
    assert!(
        worst(&product(&q.t().to_owned(), q), &Array2::eye(12)) < 1e-13,
        "QᵀQ = I"
    );
    let whole = faer_of(x).qr();
    let want = whole.thin_R();
    for i in 0..12 {
        assert!((0..i).all(|j| r[[i, j]] == 0.0), "R is upper triangular");
        let sign = (r[[i, i]] * want[(i, i)]).signum();
        for j in 0..12 {
            assert!(
                (r[[i, j]] - sign * want[(i, j)]).abs() < 1e-11,
                "R[{i},{j}]"
            );
        }
    }

    // SVD and the singular values, tall and (by transposition) short-and-fat.
    for program in [
        "x = randn((3000, 9), chunk=(250, 9), seed=4)",
        "x = randn((9, 3000), chunk=(9, 700), seed=5)",
    ] {
        let program = format!("{program}; u, s, vh = linalg.svd(x); v = linalg.svdvals(x)");
        let got = run(&mut c, &program, &["u", "s", "vh", "v", "x"]);
        let (u, s, vh, v, x) = (&got[0], &got[1], &got[2], &got[3], &got[4]);
        let want = faer_of(x).singular_values().unwrap();
        for (i, w) in want.iter().enumerate() {
            assert!(
                (s[[0, i]] - w).abs() < 1e-11 * w.max(1.0),
                "{program}: S[{i}]"
            );
            assert!(
                (v[[0, i]] - w).abs() < 1e-11 * w.max(1.0),
                "{program}: svdvals[{i}]"
            );
        }
        let us = u * &s.row(0);
        assert!(worst(&product(&us, vh), x) < 1e-11, "{program}: U S Vh = X");
        let k = s.ncols();
        assert!(worst(&product(&u.t().to_owned(), u), &Array2::eye(k)) < 1e-12);
        assert!(worst(&product(vh, &vh.t().to_owned()), &Array2::eye(k)) < 1e-12);
    }

    // The randomized SVD of a matrix of rank 3 recovers it and its singular values.
    let program =
        "a = randn((2000, 3), chunk=(400, 3), seed=6); b = randn((3, 80), chunk=(3, 80), seed=7); \
                   x = a @ b; u, s, vh = linalg.svd_compressed(x, 3, n_power_iter=1, seed=8)";
    let got = run(&mut c, program, &["u", "s", "vh", "x"]);
    let (u, s, vh, x) = (&got[0], &got[1], &got[2], &got[3]);
    let want = faer_of(x).singular_values().unwrap();
    for (i, w) in want.iter().take(3).enumerate() {
        assert!((s[[0, i]] - w).abs() < 1e-9 * w, "S[{i}]");
    }
    assert!(
        worst(&product(&(u * &s.row(0)), vh), x) < 1e-9,
        "rank-3 reconstruction"
    );

    // A full-rank random matrix, which the leaves of the one pass over x generate block by
    // block (500 × 700 rows a leaf: 93 rows a block), against the algorithm on the whole
    // matrix: the same Ω (ares' `randn` of the seed), Q of faer's QR of x·Ω, the SVD of Qᵀ·x.
    let program = "x = randn((3000, 700), chunk=(500, 700), seed=9); \
                   w = randn((700, 20), chunk=(700, 20), seed=10); \
                   u, s, vh = linalg.svd_compressed(x, 5, seed=10)";
    let got = run(&mut c, program, &["u", "s", "vh", "x", "w"]);
    let (u, s, vh, x, w) = (&got[0], &got[1], &got[2], &got[3], &got[4]);
    let y = faer_of(&product(x, w));
    let q = y.qr().compute_thin_Q();
    let q = Array2::from_shape_fn((q.nrows(), q.ncols()), |(i, j)| q[(i, j)]);
    let b = faer_of(&product(&q.t().to_owned(), x));
    let svd = b.thin_svd().unwrap();
    let (ub, sb, vb) = (svd.U(), svd.S().column_vector(), svd.V());
    let us = Array2::from_shape_fn((20, 5), |(i, j)| ub[(i, j)] * sb[j]);
    let vt = Array2::from_shape_fn((5, 700), |(i, j)| vb[(j, i)]);
    for i in 0..5 {
        assert!((s[[0, i]] - sb[i]).abs() < 1e-10 * sb[i], "S[{i}]");
    }
    let want = product(&product(&q, &us), &vt);
    let got = product(&(u * &s.row(0)), vh);
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(
        worst(&got, &want) < 1e-9 * scale,
        "the rank-5 approximation is the whole-matrix algorithm's"
    );
}

#[test]
fn a_block_over_the_budget_is_refused_naming_its_size() {
    let t = evaluate("x = ones((200000000, 10), chunk=(200000000, 10)); linalg.qr(x)[1]").unwrap();
    let graph = Tensor::graph(&[&t]);
    let e = match ares_core::prepare::prepare(
        &graph,
        &ares_core::config::TaskConfig::default(),
        &ares_core::prepare::uniform_cluster(1, 1),
        ares_core::ids::TaskId(1),
    ) {
        Ok(_) => panic!("a 15 GiB block was prepared"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("200000000 × 10 float64 is 15258 MiB") && e.contains("smaller row chunks"),
        "{e}"
    );
}
