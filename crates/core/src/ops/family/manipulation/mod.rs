//! Shapes and chunks: slicing, transposing, joining, splitting, reshaping and rechunking.
//! The family owns the tiling of slice, transpose and concatenate ([`tile`]) and of reshape
//! ([`reshape_tile`]), their chunk kernels ([`kernels`]: slice, transpose, reshape, block
//! assembly) and rechunking through a shuffle ([`regrid`]). The grid arithmetic every
//! family's tiling shares (`unify`, `Odometer`, `Tiler::rechunk_to`) stays in
//! `prepare::tile`.

pub(crate) mod kernels;
pub(crate) mod regrid;
mod reshape_tile;
mod tile;

use crate::ops::registry::{Function, OpFamily};
use crate::ops::{Family, Op};

const MANIPULATION_FUNCTIONS: &[Function] = &[
    Function::other("transpose", "Returns an array with axes transposed."),
    Function::other(
        "concatenate",
        "Join a sequence of arrays along an existing axis.",
    ),
    Function::other("stack", "Join a sequence of arrays along a new axis."),
    Function::other("split", "Split an array into multiple sub-arrays."),
    Function::other("expand_dims", "Expand the shape of an array."),
    Function::other("squeeze", "Remove axes of length one."),
    Function::other("broadcast_to", "Broadcast an array to a new shape."),
    Function::other("rechunk", "The same values in other chunks."),
    Function::other(
        "reshape",
        "Gives a new shape to an array without changing its data.",
    ),
    // branch apifuncs: composed of slices, joins and broadcasts (`tensor::rearrange`).
    Function::other(
        "flip",
        "Reverse the order of elements in an array along the given axis.",
    ),
    Function::other("roll", "Roll array elements along a given axis."),
    Function::other("moveaxis", "Move axes of an array to new positions."),
    Function::other(
        "tile",
        "Construct an array by repeating A the number of times given by reps.",
    ),
    Function::other(
        "repeat",
        "Repeat each element of an array after themselves.",
    ),
    Function::other(
        "unstack",
        "Split an array into a sequence of arrays along the given axis.",
    ),
    Function::other(
        "broadcast_arrays",
        "Broadcast any number of arrays against each other.",
    ),
    Function::other(
        "diff",
        "Calculate the n-th discrete difference along the given axis.",
    ),
];

pub struct Manipulation;

impl OpFamily for Manipulation {
    fn name(&self) -> &'static str {
        "manipulation"
    }

    fn owns(&self, op: Op) -> bool {
        matches!(op.family(), Family::Indexing)
    }

    fn functions(&self) -> Vec<Function> {
        MANIPULATION_FUNCTIONS.to_vec()
    }
}
