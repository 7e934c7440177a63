//! Map-reduce shuffles and data-dependent lengths: sort, unique, take, searchsorted (and
//! their chunk-level map, proxy and reduce ops). The family owns the tensor API's
//! `shuffle_bench` ([`tensor`]), the chunk kernel that sorts along any axis ([`lanes`]), the tiling of a shuffle into N mappers, one proxy and M
//! reducers and of sort ([`tile`]), and the mapper and reducer kernels with their
//! partitioning ([`kernels`], [`partition`]); the chunk-level graph of pieces is
//! `crate::graph::shuffle`'s, and the per-op pieces of take and unique are their own
//! kernels' (`crate::kernels::{take, select}`).

pub mod kernels;
pub mod lanes;
mod partition;
pub mod select;
pub mod take;
pub(crate) mod tensor;
pub(crate) mod tile;

use crate::ops::registry::{Function, OpFamily};
use crate::ops::{Family, Op};

const SHUFFLE_FUNCTIONS: &[Function] = &[
    Function::other("sort", "A sorted copy of an array."),
    Function::other("argsort", "The indices that would sort an array."),
    Function::other("unique", "The sorted unique elements of an array."),
    Function::other(
        "unique_all",
        "The unique values, their first indices, the inverse indices and the counts.",
    ),
    Function::other(
        "unique_inverse",
        "The unique values and, for each element, the index of its value.",
    ),
    Function::other(
        "nonzero",
        "The indices of the elements that are non-zero, one array per dimension.",
    ),
    Function::other("take", "Take elements from an array along an axis."),
    // branch apifuncs: a take of flat positions (`tensor::rearrange`).
    Function::other(
        "take_along_axis",
        "Take values from the input array by matching 1d index and data slices.",
    ),
    Function::other(
        "compress",
        "Return selected slices of an array along given axis.",
    ),
    Function::other(
        "searchsorted",
        "Indices where elements should be inserted to maintain order.",
    ),
    Function::other(
        "shuffle_bench",
        "A shuffle of generated rows, for benchmarks.",
    ),
];

pub struct Shuffle;

impl OpFamily for Shuffle {
    fn name(&self) -> &'static str {
        "shuffle"
    }

    fn owns(&self, op: Op) -> bool {
        // `select_ranks` is the statistics family's (it moves no data through a shuffle).
        matches!(op.family(), Family::Shuffle) && op != Op::SelectRanks
    }

    fn functions(&self) -> Vec<Function> {
        SHUFFLE_FUNCTIONS.to_vec()
    }
}
