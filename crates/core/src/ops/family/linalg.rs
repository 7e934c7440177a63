//! Linear algebra: matrix products.

use crate::ops::registry::{Function, OpFamily};
use crate::ops::{Family, Op};

const LINALG_FUNCTIONS: &[Function] = &[
    Function::other("matmul", "Matrix product of two arrays."),
    Function::other("dot", "Dot product of two arrays."),
    Function::other("tensordot", "Tensor dot product along specified axes."),
    Function::other("inner", "Inner product of two arrays."),
];

pub struct Linalg;

impl OpFamily for Linalg {
    fn name(&self) -> &'static str {
        "linalg"
    }

    fn owns(&self, op: Op) -> bool {
        matches!(op.family(), Family::Linalg)
    }

    fn functions(&self) -> Vec<Function> {
        LINALG_FUNCTIONS.to_vec()
    }
}
