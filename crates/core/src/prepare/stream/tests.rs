//! A streamed graph is the graph [`crate::prepare::prepare`] makes, cut into parts: the same
//! fused chunks under the same keys, the same results, bit for bit the same values; and each
//! part is a well-formed extension of the parts before it.

use super::*;
use crate::graph::{ChunkGraph, TileableGraph};
use crate::ids::{ChunkKey, SubtaskIdx};
use crate::ops::OpArgs;
use crate::prepare::{prepare, uniform_cluster};
use crate::tensor::{self, Tensor};
use std::collections::BTreeMap;

fn streaming(first: usize, combine: usize) -> TaskConfig {
    TaskConfig {
        stream_from_chunks: Some(0),
        stream_first_chunks: first,
        combine_size: combine,
        ..TaskConfig::default()
    }
}

/// Every chunk by key: op, arguments (a FUSE node's steps resolved), shape, dtype and the
/// keys of its inputs.
fn describe(g: &ChunkGraph) -> BTreeMap<ChunkKey, String> {
    (0..g.len() as u32)
        .map(ChunkIdx)
        .map(|c| {
            let n = g.node(c);
            let args = match g.args_of(c) {
                OpArgs::Fuse(steps) => steps
                    .iter()
                    .map(|s| format!("{:?}:{:?}@{}", s.op, g.args[s.args.index()], s.position))
                    .collect::<Vec<_>>()
                    .join(" "),
                a => format!("{a:?}"),
            };
            let ins: Vec<ChunkKey> = g.inputs(c).iter().map(|i| g.node(*i).key).collect();
            let shape = g.shape(c);
            (
                n.key,
                format!("{:?} {args} {shape:?} {:?} <- {ins:?}", n.op, n.dtype),
            )
        })
        .collect()
}

/// Each result's shape, dtype, splits and chunk keys.
fn result_keys(g: &ChunkGraph) -> Vec<String> {
    g.results
        .iter()
        .map(|r| {
            let keys: Vec<ChunkKey> = r.chunks.iter().map(|c| g.node(*c).key).collect();
            format!("{:?} {:?} {:?} {keys:?}", r.shape, r.dtype, r.splits)
        })
        .collect()
}

/// Streams `graph`, checking each part against the graph so far; returns the whole graph.
fn stream(graph: &TileableGraph, config: &TaskConfig) -> (SubtaskGraph, StreamReport) {
    let plan = stream_plan(graph, config).unwrap().expect("streams");
    let mut whole = SubtaskGraph::empty(TaskId(1), StageId(0));
    let mut sealed = false;
    let check = |p: &SubtaskGraph| {
        // The run as a graph of its own: its tables whole, its own indices.
        for c in 0..p.chunks.len() as u32 {
            let _ = p.chunks.args_of(ChunkIdx(c));
        }
        Ok(())
    };
    let workers = uniform_cluster(2, 1);
    let report = prepare_streamed(
        &plan,
        config,
        &workers,
        (TaskId(1), StageId(0)),
        check,
        |d| {
            assert!(!sealed, "a part after the seal");
            assert_eq!(
                d.expected.is_some(),
                d.base.chunks == 0,
                "a size on the first part"
            );
            sealed = d.sealed;
            let held = d.held.clone();
            whole.append(d).unwrap();
            for c in held {
                let s = whole.owner[c.index()];
                assert!(
                    whole.outputs.row(s.index()).contains(&c.0),
                    "held {c} is kept"
                );
            }
            Ok(true)
        },
    )
    .unwrap();
    assert!(sealed);
    check_well_formed(&whole);
    (whole, report)
}

/// Owners, inputs, outputs, predecessors and successors agree with the chunk edges.
fn check_well_formed(g: &SubtaskGraph) {
    let mut owners = vec![u32::MAX; g.chunks.len()];
    for s in 0..g.len() {
        assert_eq!(g.subtasks[s].id.seq(), s as u64, "ids follow indices");
        for &c in g.members.row(s) {
            assert_eq!(owners[c as usize], u32::MAX, "chunk {c} in two subtasks");
            owners[c as usize] = s as u32;
        }
    }
    assert!(
        owners.iter().all(|o| *o != u32::MAX),
        "every chunk has a subtask"
    );
    let results = g.chunks.result_mask();
    let succs = g.preds.transposed(g.len());
    for s in 0..g.len() {
        assert_eq!(
            g.owner.iter().filter(|o| o.0 == s as u32).count(),
            g.members.row(s).len()
        );
        let mut preds: Vec<u32> = Vec::new();
        for &c in g.members.row(s) {
            for i in g.chunks.inputs(ChunkIdx(c)) {
                let o = owners[i.index()];
                if o != s as u32 {
                    assert!(o < s as u32, "subtask {s} reads a later subtask");
                    assert!(
                        g.inputs.row(s).contains(&i.0),
                        "subtask {s} lists input {i}"
                    );
                    assert!(g.outputs.row(o as usize).contains(&i.0), "{i} is kept");
                    preds.push(o);
                }
            }
            if results[c as usize] {
                assert!(g.outputs.row(s).contains(&c), "result {c} is kept");
            }
        }
        preds.sort_unstable();
        preds.dedup();
        assert_eq!(g.preds.row(s), preds.as_slice(), "preds of {s}");
        assert_eq!(g.succs.row(s), succs.row(s), "succs of {s}");
        assert_eq!(g.owner[g.members.row(s)[0] as usize], SubtaskIdx(s as u32));
    }
}

/// The streamed graph against the one-piece preparation: same chunks, results and values.
fn same_as_whole(outputs: &[&Tensor], config: &TaskConfig) -> StreamReport {
    let graph = Tensor::graph(outputs);
    let (streamed, report) = stream(&graph, config);
    let whole = prepare(&graph, config, &uniform_cluster(2, 1), TaskId(1)).unwrap();
    let (a, b) = (describe(&streamed.chunks), describe(&whole.subtasks.chunks));
    let missing: Vec<_> = b
        .iter()
        .filter(|(k, _)| !a.contains_key(k))
        .take(3)
        .collect();
    let extra: Vec<_> = a
        .iter()
        .filter(|(k, _)| !b.contains_key(k))
        .take(3)
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, extra {extra:?}"
    );
    assert_eq!(a.len(), b.len(), "chunk counts");
    for (key, want) in &b {
        assert_eq!(a.get(key), Some(want), "chunk {key}");
    }
    assert_eq!(
        result_keys(&streamed.chunks),
        result_keys(&whole.subtasks.chunks)
    );
    let (got, _) = crate::executor::execute(&streamed, 2).unwrap();
    let (want, _) = crate::executor::execute(&whole.subtasks, 2).unwrap();
    assert_eq!(got, want, "values");
    assert!(report.parts >= 2, "{} parts", report.parts);
    report
}

#[test]
fn a_sum_of_ones_streams_into_the_graph_tile_makes() {
    let x = tensor::ones(&[1000], 1).unwrap();
    let report = same_as_whole(&[&x.sum(None, false).unwrap()], &streaming(40, 4));
    // 1000 positions: a first run of 32 (20 positions, rounded up to two regions of 16),
    // then 128, 512, and the last 328 with the seal.
    assert_eq!(report.parts, 4);
}

#[test]
fn elementwise_chains_over_random_inputs_with_several_results_stream_unchanged() {
    for (n, chunk, first, combine) in [(997, 3, 50, 4), (4096, 16, 64, 2), (300, 1, 7, 3)] {
        let a = tensor::rand(&[n], chunk, Some(1)).unwrap();
        let b = tensor::randn(&[n], chunk, Some(2)).unwrap();
        let y = (&(&a * 2.0).unwrap() + &b).unwrap().exp().unwrap();
        let y = (&y - 1.0).unwrap();
        let s = y.sum(None, false).unwrap();
        let m = a.mean(None, true).unwrap();
        same_as_whole(&[&s, &m, &y], &streaming(first, combine));
    }
}

/// Ops on reduction results (`mean` is a sum and a division) come in the seal, fused into
/// the root as the one-piece pipeline fuses them.
#[test]
fn ops_on_reduction_results_stream_unchanged() {
    let x = tensor::rand(&[3000], 7, Some(5)).unwrap();
    let y = tensor::rand(&[3000], 7, Some(6)).unwrap();
    let norm = (&x * &x).unwrap().sum(None, false).unwrap().sqrt().unwrap();
    let ratio = (&x.sum(None, false).unwrap() / &y.max(None, false).unwrap()).unwrap();
    let mean = y.mean(None, false).unwrap();
    same_as_whole(&[&norm, &ratio, &mean], &streaming(64, 4));
    same_as_whole(&[&mean], &streaming(16, 2));
}

#[test]
fn two_dimensional_grids_with_short_edge_chunks_stream_unchanged() {
    let x = tensor::rand(&[37, 23], 4, Some(9)).unwrap();
    let y = (&x * &x).unwrap();
    same_as_whole(&[&y.sum(None, true).unwrap(), &y], &streaming(24, 4));
    let f = crate::array::Scalar::F64;
    let r = tensor::arange(f(0.0), f(500.0), f(1.0), 7).unwrap();
    same_as_whole(
        &[&(&r + 1.0).unwrap().sum(None, false).unwrap()],
        &streaming(10, 3),
    );
}

#[test]
fn graphs_outside_the_streamed_kind_or_too_small_are_prepared_whole() {
    let config = streaming(8, 4);
    let x = tensor::rand(&[100, 10], 5, Some(1)).unwrap();
    let row = tensor::rand(&[10], 5, Some(2)).unwrap();
    let plans = |t: &Tensor| {
        stream_plan(&Tensor::graph(&[t]), &config)
            .unwrap()
            .is_some()
    };
    assert!(plans(&x.sum(None, false).unwrap()));
    assert!(
        !plans(&x.sum(Some(&[0]), false).unwrap()),
        "an axis reduction"
    );
    assert!(!plans(&(&x + &row).unwrap()), "broadcasting");
    assert!(!plans(&x.transpose(None).unwrap()), "a transpose");
    let centred = (&x - &x.mean(None, true).unwrap()).unwrap();
    assert!(!plans(&centred), "a reduction read back by the whole array");
    assert!(plans(&x.mean(None, false).unwrap()), "a mean");
    let off = TaskConfig {
        stream_from_chunks: None,
        ..config.clone()
    };
    let g = Tensor::graph(&[&x.sum(None, false).unwrap()]);
    assert!(stream_plan(&g, &off).unwrap().is_none(), "streaming off");
    let big = TaskConfig {
        stream_from_chunks: Some(1_000),
        ..config
    };
    assert!(
        stream_plan(&g, &big).unwrap().is_none(),
        "80 chunks: below the threshold"
    );
}
