//! The creation family: random numbers, constants and ranges (ops without inputs).
//!
//! The family's code lives here, not spread over the layers that run it: `tensor` (the
//! public constructors, `rand`, `full`, `arange`... and their argument checks), `tile` (one
//! chunk per grid cell, random chunks seeded by position), `kernels` (a chunk's values, whole),
//! `generate` (the same values as a stream of blocks, for FUSE nodes that start with a
//! creation step) and `uniform` (the vectorized uniform generator both use).

pub(crate) mod generate;
pub(crate) mod kernels;
pub mod tensor;
pub(crate) mod tile;
pub(crate) mod uniform;

use crate::ops::registry::{Function, OpFamily};
use crate::ops::{Family, Op};

const CREATION_FUNCTIONS: &[Function] = &[
    Function::other(
        "rand",
        "Random values in a given shape, uniform over [0, 1).",
    ),
    Function::other("randn", "Samples from the standard normal distribution."),
    Function::other(
        "zeros",
        "A new array of given shape and type, filled with zeros.",
    ),
    Function::other(
        "ones",
        "A new array of given shape and type, filled with ones.",
    ),
    Function::other(
        "full",
        "A new array of given shape and type, filled with fill_value.",
    ),
    Function::other("arange", "Evenly spaced values within a given interval."),
    Function::other(
        "linspace",
        "Evenly spaced numbers over a specified interval.",
    ),
    // branch apifuncs: composed of ranges and comparisons (`tensor::rearrange`).
    Function::other(
        "eye",
        "A 2-D array with ones on the diagonal and zeros elsewhere.",
    ),
    Function::other("tril", "Lower triangle of an array."),
    Function::other("triu", "Upper triangle of an array."),
    Function::other("meshgrid", "Coordinate matrices from coordinate vectors."),
];

pub struct Creation;

impl OpFamily for Creation {
    fn name(&self) -> &'static str {
        "creation"
    }

    fn owns(&self, op: Op) -> bool {
        matches!(op.family(), Family::Creation)
    }

    fn functions(&self) -> Vec<Function> {
        CREATION_FUNCTIONS.to_vec()
    }
}
