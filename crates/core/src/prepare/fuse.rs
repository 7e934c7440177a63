//! Fusion (`fuse_enabled`): chains of chunks without branches become one FUSE node.
//!
//! As Mars' legacy `Fusion.compose`: walking in topological order, a chain starts at a chunk
//! with exactly one successor and grows while the next chunk has exactly one predecessor; a
//! result chunk can only end a chain. For `(rand(a) + rand(b)).sum()` the `add` has two
//! predecessors, so the RANDs stay outside and `add` and `sum` become `FUSE[add, sum]`.
//! A FUSE node takes the tail's key, shape and dtype and the head's inputs. The graph is
//! rewritten in place: no second million-node arena.
//!
//! Beyond Mars: a binary elementwise chunk whose operands are both creation chunks that only
//! it reads, of its own shape and generated block by block ([`crate::kernels::streams`]),
//! takes them in as the node's leading steps: `(rand(a) + rand(b)).sum()` becomes one
//! `FUSE[rand, rand, add, sum]` per chunk with no inputs, which never materializes either
//! operand (three subtasks per chunk before, and two chunks of memory each). The config key
//! `fuse_generated_operands: false` turns this off, for Mars' rule as seed 001 states it:
//! `FUSE[add, sum]` with both RANDs chunks of their own. The same key lets a `matmul` chunk
//! generate a creation operand itself ([`super::generated_products`]), before the chains
//! are found: the product then has one input, and may end a chain (`FUSE[transpose, matmul]`).

use crate::graph::{ChunkGraph, Csr};
use crate::ids::{ArgsIdx, ChunkIdx};
use crate::ops::{Family, FuseStep, Op, OpArgs};
use smallvec::SmallVec;

/// Fuses the chains of `graph`; `generated_operands`: also takes the creation operands of a
/// binary elementwise chunk in (`task.default_config.fuse_generated_operands`).
pub fn fuse(graph: ChunkGraph, generated_operands: bool) -> ChunkGraph {
    let mut graph = if generated_operands {
        super::generated_products::generate_product_operands(graph)
    } else {
        graph
    };
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

    // Creation operands taken into their binary consumer (never chain heads: their one
    // successor has two inputs).
    let mut generated: rustc_hash::FxHashMap<usize, SmallVec<[usize; 2]>> = Default::default();
    if generated_operands {
        for v in 0..n {
            if let Some(operands) = streamed_operands(&graph, &succ, &is_result, v) {
                for &c in &operands {
                    absorbed[c] = true;
                }
                generated.insert(v, operands);
            }
        }
    }

    // FUSE arguments per chain head, interned before the arena is rewritten.
    let mut fuse_args: Vec<(u32, ArgsIdx, usize)> = Vec::new();
    for v in 0..n {
        let operands = generated.get(&v);
        if absorbed[v] || (chain_next[v] == u32::MAX && operands.is_none()) {
            continue;
        }
        let mut steps: SmallVec<[FuseStep; 4]> = SmallVec::new();
        let step = |node: &crate::graph::ChunkNode| FuseStep {
            op: node.op,
            args: node.args,
            position: if graph.args[node.args.index()].positional() {
                node.key.index
            } else {
                0
            },
        };
        for &c in operands.into_iter().flatten() {
            steps.push(step(&graph.nodes[c]));
        }
        let mut cur = v;
        loop {
            steps.push(step(&graph.nodes[cur]));
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

/// The operands of binary elementwise chunk `v` when both are creation chunks read by `v`
/// alone, not results, of `v`'s shape, whose values stream ([`crate::kernels::streams`]).
fn streamed_operands(
    graph: &ChunkGraph,
    succ: &Csr,
    is_result: &[bool],
    v: usize,
) -> Option<SmallVec<[usize; 2]>> {
    let node = &graph.nodes[v];
    let binary =
        node.op.family() == Family::Binary && matches!(graph.args[node.args.index()], OpArgs::None);
    let ins = graph.inputs(ChunkIdx(v as u32));
    if !binary || ins.len() != 2 || ins[0] == ins[1] {
        return None;
    }
    let shape = graph.shape_of_node(node);
    ins.iter()
        .map(|c| {
            let (i, input) = (c.index(), &graph.nodes[c.index()]);
            let streams = matches!(
                &graph.args[input.args.index()],
                OpArgs::Fill { fill, .. } if crate::kernels::streams(fill)
            );
            let alone = succ.row(i).len() == 1 && !is_result[i] && graph.inputs(*c).is_empty();
            (input.op.family() == Family::Creation
                && streams
                && alone
                && graph.shape_of_node(input) == shape)
                .then_some(i)
        })
        .collect()
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
    fn seed_example_fuses_the_generated_operands_into_add_and_sum() {
        //  rand(a) ─┐
        //           ├─ add ── sum      →   FUSE[rand, rand, add, sum], no inputs
        //  rand(b) ─┘
        let a = tensor::rand(&[100], 100, Some(1)).unwrap();
        let b = tensor::rand(&[100], 100, Some(2)).unwrap();
        let c = (&a + &b).unwrap().sum(None, false).unwrap();
        let g = fuse(
            tile(&Tensor::graph(&[&c]), &TaskConfig::default()).unwrap(),
            true,
        );
        let labels: Vec<String> = (0..g.len()).map(|i| g.label(ChunkIdx(i as u32))).collect();
        assert_eq!(labels, vec!["FUSE[rand, rand, add, sum]"]);
        assert!(g.inputs(ChunkIdx(0)).is_empty());
        assert_eq!(g.results[0].chunks, vec![ChunkIdx(0)]);
    }

    #[test]
    fn without_generated_operands_the_seed_example_fuses_add_and_sum_only() {
        //  rand(a) ─┐
        //           ├─ add ── sum      →   rand, rand, FUSE[add, sum] (Mars' rule, seed 001)
        //  rand(b) ─┘
        let a = tensor::rand(&[100], 100, Some(1)).unwrap();
        let b = tensor::rand(&[100], 100, Some(2)).unwrap();
        let c = (&a + &b).unwrap().sum(None, false).unwrap();
        let g = fuse(
            tile(&Tensor::graph(&[&c]), &TaskConfig::default()).unwrap(),
            false,
        );
        let labels: Vec<String> = (0..g.len()).map(|i| g.label(ChunkIdx(i as u32))).collect();
        assert_eq!(labels, vec!["rand", "rand", "FUSE[add, sum]"]);
        assert_eq!(g.inputs(ChunkIdx(2)), &[ChunkIdx(0), ChunkIdx(1)]);
    }

    #[test]
    fn operands_read_elsewhere_or_of_another_shape_stay_chunks() {
        //  rand(a) ─┬─ add ── sum        a is read twice: Mars' rule, rand, rand,
        //           │                    FUSE[add, sum], exp
        //  rand(b) ─┘
        //  rand(a) ── exp
        let a = tensor::rand(&[100], 100, Some(1)).unwrap();
        let b = tensor::rand(&[100], 100, Some(2)).unwrap();
        let c = (&a + &b).unwrap().sum(None, false).unwrap();
        let e = a.exp().unwrap();
        let g = fuse(
            tile(&Tensor::graph(&[&c, &e]), &TaskConfig::default()).unwrap(),
            true,
        );
        let labels: Vec<String> = (0..g.len()).map(|i| g.label(ChunkIdx(i as u32))).collect();
        assert_eq!(labels, vec!["rand", "rand", "FUSE[add, sum]", "exp"]);
        // A row broadcast against a matrix: shapes differ, the row stays a chunk.
        let m = tensor::rand(&[4, 3], 4, Some(3)).unwrap();
        let r = tensor::rand(&[3], 3, Some(4)).unwrap();
        let s = (&m * &r).unwrap();
        let g = fuse(
            tile(&Tensor::graph(&[&s]), &TaskConfig::default()).unwrap(),
            true,
        );
        let labels: Vec<String> = (0..g.len()).map(|i| g.label(ChunkIdx(i as u32))).collect();
        assert_eq!(labels, vec!["rand", "rand", "multiply"]);
    }

    #[test]
    fn branches_stop_a_chain() {
        //  ones ── exp ─┬─ sqrt      exp has two successors: the chain stops at exp
        //               └─ sin
        let x = tensor::ones(&[4], 4).unwrap();
        let e = x.exp().unwrap();
        let (s, t) = (e.sqrt().unwrap(), e.unary(Op::Sin).unwrap());
        let g = fuse(
            tile(&Tensor::graph(&[&s, &t]), &TaskConfig::default()).unwrap(),
            true,
        );
        let labels: Vec<String> = (0..g.len()).map(|i| g.label(ChunkIdx(i as u32))).collect();
        assert_eq!(labels, vec!["FUSE[full, exp]", "sqrt", "sin"]);
    }
}
