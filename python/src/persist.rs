//! `persist`: results left on the cluster's workers (or the embedded engine's), read by
//! later graphs.
//!
//! The engine runs the tensors as one task and does not fetch or free its results
//! (`ares::api::persist`); each tensor becomes an `Op::Fetch` of its output of that task,
//! so a later computation starts from the held chunks instead of recomputing them. The
//! client does not know where the chunks are: the reads list them on `UNPLACED` and the
//! supervisor places them from the task when a graph reading them is prepared (it also takes
//! the task's chunking then; the client's, from tiling the tensors here, is what `.chunks`
//! shows). The engine remembers the task among those it holds (`Uploads`), so Python frees
//! it when the last tensor reading it is gone, and `close` frees what is left.

use ares_core::ids::TaskId;
use ares_core::ops::{Op, OpArgs, UNPLACED};
use ares_core::tensor::Tensor;

/// The reads of outputs `0..` of `task`, which computed `tensors` (in that order).
pub fn reads_of(task: TaskId, tensors: &[&Tensor]) -> ares_core::Result<Vec<Tensor>> {
    let graph = Tensor::graph(tensors);
    let tiled = ares_core::prepare::tile::tile(&graph, &ares::config::TaskConfig::default())?;
    tensors
        .iter()
        .zip(&tiled.results)
        .enumerate()
        .map(|(output, (t, result))| {
            let splits = result.splits.clone();
            let count: usize = splits.iter().map(Vec::len).product();
            let chunks = (0..count as u32).map(|i| (i, UNPLACED)).collect();
            let args = OpArgs::FetchResult {
                task,
                output: output as u32,
                shape: t.shape().into(),
                dtype: t.dtype(),
                splits,
                chunks,
            };
            Tensor::new(Op::Fetch, args, vec![])
        })
        .collect()
}
