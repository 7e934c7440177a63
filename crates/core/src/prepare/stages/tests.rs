//! Stages cut at data-dependent tensors, and the graph built again on their results.

use super::*;
use crate::array::{DType, Scalar};
use crate::ids::TaskId;
use crate::tensor;

fn masked() -> (Tensor, Tensor) {
    let x = tensor::rand(&[1000], 100, Some(1)).unwrap();
    let mask = x.binary_scalar(Op::Gt, Scalar::F64(0.5), false).unwrap();
    (x.clone(), x.mask_select(&mask).unwrap())
}

/// The fetch of a stage's 1-D float64 result with these chunk lengths.
fn fetched(task: u32, splits: &[usize]) -> OpArgs {
    OpArgs::FetchResult {
        task: TaskId(task),
        output: 0,
        shape: smallvec::smallvec![splits.iter().sum()],
        dtype: DType::F64,
        splits: vec![splits.to_vec()],
        chunks: (0..splits.len() as u32).map(|c| (c, 0)).collect(),
    }
}

#[test]
fn a_graph_whose_data_dependent_tensors_are_only_results_has_one_stage() {
    let (x, m) = masked();
    assert!(next_stage(&Tensor::graph(&[&m])).unwrap().is_none());
    // `unique`'s values and counts are tiled with it.
    let (u, c) = x.unique(true).unwrap();
    assert!(next_stage(&Tensor::graph(&[&u, &c.unwrap()]))
        .unwrap()
        .is_none());
    // `unique(x[mask])` goes on from the mask: two stages.
    let (u, _) = m.unique(false).unwrap();
    assert!(next_stage(&Tensor::graph(&[&u])).unwrap().is_some());
}

#[test]
fn what_reads_a_mask_chunk_by_chunk_runs_in_its_stage() {
    //   x ── gt ──┐
    //   x ────────┴─ mask_select ── * 2 ── sum       one stage: each chunk selected,
    //                                               doubled and summed where it is
    let (_, m) = masked();
    assert!(m.length_from_data());
    let doubled = m.binary_scalar(Op::Mul, Scalar::F64(2.0), false).unwrap();
    assert!(
        doubled.length_from_data(),
        "elementwise keeps the unknown length"
    );
    let total = doubled.sum(None, false).unwrap();
    assert!(!total.length_from_data());
    let graph = Tensor::graph(&[&total]);
    assert!(next_stage(&graph).unwrap().is_none());
    // So do a mean (its count is a reduction of what the chunks hold), `m * m`, `m * (m > 0)`
    // (one source: their chunks pair up) and a known operand of one element.
    let squares = (&m * &m).unwrap();
    let positive = m.binary_scalar(Op::Gt, Scalar::F64(0.7), false).unwrap();
    let one = tensor::full(&[1], Scalar::F64(3.0), 1).unwrap();
    for t in [
        m.mean(None, false).unwrap(),
        squares.var(None, false, 1).unwrap(),
        (&m * &positive).unwrap().sum(None, false).unwrap(),
        (&m + &one).unwrap().sum(None, false).unwrap(),
    ] {
        let graph = Tensor::graph(&[&t]);
        assert!(next_stage(&graph).unwrap().is_none(), "{:?}", graph.nodes);
        crate::prepare::tile::tile(&graph, &crate::config::TaskConfig::default()).unwrap();
    }
}

#[test]
fn what_needs_the_lengths_runs_after_the_stage_with_them() {
    //   x ── gt ──┐
    //   x ────────┴─ mask_select ── * 2 ── sort     stage 1: mask_select and * 2, read
    //                                               chunk by chunk; then the sort
    let (_, m) = masked();
    let doubled = m.binary_scalar(Op::Mul, Scalar::F64(2.0), false).unwrap();
    let sorted = doubled.sort().unwrap();
    let graph = Tensor::graph(&[&sorted.sum(None, false).unwrap()]);
    let stage = next_stage(&graph).unwrap().expect("a stage");
    assert_eq!(stage.boundary.len(), 1);
    assert_eq!(graph.node(stage.boundary[0]).op, Op::Mul);
    assert_eq!(stage.graph.node(stage.graph.outputs[0]).op, Op::Mul);
    assert!(stage.graph.nodes.iter().any(|n| n.op == Op::MaskSelect));
    assert!(!stage.graph.nodes.iter().any(|n| n.op == Op::Sum));

    let rest = substitute(&graph, &stage.boundary, vec![fetched(7, &[3, 0, 5])]).unwrap();
    assert!(next_stage(&rest).unwrap().is_none());
    let fetch = rest.nodes.iter().find(|n| n.op == Op::Fetch).unwrap();
    assert_eq!(fetch.shape.as_slice(), &[8]);
    let sort = rest.nodes.iter().find(|n| n.op == Op::Sort).unwrap();
    assert_eq!(
        sort.shape.as_slice(),
        &[8],
        "shapes inferred again from the real length"
    );
    assert_eq!(rest.node(rest.outputs[0]).op, Op::Sum);
    assert!(!rest
        .nodes
        .iter()
        .any(|n| n.op == Op::MaskSelect || n.op == Op::Mul));
}

#[test]
fn masks_of_other_sources_meet_after_their_stage() {
    // x[m1] + x[m2]: their chunks hold different elements, so both are computed first.
    let (x, m) = masked();
    let m2 = x
        .mask_select(&x.binary_scalar(Op::Lt, Scalar::F64(0.1), false).unwrap())
        .unwrap();
    let graph = Tensor::graph(&[&(&m + &m2).unwrap().sum(None, false).unwrap()]);
    assert_eq!(next_stage(&graph).unwrap().unwrap().boundary.len(), 2);
    // So is an argmax (its positions count from each chunk's planned offset).
    let graph = Tensor::graph(&[&m.arg_reduce(Op::ArgMax, None, false).unwrap()]);
    assert!(next_stage(&graph).unwrap().is_some());
}

#[test]
fn nested_masks_run_in_as_many_stages() {
    // m = x[x > .5]; sum(m[m > .75]): m first, then m[m > .75], then the sum.
    let (_, m) = masked();
    let inner = m.binary_scalar(Op::Gt, Scalar::F64(0.75), false).unwrap();
    let mm = m.mask_select(&inner).unwrap();
    let graph = Tensor::graph(&[&mm.sum(None, false).unwrap()]);
    let first = next_stage(&graph).unwrap().unwrap();
    assert_eq!(
        first.boundary.len(),
        1,
        "only the outer mask: the inner one is below it"
    );
    let rest = substitute(&graph, &first.boundary, vec![fetched(1, &[40, 60])]).unwrap();
    assert!(
        next_stage(&rest).unwrap().is_none(),
        "the inner mask of known m is summed chunk by chunk"
    );
    // A sort of it needs its length: a third stage.
    let graph = Tensor::graph(&[&mm.sort().unwrap()]);
    let first = next_stage(&graph).unwrap().unwrap();
    let rest = substitute(&graph, &first.boundary, vec![fetched(1, &[40, 60])]).unwrap();
    let second = next_stage(&rest)
        .unwrap()
        .expect("the inner mask is a stage of its own");
    assert_eq!(rest.node(second.boundary[0]).op, Op::MaskSelect);
    let last = substitute(&rest, &second.boundary, vec![fetched(2, &[10, 0])]).unwrap();
    assert!(next_stage(&last).unwrap().is_none());
}

#[test]
fn mean_counts_the_elements_it_has_not_the_bound() {
    let (_, m) = masked();
    let mean = m.mean(None, false).unwrap();
    let graph = Tensor::graph(&[&mean]);
    // No `/ 1000` baked in: the count is a reduction of its own.
    let bound = graph
        .nodes
        .iter()
        .any(|n| matches!(&n.args, OpArgs::Scalar { value: Scalar::F64(v), .. } if *v == 1000.0));
    assert!(!bound, "the mean divides by the bound");
    assert_eq!(graph.nodes.iter().filter(|n| n.op == Op::Sum).count(), 2);
}

#[test]
fn a_length_that_does_not_fit_is_an_error_naming_the_op() {
    // x[m] + y[m2]: both bounded by 1000, but the real lengths differ.
    let (x, m) = masked();
    let m2 = x
        .mask_select(&x.binary_scalar(Op::Lt, Scalar::F64(0.1), false).unwrap())
        .unwrap();
    let sum = (&m + &m2).unwrap().sum(None, false).unwrap();
    let graph = Tensor::graph(&[&sum]);
    let stage = next_stage(&graph).unwrap().unwrap();
    assert_eq!(stage.boundary.len(), 2);
    let e = substitute(
        &graph,
        &stage.boundary,
        vec![fetched(1, &[5]), fetched(1, &[6])],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("add"), "{e}");
}

#[test]
fn ops_that_need_the_length_wait_for_it_and_internal_reshapes_are_refused() {
    let (_, m) = masked();
    // `rechunk`'s argument does not depend on the length: built as it is, after the stage.
    let r = m.rechunk(10usize).unwrap();
    assert!(r.length_from_data());
    assert!(next_stage(&Tensor::graph(&[&r])).unwrap().is_some());
    // The user's reshape waits with its call as written...
    let w = m.reshape_when_known(&[-1, 2]).unwrap();
    assert_eq!(w.op(), Op::WaitForLength);
    let graph = Tensor::graph(&[&w]);
    let stage = next_stage(&graph).unwrap().unwrap();
    let rest = substitute(&graph, &stage.boundary, vec![fetched(3, &[4, 0, 2])]).unwrap();
    assert_eq!(rest.node(rest.outputs[0]).shape.as_slice(), &[3, 2]);
    // ... and fails once known if the length does not fit, naming the op.
    let rest = substitute(&graph, &stage.boundary, vec![fetched(3, &[5])]);
    let e = rest.unwrap_err().to_string();
    assert!(e.contains("reshape"), "{e}");
    // A reshape built with lengths read from the bound stays refused.
    let e = m.reshape(&[10, 100]).unwrap_err().to_string();
    assert!(e.contains("x[mask]") && e.contains("compute"), "{e}");
}

#[test]
fn explain_shows_the_first_stage_and_what_waits_for_its_lengths() {
    let (_, m) = masked();
    let total = m.binary_scalar(Op::Mul, Scalar::F64(2.0), false).unwrap();
    let graph = Tensor::graph(&[&total.sort().unwrap().sum(None, false).unwrap()]);
    let cluster = crate::prepare::uniform_cluster(2, 2);
    let config = crate::config::TaskConfig::default();
    let text = crate::explain::staged_text(&graph, &config, &cluster, 50).unwrap();
    assert!(text.starts_with("== stage 1: computes t"), "{text}");
    assert!(text.contains("mask_select (?,) float64"), "{text}");
    assert!(text.contains("multiply (?,) float64"), "{text}");
    assert!(text.contains("sum () float64"), "{text}");
    // A graph without stages prints exactly what `explain::text` prints.
    let plain = Tensor::graph(&[&m]);
    let p = crate::prepare::prepare(&plain, &config, &cluster, TaskId(1)).unwrap();
    assert_eq!(
        crate::explain::staged_text(&plain, &config, &cluster, 50).unwrap(),
        crate::explain::text(&p, 50)
    );
}
