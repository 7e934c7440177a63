//! Fusion (`fuse_enabled`): chains of chunks without branches become one FUSE node.
//!
//! As Mars' legacy `Fusion.compose`: walking in topological order, a chain starts at a chunk
//! with exactly one successor and grows while the next chunk has exactly one predecessor; a
//! result chunk can only end a chain. For `(rand(a) + rand(b)).sum()` the `add` has two
//! predecessors, so the RANDs stay outside and `add` and `sum` become `FUSE[add, sum]`.
//! A FUSE node takes the tail's key, shape and dtype and the head's inputs. The graph is
//! rewritten in place: no second million-node arena.

use crate::graph::ChunkGraph;
use crate::ids::{ArgsIdx, ChunkIdx};
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

    // FUSE arguments per chain head, interned before the arena is rewritten.
    let mut fuse_args: Vec<(u32, ArgsIdx, usize)> = Vec::new();
    for v in 0..n {
        if absorbed[v] || chain_next[v] == u32::MAX {
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
        // A chain headed by a per-chunk argument (a seed, a range offset, a file region) is
        // unique: interning it would only keep a second copy in the lookup table.
        let unique = steps
            .first()
            .is_some_and(|s| per_chunk(&graph.args[s.args.index()]));
        let args = if unique {
            graph.push_args(OpArgs::Fuse(steps))
        } else {
            graph.intern_args(OpArgs::Fuse(steps))
        };
        fuse_args.push((v as u32, args, cur));
    }
    let mut next_fuse = fuse_args.iter().peekable();
    let tails: Vec<(
        crate::ids::ChunkKey,
        crate::ids::ShapeIdx,
        crate::array::DType,
    )> = fuse_args
        .iter()
        .map(|(_, _, tail)| {
            let t = &graph.nodes[*tail];
            (t.key, t.shape, t.dtype)
        })
        .collect();
    let mut fused = 0;
    graph.compact_in_place(|v, _| {
        if absorbed[v] {
            return None;
        }
        match next_fuse.peek() {
            Some((head, args, tail)) if *head as usize == v => {
                let (key, shape, dtype) = tails[fused];
                let node = ChunkGraph::detached_node(key, Op::Fuse, *args, shape, dtype);
                let alias = *tail;
                next_fuse.next();
                fused += 1;
                Some(Some((node, alias)))
            }
            _ => Some(None),
        }
    });
    graph
}

/// Arguments that differ from chunk to chunk of one operation (pushed, not interned).
fn per_chunk(args: &OpArgs) -> bool {
    use crate::ops::Fill;
    matches!(
        args,
        OpArgs::Fill {
            fill: Fill::Uniform { .. } | Fill::Normal { .. } | Fill::Range { .. },
            ..
        } | OpArgs::Read { .. }
            | OpArgs::FetchChunk { .. }
    )
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
