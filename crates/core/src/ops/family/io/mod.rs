//! Files: `.npy` and Zarr sources and sinks. The family owns the constructors and the
//! writes of the tensor API ([`tensor`]) and their tiling into one source chunk per grid
//! cell and one sink per chunk ([`tile`]); reading and writing the formats themselves, with
//! the data roots and the bounds on hostile files, is `crate::io`'s.

pub(crate) mod tensor;
mod tile;

use crate::ops::registry::{Function, OpFamily};
use crate::ops::{Family, Op};

const IO_FUNCTIONS: &[Function] = &[
    Function::other(
        "from_npy",
        "An array read from a .npy file, chunk by chunk.",
    ),
    Function::other(
        "from_zarr",
        "An array read from a Zarr array, chunk by chunk.",
    ),
    Function::other("to_npy", "Write an array to a .npy file."),
    Function::other("to_zarr", "Write an array to a Zarr array."),
];

pub struct Io;

impl OpFamily for Io {
    fn name(&self) -> &'static str {
        "io"
    }

    fn owns(&self, op: Op) -> bool {
        matches!(op.family(), Family::Io)
    }

    fn functions(&self) -> Vec<Function> {
        IO_FUNCTIONS.to_vec()
    }
}
