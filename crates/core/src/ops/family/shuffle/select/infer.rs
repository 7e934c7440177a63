//! Shape and dtype inference of the shuffle-based operations (issue 11): the shuffle bench,
//! `sort`, and the data-dependent lengths and lookups of `tensor::select`, where a length
//! that depends on the data is given as its upper bound. Split from `infer` so each stays
//! readable; `infer` falls through to [`infer_data_dependent`] for every op it does not know.

use crate::array::{fmt_shape, DType, Shape};
use crate::error::{AresError, Result};
use crate::ops::infer::{arity, MAX_ELEMENTS};
use crate::ops::{Op, OpArgs};
use smallvec::smallvec;

/// Shape and dtype of a shuffle-based `op(args)`; an error naming the op for arguments that
/// fit no operation.
pub fn infer_data_dependent(
    op: Op,
    args: &OpArgs,
    inputs: &[(&Shape, DType)],
) -> Result<(Shape, DType)> {
    let name = op.name();
    let out = match (op.family(), args) {
        (
            _,
            OpArgs::ShuffleBench {
                in_parts,
                out_parts,
                rows,
            },
        ) if op == Op::ShuffleBench => {
            arity(op, inputs.len(), 0)?;
            if *in_parts == 0 || *out_parts == 0 {
                return Err(AresError::arg(
                    name,
                    "in_parts and out_parts must be positive",
                ));
            }
            let total = (*in_parts as u128) * (*rows as u128);
            if total > MAX_ELEMENTS {
                return Err(AresError::arg(
                    name,
                    format!("{in_parts} × {rows} rows exceed the limit of 2^48 elements"),
                ));
            }
            (smallvec![*out_parts as usize, 3], DType::I64)
        }
        (
            _,
            OpArgs::Sort {
                arg,
                axis,
                descending,
            },
        ) if op == Op::Sort => {
            arity(op, inputs.len(), 1)?;
            let nd = inputs[0].0.len();
            if nd == 0 {
                return Err(AresError::arg(
                    name,
                    "cannot sort a 0-d tensor (axis -1 is out of bounds)",
                ));
            }
            if *axis as usize >= nd {
                return Err(AresError::arg(
                    name,
                    format!("axis {axis} is out of bounds for array of dimension {nd}"),
                ));
            }
            if *descending && nd == 1 {
                // PSRS sorts ascending; `Tensor::sort_along` reverses a descending 1-D sort.
                return Err(AresError::arg(
                    name,
                    "a descending sort of a 1-D tensor is built by Tensor::sort_along",
                ));
            }
            let dtype = if *arg { DType::I64 } else { inputs[0].1 };
            (inputs[0].0.clone(), dtype)
        }
        // Data-dependent lengths and lookups (`tensor::select`): a data-dependent length is
        // given as its upper bound.
        (_, OpArgs::Unique { counts }) if op == Op::Unique => {
            arity(op, inputs.len(), 1)?;
            let n: usize = inputs[0].0.iter().product();
            if *counts {
                (smallvec![2 * n], DType::I64)
            } else {
                (smallvec![n], inputs[0].1)
            }
        }
        (_, OpArgs::UniquePick { counts, dtype }) if op == Op::UniquePick => {
            arity(op, inputs.len(), 1)?;
            let n = inputs[0].0.first().copied().unwrap_or(0) / 2;
            (smallvec![n], if *counts { DType::I64 } else { *dtype })
        }
        (_, OpArgs::MaskSelect) if op == Op::MaskSelect => {
            arity(op, inputs.len(), 2)?;
            if inputs[1].1 != DType::Bool || inputs[0].0 != inputs[1].0 {
                return Err(AresError::shape(
                    name,
                    format!(
                        "boolean index of shape {} and dtype {} does not match the indexed \
                         array's shape {}",
                        fmt_shape(inputs[1].0),
                        inputs[1].1,
                        fmt_shape(inputs[0].0)
                    ),
                ));
            }
            (smallvec![inputs[0].0.iter().product()], inputs[0].1)
        }
        (_, OpArgs::TakeRows { .. }) if op == Op::TakeRows => {
            arity(op, inputs.len(), 2)?;
            if inputs[0].0.len() != 2 || inputs[1].0.len() != 1 || inputs[1].1 != DType::I64 {
                return Err(AresError::arg(
                    name,
                    format!(
                        "rows of a 2-D tensor at 1-D int64 positions, got shapes {} and {} ({})",
                        fmt_shape(inputs[0].0),
                        fmt_shape(inputs[1].0),
                        inputs[1].1
                    ),
                ));
            }
            (smallvec![inputs[1].0[0], inputs[0].0[1]], inputs[0].1)
        }
        (_, OpArgs::SearchSorted { .. }) if op == Op::SearchSorted => {
            arity(op, inputs.len(), 2)?;
            if inputs[0].0.len() != 1 {
                return Err(AresError::shape(
                    name,
                    format!("a must be 1-D, got shape {}", fmt_shape(inputs[0].0)),
                ));
            }
            if inputs[0].1 != inputs[1].1 {
                return Err(AresError::arg(
                    name,
                    format!(
                        "a ({}) and v ({}) differ in dtype",
                        inputs[0].1, inputs[1].1
                    ),
                ));
            }
            (inputs[1].0.clone(), DType::I64)
        }
        _ => {
            return Err(AresError::arg(
                name,
                format!("arguments {args:?} do not fit this operation"),
            ))
        }
    };
    Ok(out)
}
