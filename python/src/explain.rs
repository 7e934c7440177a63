//! `explain`: what `ares explain` prints for tensors, from the same passes
//! (`ares_core::prepare::prepare`) and the same printer (`ares_core::explain::text`).

use crate::errors::value_error;
use crate::tensor::PyTensor;
use ares_core::tensor::Tensor;
use pyo3::prelude::*;

/// Prepares the graph of `tensors` for `workers` × `slots` and prints every pass, as
/// `ares explain` does.
pub fn explain_text(
    py: Python<'_>,
    tensors: &[PyRef<'_, PyTensor>],
    config: &ares::config::TaskConfig,
    workers: usize,
    slots: usize,
    limit: usize,
) -> PyResult<String> {
    let refs: Vec<&Tensor> = tensors.iter().map(|t| &t.tensor).collect();
    let graph = Tensor::graph(&refs);
    let cluster = ares_core::prepare::uniform_cluster(workers.max(1), slots.max(1));
    py.detach(|| {
        // Sinks are planned, not created (as `ares explain` does).
        ares_core::io::plan_only(|| {
            ares_core::explain::staged_text(&graph, config, &cluster, limit)
        })
    })
    .map_err(value_error)
}

/// `ares explain` for `tensors` without an engine: the default task config, a cluster of
/// `workers` × `slots`.
#[pyfunction]
#[pyo3(signature = (tensors, workers=2, slots=2, limit=50))]
pub fn explain(
    py: Python<'_>,
    tensors: Vec<PyRef<'_, PyTensor>>,
    workers: usize,
    slots: usize,
    limit: usize,
) -> PyResult<String> {
    let config = ares::config::TaskConfig::default();
    explain_text(py, &tensors, &config, workers, slots, limit)
}
