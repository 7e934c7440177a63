//! Data-dependent shapes, in stages: what runs first, and the graph that follows once the
//! lengths are known.
//!
//! ares tiles a graph before anything runs, and tiling needs every chunk's shape. The length
//! of `x[mask]` and `unique(...)` is known only when they have run, so a graph that goes on
//! from them runs in stages, as Mars' task processor does: [`next_stage`] cuts out what
//! computes the data-dependent tensors that others consume (the *boundary*); the supervisor
//! runs it as a task of its own, reads each boundary tensor's real chunk lengths from the
//! workers' reports (its result layout), and [`substitute`] builds the rest of the graph
//! again on top of those results (fetches with exact shapes: every op's shape and dtype
//! inferred anew, so a length that does not fit is an error here, naming the op). That
//! graph may hold data-dependent tensors consumed further (`x[m][x[m] > 0]`): the loop goes
//! on until [`next_stage`] finds none.
//!
//! ```text
//!   stage 1:  x ── mask ──▶ x[mask]                    (boundary: its chunks' lengths)
//!   stage 2:  fetch(x[mask], exact splits) ──▶ * 2 ──▶ sum      (tiled with the real lengths)
//! ```
//!
//! Which ops may consume a tensor of unknown length at all is decided when the expression is
//! built (`ops::family::shuffle::select::tensor::check_inputs`): nothing downstream of the
//! boundary has arguments computed from the bound.

use crate::error::{AresError, Result};
use crate::graph::TileableGraph;
use crate::ids::TileableIdx;
use crate::ops::{Op, OpArgs};
use crate::tensor::Tensor;
use std::collections::HashMap;

/// The part of a graph that runs before the rest can be tiled.
#[derive(Clone, Debug)]
pub struct Stage {
    /// Computes the boundary tensors, as its outputs, in the order of `boundary`.
    pub graph: TileableGraph,
    /// The nodes of the whole graph the stage computes.
    pub boundary: Vec<TileableIdx>,
}

fn stage_error(detail: String) -> AresError {
    AresError::Prepare {
        pass: "stages",
        detail,
    }
}

/// Whether `op` makes a length from the data (rather than inheriting one).
fn makes_length(op: Op) -> bool {
    matches!(op, Op::MaskSelect | Op::Unique | Op::UniquePick)
}

/// The graph's nodes as tensors (every shape and dtype inferred again), with the nodes of
/// `replaced` taken as given.
fn tensors_of(
    graph: &TileableGraph,
    replaced: &HashMap<TileableIdx, Tensor>,
) -> Result<Vec<Tensor>> {
    let mut tensors: Vec<Tensor> = Vec::with_capacity(graph.nodes.len());
    for (i, node) in graph.nodes.iter().enumerate() {
        let idx = TileableIdx(i as u32);
        let t = match replaced.get(&idx) {
            Some(t) => t.clone(),
            None => {
                let inputs: Vec<Tensor> = node
                    .inputs
                    .iter()
                    .map(|i| tensors[i.index()].clone())
                    .collect();
                let built = match &node.args {
                    OpArgs::Deferred(call) => call.apply(&inputs),
                    _ => Tensor::new(node.op, carried_rows(graph, node, &inputs), inputs),
                };
                built.map_err(|e| {
                    stage_error(format!(
                        "node t{i} ({}) with the lengths computed by the stage before: {e}",
                        node.op
                    ))
                })?
            }
        };
        tensors.push(t);
    }
    Ok(tensors)
}

/// For each node of `graph`, whether the length of its axis 0 depends on the data.
pub fn unknown_lengths(graph: &TileableGraph) -> Result<Vec<bool>> {
    Ok(tensors_of(graph, &HashMap::new())?
        .iter()
        .map(Tensor::length_from_data)
        .collect())
}

/// `node`'s arguments for `inputs`: a reshape that kept its input's rows (`take` gathers
/// rows as 2-D, then gives them their shape), of a tensor whose row count depends on the
/// data, takes the row count its input has now. Decided on the shapes as built, not on
/// the sizes: rows of no element (`zeros((4, 0))[mask]`) keep their count too.
fn carried_rows(
    graph: &TileableGraph,
    node: &crate::graph::TileableNode,
    inputs: &[Tensor],
) -> OpArgs {
    let rows = |s: &[usize]| s[1..].iter().product::<usize>();
    match (&node.args, inputs.first(), node.inputs.first()) {
        (OpArgs::Reshape(out), Some(x), Some(before)) if node.op == Op::Reshape => {
            let before = &graph.node(*before).shape;
            let kept_rows = !out.is_empty()
                && !before.is_empty()
                && x.ndim() == before.len()
                && before[0] == out[0]
                && rows(before) == rows(out)
                && rows(x.shape()) == rows(out);
            if !kept_rows {
                return node.args.clone();
            }
            let mut out = out.clone();
            out[0] = x.shape()[0];
            OpArgs::Reshape(out)
        }
        _ => node.args.clone(),
    }
}

/// The stage to run before `graph` can be tiled: the data-dependent tensors that an op
/// consumes by their lengths (see [`reads_chunk_by_chunk`]), whose own inputs are all known.
/// `None`: the graph tiles as it is (its data-dependent tensors, if any, are results or read
/// chunk by chunk in the same stage).
pub fn next_stage(graph: &TileableGraph) -> Result<Option<Stage>> {
    if !graph.nodes.iter().any(|n| makes_length(n.op)) {
        return Ok(None);
    }
    let tensors = tensors_of(graph, &HashMap::new())?;
    let mut origin: Vec<Option<usize>> = vec![None; graph.nodes.len()];
    let mut boundary = vec![false; graph.nodes.len()];
    for (i, node) in graph.nodes.iter().enumerate() {
        let unknown: Vec<usize> = node
            .inputs
            .iter()
            .map(|p| p.index())
            .filter(|&p| origin[p].is_some())
            .collect();
        let chunkwise = reads_chunk_by_chunk(node, &tensors, &origin);
        if !chunkwise {
            unknown.iter().for_each(|&p| boundary[p] = true);
        }
        if tensors[i].length_from_data() {
            origin[i] = match unknown.first() {
                Some(&p) if chunkwise && !makes_length(node.op) => origin[p],
                _ => Some(i),
            };
        }
    }
    // The frontier: boundary nodes with no boundary node upstream (nodes come in
    // topological order, so one forward pass marks what lies below each).
    let mut below = vec![false; graph.nodes.len()];
    for (i, node) in graph.nodes.iter().enumerate() {
        below[i] = node
            .inputs
            .iter()
            .any(|p| below[p.index()] || boundary[p.index()]);
    }
    let frontier: Vec<TileableIdx> = (0..graph.nodes.len())
        .filter(|&i| boundary[i] && !below[i])
        .map(|i| TileableIdx(i as u32))
        .collect();
    if frontier.is_empty() {
        return Ok(None);
    }
    let outputs: Vec<&Tensor> = frontier.iter().map(|i| &tensors[i.index()]).collect();
    Ok(Some(Stage {
        graph: Tensor::graph(&outputs),
        boundary: frontier,
    }))
}

/// Whether `node` reads its data-dependent inputs chunk by chunk, whatever each chunk's real
/// length, so it is tiled in the same stage as they are (`sum(x[x > 0.5])` reads the data
/// once): an element-by-element op whose data-dependent inputs all come from the same one
/// (their chunks pair up) and whose known inputs do not reach along the unknown axis, or a
/// reduction with an identity (its partials count what they read, `Tensor::mean` divides by
/// such a count; `min` of nothing must fail, as NumPy's, so it waits for the lengths).
/// Everything else that consumes a data-dependent tensor (its offsets, its length, its
/// chunks regridded) runs after the stage that computes it. `origin[p]`: for a
/// data-dependent node, the one its chunks come from.
fn reads_chunk_by_chunk(
    node: &crate::graph::TileableNode,
    tensors: &[Tensor],
    origin: &[Option<usize>],
) -> bool {
    use crate::ops::family::{elementwise::Elementwise, reduction::Reduction};
    use crate::ops::registry::OpFamily;
    let mut sources = node.inputs.iter().filter_map(|p| origin[p.index()]);
    let Some(first) = sources.next() else {
        return true;
    };
    if node.op == Op::UniquePick {
        // `unique`'s split into values and counts is tiled with `unique` itself.
        return true;
    }
    if Elementwise.owns(node.op) {
        let ndim = node.shape.len();
        return sources.all(|s| s == first)
            && node.inputs.iter().all(|p| {
                let t = &tensors[p.index()];
                origin[p.index()].is_some() || t.ndim() < ndim || t.shape().first() == Some(&1)
            });
    }
    let empty_ok =
        |op: Op| crate::ops::family::reduction::fold(op).is_some_and(|r| r.monoid.reduces_empty());
    Reduction.owns(node.op)
        && match &node.args {
            OpArgs::Moments { .. } => true,
            OpArgs::Reduce { .. } => empty_ok(node.op),
            OpArgs::Combine { op, .. } => empty_ok(*op),
            _ => false,
        }
}

/// `graph` with each `boundary` node replaced by the fetch of its computed result
/// (`OpArgs::FetchResult` with the real splits), every node after it built again.
pub fn substitute(
    graph: &TileableGraph,
    boundary: &[TileableIdx],
    fetched: Vec<OpArgs>,
) -> Result<TileableGraph> {
    if boundary.len() != fetched.len() {
        return Err(stage_error(format!(
            "{} boundary tensors but {} results",
            boundary.len(),
            fetched.len()
        )));
    }
    let mut replaced = HashMap::new();
    for (idx, args) in boundary.iter().zip(fetched) {
        let node = graph
            .nodes
            .get(idx.index())
            .ok_or_else(|| stage_error(format!("boundary node t{} is not in the graph", idx.0)))?;
        let fetch = Tensor::new(Op::Fetch, args, vec![])?;
        if fetch.dtype() != node.dtype || fetch.ndim() != node.shape.len() {
            return Err(stage_error(format!(
                "the stage's result for t{} is {:?} {}, the graph expects {:?} {}",
                idx.0,
                fetch.shape(),
                fetch.dtype(),
                node.shape,
                node.dtype
            )));
        }
        replaced.insert(*idx, fetch);
    }
    let tensors = tensors_of(graph, &replaced)?;
    let outputs: Vec<&Tensor> = graph.outputs.iter().map(|o| &tensors[o.index()]).collect();
    Ok(Tensor::graph(&outputs))
}

#[cfg(test)]
mod tests;
