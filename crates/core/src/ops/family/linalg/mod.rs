//! Linear algebra: matrix products. The family owns the `matmul` primitive's shape rule
//! ([`shape`]), NumPy's products composed on it ([`tensor`]: vectors, `inner`,
//! `tensordot`), its tiling into block products and `tree_add` combines ([`tile`]), and the
//! kernels of one block and of stacks of blocks ([`kernels`], [`batched`]).

pub(crate) mod batched;
pub(crate) mod kernels;
pub mod shape;
mod tensor;
mod tile;

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
