//! Where the results a task's graph reads are now. A client's graph reads another task's
//! result (an upload, a named result) through `OpArgs::FetchResult`, which lists the worker
//! holding each chunk as the client last heard it. When one of those workers died since,
//! the source task recomputed the chunks elsewhere ([`super::recompute`]), so the listed
//! worker is stale and the read would fail. Before preparing, the task asks each source's
//! processor for its result's current layout (which waits for a recompute under way, at
//! most [`SOURCE_WAIT`]) and reads from there; a source that is gone, does not answer in
//! time, or no longer matches the client's shape and chunking is read as the client gave it.
//!
//! A persisted result (`persist`) is read before the client knows where its chunks are: its
//! read lists them on `UNPLACED`, and takes the source's chunking and places here (any
//! output, not only the first); one the source no longer holds fails the task with that
//! message ([`unplaced`]) instead of a fetch from nowhere.

use crate::supervisor::messages::GetFetchArgs;
use actix::prelude::*;
use ares_core::graph::TileableGraph;
use ares_core::ids::TaskId;
use ares_core::ops::{OpArgs, UNPLACED};
use std::collections::HashMap;
use std::time::Duration;

/// Longest a task's preparation waits for its sources' current layouts (a source being
/// recomputed from lineage answers once it is back).
pub const SOURCE_WAIT: Duration = Duration::from_secs(600);

/// The tasks whose results `graph` reads.
pub fn read_tasks(graph: &TileableGraph) -> Vec<TaskId> {
    let mut tasks: Vec<TaskId> = graph
        .nodes
        .iter()
        .filter_map(|n| match &n.args {
            OpArgs::FetchResult { task, .. } => Some(*task),
            _ => None,
        })
        .collect();
    tasks.sort_unstable_by_key(|t| t.0);
    tasks.dedup();
    tasks
}

/// The outputs of other tasks that `graph` reads.
pub fn read_outputs(graph: &TileableGraph) -> Vec<(TaskId, u32)> {
    let mut reads: Vec<(TaskId, u32)> = graph
        .nodes
        .iter()
        .filter_map(|n| match &n.args {
            OpArgs::FetchResult { task, output, .. } => Some((*task, *output)),
            _ => None,
        })
        .collect();
    reads.sort_unstable_by_key(|(t, o)| (t.0, *o));
    reads.dedup();
    reads
}

/// The current fetch arguments of each output `reads` names whose source answers within
/// [`SOURCE_WAIT`].
pub async fn current(
    sources: Vec<(TaskId, Recipient<GetFetchArgs>)>,
    reads: &[(TaskId, u32)],
) -> HashMap<(TaskId, u32), OpArgs> {
    let asks = sources.into_iter().flat_map(|(t, p)| {
        reads
            .iter()
            .filter(move |(r, _)| *r == t)
            .map(move |&(_, o)| {
                let p = p.clone();
                async move { ((t, o), p.send(GetFetchArgs(o)).await.ok().flatten()) }
            })
    });
    match tokio::time::timeout(SOURCE_WAIT, futures_util::future::join_all(asks)).await {
        Ok(answers) => answers
            .into_iter()
            .filter_map(|(t, a)| a.map(|a| (t, a)))
            .collect(),
        Err(_) => {
            tracing::warn!(
                "the results this task reads did not say where they are within {} s: read as given",
                SOURCE_WAIT.as_secs()
            );
            HashMap::new()
        }
    }
}

/// Points every read of another task's output in `graph` at the chunks' current workers,
/// where the source still has the shape, dtype and chunking the graph reads (an unplaced
/// read takes the source's chunking); how many reads moved.
pub fn refresh(graph: &mut TileableGraph, current: &HashMap<(TaskId, u32), OpArgs>) -> usize {
    let mut moved = 0;
    for node in &mut graph.nodes {
        let OpArgs::FetchResult {
            task,
            output,
            shape,
            dtype,
            splits,
            chunks,
        } = &mut node.args
        else {
            continue;
        };
        let Some(OpArgs::FetchResult {
            shape: s,
            dtype: d,
            splits: sp,
            chunks: now,
            ..
        }) = current.get(&(*task, *output))
        else {
            continue;
        };
        let unplaced = chunks.iter().any(|(_, w)| *w == UNPLACED);
        if unplaced && s == shape && d == dtype {
            splits.clone_from(sp);
            chunks.clone_from(now);
            moved += 1;
            continue;
        }
        let same = s == shape && d == dtype && sp == splits && now.len() == chunks.len();
        if same && now != chunks {
            chunks.clone_from(now);
            moved += 1;
        }
    }
    moved
}

/// A read `graph` still has no place for (its source freed it): the task's failure message.
pub fn unplaced(graph: &TileableGraph) -> Option<String> {
    graph.nodes.iter().find_map(|n| match &n.args {
        OpArgs::FetchResult {
            task,
            output,
            chunks,
            ..
        } if chunks.iter().any(|(_, w)| *w == UNPLACED) => Some(format!(
            "output {output} of task {task}, a persisted result, is no longer held on the \
             cluster (it was freed, or its engine closed)"
        )),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ares_core::array::DType;
    use ares_core::ops::Op;
    use ares_core::tensor::Tensor;

    fn fetch(task: u32, chunks: Vec<(u32, u32)>, splits: Vec<Vec<usize>>) -> OpArgs {
        OpArgs::FetchResult {
            task: TaskId(task),
            output: 0,
            shape: [splits[0].iter().sum::<usize>()][..].into(),
            dtype: DType::F64,
            splits,
            chunks,
        }
    }

    fn graph_reading(args: OpArgs) -> TileableGraph {
        let x = Tensor::new(Op::Fetch, args, vec![]).unwrap();
        Tensor::graph(&[&x.sum(None, false).unwrap()])
    }

    #[test]
    fn reads_follow_results_recomputed_on_another_worker() {
        let stale = fetch(3, vec![(0, 1), (1, 2)], vec![vec![4, 4]]);
        let mut g = graph_reading(stale);
        assert_eq!(read_tasks(&g), [TaskId(3)]);
        let now = HashMap::from([(
            (TaskId(3), 0),
            fetch(3, vec![(0, 2), (1, 2)], vec![vec![4, 4]]),
        )]);
        assert_eq!(refresh(&mut g, &now), 1);
        let chunks = g.nodes.iter().find_map(|n| match &n.args {
            OpArgs::FetchResult { chunks, .. } => Some(chunks.clone()),
            _ => None,
        });
        assert_eq!(chunks, Some(vec![(0, 2), (1, 2)]));
        assert_eq!(refresh(&mut g, &now), 0, "already current");
    }

    #[test]
    fn a_source_that_no_longer_matches_or_answers_is_read_as_given() {
        let given = fetch(3, vec![(0, 1), (1, 2)], vec![vec![4, 4]]);
        let mut g = graph_reading(given.clone());
        let other = fetch(3, vec![(0, 2)], vec![vec![8]]);
        assert_eq!(
            refresh(&mut g, &HashMap::from([((TaskId(3), 0), other)])),
            0
        );
        assert_eq!(refresh(&mut g, &HashMap::new()), 0);
        assert_eq!(
            refresh(&mut g, &HashMap::from([((TaskId(4), 0), given)])),
            0
        );
    }

    #[test]
    fn a_persisted_read_takes_the_source_layout_of_its_output() {
        // The client thought (4, 4); the source's output 1 is (2, 6), on workers 5 and 6.
        let mut persisted = fetch(3, vec![(0, UNPLACED), (1, UNPLACED)], vec![vec![4, 4]]);
        if let OpArgs::FetchResult { output, .. } = &mut persisted {
            *output = 1;
        }
        let mut g = graph_reading(persisted);
        assert_eq!(read_outputs(&g), [(TaskId(3), 1)]);
        assert!(unplaced(&g).unwrap().contains("no longer held"));
        let only_first = HashMap::from([((TaskId(3), 0), fetch(3, vec![(0, 5)], vec![vec![8]]))]);
        assert_eq!(refresh(&mut g, &only_first), 0, "another output's layout");
        let now = fetch(3, vec![(0, 5), (1, 6)], vec![vec![2, 6]]);
        assert_eq!(refresh(&mut g, &HashMap::from([((TaskId(3), 1), now)])), 1);
        assert_eq!(unplaced(&g), None);
        let read = g.nodes.iter().find_map(|n| match &n.args {
            OpArgs::FetchResult { splits, chunks, .. } => Some((splits.clone(), chunks.clone())),
            _ => None,
        });
        assert_eq!(read, Some((vec![vec![2, 6]], vec![(0, 5), (1, 6)])));
    }
}
