//! Where the results a task's graph reads are now. A client's graph reads another task's
//! result (an upload, a named result) through `OpArgs::FetchResult`, which lists the worker
//! holding each chunk as the client last heard it. When one of those workers died since,
//! the source task recomputed the chunks elsewhere ([`super::recompute`]), so the listed
//! worker is stale and the read would fail. Before preparing, the task asks each source's
//! processor for its result's current layout (which waits for a recompute under way, at
//! most [`SOURCE_WAIT`]) and reads from there; a source that is gone, does not answer in
//! time, or no longer matches the client's shape and chunking is read as the client gave it.

use crate::supervisor::messages::GetFetchArgs;
use actix::prelude::*;
use ares_core::graph::TileableGraph;
use ares_core::ids::TaskId;
use ares_core::ops::OpArgs;
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

/// The current fetch arguments of each source that answers within [`SOURCE_WAIT`].
pub async fn current(sources: Vec<(TaskId, Recipient<GetFetchArgs>)>) -> HashMap<TaskId, OpArgs> {
    let asks = sources
        .into_iter()
        .map(|(t, p)| async move { (t, p.send(GetFetchArgs::FIRST).await.ok().flatten()) });
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

/// Points every read of a source's output 0 in `graph` at the chunks' current workers, where
/// the source still has the shape, dtype and chunking the graph reads; how many reads moved.
pub fn refresh(graph: &mut TileableGraph, current: &HashMap<TaskId, OpArgs>) -> usize {
    let mut moved = 0;
    for node in &mut graph.nodes {
        let OpArgs::FetchResult {
            task,
            output: 0,
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
        }) = current.get(task)
        else {
            continue;
        };
        let same = s == shape && d == dtype && sp == splits && now.len() == chunks.len();
        if same && now != chunks {
            chunks.clone_from(now);
            moved += 1;
        }
    }
    moved
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
        let now = HashMap::from([(TaskId(3), fetch(3, vec![(0, 2), (1, 2)], vec![vec![4, 4]]))]);
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
        assert_eq!(refresh(&mut g, &HashMap::from([(TaskId(3), other)])), 0);
        assert_eq!(refresh(&mut g, &HashMap::new()), 0);
        assert_eq!(refresh(&mut g, &HashMap::from([(TaskId(4), given)])), 0);
    }
}
