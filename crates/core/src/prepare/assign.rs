//! Initial assignment of subtasks to workers (the seed's BFS heuristic, Mars `GraphAssigner`).
//!
//! Only initial subtasks (no predecessors) are placed here; later ones are placed at run time
//! by data locality. Each worker gets a quota of initial subtasks proportional to its slots.
//! The worker with the most quota left runs a breadth-first search over the undirected
//! subtask graph from the first unassigned initial subtask, taking every initial subtask it
//! meets, nearest first, until its quota is met; when its search is hemmed in by subtasks
//! another worker's search entered, it goes on from the next unassigned initial subtask. Then
//! the next worker searches. Subtasks reached by one search are not entered by another, so
//! neighbouring initial subtasks (the leaves under one combine, the chunks that one
//! elementwise op pairs) land on one worker. Deterministic for the same input.
//!
//! Mars' `GraphAssigner` instead stops each search after `|graph| / |workers|` visits and
//! re-picks the worker with the most quota after every search. Once searches are hemmed in
//! they take one subtask each, the quotas even out, and the workers alternate subtask by
//! subtask: 6% of a reduction tree's combines then read inputs from both workers (3,820 of
//! 65,000 on `sum(rand(200000, chunk=1))`), each a fetch over the network.

use crate::error::{AresError, Result};
use crate::graph::SubtaskGraph;
use crate::ids::WorkerId;
use std::collections::VecDeque;

/// A worker as the preparation pipeline sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WorkerSlots {
    pub worker: WorkerId,
    pub slots: usize,
}

/// Quotas proportional to slots; the remainder goes one by one to the workers with the
/// largest fractional share (ties: lower index).
pub fn quotas(total: usize, workers: &[WorkerSlots]) -> Vec<usize> {
    let slots: usize = workers.iter().map(|w| w.slots).sum();
    let mut q: Vec<usize> = workers.iter().map(|w| total * w.slots / slots).collect();
    let mut rest: Vec<(usize, usize)> = workers
        .iter()
        .enumerate()
        .map(|(i, w)| ((total * w.slots) % slots, i))
        .collect();
    rest.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let missing = total - q.iter().sum::<usize>();
    for (_, i) in rest.into_iter().take(missing) {
        q[i] += 1;
    }
    q
}

/// Sets `worker` on every initial subtask; returns how many each worker received.
pub fn assign_initial(graph: &mut SubtaskGraph, workers: &[WorkerSlots]) -> Result<Vec<usize>> {
    if workers.is_empty() || workers.iter().any(|w| w.slots == 0) {
        return Err(AresError::prepare(
            "assign",
            "needs at least one worker, each with at least one slot",
        ));
    }
    let n = graph.len();
    let initial: Vec<u32> = graph.initial().map(|s| s.0).collect();
    let mut quota = quotas(initial.len(), workers);
    let mut assigned_count = vec![0usize; workers.len()];
    let mut visited = vec![false; n];
    let mut assigned = vec![false; n];
    let mut next_candidate = 0;
    let mut queue = VecDeque::new();

    while quota.iter().any(|q| *q > 0) {
        // The worker with the most quota left (ties: lower index) searches until it is met.
        let w = (0..workers.len())
            .max_by(|a, b| quota[*a].cmp(&quota[*b]).then(b.cmp(a)))
            .expect("non-empty");
        queue.clear();
        while quota[w] > 0 {
            let Some(s) = queue.pop_front() else {
                // Hemmed in (or just starting): go on from the next unassigned one.
                while next_candidate < initial.len() && assigned[initial[next_candidate] as usize] {
                    next_candidate += 1;
                }
                let Some(&start) = initial.get(next_candidate) else {
                    break;
                };
                visited[start as usize] = true;
                queue.push_back(start);
                continue;
            };
            if graph.preds.row(s as usize).is_empty() && !assigned[s as usize] {
                assigned[s as usize] = true;
                graph.subtasks[s as usize].worker = Some(workers[w].worker);
                quota[w] -= 1;
                assigned_count[w] += 1;
            }
            for &t in graph
                .preds
                .row(s as usize)
                .iter()
                .chain(graph.succs.row(s as usize))
            {
                if !visited[t as usize] {
                    visited[t as usize] = true;
                    queue.push_back(t);
                }
            }
        }
        // Subtasks queued but not reached stay enterable by the next worker's search.
        for s in queue.drain(..) {
            visited[s as usize] = false;
        }
        if next_candidate >= initial.len() && quota[w] > 0 {
            break; // every initial subtask is placed
        }
    }
    Ok(assigned_count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TaskConfig;
    use crate::ids::{StageId, TaskId};
    use crate::prepare::{color::group_subtasks, fuse::fuse, tile::tile};
    use crate::tensor::{self, Tensor};

    fn ws(slots: &[usize]) -> Vec<WorkerSlots> {
        slots
            .iter()
            .enumerate()
            .map(|(i, s)| WorkerSlots {
                worker: WorkerId(i as u32),
                slots: *s,
            })
            .collect()
    }

    #[test]
    fn quotas_follow_slots() {
        assert_eq!(quotas(10, &ws(&[1, 1])), vec![5, 5]);
        assert_eq!(quotas(10, &ws(&[1, 2, 2])), vec![2, 4, 4]);
        assert_eq!(quotas(7, &ws(&[1, 1, 1])), vec![3, 2, 2]);
    }

    #[test]
    fn neighbouring_initial_subtasks_share_a_worker() {
        //  two independent sums over 4 chunks each, two workers:
        //  sum(a) subtree → w0, sum(b) subtree → w1
        let a = tensor::rand(&[4], 1, Some(1))
            .unwrap()
            .exp()
            .unwrap()
            .sum(None, false)
            .unwrap();
        let b = tensor::rand(&[4], 1, Some(2))
            .unwrap()
            .exp()
            .unwrap()
            .sum(None, false)
            .unwrap();
        let config = TaskConfig {
            initial_same_color_num: Some(1),
            ..TaskConfig::default()
        };
        let g = fuse(tile(&Tensor::graph(&[&a, &b]), &config).unwrap(), true);
        let mut sg = group_subtasks(g, &config, 1, TaskId(1), StageId(0)).unwrap();
        let counts = assign_initial(&mut sg, &ws(&[1, 1])).unwrap();
        assert_eq!(counts, vec![4, 4]);
        let workers: Vec<_> = sg
            .initial()
            .map(|s| sg.subtasks[s.index()].worker.unwrap().0)
            .collect();
        assert_eq!(workers, vec![0, 0, 0, 0, 1, 1, 1, 1]);
    }

    #[test]
    fn a_reduction_tree_splits_into_one_block_per_worker() {
        // sum over 4096 one-element chunks: 4096 leaves and a fan-in-4 combine tree. Each
        // worker takes one contiguous run of leaves, so only the combines on the path between
        // the blocks read from two workers (Mars' re-pick after every search alternated
        // workers leaf by leaf once the searches were hemmed in).
        let x = tensor::rand(&[4096], 1, Some(1))
            .unwrap()
            .sum(None, false)
            .unwrap();
        let config = TaskConfig::default();
        for slots in [vec![1, 1], vec![1, 1, 1], vec![2, 1]] {
            let g = fuse(tile(&Tensor::graph(&[&x]), &config).unwrap(), true);
            let mut sg = group_subtasks(g, &config, 1, TaskId(1), StageId(0)).unwrap();
            let counts = assign_initial(&mut sg, &ws(&slots)).unwrap();
            let total: usize = counts.iter().sum();
            let expected = quotas(total, &ws(&slots));
            assert_eq!(counts, expected, "slots {slots:?}");
            let leaves: Vec<u32> = sg
                .initial()
                .map(|s| sg.subtasks[s.index()].worker.unwrap().0)
                .collect();
            let switches = leaves.windows(2).filter(|p| p[0] != p[1]).count();
            assert!(
                switches < slots.len() * 2,
                "slots {slots:?}: {switches} switches"
            );
        }
    }

    #[test]
    fn rejects_an_empty_cluster() {
        let a = tensor::rand(&[4], 1, Some(1)).unwrap();
        let g = fuse(
            tile(&Tensor::graph(&[&a]), &TaskConfig::default()).unwrap(),
            true,
        );
        let mut sg = group_subtasks(g, &TaskConfig::default(), 1, TaskId(1), StageId(0)).unwrap();
        assert!(assign_initial(&mut sg, &[]).is_err());
    }
}
