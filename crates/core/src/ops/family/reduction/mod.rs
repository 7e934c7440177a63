//! The reduction family: reductions, arg-reductions, statistics and scans, and the
//! chunk-level ops that combine their partial results.
//!
//! Its kernels live here: `kernels` (sum, prod, min, max, their combine step and the scans),
//! `argreduce` (argmin/argmax as (value, index) records), `moments` (one-pass variance by
//! Chan's merge). Tiling (`prepare/tile/reduction.rs`, `records.rs`) and the tensor methods
//! (`tensor/ops.rs`) have not moved yet.

pub mod argreduce;
pub mod kernels;
pub mod moments;

use crate::ops::registry::{Form, Function, OpFamily};
use crate::ops::{Family, Op};

const REDUCTION_FUNCTIONS: &[Function] = &[
    Function::new(
        "sum",
        Form::Reduce,
        "Sum of array elements over given axes.",
    ),
    Function::new(
        "prod",
        Form::Reduce,
        "Product of array elements over given axes.",
    ),
    Function::new(
        "min",
        Form::Reduce,
        "Minimum of an array or minimum along an axis.",
    ),
    Function::new(
        "max",
        Form::Reduce,
        "Maximum of an array or maximum along an axis.",
    ),
    Function::new(
        "amin",
        Form::Reduce,
        "Minimum of an array or minimum along an axis (alias of min).",
    ),
    Function::new(
        "amax",
        Form::Reduce,
        "Maximum of an array or maximum along an axis (alias of max).",
    ),
    Function::new(
        "mean",
        Form::Reduce,
        "Arithmetic mean along the specified axes.",
    ),
    Function::new("var", Form::Reduce, "Variance along the specified axes."),
    Function::new(
        "std",
        Form::Reduce,
        "Standard deviation along the specified axes.",
    ),
    Function::new(
        "all",
        Form::Reduce,
        "Whether all array elements along given axes evaluate to True.",
    ),
    Function::new(
        "any",
        Form::Reduce,
        "Whether any array element along given axes evaluates to True.",
    ),
    Function::new(
        "argmin",
        Form::ArgReduce,
        "Indices of the minimum values along an axis.",
    ),
    Function::new(
        "argmax",
        Form::ArgReduce,
        "Indices of the maximum values along an axis.",
    ),
    Function::new(
        "cumsum",
        Form::Scan,
        "Cumulative sum of the elements along a given axis.",
    ),
    Function::new(
        "cumprod",
        Form::Scan,
        "Cumulative product of elements along a given axis.",
    ),
];

pub struct Reduction;

impl OpFamily for Reduction {
    fn name(&self) -> &'static str {
        "reduction"
    }

    fn owns(&self, op: Op) -> bool {
        matches!(
            op.family(),
            Family::Reduction | Family::Scan | Family::Combine
        )
    }

    fn functions(&self) -> Vec<Function> {
        REDUCTION_FUNCTIONS.to_vec()
    }
}
