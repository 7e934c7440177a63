//! Running one subtask on a compute thread: its inputs (fetched from peers beforehand by the
//! worker's runtime, see [`super::state`]; the rest read from the store), the kernels, the
//! outputs stored. No compute thread touches the network. Failures are typed
//! ([`SubtaskError`]) so the supervisor decides retry-or-fail on the variant: a missing input
//! is a fetch failure, a kernel error or panic the subtask's failure.

use super::cancelled::Cancelled;
use super::Shared;
use crate::protocol::{RunSubtask, SubtaskError, SubtaskReport};
use ares_core::array::ArrayData;
use ares_core::executor::run_subtask;
use ares_core::graph::WorkerGraph;
use ares_core::ids::{ChunkIdx, TaskId, WorkerId};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// What a worker answers a subtask calling a client's function when its config does not
/// allow code (a supervisor that allows it may still send one).
pub(super) const CODE_REFUSED: &str = "this worker does not run clients' code \
     (map_blocks): set cluster.allow_code: true in its config";

/// Chunks fetched from peers for a subtask, by member.
pub(super) type Fetched = FxHashMap<ChunkIdx, Arc<ArrayData>>;

/// The task a subtask belongs to, as its compute job holds it.
pub(super) struct OfTask<'a> {
    pub task: TaskId,
    pub graph: &'a WorkerGraph,
    /// Checked before the subtask runs (skipped if cancelled) and after (its report dropped,
    /// and its outputs too if the whole task ended meanwhile).
    pub cancelled: &'a Cancelled,
}

/// Reads the local inputs, computes with them and the fetched ones (`transit` bytes counted
/// for them in the ledger, taken into the subtask's lease), stores the outputs. `run_bytes`
/// is the subtask's projection ([`super::memory::run_bytes`]), made when it was submitted.
/// `None`: cancelled, nothing to report. Beside the report, the bytes of the inputs it read
/// (for the task stream).
pub(super) fn execute_one(
    of: &OfTask,
    run: RunSubtask,
    me: WorkerId,
    shared: &Shared,
    (mut fetched, transit): (Fetched, u64),
    run_bytes: u64,
) -> Option<(SubtaskReport, u64)> {
    let OfTask {
        task,
        graph,
        cancelled,
    } = *of;
    let s = run.subtask;
    let local = super::memory::local_inputs(&run.inputs, me);
    shared.storage.want(task, &local, false);
    let mut bytes_in = 0;
    if cancelled.take(s) {
        shared.storage.release_transit(transit);
        return None;
    }
    // A panic anywhere in fetching or computing is this subtask's error, never a lost report.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // Waits for room under `worker.memory_limit`; released after everything below.
        let lease = (shared.storage.begin(task, &local, run_bytes, transit))
            .map_err(|e| SubtaskError::Failed(e.to_string()))?;
        if cancelled.ended() {
            return Ok(Vec::new()); // ended while this waited for room: nothing to compute
        }
        // Remote inputs were fetched before the subtask came to the pool; the rest is here.
        for (c, _) in &run.inputs {
            if fetched.contains_key(c) {
                continue;
            }
            let d = shared
                .storage
                .get(task, *c)
                .ok_or_else(|| SubtaskError::Fetch(format!("chunk {c} is no longer here")))?;
            fetched.insert(*c, d);
        }
        // Members reading another task's result held here.
        for &m in graph.members.row(s.index()) {
            let idx = ChunkIdx(m);
            if let ares_core::ops::OpArgs::FetchChunk {
                task: src, chunk, ..
            } = graph.chunks.args_of(idx)
            {
                if fetched.contains_key(&idx) {
                    continue;
                }
                let d = shared.storage.get(*src, ChunkIdx(*chunk)).ok_or_else(|| {
                    SubtaskError::Failed(format!("result chunk {chunk} of {src} is no longer here"))
                })?;
                fetched.insert(idx, d);
            }
        }
        bytes_in = fetched.values().map(|d| d.nbytes() as u64).sum();
        let (members, outputs) = (graph.members.row(s.index()), graph.outputs.row(s.index()));
        if !shared.allow_code
            && members
                .iter()
                .any(|m| graph.chunks.node(ChunkIdx(*m)).op == ares_core::ops::Op::MapBlocks)
        {
            return Err(SubtaskError::Failed(CODE_REFUSED.to_string()));
        }
        let outputs = run_subtask(&graph.chunks, members, outputs, &fetched)
            .map_err(|e| SubtaskError::Failed(e.to_string()))?;
        Ok(outputs
            .into_iter()
            .map(|(c, d)| {
                let size = d.nbytes() as u64;
                lease.put(c, d);
                (c, size)
            })
            .collect::<Vec<(ChunkIdx, u64)>>())
    }))
    .unwrap_or_else(|panic| {
        Err(SubtaskError::Failed(format!(
            "panicked: {}",
            ares_core::prepare::panic_message(panic.as_ref())
        )))
    });
    if cancelled.ended() {
        // The task ended while this ran, perhaps after the worker removed its chunks: what
        // it stored would stay forever.
        if let Ok(outputs) = &outcome {
            let chunks: Vec<ChunkIdx> = outputs.iter().map(|(c, _)| *c).collect();
            shared.storage.remove(task, &chunks);
        }
        return None;
    }
    if cancelled.take(s) {
        return None;
    }
    let report = SubtaskReport {
        subtask: s,
        outcome,
    };
    Some((report, bytes_in))
}
