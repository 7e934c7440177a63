//! Running one subtask on a compute thread: its inputs (local first, then one batched fetch
//! per peer, each bounded by `worker.fetch_timeout_ms`), the kernels, the outputs stored.
//! Failures are typed ([`SubtaskError`]) so the supervisor decides retry-or-fail on the
//! variant: an unreachable peer is reported as such, a missing input as a fetch failure, a
//! kernel error or panic as the subtask's failure.

use super::{transfer, Shared};
use crate::executor::run_subtask;
use crate::graph::WorkerGraph;
use crate::ids::{ChunkIdx, TaskId, WorkerId};
use crate::protocol::{RunSubtask, SubtaskError, SubtaskReport};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Fetches inputs (local first, then batched per peer), computes, stores the outputs.
pub(super) fn execute_one(
    graph: &WorkerGraph,
    task: TaskId,
    run: RunSubtask,
    me: WorkerId,
    shared: &Shared,
) -> Option<SubtaskReport> {
    let s = run.subtask;
    let local = super::memory::local_inputs(&run.inputs, me);
    shared.storage.want(task, &local, false);
    if shared.cancelled.remove(&(task, s)).is_some() {
        return None;
    }
    // A panic anywhere in fetching or computing is this subtask's error, never a lost report.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // Waits for room under `worker.memory_limit`; released after everything below.
        let run_bytes = super::memory::run_bytes(graph, &run, me);
        let lease =
            (shared.storage.begin(task, &local, run_bytes)).map_err(SubtaskError::Failed)?;
        let mut fetched: FxHashMap<ChunkIdx, Arc<crate::array::ArrayData>> = FxHashMap::default();
        let mut remote: BTreeMap<WorkerId, Vec<ChunkIdx>> = BTreeMap::new();
        for (c, w) in &run.inputs {
            match shared.storage.get(task, *c) {
                Some(d) => {
                    fetched.insert(*c, d);
                }
                None if *w == me => {
                    return Err(SubtaskError::Fetch(format!("chunk {c} is no longer here")))
                }
                None => remote.entry(*w).or_default().push(*c),
            }
        }
        // Members reading another task's result: from this worker or the one holding it.
        let mut remote_fetch: BTreeMap<(WorkerId, TaskId), Vec<(ChunkIdx, ChunkIdx)>> =
            BTreeMap::new();
        for &m in graph.members.row(s.index()) {
            let idx = ChunkIdx(m);
            if let crate::ops::OpArgs::FetchChunk {
                task: src,
                chunk,
                worker,
            } = graph.chunks.args_of(idx)
            {
                match shared.storage.get(*src, ChunkIdx(*chunk)) {
                    Some(d) => {
                        fetched.insert(idx, d);
                    }
                    None => remote_fetch
                        .entry((WorkerId(*worker), *src))
                        .or_default()
                        .push((ChunkIdx(*chunk), idx)),
                }
            }
        }
        for ((w, src), pairs) in remote_fetch {
            let addr = shared.peers.get(&w).map(|a| a.clone()).ok_or_else(|| {
                SubtaskError::Failed(format!("result of {src} was on {w}, which is gone"))
            })?;
            let wanted: Vec<ChunkIdx> = pairs.iter().map(|p| p.0).collect();
            let data = shared
                .connections
                .fetch(&addr, src, &wanted, shared.max_frame)
                .map_err(|e| {
                    SubtaskError::Failed(format!("cannot read the result of {src} from {w}: {e}"))
                })?;
            let by_source: FxHashMap<ChunkIdx, crate::array::ArrayData> =
                data.into_iter().collect();
            for (source, member) in pairs {
                let d = by_source.get(&source).cloned().ok_or_else(|| {
                    SubtaskError::Failed(format!("{w} did not send chunk {source} of {src}"))
                })?;
                fetched.insert(member, Arc::new(d));
            }
        }
        for (w, chunks) in remote {
            let addr = shared
                .peers
                .get(&w)
                .map(|a| a.clone())
                .ok_or_else(|| SubtaskError::Fetch(format!("no address for {w}")))?;
            let data = shared
                .connections
                .fetch(&addr, task, &chunks, shared.max_frame)
                .map_err(|e| match e {
                    transfer::FetchError::Unreachable(message) => {
                        SubtaskError::PeerUnreachable { worker: w, message }
                    }
                    e => SubtaskError::Fetch(format!("{w} at {addr}: {e}")),
                })?;
            for (c, d) in data {
                fetched.insert(c, Arc::new(d));
            }
        }
        let (members, outputs) = (graph.members.row(s.index()), graph.outputs.row(s.index()));
        let outputs = run_subtask(&graph.chunks, members, outputs, &fetched)
            .map_err(|e| SubtaskError::Failed(e.to_string()))?;
        Ok(outputs
            .into_iter()
            .map(|(c, d)| {
                let size = d.nbytes() as u64;
                lease.put(c, d);
                (c, size)
            })
            .collect())
    }))
    .unwrap_or_else(|panic| {
        Err(SubtaskError::Failed(format!(
            "panicked: {}",
            crate::prepare::panic_message(panic.as_ref())
        )))
    });
    if shared.cancelled.remove(&(task, s)).is_some() {
        return None;
    }
    Some(SubtaskReport {
        subtask: s,
        outcome,
    })
}
