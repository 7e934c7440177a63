//! Shared test helpers: an independent whole-array evaluator and a runner that prepares and
//! executes through the full pipeline.
#![allow(dead_code)]

pub mod cluster;
pub mod hostile;
pub mod nodes;
pub mod reference;

use ares::config::TaskConfig;
use ares_core::array::ArrayData;
use ares_core::executor::execute;
use ares_core::ids::TaskId;
use ares_core::prepare::{prepare, uniform_cluster};
use ares_core::tensor::Tensor;
use ndarray::ArrayD;
use std::path::{Path, PathBuf};

/// This test process's data root: a temporary directory, set once as the process-wide
/// `data.roots` (the roots are global, the tests of a binary run in parallel); each test works
/// in a directory of its own below it.
pub fn data_root() -> &'static Path {
    static BASE: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let dir = BASE.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let roots = ares_core::io::roots::DataRoots::new(&[d.path().to_path_buf()]).unwrap();
        ares_core::io::roots::set_global(roots);
        d
    });
    dir.path()
}

/// A directory `name` below [`data_root`] (canonical), and a cluster of two single-slot
/// workers with it as their only data root.
pub fn data_cluster(name: &str) -> (PathBuf, cluster::Cluster) {
    let dir = data_root().canonicalize().unwrap().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = format!("data:\n  roots: [{}]\n", dir.display());
    (dir, cluster::Cluster::start_with(2, 1, &yaml))
}

/// Prepares and executes `t` with the local executor.
pub fn run(t: &Tensor, config: &TaskConfig, workers: usize, slots: usize) -> ArrayData {
    let graph = Tensor::graph(&[t]);
    let prepared =
        prepare(&graph, config, &uniform_cluster(workers, slots), TaskId(1)).expect("prepare");
    let (mut results, _) = execute(&prepared.subtasks, slots).expect("execute");
    results.remove(0)
}

/// Asserts two arrays are equal within a relative tolerance, element by element.
pub fn assert_close(got: &ArrayData, want: &ArrayD<f64>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    for (i, (g, w)) in got.iter_f64().zip(want.iter()).enumerate() {
        let ok = (g.is_nan() && w.is_nan())
            || g == *w
            || (g - w).abs() <= 1e-9 * (1.0 + w.abs().max(g.abs()));
        assert!(ok, "{what}: element {i}: got {g}, want {w}");
    }
}

/// Runs `t` under every combination of fusion on/off and the given slot counts and compares
/// with the reference evaluation.
pub fn check(t: &Tensor, what: &str) {
    let graph = Tensor::graph(&[t]);
    let want = reference::evaluate(&graph).remove(0);
    for fuse in [true, false] {
        for (workers, slots) in [(1, 1), (2, 2)] {
            let config = TaskConfig {
                fuse_enabled: fuse,
                ..TaskConfig::default()
            };
            let got = run(t, &config, workers, slots);
            assert_eq!(got.dtype(), t.dtype(), "{what}: dtype");
            assert_close(
                &got,
                &want,
                &format!("{what} (fuse={fuse}, {workers}x{slots})"),
            );
        }
    }
}
