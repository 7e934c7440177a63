//! The local executor: runs a subtask graph in this process and assembles the results.
//!
//! `slots` threads take ready subtasks from one priority queue, deepest first (as the
//! scheduler does: finishing deep work frees intermediate data early), compute their chunks
//! with the kernels, and keep only the chunks other subtasks or the results need. Every kept
//! chunk carries a reference count (one per consumer subtask, one per result slot) and is
//! dropped when it reaches zero, so peak memory follows chunk size × slots, not array size.
//! A kernel panic is caught and reported as an error naming the chunk.

use crate::array::{ArrayData, DType};
use crate::error::{AresError, Result};
use crate::graph::{shuffle, ChunkGraph, ResultTensor, SubtaskGraph};
use crate::ids::ChunkIdx;
use crate::kernels::compute_chunk;
use crate::prepare::tile::Odometer;
use ndarray::{ArrayD, IxDyn, Slice};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};

/// What an execution did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ExecStats {
    pub subtasks: usize,
    pub chunks_computed: usize,
    /// Largest total size of chunks held between subtasks at any time.
    pub peak_bytes: usize,
}

struct State {
    ready: BinaryHeap<(u32, Reverse<u32>)>,
    waiting_on: Vec<u32>,
    store: Vec<Option<Arc<ArrayData>>>,
    /// Shuffle pieces by key, until their reducer takes them.
    pieces: FxHashMap<ChunkIdx, Arc<ArrayData>>,
    refs: Vec<u32>,
    finished: usize,
    error: Option<AresError>,
    live_bytes: usize,
    stats: ExecStats,
}

/// Computes the chunks of one subtask from its fetched inputs; returns its kept outputs.
pub fn run_subtask(
    chunks: &ChunkGraph,
    members: &[u32],
    outputs: &[u32],
    fetched: &FxHashMap<ChunkIdx, Arc<ArrayData>>,
) -> Result<Vec<(ChunkIdx, Arc<ArrayData>)>> {
    let mut local: FxHashMap<ChunkIdx, Arc<ArrayData>> = FxHashMap::default();
    let mut pieces_out: Vec<(ChunkIdx, Arc<ArrayData>)> = Vec::new();
    for &c in members {
        let idx = ChunkIdx(c);
        if chunks.node(idx).op == crate::ops::Op::Fetch {
            // Another task's result: the worker put it in `fetched` before running.
            let data = fetched.get(&idx).cloned().ok_or_else(|| {
                AresError::prepare(
                    "execute",
                    format!(
                        "fetch chunk {} was not resolved (fetching results needs a cluster)",
                        chunks.node(idx).key
                    ),
                )
            })?;
            local.insert(idx, data);
            continue;
        }
        // A reducer reads its pieces, fetched under their own keys, instead of the proxy.
        let input_keys: Vec<ChunkIdx> = match shuffle::reducer_index(chunks, idx) {
            Some(r) => chunks
                .inputs(idx)
                .iter()
                .flat_map(|p| shuffle::reducer_pieces(chunks, *p, r).map(|(k, _)| k))
                .collect(),
            None => chunks.inputs(idx).to_vec(),
        };
        let inputs: Vec<&ArrayData> = input_keys
            .iter()
            .map(|i| local.get(i).or_else(|| fetched.get(i)).map(|a| a.as_ref()))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                AresError::prepare(
                    "execute",
                    format!("an input of {} is missing", chunks.node(idx).key),
                )
            })?;
        if chunks.node(idx).op == crate::ops::Op::ShuffleMap {
            // A mapper keeps its pieces as outputs of their own; its chunk holds their lengths.
            let (lengths, pieces) = catch_unwind(AssertUnwindSafe(|| {
                crate::kernels::map_pieces(chunks, idx, &inputs)
            }))
            .unwrap_or_else(|panic| {
                Err(AresError::Kernel {
                    op: "shuffle_map",
                    chunk: chunks.node(idx).key.to_string(),
                    detail: format!(
                        "panicked: {}",
                        crate::prepare::panic_message(panic.as_ref())
                    ),
                })
            })?;
            let keys = shuffle::mapper_pieces(chunks, idx);
            pieces_out.extend(keys.zip(pieces.into_iter().map(Arc::new)));
            local.insert(idx, Arc::new(lengths));
            continue;
        }
        let compute = || {
            if crate::kernels::is_user_call(chunks, idx) {
                // A user function's blocks are lent to it as they are stored (no copy).
                let shared: Vec<Arc<ArrayData>> = input_keys
                    .iter()
                    .filter_map(|i| local.get(i).or_else(|| fetched.get(i)).cloned())
                    .collect();
                crate::kernels::compute_user_chunk(chunks, idx, &shared)
            } else {
                compute_chunk(chunks, idx, &inputs)
            }
        };
        let out = catch_unwind(AssertUnwindSafe(compute)).unwrap_or_else(|panic| {
            let msg = crate::prepare::panic_message(panic.as_ref());
            Err(AresError::Kernel {
                op: chunks.node(idx).op.name(),
                chunk: chunks.node(idx).key.to_string(),
                detail: format!("panicked: {msg}"),
            })
        })?;
        local.insert(idx, Arc::new(out));
    }
    let mut out: Vec<(ChunkIdx, Arc<ArrayData>)> = outputs
        .iter()
        .map(|c| (ChunkIdx(*c), local[&ChunkIdx(*c)].clone()))
        .collect();
    out.extend(pieces_out);
    Ok(out)
}

/// The values of `outputs`, prepared under `config` for one worker of `slots` slots and run
/// here: the whole pipeline in one call (`ares run --local` without its timings, and the
/// tests' way through it).
pub fn compute(
    outputs: &[&crate::tensor::Tensor],
    config: &crate::config::TaskConfig,
    slots: usize,
) -> Result<Vec<ArrayData>> {
    let graph = crate::tensor::Tensor::graph(outputs);
    let cluster = crate::prepare::uniform_cluster(1, slots);
    let prepared = crate::prepare::prepare(&graph, config, &cluster, crate::ids::TaskId(1))?;
    Ok(execute(&prepared.subtasks, slots)?.0)
}

/// Runs every subtask on `slots` threads and returns the result tensors.
pub fn execute(graph: &SubtaskGraph, slots: usize) -> Result<(Vec<ArrayData>, ExecStats)> {
    let n_chunks = graph.chunks.len();
    let refs = graph.chunk_references();
    let waiting_on: Vec<u32> = (0..graph.len())
        .map(|s| graph.preds.row(s).len() as u32)
        .collect();
    let ready = graph
        .initial()
        .map(|s| (graph.subtasks[s.index()].depth, Reverse(s.0)))
        .collect();
    let state = Mutex::new(State {
        ready,
        waiting_on,
        store: vec![None; n_chunks],
        pieces: FxHashMap::default(),
        refs,
        finished: 0,
        error: None,
        live_bytes: 0,
        stats: ExecStats {
            subtasks: graph.len(),
            ..ExecStats::default()
        },
    });
    let wake = Condvar::new();
    std::thread::scope(|scope| {
        for _ in 0..slots.max(1) {
            scope.spawn(|| slot_loop(graph, &state, &wake));
        }
    });
    let state = state
        .into_inner()
        .map_err(|_| AresError::prepare("execute", "executor state poisoned"))?;
    if let Some(e) = state.error {
        return Err(e);
    }
    let results = graph
        .chunks
        .results
        .iter()
        .map(|r| assemble(&graph.chunks, r, &state.store))
        .collect::<Result<Vec<_>>>()?;
    Ok((results, state.stats))
}

fn slot_loop(graph: &SubtaskGraph, state: &Mutex<State>, wake: &Condvar) {
    loop {
        let (s, fetched) = {
            let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                if st.error.is_some() || st.finished == graph.len() {
                    return;
                }
                if let Some((_, Reverse(s))) = st.ready.pop() {
                    let mut fetched: FxHashMap<ChunkIdx, Arc<ArrayData>> = graph
                        .inputs
                        .row(s as usize)
                        .iter()
                        .filter_map(|c| st.store[*c as usize].clone().map(|a| (ChunkIdx(*c), a)))
                        .collect();
                    // A reducer's pieces, each read once: taken out of the piece store.
                    let members = graph.members.row(s as usize);
                    for &c in graph.inputs.row(s as usize) {
                        let c = ChunkIdx(c);
                        let Some(r) = shuffle::reducer_of(&graph.chunks, members, c) else {
                            continue;
                        };
                        for (key, _) in shuffle::reducer_pieces(&graph.chunks, c, r) {
                            if let Some(d) = st.pieces.remove(&key) {
                                st.live_bytes -= d.nbytes();
                                fetched.insert(key, d);
                            }
                        }
                    }
                    break (s as usize, fetched);
                }
                st = wake.wait(st).unwrap_or_else(|p| p.into_inner());
            }
        };
        let outcome = run_subtask(
            &graph.chunks,
            graph.members.row(s),
            graph.outputs.row(s),
            &fetched,
        );
        drop(fetched);
        let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
        match outcome {
            Err(e) => {
                st.error.get_or_insert(e);
            }
            Ok(outputs) => {
                st.stats.chunks_computed += graph.members.row(s).len();
                for (c, data) in outputs {
                    st.live_bytes += data.nbytes();
                    if shuffle::is_piece(c) {
                        st.pieces.insert(c, data);
                    } else {
                        st.store[c.index()] = Some(data);
                    }
                }
                st.stats.peak_bytes = st.stats.peak_bytes.max(st.live_bytes);
                for &c in graph.inputs.row(s) {
                    st.refs[c as usize] -= 1;
                    if st.refs[c as usize] == 0 {
                        if let Some(d) = st.store[c as usize].take() {
                            st.live_bytes -= d.nbytes();
                        }
                    }
                }
                for &t in graph.succs.row(s) {
                    st.waiting_on[t as usize] -= 1;
                    if st.waiting_on[t as usize] == 0 {
                        let depth = graph.subtasks[t as usize].depth;
                        st.ready.push((depth, Reverse(t)));
                    }
                }
                st.finished += 1;
            }
        }
        wake.notify_all();
    }
}

/// Places each chunk of a result at its offset in a full array.
pub fn assemble(
    chunks: &ChunkGraph,
    result: &ResultTensor,
    store: &[Option<Arc<ArrayData>>],
) -> Result<ArrayData> {
    let get = |c: ChunkIdx| {
        store[c.index()].as_deref().ok_or_else(|| {
            AresError::prepare(
                "execute",
                format!("result chunk {} was not computed", chunks.node(c).key),
            )
        })
    };
    if result.chunks.len() == 1 {
        return Ok(get(result.chunks[0])?.clone());
    }
    if result.shape.len() == 1 {
        // Concatenated as they are: a 1-D result may have a length known only now
        // (`unique`, `x[mask]`; see `crate::ops::family::shuffle::select`).
        let parts = result
            .chunks
            .iter()
            .map(|c| get(*c))
            .collect::<Result<Vec<_>>>()?;
        return crate::ops::family::shuffle::kernels::reduce(
            &crate::ops::ReduceKind::Concat { arg: false },
            &parts,
        )
        .map_err(|e| AresError::prepare("execute", format!("result chunks: {}", e.0)));
    }
    let offsets: Vec<Vec<usize>> = result
        .splits
        .iter()
        .map(|s| crate::prepare::tile::offsets(s))
        .collect();
    let grid: Vec<usize> = result.splits.iter().map(|s| s.len()).collect();
    macro_rules! fill {
        ($variant:ident, $zero:expr) => {{
            let mut out = ArrayD::from_elem(IxDyn(&result.shape), $zero);
            let mut k = 0;
            let mut err = None;
            Odometer::for_each(&grid, |idx| {
                match get(result.chunks[k]) {
                    Ok(ArrayData::$variant(part)) => {
                        let mut view = out.slice_each_axis_mut(|ax| {
                            let d = ax.axis.index();
                            Slice::from(offsets[d][idx[d]]..offsets[d][idx[d] + 1])
                        });
                        view.assign(part);
                    }
                    Ok(other) => {
                        err = Some(AresError::prepare(
                            "execute",
                            format!("result chunk of dtype {}", other.dtype()),
                        ))
                    }
                    Err(e) => err = Some(e),
                }
                k += 1;
            });
            if let Some(e) = err {
                return Err(e);
            }
            ArrayData::$variant(out)
        }};
    }
    Ok(match result.dtype {
        DType::F64 => fill!(F64, 0.0),
        DType::I64 => fill!(I64, 0),
        DType::Bool => fill!(Bool, false),
        DType::F32 => fill!(F32, 0.0),
        DType::I32 => fill!(I32, 0),
        DType::I16 => fill!(I16, 0),
        DType::I8 => fill!(I8, 0),
        DType::U64 => fill!(U64, 0),
        DType::U32 => fill!(U32, 0),
        DType::U16 => fill!(U16, 0),
        DType::U8 => fill!(U8, 0),
        DType::C64 => fill!(C64, crate::array::Complex32::new(0.0, 0.0)),
        DType::C128 => fill!(C128, crate::array::Complex64::new(0.0, 0.0)),
    })
}
