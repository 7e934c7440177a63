//! Projected memory of a subtask from the shapes and dtypes of its chunks, before it runs:
//! what the worker reserves for it ([`run_bytes`]), what the scheduler counts in flight per
//! worker, and the refusal at submission of a subtask that fits in no worker's limit
//! ([`check_fits`], as Cubed refuses at plan time: "projected memory > allowed ..., reduce
//! chunk=").

use ares_core::graph::ChunkGraph;
use ares_core::ids::ChunkIdx;

/// Bytes a chunk of this node's shape and dtype occupies. A shuffle piece has no node (its
/// size is known only once its mapper ran): it counts 0 here and its real bytes where it is
/// held.
pub fn chunk_bytes(chunks: &ChunkGraph, c: ChunkIdx) -> u64 {
    if ares_core::graph::shuffle::is_piece(c) {
        return 0;
    }
    chunks.shape(c).iter().product::<usize>() as u64 * chunks.node(c).dtype.itemsize() as u64
}

/// Kernel scratch of a node beyond its own output: for a FUSE node, the arrays its steps may
/// hold at once, two of the largest array a step reads or makes (a step writes a whole array
/// while reading the previous one). A step makes at most the largest of its inputs
/// (elementwise steps keep the size, reductions and slices shrink it), except creation and
/// source reads, which make their chunk, and joins (`assemble`, `concatenate`), which make
/// all the node's inputs together. I/O needs more: a sink's write holds the elements as bytes
/// and their encoding (two more), a source's read the stored bytes it decodes (one more).
/// A kernel without float32/int32 loops reads wide copies of such inputs (twice their bytes)
/// and makes a wide result before the cast back (one more).
pub(crate) fn scratch(chunks: &ChunkGraph, c: ChunkIdx) -> u64 {
    let input_bytes = || chunks.inputs(c).iter().map(|i| chunk_bytes(chunks, *i));
    let narrow = chunks
        .inputs(c)
        .iter()
        .filter(|i| !ares_core::graph::shuffle::is_piece(**i))
        .any(|i| chunks.node(*i).dtype.itemsize() == 4)
        || chunks.node(c).dtype.itemsize() == 4;
    let node = chunks.node(c);
    let input_dtypes = || -> Vec<ares_core::array::DType> {
        let real = chunks
            .inputs(c)
            .iter()
            .filter(|i| !ares_core::graph::shuffle::is_piece(**i));
        real.map(|i| chunks.node(*i).dtype).collect()
    };
    let elements =
        |shape: &[usize], itemsize: usize| shape.iter().product::<usize>() as u64 * itemsize as u64;
    let steps = match chunks.args_of(c) {
        ares_core::ops::OpArgs::Fuse(steps) => steps,
        ares_core::ops::OpArgs::Write { .. } => return 2 * input_bytes().max().unwrap_or(0),
        ares_core::ops::OpArgs::Read { .. } => return chunk_bytes(chunks, c),
        args if ares_core::kernels::widens(node.op, args, &input_dtypes()) => {
            return 2 * input_bytes().sum::<u64>() + 2 * chunk_bytes(chunks, c);
        }
        _ => return 0,
    };
    let (mut base, mut extra) = (input_bytes().max().unwrap_or(0), 0u64);
    for s in steps.iter() {
        let args = &chunks.args[s.args.index()];
        if narrow && !ares_core::kernels::has_narrow_loops(s.op, args) {
            extra = extra.max(1);
        }
        match args {
            ares_core::ops::OpArgs::Fill { shape, .. } => base = base.max(elements(shape, 8)),
            ares_core::ops::OpArgs::Read { data, shape, .. } => {
                base = base.max(elements(shape, data.dtype.itemsize()));
                extra = extra.max(1);
            }
            ares_core::ops::OpArgs::Assemble { .. } | ares_core::ops::OpArgs::Concat { .. } => {
                base = base.max(input_bytes().sum());
            }
            ares_core::ops::OpArgs::Write { .. } => extra = 2,
            _ => {}
        }
    }
    (2 + extra) * base
}

/// Whether a node only moves elements into its output, allocated once: a slice copies the
/// region, an assemble places its blocks (`kernels::indexing::assemble`). Neither holds a
/// temporary beside its inputs and output.
fn moves_in_place(chunks: &ChunkGraph, c: ChunkIdx) -> bool {
    matches!(
        chunks.args_of(c),
        ares_core::ops::OpArgs::Slice(_) | ares_core::ops::OpArgs::Assemble { .. }
    )
}

/// A subtask's projected peak: its external inputs, every chunk it computes (the executor
/// keeps them all until it ends), and the largest of one more of its largest chunk and any
/// member's kernel [`scratch`] (fused chains' intermediates, I/O buffers). The spare chunk
/// is a kernel's temporary, so members that only move elements (`moves_in_place`) add none: a
/// rechunk's assemble projects its blocks and itself (2x its size), its slices their source
/// and themselves.
pub fn projected_bytes(
    chunks: &ChunkGraph,
    members: &[u32],
    inputs: impl IntoIterator<Item = ChunkIdx>,
) -> u64 {
    let (mut sum, mut max) = (0u64, 0u64);
    for m in members {
        let c = ChunkIdx(*m);
        let b = chunk_bytes(chunks, c);
        sum += b;
        let spare = if moves_in_place(chunks, c) { 0 } else { b };
        max = max.max(spare).max(scratch(chunks, c));
    }
    let inputs: u64 = inputs.into_iter().map(|c| chunk_bytes(chunks, c)).sum();
    sum + max + inputs
}

/// The inputs of a subtask that are on this worker.
pub fn local_inputs(
    inputs: &[(ChunkIdx, ares_core::ids::WorkerId)],
    me: ares_core::ids::WorkerId,
) -> Vec<ChunkIdx> {
    inputs
        .iter()
        .filter(|(_, w)| *w == me)
        .map(|(c, _)| *c)
        .collect()
}

/// What a subtask reserves on the worker running it: its projection less the local inputs,
/// which are counted where they are held (a spilled one is added when it is admitted).
pub fn run_bytes(
    graph: &ares_core::graph::WorkerGraph,
    run: &crate::protocol::RunSubtask,
    me: ares_core::ids::WorkerId,
) -> u64 {
    let remote = run.inputs.iter().filter(|(_, w)| *w != me).map(|(c, _)| *c);
    projected_bytes(
        &graph.chunks,
        graph.members.row(run.subtask.index()),
        remote,
    )
}

/// A subtask whose projected memory fits in no worker's limit.
#[derive(Clone, Debug, thiserror::Error)]
#[error("projected memory {} > allowed {} (worker.memory_limit) for subtask {subtask} ({members} chunks{largest}), reduce chunk=", human(*.projected), human(*.allowed))]
pub struct DoesNotFit {
    pub projected: u64,
    pub allowed: u64,
    pub subtask: ares_core::ids::SubtaskId,
    pub members: usize,
    /// ", largest chunk (SHAPE) of OP", or nothing.
    pub largest: String,
}

/// Refuses a prepared task with a subtask whose projection fits in no worker's limit
/// (`limits`: one per worker, 0 = none; no worker yet = no refusal).
pub fn check_fits(
    graph: &ares_core::graph::SubtaskGraph,
    limits: &[u64],
) -> Result<(), DoesNotFit> {
    if limits.is_empty() || limits.contains(&0) {
        return Ok(());
    }
    let allowed = limits.iter().copied().max().unwrap_or(0);
    for (s, subtask) in graph.subtasks.iter().enumerate() {
        let members = graph.members.row(s);
        let inputs = graph.inputs.row(s).iter().map(|c| ChunkIdx(*c));
        let projected = projected_bytes(&graph.chunks, members, inputs);
        if projected > allowed {
            let largest = members
                .iter()
                .map(|m| ChunkIdx(*m))
                .max_by_key(|m| chunk_bytes(&graph.chunks, *m))
                .map(|m| {
                    let n = graph.chunks.node(m);
                    let shape = ares_core::array::fmt_shape(graph.chunks.shape(m));
                    format!(", largest chunk {shape} of {}", n.op.name())
                })
                .unwrap_or_default();
            return Err(DoesNotFit {
                projected,
                allowed,
                subtask: subtask.id,
                members: members.len(),
                largest,
            });
        }
    }
    Ok(())
}

/// The memory budget preparation groups chunks by (`TaskConfig::memory_budget`): the
/// smallest worker limit set, so a subtask grouped within it fits on any worker; 0 (none)
/// when no worker has one.
pub fn budget(limits: &[u64]) -> u64 {
    limits.iter().copied().filter(|l| *l > 0).min().unwrap_or(0)
}

/// "1.2 GiB"-style sizes for messages.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let (mut value, mut unit) = (bytes as f64, 0);
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    let text = format!("{value:.1}");
    format!("{} {}", text.trim_end_matches(".0"), UNITS[unit])
}

#[cfg(test)]
#[test]
fn sizes_read_like_cubed() {
    assert_eq!(human(1288490189), "1.2 GiB");
    assert_eq!(human((128 << 20) + 16), "128 MiB");
    assert_eq!(human(512), "512 B");
}
