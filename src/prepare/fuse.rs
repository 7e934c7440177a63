//! Fusion (`fuse_enabled`): chains of chunks without branches become one FUSE node.
//!
//! As Mars' legacy `Fusion.compose`: walking in topological order, a chain starts at a chunk
//! with exactly one successor and grows while the next chunk has exactly one predecessor; a
//! result chunk can only end a chain. For `(rand(a) + rand(b)).sum()` the `add` has two
//! predecessors, so the RANDs stay outside and `add` and `sum` become `FUSE[add, sum]`.
//! A FUSE node takes the tail's key, shape and dtype and the head's inputs.

use crate::graph::ChunkGraph;
use crate::ids::ChunkIdx;
use crate::ops::{FuseStep, Op, OpArgs};
use smallvec::SmallVec;

pub fn fuse(mut graph: ChunkGraph) -> ChunkGraph {
    let succ = graph.successors();
    let is_result = graph.result_mask();
    let n = graph.len();
    // chain_next[i] = the chunk fused after i (u32::MAX at a chain's end).
    let mut chain_next = vec![u32::MAX; n];
    let mut absorbed = vec![false; n];
    for v in 0..n {
        if absorbed[v] {
            continue;
        }
        let mut cur = v;
        while succ.row(cur).len() == 1 && !is_result[cur] && graph.nodes[cur].op.is_fusable() {
            let next = succ.row(cur)[0] as usize;
            if graph.inputs(ChunkIdx(next as u32)).len() != 1 || !graph.nodes[next].op.is_fusable()
            {
                break;
            }
            chain_next[cur] = next as u32;
            absorbed[next] = true;
            cur = next;
        }
    }

    let mut out = graph.take_tables();
    let mut map = vec![ChunkIdx(u32::MAX); n];
    let mut inputs: SmallVec<[ChunkIdx; 4]> = SmallVec::new();
    for v in 0..n {
        if absorbed[v] {
            continue;
        }
        let idx = ChunkIdx(v as u32);
        inputs.clear();
        inputs.extend(graph.inputs(idx).iter().map(|c| map[c.index()]));
        if chain_next[v] == u32::MAX {
            map[v] = out.push_copy(&graph, idx, &inputs);
            continue;
        }
        let mut steps: SmallVec<[FuseStep; 4]> = SmallVec::new();
        let mut cur = v;
        loop {
            let node = &graph.nodes[cur];
            steps.push(FuseStep {
                op: node.op,
                args: node.args,
            });
            if chain_next[cur] == u32::MAX {
                break;
            }
            cur = chain_next[cur] as usize;
        }
        let tail = &graph.nodes[cur];
        let args = out.intern_args(OpArgs::Fuse(steps));
        let fused = out.push(
            tail.key,
            Op::Fuse,
            args,
            tail.shape.clone(),
            tail.dtype,
            &inputs,
        );
        map[cur] = fused;
    }
    out.results = ChunkGraph::remap_results(&graph.results, |c| map[c.index()]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TaskConfig;
    use crate::prepare::tile::tile;
    use crate::tensor::{self, Tensor};

    #[test]
    fn seed_example_fuses_add_and_sum_and_leaves_rands() {
        //  rand(a) ─┐
        //           ├─ add ── sum      →   rand, rand, FUSE[add, sum]
        //  rand(b) ─┘
        let a = tensor::rand(&[100], 100, Some(1)).unwrap();
        let b = tensor::rand(&[100], 100, Some(2)).unwrap();
        let c = (&a + &b).unwrap().sum(None, false).unwrap();
        let g = fuse(tile(&Tensor::graph(&[&c]), &TaskConfig::default()).unwrap());
        let labels: Vec<String> = (0..g.len()).map(|i| g.label(ChunkIdx(i as u32))).collect();
        assert_eq!(labels, vec!["rand", "rand", "FUSE[add, sum]"]);
        assert_eq!(g.inputs(ChunkIdx(2)), &[ChunkIdx(0), ChunkIdx(1)]);
        assert_eq!(g.results[0].chunks, vec![ChunkIdx(2)]);
    }

    #[test]
    fn branches_stop_a_chain() {
        //  ones ── exp ─┬─ sqrt      exp has two successors: the chain stops at exp
        //               └─ sin
        let x = tensor::ones(&[4], 4).unwrap();
        let e = x.exp().unwrap();
        let (s, t) = (e.sqrt().unwrap(), e.unary(Op::Sin).unwrap());
        let g = fuse(tile(&Tensor::graph(&[&s, &t]), &TaskConfig::default()).unwrap());
        let labels: Vec<String> = (0..g.len()).map(|i| g.label(ChunkIdx(i as u32))).collect();
        assert_eq!(labels, vec!["FUSE[full, exp]", "sqrt", "sin"]);
    }
}
