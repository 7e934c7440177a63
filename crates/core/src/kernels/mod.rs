//! Kernels: compute one chunk from its inputs with ndarray.
//!
//! [`compute_chunk`] is the single entry point the executors call. Kernels return errors
//! (naming the op and the chunk) instead of panicking; the executor also catches panics so a
//! bug in a kernel fails the task, never the process. A FUSE node runs its steps in order,
//! and runs of elementwise steps with an optional trailing reduction go through the block
//! evaluator in [`fused`]: one pass over the data, no intermediate arrays.
//!
//! float32 and int32 have loops of their own where they pay: elementwise ops, the fused
//! evaluator (which also streams `sum`/`prod`/`min`/`max` of a float32 chunk), matmul, data
//! movement and file I/O. The other kernels (int32 reductions, scans, statistics, sorting
//! and the shuffle ops) compute in the 8-byte dtype of the same kind
//! ([`ArrayData::widen`]: exact for these two types) and [`compute_chunk`] casts their result
//! back to the chunk's declared dtype, so `max` of an int32 chunk is int32 and `sum` of a
//! float32 chunk, accumulated in float64, is float32 (more accurate than NumPy's float32
//! pairwise sum, never less).

pub mod fused;
mod lanes;
use crate::ops::family::manipulation::{kernels as indexing, regrid};
use crate::ops::family::shuffle::kernels as shuffle;
use crate::ops::family::shuffle::select::kernels as select;

use crate::array::{ArrayData, DType};
use crate::error::{AresError, Result};
use crate::graph::ChunkGraph;
use crate::ids::ChunkIdx;
use crate::ops::family::creation::{generate, kernels as creation};
use crate::ops::family::elementwise::kernels as elementwise;
use crate::ops::family::reduction::{argreduce, kernels as reduction, moments};
use crate::ops::{Family, MapKind, Op, OpArgs, ReduceKind};
use std::sync::Arc;

/// A kernel failure before the chunk is known; [`compute_chunk`] adds the chunk.
#[derive(Debug)]
pub struct KernelError(pub String);

pub type KResult<T> = std::result::Result<T, KernelError>;

/// Whether a creation step's values can be generated block by block inside a FUSE node
/// (uniform and normal random, float and bool constants, float ranges).
pub fn streams(fill: &crate::ops::Fill) -> bool {
    generate::Stream::new(fill).is_some()
}

pub fn kerr<T>(msg: impl Into<String>) -> KResult<T> {
    Err(KernelError(msg.into()))
}

/// Computes chunk `idx` of `graph` from the data of its inputs (in input order).
pub fn compute_chunk(
    graph: &ChunkGraph,
    idx: ChunkIdx,
    inputs: &[&ArrayData],
) -> Result<ArrayData> {
    let node = graph.node(idx);
    let args = graph.args[node.args.index()].at(node.key.index);
    if is_user_call(graph, idx) {
        // Callers holding shared blocks use `compute_user_chunk` (no copy); these are copied.
        let shared: Vec<Arc<ArrayData>> = inputs.iter().map(|a| Arc::new((*a).clone())).collect();
        return compute_user_chunk(graph, idx, &shared);
    }
    apply(node.op, &args, &graph.args, inputs)
        .map(|out| narrow_to(out, node.dtype))
        .map_err(|e| AresError::Kernel {
            op: node.op.name(),
            chunk: node.key.to_string(),
            detail: e.0,
        })
}

/// Whether chunk `idx` is a block of a user function (`map_blocks` & co.), which
/// [`compute_user_chunk`] computes from shared blocks.
pub fn is_user_call(graph: &ChunkGraph, idx: ChunkIdx) -> bool {
    graph.node(idx).op.family() == Family::UserCode
}

/// Computes chunk `idx`, a block of a user function, from its inputs as the store holds them
/// (shared: the runner lends them to the function without copying them).
pub fn compute_user_chunk(
    graph: &ChunkGraph,
    idx: ChunkIdx,
    inputs: &[Arc<ArrayData>],
) -> Result<ArrayData> {
    let node = graph.node(idx);
    let args = graph.args[node.args.index()].at(node.key.index);
    let OpArgs::MapBlocks(call) = args.as_ref() else {
        return Err(AresError::Kernel {
            op: node.op.name(),
            chunk: node.key.to_string(),
            detail: "a user-code chunk without its function".into(),
        });
    };
    crate::ops::family::python_call::runner::run_block(
        call,
        node.key.index,
        graph.shape(idx),
        node.dtype,
        inputs,
    )
    .map_err(|e| AresError::Kernel {
        op: node.op.name(),
        chunk: node.key.to_string(),
        detail: e.0,
    })
}

/// A result a kernel computed in the wide dtype, cast back to the chunk's narrower dtype (or
/// an integer one computed in int64 cast to its integer dtype: sums of unsigned integers
/// are uint64, whose wrapping sum has int64's bits).
fn narrow_to(out: ArrayData, declared: DType) -> ArrayData {
    let int64_for_int = out.dtype() == DType::I64 && declared.is_int();
    if out.dtype() != declared && (out.dtype() == declared.wide() || int64_for_int) {
        out.cast(declared)
    } else {
        out
    }
}

/// Whether `op` on inputs of `dtypes` reads wide copies of them (the worker counts those as
/// scratch): some input is float32/int32 and the kernel has no loop for it.
pub fn widens(op: Op, args: &OpArgs, dtypes: &[DType]) -> bool {
    dtypes.iter().any(|d| *d != d.wide())
        && !streams_float32(op, args, dtypes)
        && !has_narrow_loops(op, args)
}

/// A fold of the reduction table over one float32 chunk: streamed by
/// [`fused::reduce_float32`].
fn streams_float32(op: Op, args: &OpArgs, dtypes: &[DType]) -> bool {
    matches!(args, OpArgs::Reduce { .. })
        && dtypes == [DType::F32]
        && crate::ops::family::reduction::fold(op).is_some()
}

/// Whether `op` has float32/int32 loops of its own (else its inputs are widened first).
pub fn has_narrow_loops(op: Op, args: &OpArgs) -> bool {
    match op.family() {
        Family::Creation
        | Family::Unary
        | Family::Binary
        | Family::Ternary
        | Family::Linalg
        | Family::Fft
        | Family::Fuse
        | Family::Io
        | Family::UserCode
        | Family::Fetch => true,
        _ => matches!(
            args,
            OpArgs::Slice(_)
                | OpArgs::Transpose(_)
                | OpArgs::Reshape(_)
                | OpArgs::Assemble { .. }
                | OpArgs::ShuffleReduce {
                    kind: ReduceKind::RechunkPlace { .. },
                    ..
                }
        ),
    }
}

/// Computes mapper `idx`: its pieces (one per reducer) and its chunk (their lengths).
pub fn map_pieces(
    graph: &ChunkGraph,
    idx: ChunkIdx,
    inputs: &[&ArrayData],
) -> Result<(ArrayData, Vec<ArrayData>)> {
    let node = graph.node(idx);
    let err = |e: KernelError| AresError::Kernel {
        op: node.op.name(),
        chunk: node.key.to_string(),
        detail: e.0,
    };
    match graph.args_of(idx) {
        OpArgs::ShuffleMap {
            kind,
            ordinal,
            reducers,
            ..
        } => match (kind, inputs) {
            (MapKind::RechunkSplit { source, target }, [x]) => {
                let pieces = regrid::split(&graph.args, *source, *target, *ordinal, *reducers, x)
                    .map_err(err)?;
                let n: Vec<i64> = pieces.iter().map(|a| a.len() as i64).collect();
                let lengths = ndarray::ArrayD::from_shape_vec(vec![n.len()], n).expect("1-D");
                Ok((ArrayData::I64(lengths), pieces))
            }
            _ => {
                let wide: Vec<_> = inputs.iter().map(|a| a.widen()).collect();
                let wide: Vec<&ArrayData> = wide.iter().map(|a| a.as_ref()).collect();
                shuffle::map(kind, *reducers, *ordinal, &wide).map_err(err)
            }
        },
        other => Err(err(KernelError(format!("not a mapper: {other:?}")))),
    }
}

/// Applies one op; `table` resolves the argument indices of FUSE steps.
pub fn apply(op: Op, args: &OpArgs, table: &[OpArgs], inputs: &[&ArrayData]) -> KResult<ArrayData> {
    let dtypes: smallvec::SmallVec<[DType; 3]> = inputs.iter().map(|a| a.dtype()).collect();
    if let (OpArgs::Reduce { axes, keepdims }, [x]) = (args, inputs) {
        if streams_float32(op, args, &dtypes) {
            return fused::reduce_float32(op, axes, *keepdims, x);
        }
    }
    if widens(op, args, &dtypes) {
        let wide: Vec<_> = inputs.iter().map(|a| a.widen()).collect();
        let wide: Vec<&ArrayData> = wide.iter().map(|a| a.as_ref()).collect();
        return apply_native(op, args, table, &wide);
    }
    apply_native(op, args, table, inputs)
}

fn apply_native(
    op: Op,
    args: &OpArgs,
    table: &[OpArgs],
    inputs: &[&ArrayData],
) -> KResult<ArrayData> {
    match (op.family(), args) {
        (Family::Creation, OpArgs::Fill { fill, shape }) => creation::fill(fill, shape),
        (Family::Unary, _) => elementwise::unary(op, args, one(inputs)?),
        (
            _,
            OpArgs::Arg {
                op: which,
                axis,
                offset,
                ..
            },
        ) if matches!(op, Op::ArgMin | Op::ArgMax) => {
            argreduce::map(*which, one(inputs)?, *axis, *offset)
        }
        (_, OpArgs::Arg { op: which, .. }) if op == Op::ArgCombine => {
            argreduce::combine(*which, inputs)
        }
        (_, OpArgs::Arg { axis, keepdims, .. }) if op == Op::ArgIndex => {
            argreduce::index(one(inputs)?, *axis, *keepdims)
        }
        (Family::Scan, OpArgs::Scan { axis }) => reduction::scan(op, one(inputs)?, *axis),
        (Family::Ternary, _) => match inputs {
            [c, x, y] => elementwise::select(c, x, y),
            _ => kerr(format!("expects 3 inputs, got {}", inputs.len())),
        },
        (Family::Binary, OpArgs::Scalar { value, scalar_left }) => {
            elementwise::binary_scalar(op, one(inputs)?, *value, *scalar_left)
        }
        (Family::Binary, _) => match inputs {
            [a, b] => elementwise::binary(op, a, b),
            _ => kerr(format!("expects 2 inputs, got {}", inputs.len())),
        },
        (_, OpArgs::Moments { axes, .. }) if op == Op::Moments => moments::map(one(inputs)?, axes),
        (
            _,
            OpArgs::Moments {
                axes,
                keepdims,
                ddof,
            },
        ) if op == Op::MomentsVar => moments::variance(one(inputs)?, axes, *keepdims, *ddof),
        _ if op == Op::MomentsCombine => moments::combine(inputs),
        (Family::Reduction, OpArgs::Reduce { axes, keepdims }) => {
            reduction::reduce(op, one(inputs)?, axes, *keepdims)
        }
        (
            Family::Combine,
            OpArgs::Combine {
                op: inner,
                axes,
                keepdims,
            },
        ) => reduction::combine(*inner, inputs, axes, *keepdims),
        (Family::Combine, _) => reduction::combine(Op::Sum, inputs, &[], true),
        (Family::Fft, OpArgs::Fft(spec)) => {
            crate::ops::family::fft::kernels::apply(spec, one(inputs)?)
        }
        (Family::Linalg, OpArgs::Generated(operand)) => {
            crate::ops::family::linalg::apply_generated(op, operand, one(inputs)?)
        }
        (Family::Linalg, _) if op != Op::Matmul => {
            crate::ops::family::linalg::apply(op, args, inputs)
        }
        (Family::Linalg, _) => match inputs {
            [a, b] => crate::ops::family::linalg::kernels::matmul(a, b),
            _ => kerr(format!("expects 2 inputs, got {}", inputs.len())),
        },
        (_, OpArgs::Slice(dims)) => indexing::slice(one(inputs)?, dims),
        (_, OpArgs::Transpose(perm)) => indexing::transpose(one(inputs)?, perm),
        (_, OpArgs::Reshape(shape)) => indexing::reshape(one(inputs)?, shape),
        (_, OpArgs::Assemble { grid }) => indexing::assemble(inputs, grid),
        (Family::Fuse, OpArgs::Fuse(steps)) => fused::run_fused(steps, table, inputs),
        (Family::Fetch, _) => kerr("fetch chunks are read by the worker, not computed"),
        (
            Family::Io,
            OpArgs::Read {
                data,
                offset,
                shape,
            },
        ) => crate::io::read_chunk(data, offset, shape).map_err(|e| KernelError(e.to_string())),
        (
            Family::Io,
            OpArgs::Write {
                data,
                offset,
                index,
            },
        ) => {
            let n = crate::io::write_chunk(data, offset, index, one(inputs)?)
                .map_err(|e| KernelError(e.to_string()))?;
            let ones = vec![1; data.shape.len()];
            Ok(ArrayData::I64(ndarray::ArrayD::from_elem(ones, n as i64)))
        }
        (Family::Io, OpArgs::Commit { data, partial }) => {
            crate::io::commit_sink(data, partial).map_err(|e| KernelError(e.to_string()))?;
            Ok(one(inputs)?.clone())
        }
        // Shuffle (issue 11): mappers and reducers go through the executor's shuffle path.
        (
            _,
            OpArgs::Sort {
                arg,
                axis,
                descending,
            },
        ) => crate::ops::family::shuffle::lanes::sort_axis(
            one(inputs)?,
            *axis as usize,
            *arg,
            *descending,
        ),
        // Any values of the chunk make valid splitters; a sorted strided subsample makes
        // balanced ones without sorting the chunk.
        (_, OpArgs::SortSample { count } | OpArgs::StridedSample { count }) => {
            select::strided_sample(one(inputs)?, *count)
        }
        (_, OpArgs::SortSplitters { parts }) => shuffle::splitters(inputs, *parts),
        (
            _,
            OpArgs::ShuffleReduce {
                kind: ReduceKind::RechunkPlace { source, target },
                index,
            },
        ) => regrid::place(table, *source, *target, *index, inputs),
        (_, OpArgs::ShuffleReduce { kind, .. }) => shuffle::reduce(kind, inputs),
        (_, OpArgs::UniquePick { counts, dtype }) => select::pick(one(inputs)?, *counts, *dtype),
        (_, OpArgs::MaskSelect) if op == Op::MaskSelect => match inputs {
            [x, mask] => select::mask_select(x, mask),
            _ => kerr(format!("expects 2 inputs, got {}", inputs.len())),
        },
        (_, OpArgs::SearchSorted { right }) => match inputs {
            [a, v] => select::searchsorted(a, v, *right),
            _ => kerr(format!("expects 2 inputs, got {}", inputs.len())),
        },
        (_, OpArgs::SelectStep(step)) => {
            crate::ops::family::statistics::select::kernels::apply(step, inputs)
        }
        (_, OpArgs::ShuffleProxy { .. }) => {
            Ok(ArrayData::I64(ndarray::ArrayD::zeros(ndarray::IxDyn(&[0]))))
        }
        _ => kerr(format!("no kernel for {op} with arguments {args:?}")),
    }
}

/// A float32 or int32 input reached a kernel that computes in the wide dtype: [`apply`]
/// widens the inputs of such kernels, so this is a bug, reported as an error.
pub(crate) fn not_widened<T>(d: crate::array::DType) -> KResult<T> {
    kerr(format!(
        "internal: a {d} input reached a kernel that computes in {}",
        d.wide()
    ))
}

fn one<'a>(inputs: &[&'a ArrayData]) -> KResult<&'a ArrayData> {
    match inputs {
        [a] => Ok(a),
        _ => kerr(format!("expects 1 input, got {}", inputs.len())),
    }
}
