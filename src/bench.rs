//! `ares bench`: preparation and kernel throughput, one JSON line each.

use ares::config::TaskConfig;
use ares_core::error::Result;
use ares_core::executor::execute;
use ares_core::ids::TaskId;
use ares_core::prepare::{prepare, uniform_cluster};
use ares_core::tensor::Tensor;
use serde_json::{json, Map, Value};
use std::time::Instant;

pub fn bench_prepare(chunks: usize, repeat: usize) -> Result<Value> {
    let t = ares_core::expr::prepare_workload(chunks)?;
    let graph = Tensor::graph(&[&t]);
    let workers = uniform_cluster(2, 2);
    let mut runs = Vec::new();
    for _ in 0..repeat.max(1) {
        let start = Instant::now();
        let p = prepare(&graph, &TaskConfig::default(), &workers, TaskId(1))?;
        runs.push((start.elapsed().as_secs_f64(), p));
    }
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (seconds, p) = &runs[runs.len() / 2];
    let mut passes = Map::new();
    for r in &p.passes {
        passes.insert(r.pass.into(), json!({"seconds": r.seconds, "nodes": r.nodes, "chunks_per_s": p.tiled_chunks as f64 / r.seconds}));
    }
    let streamed = bench_streamed(&graph, &workers, repeat)?;
    Ok(json!({
        "bench": "prepare",
        "chunks": p.tiled_chunks,
        "subtasks": p.subtasks.len(),
        "seconds": seconds,
        "chunks_per_s": p.tiled_chunks as f64 / seconds,
        "passes": passes,
        "streamed": streamed,
    }))
}

/// The same graph prepared part by part (streamed preparation, whatever its size): how soon
/// the first part is ready to run, and the whole (median of `repeat` runs).
fn bench_streamed(
    graph: &ares_core::graph::TileableGraph,
    workers: &[ares_core::prepare::WorkerSlots],
    repeat: usize,
) -> Result<Value> {
    use ares_core::prepare::stream::{prepare_streamed, stream_plan};
    let config = TaskConfig {
        stream_from_chunks: Some(0),
        ..TaskConfig::default()
    };
    let Some(plan) = stream_plan(graph, &config)? else {
        return Ok(Value::Null);
    };
    let mut runs = Vec::new();
    for _ in 0..repeat.max(1) {
        let report = prepare_streamed(
            &plan,
            &config,
            workers,
            (TaskId(1), ares_core::ids::StageId(0)),
            |_| Ok(()),
            |d| {
                drop(d);
                Ok(true)
            },
        )?;
        runs.push(report);
    }
    runs.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    let r = &runs[runs.len() / 2];
    Ok(json!({
        "parts": r.parts,
        "first_part_seconds": r.first_part_seconds,
        "seconds": r.seconds,
        "subtasks": r.subtasks,
    }))
}

pub fn bench_kernel(elements: usize, chunk: usize, slots: usize) -> Result<Value> {
    let a = ares_core::tensor::rand(&[elements], chunk, Some(1))?;
    let b = ares_core::tensor::rand(&[elements], chunk, Some(2))?;
    let c = (&a + &b)?.sum(None, false)?;
    let graph = Tensor::graph(&[&c]);
    let p = prepare(
        &graph,
        &TaskConfig::default(),
        &uniform_cluster(1, slots),
        TaskId(1),
    )?;
    let start = Instant::now();
    let (results, stats) = execute(&p.subtasks, slots)?;
    let seconds = start.elapsed().as_secs_f64();
    let bytes = 2.0 * elements as f64 * 8.0;
    Ok(json!({
        "bench": "kernel",
        "expr": "(rand(n) + rand(n)).sum()",
        "elements": elements,
        "chunk": chunk,
        "slots": slots,
        "seconds": seconds,
        "gb_per_s": bytes / seconds / 1e9,
        "elements_per_s": elements as f64 / seconds,
        "peak_bytes": stats.peak_bytes,
        "result": results[0].get_flat(0).map(|s| s.as_f64()),
    }))
}
