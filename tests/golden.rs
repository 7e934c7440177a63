//! Golden text dumps of prepared graphs (`ares explain`). Set `UPDATE_GOLDEN=1` to rewrite
//! them after an intended change, then review the diff.

use ares::config::TaskConfig;
use ares_core::ids::TaskId;
use ares_core::prepare::{prepare, uniform_cluster};
use ares_core::tensor::Tensor;
use std::path::PathBuf;

fn golden(name: &str, expr: &str, config: TaskConfig, workers: usize, slots: usize) {
    let t = ares_core::expr::evaluate(expr).unwrap();
    let p = prepare(
        &Tensor::graph(&[&t]),
        &config,
        &uniform_cluster(workers, slots),
        TaskId(1),
    )
    .unwrap();
    let text = format!("# {expr}\n{}", ares_core::explain::text(&p, 0));
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing {}; run with UPDATE_GOLDEN=1", path.display()));
    assert_eq!(
        text, want,
        "explain output of {name} changed; rerun with UPDATE_GOLDEN=1 if intended"
    );
}

#[test]
fn seed_example() {
    golden(
        "seed_example",
        "a = rand(100, chunk=100, seed=1); b = rand(100, chunk=100, seed=2); sum(a + b)",
        TaskConfig::default(),
        2,
        1,
    );
}

/// Seed 001's rule as stated: ADD and SUM fuse, the RANDs stay chunks of their own.
#[test]
fn seed_example_without_generated_operands() {
    let config = TaskConfig {
        fuse_generated_operands: false,
        ..TaskConfig::default()
    };
    golden(
        "seed_example_mars_rule",
        "a = rand(100, chunk=100, seed=1); b = rand(100, chunk=100, seed=2); sum(a + b)",
        config,
        2,
        1,
    );
}

#[test]
fn chunked_sum_tree() {
    golden(
        "chunked_sum_tree",
        "a = rand(10, chunk=1, seed=1); b = rand(10, chunk=1, seed=2); sum(a * 2 + b)",
        TaskConfig::default(),
        2,
        2,
    );
}

#[test]
fn chunked_sum_tree_without_fusion() {
    let config = TaskConfig {
        fuse_enabled: false,
        ..TaskConfig::default()
    };
    golden(
        "chunked_sum_tree_nofuse",
        "a = rand(10, chunk=3, seed=1); b = rand(10, chunk=3, seed=2); sum(a * 2 + b)",
        config,
        2,
        1,
    );
}

#[test]
fn matmul_slice() {
    golden(
        "matmul_slice",
        "m = ones((30, 20), chunk=(16, 10)); sum(matmul(m, transpose(m))[::2, 10:])",
        TaskConfig::default(),
        2,
        2,
    );
}

#[test]
fn broadcast_and_variance() {
    golden(
        "variance",
        "x = randn(4, 6, chunk=(2, 3), seed=7); var(x, axis=1)",
        TaskConfig::default(),
        3,
        1,
    );
}
