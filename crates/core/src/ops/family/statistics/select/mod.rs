//! Exact order statistics of a flattened tensor by selection, without sorting it (issue
//! 29): `select_ranks(x, ranks)` is the values at `ranks` of `x` sorted (NaN last), in
//! O(n) work and one small gather, where a sort is O(n log n) and a shuffle of every value.
//!
//! 1. Every chunk draws a random sample (positions from a seeded generator, so the order of
//!    the data cannot defeat it), `2^17` values in all, in proportion to its length.
//! 2. One node sorts the merged sample and puts a bracket `[lo, hi]` of sample values around
//!    each wanted rank, wide enough ([`kernels`]' `SIGMAS`) that a rank falls outside only
//!    by a chance below 10^-6; overlapping brackets merge.
//! 3. Every chunk counts its values below, equal to and inside each bracket (and its NaN);
//!    the counts are summed (the reduction's `combine`).
//! 4. From the sums every later step derives the same plan: a rank among the values equal
//!    to a bound is that bound (ties cost nothing); a rank strictly inside a bracket is
//!    found among the bracket's values only, which every chunk gathers (about
//!    `5 n / sqrt(2^17)` values per rank: 1.4 % of 10^8); the picker selects the ranks there
//!    (`select_nth_unstable`).
//! 5. A rank in no bracket (bad luck, never the data's shape: the ranks' window is sized
//!    by the sample, not the values) makes every chunk gather all its values and the picker
//!    select among them: as exact, slower, and the data then sits on one node.
//!
//! `crate::ops::family::statistics::quantile` asks for the ranks NumPy's formulas need;
//! NaN's rule (any NaN gives NaN) is theirs (the last rank is NaN). A tensor in one chunk
//! is selected in place ([`SelectStep::Whole`]).

pub mod kernels;
mod tile;

use crate::array::DType;
use crate::error::{AresError, Result};
use crate::ops::{Op, OpArgs};
use crate::tensor::Tensor;
use serde::{Deserialize, Serialize};

/// Total sample size (fewer when the tensor has fewer values).
pub const SAMPLE: usize = 1 << 17;

/// One chunk-level step of the selection (`OpArgs::SelectStep`, op `select_ranks`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SelectStep {
    /// `count` values of the chunk at random positions drawn from `seed`.
    Sample { count: u32, seed: u64 },
    /// The brackets (`[lo0, hi0, lo1, hi1, ...]`, in the data's wide dtype) around `ranks`
    /// of `n` values, from every chunk's sample.
    Brackets { n: u64, ranks: Vec<u64> },
    /// A chunk's counts against the brackets (int64, four per bracket and NaN's).
    Count,
    /// A chunk's values inside the brackets that hold a rank (inputs: chunk, brackets, summed
    /// counts).
    Gather { n: u64, ranks: Vec<u64> },
    /// The ranks (inputs: brackets, summed counts, every chunk's gathered values).
    Pick { n: u64, ranks: Vec<u64> },
    /// The ranks of one chunk holding every value.
    Whole { ranks: Vec<u64> },
}

impl Tensor {
    /// The values at `ranks` (each below the length) of this 1-D tensor sorted ascending,
    /// NaN last: a 1-D tensor of `ranks.len()` values in its dtype, found by selection.
    pub fn select_ranks(&self, ranks: &[u64]) -> Result<Tensor> {
        Tensor::new(
            Op::SelectRanks,
            OpArgs::SelectRanks {
                ranks: ranks.to_vec(),
            },
            vec![self.clone()],
        )
    }
}

/// Shape and dtype of `select_ranks`: real values (bool and complex have no order NumPy's
/// selection uses here), ranks below the length of a 1-D input.
pub fn infer(ranks: &[u64], shape: &[usize], dtype: DType) -> Result<(usize, DType)> {
    let name = "select_ranks";
    if shape.len() != 1 {
        return Err(AresError::arg(
            name,
            format!("selects from a 1-D tensor, got {} dimensions", shape.len()),
        ));
    }
    if dtype == DType::Bool || dtype.is_complex() {
        return Err(AresError::arg(
            name,
            format!("selects real numbers, got {dtype}"),
        ));
    }
    if let Some(r) = ranks.iter().find(|r| **r >= shape[0] as u64) {
        return Err(AresError::arg(
            name,
            format!("rank {r} is out of bounds for {} values", shape[0]),
        ));
    }
    Ok((ranks.len(), dtype))
}

#[cfg(test)]
mod tests;
