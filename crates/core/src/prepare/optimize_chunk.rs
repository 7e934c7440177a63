//! Chunk-graph optimization (`optimize_chunk_graph`): cull chunks no result needs (a slice
//! of a large array only needs the chunks it touches) and merge duplicate chunks (same op,
//! same arguments, same inputs).

use crate::graph::ChunkGraph;
use crate::ids::ChunkIdx;
use crate::ops::Op;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

pub fn optimize_chunk_graph(mut graph: ChunkGraph) -> ChunkGraph {
    let n = graph.len();
    let mut needed = graph.result_mask();
    for i in (0..n).rev() {
        if needed[i] {
            for inp in graph.inputs(ChunkIdx(i as u32)) {
                needed[inp.index()] = true;
            }
        }
    }
    // Two chunks can only be duplicates if they read the same first input, so only chunks
    // whose first input has several consumers are looked up. Chunks without inputs are never
    // merged: equal constant chunks (every chunk of `ones(n, chunk=1)`) are cheaper to make
    // where they are read than to fetch, and one merged chunk bound all its readers to the
    // worker holding it (one worker ran nearly all of `sum(ones(10**6, chunk=1))`).
    let consumers = graph.consumer_counts();
    let mut map: Vec<ChunkIdx> = Vec::with_capacity(n);
    let mut seen: FxHashMap<(Op, u32, SmallVec<[ChunkIdx; 4]>), ChunkIdx> = FxHashMap::default();
    let mut changed = false;
    for (i, &is_needed) in needed.iter().enumerate() {
        if !is_needed {
            map.push(ChunkIdx(u32::MAX));
            changed = true;
            continue;
        }
        let idx = ChunkIdx(i as u32);
        let node = graph.node(idx);
        let inputs = graph.inputs(idx);
        let candidate = match inputs.first() {
            Some(first) => consumers[first.index()] > 1,
            None => false,
        };
        if candidate {
            let key = (
                node.op,
                node.args.0,
                inputs.iter().map(|c| map[c.index()]).collect(),
            );
            if let Some(existing) = seen.get(&key) {
                map.push(*existing);
                changed = true;
                continue;
            }
            seen.insert(key, idx);
        }
        map.push(idx);
    }
    if !changed {
        return graph;
    }
    let mut out = graph.take_tables();
    let mut renumber = vec![ChunkIdx(u32::MAX); n];
    let mut inputs: SmallVec<[ChunkIdx; 4]> = SmallVec::new();
    for i in 0..n {
        if map[i].index() != i {
            continue;
        }
        let idx = ChunkIdx(i as u32);
        inputs.clear();
        inputs.extend(
            graph
                .inputs(idx)
                .iter()
                .map(|c| renumber[map[c.index()].index()]),
        );
        renumber[i] = out.push_copy(&graph, idx, &inputs);
    }
    out.results = ChunkGraph::remap_results(&graph.results, |c| renumber[map[c.index()].index()]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TaskConfig;
    use crate::prepare::tile::tile;
    use crate::tensor::{self, SliceArg, Tensor};

    #[test]
    fn slicing_culls_untouched_chunks() {
        //  rand 10 chunks ── [0:3]  →  only chunk 0 is needed
        let x = tensor::rand(&[100], 10, Some(3)).unwrap();
        let s = x
            .slice(&[SliceArg::Range {
                start: Some(0),
                stop: Some(3),
                step: None,
            }])
            .unwrap();
        let g = tile(&Tensor::graph(&[&s]), &TaskConfig::default()).unwrap();
        assert_eq!(g.len(), 11);
        let o = optimize_chunk_graph(g);
        assert_eq!(o.len(), 2);
        assert_eq!(o.results[0].chunks, vec![ChunkIdx(1)]);
    }

    #[test]
    fn duplicate_chunks_are_merged() {
        //  ones ─┬─ exp ─┐
        //        └─ exp ─┴─ add    (tileable CSE off) → exps merge
        let x = tensor::ones(&[4], 4).unwrap();
        let y = (&x.exp().unwrap() + &x.exp().unwrap()).unwrap();
        let g = tile(&Tensor::graph(&[&y]), &TaskConfig::default()).unwrap();
        assert_eq!(g.len(), 4);
        assert_eq!(optimize_chunk_graph(g).len(), 3);
    }

    #[test]
    fn equal_constant_chunks_stay_apart() {
        //  ones c0 ─ sum    ones c1 ─ sum    ...   (8 chunks of one element, each its own)
        let x = tensor::ones(&[8], 1).unwrap().sum(None, false).unwrap();
        let g = tile(&Tensor::graph(&[&x]), &TaskConfig::default()).unwrap();
        let before = g.len();
        let o = optimize_chunk_graph(g);
        assert_eq!(o.len(), before);
        let creations = (0..o.len() as u32)
            .filter(|c| o.inputs(ChunkIdx(*c)).is_empty())
            .count();
        assert_eq!(creations, 8, "each sum reads a ones chunk of its own");
    }
}
