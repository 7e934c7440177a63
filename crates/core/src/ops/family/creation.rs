//! Creation: random numbers, constants and ranges (no inputs).

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
