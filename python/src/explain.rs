//! `explain`: what `ares explain` prints for tensors, from the same passes
//! (`ares_core::prepare::prepare`) and the same printers (`ares_core::explain::text`, and for
//! `Tensor.visualize` its JSON and Graphviz DOT).

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
    explain_as(py, tensors, config, (workers, slots), limit, Format::Text)
}

/// The printers of `ares explain --format`.
#[derive(Clone, Copy)]
enum Format {
    Text,
    Json,
    Dot,
}

fn explain_as(
    py: Python<'_>,
    tensors: &[PyRef<'_, PyTensor>],
    config: &ares::config::TaskConfig,
    (workers, slots): (usize, usize),
    limit: usize,
    format: Format,
) -> PyResult<String> {
    let refs: Vec<&Tensor> = tensors.iter().map(|t| &t.tensor).collect();
    let graph = Tensor::graph(&refs);
    let cluster = ares_core::prepare::uniform_cluster(workers.max(1), slots.max(1));
    py.detach(|| {
        // Sinks are planned, not created (as `ares explain` does).
        ares_core::io::plan_only(|| match format {
            Format::Text => ares_core::explain::staged_text(&graph, config, &cluster, limit),
            Format::Json | Format::Dot => {
                // A graph in stages: its first stage, the part planned before anything runs.
                let first = ares_core::prepare::stages::next_stage(&graph)?.map(|s| s.graph);
                let p = ares_core::prepare::prepare(
                    first.as_ref().unwrap_or(&graph),
                    config,
                    &cluster,
                    ares_core::ids::TaskId(1),
                )?;
                Ok(match format {
                    Format::Json => ares_core::explain::to_json(&p, limit).to_string(),
                    _ => ares_core::explain::dot(&p, limit),
                })
            }
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

/// `ares explain --format json|dot` for `tensors` without an engine (as [`explain`]): what
/// `Tensor.visualize` draws.
#[pyfunction]
#[pyo3(signature = (tensors, format, workers=2, slots=2, limit=0))]
pub fn explain_graph(
    py: Python<'_>,
    tensors: Vec<PyRef<'_, PyTensor>>,
    format: &str,
    workers: usize,
    slots: usize,
    limit: usize,
) -> PyResult<String> {
    let format = match format {
        "json" => Format::Json,
        "dot" => Format::Dot,
        other => return Err(value_error(format!("format {other:?}: json or dot"))),
    };
    let config = ares::config::TaskConfig::default();
    explain_as(py, &tensors, &config, (workers, slots), limit, format)
}
