//! Rechunking through the shuffle (issue 11): a change of grid whose source and target chunks
//! cross (row bands to column bands) tiles into N mappers, a proxy and M reducers instead of
//! one slice node per overlapping pair, and moves every element to the same place the grid
//! method does, for every dtype, on the local executor (fusion on and off) and on a cluster
//! of worker processes. The expected values are computed here from the index alone.

mod common;

use ares::config::TaskConfig;
use ares::protocol::TaskStatus;
use ares_core::array::{ArrayData, DType};
use ares_core::ids::{ChunkIdx, TaskId};
use ares_core::ops::Op;
use ares_core::prepare::{prepare, uniform_cluster};
use ares_core::tensor::Tensor;
use common::cluster::Cluster;
use std::time::Duration;

fn spec(splits: &[Vec<usize>]) -> String {
    let dims: Vec<String> = splits
        .iter()
        .map(|s| {
            let parts: Vec<String> = s.iter().map(|n| n.to_string()).collect();
            format!("({},)", parts.join(", "))
        })
        .collect();
    format!("({})", dims.join(", "))
}

/// `arange` in `shape`, cast to `dtype`, chunked `from`, then rechunked `to`.
fn program(shape: &[usize], from: &[Vec<usize>], to: &[Vec<usize>], dtype: DType) -> Tensor {
    let n: usize = shape.iter().product();
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let text = format!(
        "x = astype(reshape(arange({n}), ({},)), '{dtype}'); rechunk(rechunk(x, {}), {})",
        dims.join(", "),
        spec(from),
        spec(to)
    );
    ares_core::expr::evaluate(&text).unwrap()
}

/// Element `k` (C order) of `arange(n)` cast as `astype` does.
fn expected(n: usize, dtype: DType) -> ArrayData {
    let v = ndarray::ArrayD::from_shape_vec(vec![n], (0..n as i64).collect()).unwrap();
    ArrayData::I64(v).cast(dtype)
}

fn shuffled(t: &Tensor) -> usize {
    let p = prepare(
        &Tensor::graph(&[t]),
        &TaskConfig::default(),
        &uniform_cluster(2, 2),
        TaskId(1),
    )
    .unwrap();
    let chunks = &p.subtasks.chunks;
    (0..chunks.len())
        .filter(|c| chunks.node(ChunkIdx(*c as u32)).op == Op::ShuffleMap)
        .count()
}

/// The dtype and the values in C order.
fn flat(a: &ArrayData) -> (DType, Vec<f64>) {
    (a.dtype(), a.iter_f64().collect())
}

/// A shape, its chunking before and after.
type Case = (Vec<usize>, Vec<Vec<usize>>, Vec<Vec<usize>>);

/// Grids that cross: 4096+ overlapping pairs, more than four per chunk.
fn cases() -> Vec<Case> {
    vec![
        (
            vec![64, 64],
            vec![vec![64], vec![1; 64]],
            vec![vec![1; 64], vec![64]],
        ),
        (
            vec![64, 64],
            vec![vec![30, 34], vec![1; 64]],
            vec![vec![1; 64], vec![20, 44]],
        ),
        (
            vec![64, 8, 64],
            vec![vec![64], vec![8], vec![1; 64]],
            vec![vec![1; 64], vec![3, 5], vec![64]],
        ),
    ]
}

#[test]
fn crossing_grids_rechunk_through_the_shuffle_on_the_local_executor() {
    for (shape, from, to) in cases() {
        for dtype in [DType::F64, DType::F32, DType::I32, DType::Bool] {
            let t = program(&shape, &from, &to, dtype);
            let mappers = shuffled(&t);
            assert_eq!(mappers, from.iter().map(|s| s.len()).product::<usize>());
            let want = expected(shape.iter().product(), dtype);
            for fuse in [true, false] {
                let config = TaskConfig {
                    fuse_enabled: fuse,
                    ..TaskConfig::default()
                };
                let got = common::run(&t, &config, 2, 2);
                assert_eq!(got.shape(), shape.as_slice());
                assert_eq!(flat(&got), flat(&want), "{shape:?} {dtype} fuse={fuse}");
            }
        }
    }
}

#[test]
fn a_row_to_column_rechunk_is_linear_in_chunks() {
    // 400 row bands to 400 column bands of a 4000² array: 160,000 slice nodes by the grid
    // method, about 2 × 400 chunks through the shuffle (plus the proxy and the zeros made
    // into row bands first).
    let x = ares_core::expr::evaluate(
        "x = rechunk(zeros((4000, 4000)), (4000, 10)); rechunk(x, (10, 4000))",
    )
    .unwrap();
    let p = prepare(
        &Tensor::graph(&[&x]),
        &TaskConfig::default(),
        &uniform_cluster(2, 2),
        TaskId(1),
    )
    .unwrap();
    assert!(
        p.subtasks.chunks.len() < 3000,
        "{} chunks",
        p.subtasks.chunks.len()
    );
    // Grids that barely cross keep the grid method: a few slices per chunk.
    let few = program(
        &[64, 64],
        &[vec![32, 32], vec![64]],
        &[vec![64], vec![32, 32]],
        DType::F64,
    );
    assert_eq!(shuffled(&few), 0);
}

#[test]
fn crossing_grids_rechunk_through_the_shuffle_on_a_cluster() {
    let cluster = Cluster::start(2, 1);
    let mut c = cluster.client();
    for (shape, from, to) in cases() {
        let t = program(&shape, &from, &to, DType::F32);
        use ares::api::TaskApi;
        let task = c
            .submit_tileable_graph(&Tensor::graph(&[&t]), None)
            .unwrap();
        let info = c.wait_task(task, Duration::from_secs(120)).unwrap();
        assert_eq!(info.status, TaskStatus::Succeeded, "{:?}", info.error);
        let got = c.fetch(task).unwrap().remove(0);
        c.cancel_task(task).unwrap();
        let want = expected(shape.iter().product(), DType::F32);
        assert_eq!(flat(&got), flat(&want), "{shape:?}");
    }
}
