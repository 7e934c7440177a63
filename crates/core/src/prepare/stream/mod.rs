//! Streamed preparation: a large graph reaches the scheduler part by part while the rest is
//! still being expanded, so the first subtasks run after milliseconds, not after the whole
//! preparation (dask#3872: "tasks constructed in the server can be put directly into the
//! scheduler even when the whole task graph is not yet fully constructed").
//!
//! A graph that streams ([`plan`]) is tiled a run of whole regions at a time; each run goes
//! through the passes alone (`optimize_chunk_graph → fuse → color → assign`) and leaves as a
//! [`GraphDelta`] that extends the graph before it. Runs grow fourfold from
//! `stream_first_chunks`, so a graph of `n` chunks comes in about `log4(n / first)` parts and
//! what is done again per part (a worker copies its graph to extend it) adds up to a third
//! of the whole graph. The seal (the combine levels above the regions, one subtask per
//! chunk, and the results) goes out with the last run.
//!
//! Fusion is unchanged by the cut: a region's chunks are read only inside it, except its
//! roots, which are kept (a result can only end a chain) and read by combines of several
//! inputs, which never fuse with their inputs anyway. Subtask grouping and initial placement
//! are decided per part.

pub mod plan;
mod seal;

pub use plan::{SealResult, StreamPlan};

use crate::config::TaskConfig;
use crate::error::{AresError, Result};
use crate::graph::{ChunkGraph, DeltaBase, GraphDelta, ResultTensor, SubtaskGraph, TileableGraph};
use crate::ids::{ChunkIdx, StageId, TaskId};
use crate::prepare::{assign, color, fuse, optimize_chunk, optimize_tileable, WorkerSlots};
use std::time::Instant;

/// What a streamed preparation did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct StreamReport {
    pub parts: usize,
    /// Chunks as tiled, before fusion.
    pub tiled_chunks: usize,
    pub subtasks: usize,
    /// Until the first part was handed over.
    pub first_part_seconds: f64,
    pub seconds: f64,
}

/// The streaming plan of a submitted `graph` under `config`, if it streams: streaming is on,
/// and the graph, validated and optimized as [`crate::prepare::prepare`] does, is of the
/// streamable kind and projects at least `stream_from_chunks` chunks.
pub fn stream_plan(graph: &TileableGraph, config: &TaskConfig) -> Result<Option<StreamPlan>> {
    let Some(from) = config.stream_from_chunks else {
        return Ok(None);
    };
    config.validate()?;
    graph.validate()?;
    let optimized;
    let graph = if config.optimize_tileable_graph {
        optimized = optimize_tileable::optimize_tileable_graph(graph)?;
        &optimized
    } else {
        graph
    };
    let first = config.stream_first_chunks.max(1);
    let Some(plan) = StreamPlan::new(graph, config.combine_size, first) else {
        return Ok(None);
    };
    let chunks = plan.positions() as u64 * plan.chunks_per_position as u64;
    Ok((chunks >= from && plan.positions() > plan.region).then_some(plan))
}

/// Parts after the first are this many times larger than the one before.
const GROWTH: usize = 4;

/// Prepares `plan`'s graph part by part: `check` sees each run's subtask graph (of its own,
/// for checks such as memory) before `emit` receives the part as soon as it is ready. The
/// seal goes out with the last run. `emit` returns false to stop (the task ended).
pub fn prepare_streamed(
    plan: &StreamPlan,
    config: &TaskConfig,
    workers: &[WorkerSlots],
    (task, stage): (TaskId, StageId),
    mut check: impl FnMut(&SubtaskGraph) -> Result<()>,
    mut emit: impl FnMut(GraphDelta) -> Result<bool>,
) -> Result<StreamReport> {
    config.validate()?;
    let started = Instant::now();
    let mut report = StreamReport::default();
    let total_slots = workers.iter().map(|w| w.slots).sum::<usize>().max(1);
    let positions = plan.positions();
    let first = (config.stream_first_chunks / plan.chunks_per_position).max(1);
    let mut run = first.div_ceil(plan.region) * plan.region;
    let mut tables = ChunkGraph::default();
    let mut base = DeltaBase::default();
    // Per kept step, the chunks the seal reads or the results hold; the subtask and depth
    // of each.
    let mut kept: Vec<Vec<ChunkIdx>> = vec![Vec::new(); plan.kept_lists()];
    let mut owners: rustc_hash::FxHashMap<u32, (u32, u32)> = Default::default();
    let mut start = 0;
    while start < positions {
        let end = (start + run).min(positions);
        let mut g = tables.take_tables();
        // Room for the run's chunks at once: growing a graph of millions of nodes by
        // doubling copies it into fresh pages again and again.
        g.reserve((end - start) * plan.chunks_per_position + (end - start) / plan.region.max(1));
        let held = plan.tile_positions(start..end, &mut g);
        report.tiled_chunks += g.len();
        g.results = held.into_iter().map(keep_as_result).collect();
        if config.optimize_chunk_graph {
            g = optimize_chunk::optimize_chunk_graph(g);
        }
        if config.fuse_enabled {
            g = fuse::fuse(g, config.fuse_generated_operands);
        }
        let mut part = color::group_subtasks(g, config, total_slots, task, stage)?;
        assign::assign_initial(&mut part, workers)?;
        check(&part)?;
        let held: Vec<ChunkIdx> = part
            .chunks
            .results
            .iter()
            .flat_map(|r| r.chunks.clone())
            .collect();
        for (out, r) in kept.iter_mut().zip(&part.chunks.results) {
            for c in &r.chunks {
                let s = part.owner[c.index()];
                let depth = part.subtasks[s.index()].depth;
                out.push(ChunkIdx(c.0 + base.chunks));
                owners.insert(c.0 + base.chunks, (base.subtasks + s.0, depth));
            }
        }
        let (n_chunks, n_subtasks) = (part.chunks.len(), part.len());
        let (mut delta, t) = GraphDelta::from_part(part, base, &held)?;
        tables = t;
        if start == 0 {
            // The whole graph, extrapolated from this run (and a little more).
            let scale = |n: usize| (n as f64 * positions as f64 / end as f64 * 1.05) as u32 + 64;
            delta.expected = Some(DeltaBase {
                chunks: scale(n_chunks),
                subtasks: scale(n_subtasks),
                ..DeltaBase::default()
            });
        }
        report.subtasks += n_subtasks;
        base = DeltaBase {
            chunks: base.chunks + n_chunks as u32,
            subtasks: base.subtasks + n_subtasks as u32,
            ..tables.tail_base(0)
        };
        if end == positions {
            let tables = std::mem::take(&mut tables);
            let seal = seal::seal(plan, config, tables, base, &kept, &owners, task)?;
            report.tiled_chunks += seal.chunks.len();
            report.subtasks += seal.len();
            delta.merge(seal)?;
        }
        report.parts += 1;
        if !emit(delta)? {
            return Err(AresError::prepare("stream", "stopped: the task ended"));
        }
        if report.parts == 1 {
            report.first_part_seconds = started.elapsed().as_secs_f64();
        }
        start = end;
        run *= GROWTH;
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The results of a part's passes stand for the chunks it must keep.
fn keep_as_result(chunks: Vec<ChunkIdx>) -> ResultTensor {
    ResultTensor {
        shape: [chunks.len()].into_iter().collect(),
        dtype: crate::array::DType::F64,
        splits: vec![vec![1; chunks.len()]],
        chunks,
    }
}

#[cfg(test)]
mod tests;
