//! Tileable-graph optimization (`optimize_tileable_graph`): trivial algebra, common
//! subexpression elimination and dead-operation pruning.
//!
//! Algebra only removes an op when the result is the input unchanged, dtype included
//! (`x * 1.0` on an int64 tensor is a float64 tensor and stays). Random ops are pure given
//! their seed, so two `rand` nodes with equal seed, shape and chunks are one node.

use crate::array::Scalar;
use crate::error::Result;
use crate::graph::{TileableGraph, TileableNode};
use crate::ids::TileableIdx;
use crate::ops::{DimIndex, Op, OpArgs};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// The input a node can be replaced by, if it is an identity.
fn identity_of(
    node: &TileableNode,
    inputs: &[TileableIdx],
    graph: &TileableGraph,
) -> Option<TileableIdx> {
    let first = *inputs.first()?;
    let input = graph.node(first);
    if input.dtype != node.dtype || input.shape != node.shape {
        return None;
    }
    let is = |v: Scalar, x: f64| v.as_f64() == x;
    let same = match (&node.op, &node.args) {
        // `x + 0.0` turns -0.0 into +0.0: only `-0.0` is the float identity of addition.
        // So for float32 and the complex dtypes' parts too.
        (Op::Add, OpArgs::Scalar { value, .. })
            if node.dtype.is_float() || node.dtype.is_complex() =>
        {
            matches!(value, Scalar::F64(z) if z.to_bits() == (-0.0f64).to_bits())
        }
        (Op::Add, OpArgs::Scalar { value, .. }) => is(*value, 0.0),
        (
            Op::Sub,
            OpArgs::Scalar {
                value,
                scalar_left: false,
            },
        ) => is(*value, 0.0),
        (Op::Mul, OpArgs::Scalar { value, .. }) => is(*value, 1.0),
        (
            Op::Div | Op::Pow,
            OpArgs::Scalar {
                value,
                scalar_left: false,
            },
        ) => is(*value, 1.0),
        (Op::AsType, _) | (Op::Reshape, _) => true,
        (Op::Transpose, OpArgs::Transpose(perm)) => perm.iter().enumerate().all(|(i, p)| i == *p),
        (Op::Slice, OpArgs::Slice(dims)) => dims.iter().zip(&input.shape).all(|(d, n)| {
            *d == DimIndex::Range {
                start: 0,
                step: 1,
                len: *n,
            } || (*n == 0 && matches!(d, DimIndex::Range { .. }))
        }),
        _ => false,
    };
    if same {
        return Some(first);
    }
    // --x is x.
    if node.op == Op::Neg && input.op == Op::Neg {
        return Some(input.inputs[0]);
    }
    None
}

pub fn optimize_tileable_graph(graph: &TileableGraph) -> Result<TileableGraph> {
    let mut out = TileableGraph::default();
    let mut map: Vec<TileableIdx> = Vec::with_capacity(graph.nodes.len());
    let mut seen: FxHashMap<(Op, OpArgs, SmallVec<[TileableIdx; 2]>), TileableIdx> =
        FxHashMap::default();
    for node in &graph.nodes {
        let inputs: SmallVec<[TileableIdx; 2]> =
            node.inputs.iter().map(|i| map[i.index()]).collect();
        if let Some(same) = identity_of(node, &inputs, &out) {
            map.push(same);
            continue;
        }
        let key = (node.op, node.args.clone(), inputs.clone());
        if let Some(existing) = seen.get(&key) {
            map.push(*existing);
            continue;
        }
        let idx = out.push(TileableNode {
            inputs,
            ..node.clone()
        });
        seen.insert(key, idx);
        map.push(idx);
    }
    out.outputs = graph.outputs.iter().map(|o| map[o.index()]).collect();
    Ok(prune_dead(&out))
}

/// Keeps only nodes the outputs depend on.
pub fn prune_dead(graph: &TileableGraph) -> TileableGraph {
    let mut live = vec![false; graph.nodes.len()];
    for o in &graph.outputs {
        live[o.index()] = true;
    }
    for i in (0..graph.nodes.len()).rev() {
        if live[i] {
            for inp in &graph.nodes[i].inputs {
                live[inp.index()] = true;
            }
        }
    }
    let mut out = TileableGraph::default();
    let mut map = vec![TileableIdx(u32::MAX); graph.nodes.len()];
    for (i, node) in graph.nodes.iter().enumerate() {
        if live[i] {
            let inputs = node.inputs.iter().map(|t| map[t.index()]).collect();
            map[i] = out.push(TileableNode {
                inputs,
                ..node.clone()
            });
        }
    }
    out.outputs = graph.outputs.iter().map(|o| map[o.index()]).collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::{self, Tensor};

    #[test]
    fn cse_merges_equal_subexpressions() {
        //  rand(seed 1) ─┬─ exp ─┐
        //  rand(seed 1) ─┴─ exp ─┴─ add      → one rand, one exp, one add
        let a = tensor::rand(&[10], 5, Some(1)).unwrap();
        let b = tensor::rand(&[10], 5, Some(1)).unwrap();
        let c = (&a.exp().unwrap() + &b.exp().unwrap()).unwrap();
        let g = optimize_tileable_graph(&Tensor::graph(&[&c])).unwrap();
        assert_eq!(g.nodes.len(), 3);
        assert_eq!(g.nodes[2].inputs[0], g.nodes[2].inputs[1]);
    }

    #[test]
    fn trivial_algebra_keeps_dtype() {
        let x = tensor::rand(&[10], 5, Some(1)).unwrap();
        let y = (&(&x * 1.0).unwrap() + -0.0).unwrap();
        let g = optimize_tileable_graph(&Tensor::graph(&[&y])).unwrap();
        assert_eq!(g.nodes.len(), 1);
        // x + 0.0 maps -0.0 to +0.0 (NumPy's result), so it is not an identity.
        let z = (&x + 0.0).unwrap();
        let g = optimize_tileable_graph(&Tensor::graph(&[&z])).unwrap();
        assert_eq!(g.nodes.len(), 2, "x + 0.0 must stay");
        let i = tensor::arange(
            crate::array::Scalar::I64(0),
            crate::array::Scalar::I64(10),
            crate::array::Scalar::I64(1),
            5,
        )
        .unwrap();
        let f = (&i * 1.0).unwrap();
        let g = optimize_tileable_graph(&Tensor::graph(&[&f])).unwrap();
        assert_eq!(g.nodes.len(), 2, "int64 * 1.0 is float64 and must stay");
    }

    #[test]
    fn dead_ops_are_pruned() {
        let mut g = Tensor::graph(&[&tensor::rand(&[4], 2, Some(1)).unwrap()]);
        let extra = tensor::ones(&[4], 2).unwrap();
        let dead = Tensor::graph(&[&extra]);
        g.nodes.insert(0, dead.nodes[0].clone());
        g.outputs = vec![TileableIdx(1)];
        assert_eq!(prune_dead(&g).nodes.len(), 1);
    }
}
