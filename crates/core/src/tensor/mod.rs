//! `ares::tensor`: a numpy-like API that builds tileable graphs.
//!
//! A [`Tensor`] is a cheap handle to an expression node. Building an expression checks shapes
//! and dtypes right away and returns an error naming the operation and the shapes; nothing is
//! computed until the expression is turned into a [`TileableGraph`] and executed.
//!
//! ```
//! use ares_core::tensor::{self, Tensor};
//! let a = tensor::rand(&[1000], 100, Some(1)).unwrap();
//! let b = tensor::rand(&[1000], 100, Some(2)).unwrap();
//! let c = (&a + &b).unwrap().sum(None, false).unwrap();
//! assert_eq!(c.shape(), &[] as &[usize]);
//! let graph = Tensor::graph(&[&c]);
//! assert_eq!(graph.nodes.len(), 4);
//! ```

mod bitwise;
mod compose;

mod ops;
mod rearrange;
pub use crate::ops::family::shuffle::tensor::shuffle_bench;
mod slice_arg;
pub mod wait;

pub use crate::ops::family::creation::tensor::*;
pub use crate::ops::family::io::tensor::{from_npy, from_spool, from_zarr};
pub use compose::{select, stack};
pub use ops::{concatenate, SliceArg};
pub use rearrange::{broadcast_arrays, eye, meshgrid};

use crate::array::{DType, Shape};
use crate::error::Result;
use crate::graph::{TileableGraph, TileableNode};
use crate::ids::TileableIdx;
use crate::ops::{Op, OpArgs};
use rustc_hash::FxHashMap;
use std::fmt;
use std::sync::Arc;

/// A lazily evaluated n-dimensional array.
#[derive(Clone)]
pub struct Tensor(Arc<Node>);

struct Node {
    op: Op,
    args: OpArgs,
    inputs: Vec<Tensor>,
    shape: Shape,
    dtype: DType,
    /// The length of axis 0 is known only once the data is (`x[mask]`, `unique`, and what
    /// is computed element by element from them): `shape[0]` is an upper bound.
    length_from_data: bool,
}

/// Dropping the last handle of a long chain (`a = a + 1` repeated 10^5 times) would recurse
/// once per node; this unlinks the inputs into a work list instead, so any depth drops in
/// constant stack.
impl Drop for Node {
    fn drop(&mut self) {
        let mut pending = std::mem::take(&mut self.inputs);
        while let Some(Tensor(node)) = pending.pop() {
            if let Ok(mut node) = Arc::try_unwrap(node) {
                pending.append(&mut node.inputs);
            }
        }
    }
}

impl Tensor {
    /// Builds a node after checking `op(args)` against the inputs' shapes and dtypes.
    pub fn new(op: Op, args: OpArgs, inputs: Vec<Tensor>) -> Result<Tensor> {
        let metas: Vec<(&Shape, DType)> = inputs.iter().map(|t| (&t.0.shape, t.0.dtype)).collect();
        let (shape, dtype) = match crate::ops::infer::infer(op, &args, &metas) {
            Ok(inferred) => inferred,
            // A data-dependent length checked by its bound (`x[x > 8] + ones(3)`: 10 against
            // 3) may fit once known: the op waits for it.
            Err(_) if op != Op::WaitForLength && inputs.iter().any(Tensor::length_from_data) => {
                return Tensor::wait_for_length(wait::Call::Op { op, args }, &inputs);
            }
            Err(e) => return Err(e),
        };
        let length_from_data =
            crate::ops::family::shuffle::select::tensor::check_inputs(op, &args, &inputs, &shape)?;
        Ok(Tensor(Arc::new(Node {
            op,
            args,
            inputs,
            shape,
            dtype,
            length_from_data,
        })))
    }

    pub fn shape(&self) -> &[usize] {
        &self.0.shape
    }

    pub fn ndim(&self) -> usize {
        self.0.shape.len()
    }

    pub fn dtype(&self) -> DType {
        self.0.dtype
    }

    pub fn op(&self) -> Op {
        self.0.op
    }

    /// Whether the length of axis 0 is known only once the tensor has run (its shape is
    /// then an upper bound): `x[mask]`, `unique(...)`, and what is computed element by
    /// element from them (`ops::family::shuffle::select::tensor`).
    pub fn length_from_data(&self) -> bool {
        self.0.length_from_data
    }

    /// The tensors this one is computed from.
    pub fn inputs(&self) -> &[Tensor] {
        &self.0.inputs
    }

    pub fn size(&self) -> usize {
        self.0.shape.iter().product()
    }

    /// The tileable graph computing `outputs`, nodes in topological order, each distinct
    /// subexpression once (shared `Tensor` handles become shared nodes).
    pub fn graph(outputs: &[&Tensor]) -> TileableGraph {
        let mut graph = TileableGraph::default();
        let mut seen: FxHashMap<*const Node, TileableIdx> = FxHashMap::default();
        for out in outputs {
            let idx = Self::add_to(&mut graph, &mut seen, out);
            graph.outputs.push(idx);
        }
        graph
    }

    fn add_to(
        graph: &mut TileableGraph,
        seen: &mut FxHashMap<*const Node, TileableIdx>,
        root: &Tensor,
    ) -> TileableIdx {
        // Iterative post-order so deep expressions cannot overflow the stack.
        let mut stack: Vec<(&Tensor, bool)> = vec![(root, false)];
        while let Some((t, expanded)) = stack.pop() {
            let key = Arc::as_ptr(&t.0);
            if seen.contains_key(&key) {
                continue;
            }
            if expanded {
                let inputs =
                    t.0.inputs
                        .iter()
                        .map(|i| seen[&Arc::as_ptr(&i.0)])
                        .collect();
                let idx = graph.push(TileableNode {
                    op: t.0.op,
                    args: t.0.args.clone(),
                    inputs,
                    shape: t.0.shape.clone(),
                    dtype: t.0.dtype,
                });
                seen.insert(key, idx);
            } else {
                stack.push((t, true));
                for input in t.0.inputs.iter().rev() {
                    stack.push((input, false));
                }
            }
        }
        seen[&Arc::as_ptr(&root.0)]
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tensor<{} shape={} dtype={}>",
            self.0.op,
            crate::array::fmt_shape(&self.0.shape),
            self.0.dtype
        )
    }
}
