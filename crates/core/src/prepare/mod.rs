//! Graph preparation: a chain of pure passes from a tileable graph to a planned subtask graph.
//!
//! `optimize_tileable_graph → tile → optimize_chunk_graph → fuse → color → assign`. Every
//! pass is a function of its input and the config: no actors, no I/O, no clock. [`prepare`]
//! runs the chain and records what each pass produced and how long it took, for
//! `ares explain` and `ares bench prepare`.

pub mod assign;
pub mod color;
pub mod fuse;
pub mod generated_products;
pub mod limits;
pub mod optimize_chunk;
pub mod optimize_tileable;
pub mod stages;
pub mod stream;
pub mod tile;

pub use assign::WorkerSlots;

use crate::config::TaskConfig;
use crate::error::{AresError, Result};
use crate::graph::{SubtaskGraph, TileableGraph};
use crate::ids::{StageId, TaskId, WorkerId};
use serde::Serialize;
use std::time::Instant;

/// What one pass did: its name, the size of its output and its time.
#[derive(Clone, Debug, Serialize)]
pub struct PassReport {
    pub pass: &'static str,
    /// Nodes out: tileables, chunks or subtasks depending on the pass.
    pub nodes: usize,
    pub seconds: f64,
}

/// The output of the pipeline.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The tileable graph after optimization.
    pub tileable: TileableGraph,
    pub subtasks: SubtaskGraph,
    /// Chunks right after tiling, before chunk-graph optimization and fusion.
    pub tiled_chunks: usize,
    /// Initial subtasks per worker, in the order of the cluster's workers.
    pub assignment: Vec<(WorkerSlots, usize)>,
    pub passes: Vec<PassReport>,
}

/// `n` workers with `slots` slots each, ids `w0..`.
pub fn uniform_cluster(n: usize, slots: usize) -> Vec<WorkerSlots> {
    (0..n)
        .map(|i| WorkerSlots {
            worker: WorkerId(i as u32),
            slots,
        })
        .collect()
}

fn timed<T>(
    passes: &mut Vec<PassReport>,
    pass: &'static str,
    f: impl FnOnce() -> Result<T>,
    size: impl Fn(&T) -> usize,
) -> Result<T> {
    let start = Instant::now();
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        AresError::prepare(pass, format!("panicked: {}", panic_message(panic.as_ref())))
    })??;
    passes.push(PassReport {
        pass,
        nodes: size(&out),
        seconds: start.elapsed().as_secs_f64(),
    });
    Ok(out)
}

/// The text of a panic payload (a `&str` or a `String`, as `panic!` makes them).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Runs the whole pipeline for stage 0 of `task`. A bug that panics in a pass becomes an
/// error of that pass, so every caller (the local executor, the supervisor) reports it.
pub fn prepare(
    graph: &TileableGraph,
    config: &TaskConfig,
    workers: &[WorkerSlots],
    task: TaskId,
) -> Result<Prepared> {
    prepare_stage(graph, config, workers, task, StageId(0))
}

/// [`prepare`] for one stage of a task that runs in stages ([`stages`]): the stage is the
/// `stage_id` of its subtasks' ids.
pub fn prepare_stage(
    graph: &TileableGraph,
    config: &TaskConfig,
    workers: &[WorkerSlots],
    task: TaskId,
    stage: StageId,
) -> Result<Prepared> {
    config.validate()?;
    graph.validate()?;
    let mut passes = Vec::new();
    let tileable = if config.optimize_tileable_graph {
        timed(
            &mut passes,
            "optimize_tileable_graph",
            || optimize_tileable::optimize_tileable_graph(graph),
            |g| g.nodes.len(),
        )?
    } else {
        graph.clone()
    };
    let chunks = timed(
        &mut passes,
        "tile",
        || tile::tile(&tileable, config),
        |g| g.len(),
    )?;
    let tiled_chunks = chunks.len();
    let chunks = if config.optimize_chunk_graph {
        timed(
            &mut passes,
            "optimize_chunk_graph",
            || Ok(optimize_chunk::optimize_chunk_graph(chunks)),
            |g| g.len(),
        )?
    } else {
        chunks
    };
    let chunks = if config.fuse_enabled {
        let generated = config.fuse_generated_operands;
        timed(
            &mut passes,
            "fuse",
            || Ok(fuse::fuse(chunks, generated)),
            |g| g.len(),
        )?
    } else {
        chunks
    };
    let total_slots = workers.iter().map(|w| w.slots).sum::<usize>().max(1);
    let mut subtasks = timed(
        &mut passes,
        "color",
        || color::group_subtasks(chunks, config, total_slots, task, stage),
        |g| g.len(),
    )?;
    let counts = timed(
        &mut passes,
        "assign",
        || assign::assign_initial(&mut subtasks, workers),
        |c| c.iter().sum(),
    )?;
    Ok(Prepared {
        tileable,
        subtasks,
        tiled_chunks,
        assignment: workers.iter().copied().zip(counts).collect(),
        passes,
    })
}
