//! Where a ready subtask's siblings keep their outputs: the tie-break of locality placement.
//!
//! The scheduler places a subtask on the worker holding most bytes of its inputs. When two
//! workers hold as many (a block of `matmul` reads a row block made on one worker and a
//! column block made on the other), any choice fetches the same bytes now, but not later:
//! the subtask's output is read by its consumers together with their other inputs, the
//! subtask's siblings. Going where the siblings' finished outputs are lets the consumer run
//! there without fetching them (the partial products of one output block and their sum stay
//! on one worker). The worker returned holds most bytes of what the consumers read from
//! subtasks other than this one, among the finished ones.

use ares_core::graph::SubtaskGraph;
use ares_core::ids::WorkerId;

/// The worker holding most bytes of the finished inputs of `s`'s consumers that `s` does not
/// make (ties: the lower id); `None` when no such input is finished yet.
pub fn sibling_worker(
    graph: &SubtaskGraph,
    location: &[Option<(WorkerId, u64)>],
    s: usize,
) -> Option<WorkerId> {
    let mut bytes: Vec<(WorkerId, u64)> = Vec::new();
    for &t in graph.succs.row(s) {
        for &c in graph.inputs.row(t as usize) {
            if graph.owner[c as usize].index() == s {
                continue;
            }
            let Some((w, size)) = location.get(c as usize).copied().flatten() else {
                continue;
            };
            match bytes.iter_mut().find(|(x, _)| *x == w) {
                Some((_, b)) => *b += size,
                None => bytes.push((w, size)),
            }
        }
    }
    bytes
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(w, _)| w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TaskConfig;
    use ares_core::ids::{ChunkIdx, TaskId};
    use ares_core::prepare::{prepare, uniform_cluster};
    use ares_core::tensor::{self, Tensor};

    /// `sum(a @ b)` of 2×2 blocks, no fusion: the partial products p(i,j,k) of block (i, j)
    /// are siblings under their `tree_add`.
    #[test]
    fn siblings_are_the_other_inputs_of_the_consumer() {
        let a = tensor::rand(&[4, 4], 2, Some(1)).unwrap();
        let b = tensor::rand(&[4, 4], 2, Some(2)).unwrap();
        let t = a.matmul(&b).unwrap().sum(None, false).unwrap();
        let config = TaskConfig {
            fuse_enabled: false,
            ..TaskConfig::default()
        };
        let g = prepare(
            &Tensor::graph(&[&t]),
            &config,
            &uniform_cluster(2, 1),
            TaskId(1),
        )
        .unwrap()
        .subtasks;
        let matmul = |s: usize| {
            g.chunks.node(ChunkIdx(g.members.row(s)[0])).op == ares_core::ops::Op::Matmul
        };
        let p = (0..g.len()).find(|s| matmul(*s)).unwrap();
        let consumer = g.succs.row(p)[0] as usize;
        let sibling = g
            .preds
            .row(consumer)
            .iter()
            .map(|q| *q as usize)
            .find(|q| *q != p)
            .unwrap();
        let mut location = vec![None; g.chunks.len()];
        assert_eq!(
            sibling_worker(&g, &location, p),
            None,
            "no sibling finished"
        );
        // The partial product itself on w0 does not count; its sibling on w1 does.
        location[g.outputs.row(p)[0] as usize] = Some((WorkerId(0), 100));
        location[g.outputs.row(sibling)[0] as usize] = Some((WorkerId(1), 8));
        assert_eq!(sibling_worker(&g, &location, p), Some(WorkerId(1)));
    }
}
