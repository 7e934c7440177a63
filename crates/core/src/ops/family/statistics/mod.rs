//! NumPy's everyday statistics that the array API lacks (issue 29): the NaN-skipping
//! reductions (`nansum` ... `nanargmax`) and the exact order statistics (`median`,
//! `percentile`, `quantile`).
//!
//! The family owns one op, `select_ranks` ([`select`]: exact ranks of a flattened tensor
//! without sorting it); the rest is composed of primitives other families tile and fuse
//! (`where`, `isnan`, the reduction table's folds, the shuffle's sort, slices), so the
//! kernels, fusion and the reference evaluators know them already, and every front door
//! (the expression language, Python, the CLI) has them from this one place. The NaN-skipping
//! folds replace NaN by the fold's identity and count the values they kept, as NumPy's
//! `nanfunctions` do, so the numbers are NumPy's; the order statistics select the ranks they
//! need (over every axis) or sort along the reduced axes and pick them, which is exact where
//! dask's `percentile` approximates.

pub mod nan;
pub mod quantile;
pub mod select;
#[cfg(test)]
mod tests;

use crate::ops::registry::{Function, OpFamily};
use crate::ops::Op;

pub use quantile::Quantiles;

/// The family's functions, in the docs' order. All are `Form::Other`: the differential
/// generator's reference evaluator (`tests/diff`) draws the `Reduce` forms and does not
/// know these.
const FUNCTIONS: &[Function] = &[
    Function::other(
        "nansum",
        "Sum of array elements over given axes, treating NaNs as zero.",
    ),
    Function::other(
        "nanprod",
        "Product of array elements over given axes, treating NaNs as ones.",
    ),
    Function::other(
        "nanmin",
        "Minimum of an array or minimum along an axis, ignoring any NaNs.",
    ),
    Function::other(
        "nanmax",
        "Maximum of an array or maximum along an axis, ignoring any NaNs.",
    ),
    Function::other(
        "nanmean",
        "Arithmetic mean along the specified axes, ignoring NaNs.",
    ),
    Function::other(
        "nanvar",
        "Variance along the specified axes, while ignoring NaNs.",
    ),
    Function::other(
        "nanstd",
        "Standard deviation along the specified axes, while ignoring NaNs.",
    ),
    Function::other(
        "nanargmin",
        "Indices of the minimum values in the specified axis ignoring NaNs.",
    ),
    Function::other(
        "nanargmax",
        "Indices of the maximum values in the specified axis ignoring NaNs.",
    ),
    Function::other("median", "Median along the specified axes."),
    Function::other(
        "percentile",
        "The q-th percentile of the data along the specified axes.",
    ),
    Function::other(
        "quantile",
        "The q-th quantile of the data along the specified axes.",
    ),
];

pub struct Statistics;

impl OpFamily for Statistics {
    fn name(&self) -> &'static str {
        "statistics"
    }

    /// Composed of other families' ops, but for the selection of ranks.
    fn owns(&self, op: Op) -> bool {
        op == Op::SelectRanks
    }

    fn functions(&self) -> Vec<Function> {
        FUNCTIONS.to_vec()
    }
}
