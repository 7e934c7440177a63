//! What a `map_blocks` node carries: the user's function as opaque bytes, and how output
//! blocks are made from input blocks.
//!
//! The core never looks inside the function: it is a byte string (cloudpickle's, for
//! Python) with a hash, held once in the node's arguments. Tiling gives every chunk of the
//! node the same argument entry, so a task's graph carries the bytes once however many
//! blocks call them, and a runner can keep the decoded function by its hash.

use crate::array::{fmt_shape, DType, Shape};
use crate::error::{AresError, Result};
use serde::{Deserialize, Serialize};

/// A user's function: its bytes, opaque here, and their hash (checked against them when a
/// graph from outside is validated, so a runner's cache by hash cannot be poisoned by a
/// graph that names one function's hash with another's bytes).
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UserFunction {
    pub hash: u64,
    /// A short description for error messages (`<lambda>`, `module.name`).
    pub name: String,
    pub payload: Vec<u8>,
}

impl std::fmt::Debug for UserFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "UserFunction({}, {:016x}, {} bytes)",
            self.name,
            self.hash,
            self.payload.len()
        )
    }
}

impl UserFunction {
    pub fn new(name: impl Into<String>, payload: Vec<u8>) -> Self {
        Self {
            hash: payload_hash(&payload),
            name: name.into(),
            payload,
        }
    }
}

/// The low 64 bits of murmur3_x64_128 of the bytes.
pub fn payload_hash(payload: &[u8]) -> u64 {
    let h = murmur3::murmur3_x64_128(&mut std::io::Cursor::new(payload), 0)
        .expect("hashing an in-memory buffer cannot fail");
    h as u64
}

/// A `map_blocks` node: output block `b` (a position in the output's chunk grid) is
/// `function(block_0, block_1, ...)`, where input `i`'s block is found through
/// `inputs[i]`: for each of its axes, the output axis whose block index picks its block
/// (dask's `blockwise` index), or `None` for an axis the function sees whole (tiling makes
/// it one chunk: dask's `concatenate=True`). An input axis with one block is broadcast.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BlockCall {
    pub function: UserFunction,
    /// Every chunk length of every output axis.
    pub out_splits: Vec<Vec<usize>>,
    pub dtype: DType,
    pub inputs: Vec<Vec<Option<u32>>>,
}

const OP: &str = "map_blocks";

impl BlockCall {
    /// The output grid (blocks per axis).
    pub fn grid(&self) -> Shape {
        self.out_splits.iter().map(|s| s.len()).collect()
    }

    /// The output shape and dtype, after checking the call against its inputs' shapes.
    pub fn infer(&self, inputs: &[(&Shape, DType)]) -> Result<(Shape, DType)> {
        if self.function.hash != payload_hash(&self.function.payload) {
            return Err(AresError::arg(
                OP,
                format!(
                    "the function {} does not match its hash {:016x}",
                    self.function.name, self.function.hash
                ),
            ));
        }
        if inputs.len() != self.inputs.len() {
            return Err(AresError::arg(
                OP,
                format!(
                    "{} input(s) for a call describing {}",
                    inputs.len(),
                    self.inputs.len()
                ),
            ));
        }
        let ndim = self.out_splits.len();
        for (i, (map, (shape, _))) in self.inputs.iter().zip(inputs).enumerate() {
            if map.len() != shape.len() {
                return Err(AresError::arg(
                    OP,
                    format!(
                        "input {i} has shape {} but its index names {} axes",
                        fmt_shape(shape),
                        map.len()
                    ),
                ));
            }
            let mut seen = vec![false; ndim];
            for axis in map.iter().flatten() {
                let a = *axis as usize;
                if a >= ndim || std::mem::replace(&mut seen[a], true) {
                    return Err(AresError::arg(
                        OP,
                        format!(
                            "input {i}'s index {map:?} names output axis {a} of {ndim} \
                             twice or out of range"
                        ),
                    ));
                }
            }
        }
        let mut shape = Shape::new();
        for (d, s) in self.out_splits.iter().enumerate() {
            if s.is_empty() {
                return Err(AresError::arg(OP, format!("output axis {d} has no chunks")));
            }
            let len = s
                .iter()
                .try_fold(0usize, |a, b| a.checked_add(*b))
                .ok_or_else(|| AresError::arg(OP, format!("output axis {d} overflows")))?;
            shape.push(len);
        }
        crate::ops::infer::check_shape(OP, &shape)?;
        let blocks = self
            .out_splits
            .iter()
            .fold(1u128, |n, s| n.saturating_mul(s.len() as u128));
        if blocks > crate::ops::infer::MAX_ELEMENTS {
            return Err(AresError::arg(OP, "too many output blocks"));
        }
        Ok((shape, self.dtype))
    }

    /// The block index (per output axis) of the output chunk at `position` in C order.
    pub fn block_index(&self, position: u32) -> Vec<usize> {
        let grid = self.grid();
        let mut rest = position as usize;
        let mut idx = vec![0; grid.len()];
        for d in (0..grid.len()).rev() {
            let n = grid[d].max(1);
            idx[d] = rest % n;
            rest /= n;
        }
        idx
    }
}
