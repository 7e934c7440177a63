//! The seal, the last part of a streamed graph: the combine levels above the regions, the
//! ops on reduction results, and the results.
//!
//! It is tiled as a graph of its own in which a placeholder stands for each region root
//! (made by an earlier part), fused like any graph (the root of `mean`'s sum takes its
//! division in, as the one-piece pipeline fuses it; a placeholder never fuses, its one
//! reader has several inputs), and then cut into a part: the placeholders dropped, every
//! input mapped to the whole graph's chunks. One subtask per chunk: the seal is a few
//! hundred combines.

use super::{StreamPlan, TaskConfig};
use crate::error::{AresError, Result};
use crate::graph::{ChunkGraph, Csr, DeltaBase, GraphDelta, Subtask};
use crate::ids::{ChunkIdx, StageId, SubtaskId, TaskId};
use crate::prepare::fuse;

/// The seal as a part starting at `base`; `kept` is what the runs kept per kept step and
/// `owner_of` the subtask and depth of each of those chunks.
pub(super) fn seal(
    plan: &StreamPlan,
    config: &TaskConfig,
    mut tables: ChunkGraph,
    base: DeltaBase,
    kept: &[Vec<ChunkIdx>],
    owner_of: &rustc_hash::FxHashMap<u32, (u32, u32)>,
    task: TaskId,
) -> Result<GraphDelta> {
    let mut g = tables.take_tables();
    let (stands_for, results) = plan.tile_seal(kept, &mut g);
    let k = stands_for.len();
    g.results = results
        .iter()
        .filter(|r| r.local)
        .map(|r| r.tensor.clone())
        .collect();
    if config.fuse_enabled {
        g = fuse::fuse(g, config.fuse_generated_operands);
    }
    let whole = |c: ChunkIdx| match stands_for.get(c.index()) {
        Some(root) => *root,
        None => ChunkIdx(base.chunks + c.0 - k as u32),
    };
    let mut local = std::mem::take(&mut g.results).into_iter();
    let results = results
        .into_iter()
        .map(|r| match r.local {
            true => {
                let mut t = local.next().expect("one per local result");
                t.chunks = t.chunks.iter().map(|c| whole(*c)).collect();
                t
            }
            false => r.tensor,
        })
        .collect();
    let n = g.len() - k;
    let (mut members, mut inputs, mut outputs, mut preds) = (
        Csr::with_capacity(n, n),
        Csr::with_capacity(n, g.len() * 2),
        Csr::with_capacity(n, n),
        Csr::with_capacity(n, g.len() * 2),
    );
    let mut subtasks: Vec<Subtask> = Vec::with_capacity(n);
    for i in k..g.len() {
        let own = whole(ChunkIdx(i as u32));
        let ins: Vec<ChunkIdx> = g
            .inputs(ChunkIdx(i as u32))
            .iter()
            .map(|c| whole(*c))
            .collect();
        let mut row = Vec::with_capacity(ins.len());
        let mut depth = 0;
        for c in &ins {
            let (s, d) = if c.0 >= base.chunks {
                let s = c.0 - base.chunks;
                (base.subtasks + s, subtasks[s as usize].depth)
            } else {
                *owner_of.get(&c.0).ok_or_else(|| {
                    AresError::prepare("stream", format!("the seal reads chunk {c}, not kept"))
                })?
            };
            row.push(s);
            depth = depth.max(d + 1);
        }
        row.sort_unstable();
        row.dedup();
        let id = SubtaskId::new(
            task,
            StageId(0),
            base.subtasks as u64 + subtasks.len() as u64,
        )
        .ok_or_else(|| AresError::prepare("stream", "too many subtasks"))?;
        subtasks.push(Subtask {
            id,
            depth,
            worker: None,
        });
        members.push_row([own.0]);
        inputs.push_row(ins.iter().map(|c| c.0));
        outputs.push_row([own.0]);
        preds.push_row(row);
    }
    let mut chunks = g.split_tail(base, k, whole);
    chunks.results = results;
    Ok(GraphDelta {
        base,
        chunks,
        subtasks,
        members,
        inputs,
        outputs,
        preds,
        held: Vec::new(),
        sealed: true,
        expected: None,
    })
}
