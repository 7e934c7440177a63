//! Calls that need a data-dependent length, kept as the user made them until the stage
//! before has computed it (issue 28).
//!
//! `v = x[x > 0]` has a length known only once it has run (`Tensor::length_from_data`; its
//! shape holds an upper bound, the *bound*). Ops whose arguments do not depend on that
//! length (`v @ w`'s primitive, `concatenate`, `rechunk(v, 2)`) are built as they are and
//! run after the stage (`prepare::stages`), where every shape is inferred again from the
//! real length. Two kinds cannot be built that way, and become an [`Op::WaitForLength`]
//! node holding the call ([`Deferred`]), made again on the computed tensors by the stage
//! substitution ([`Deferred::apply`]):
//!
//! * calls that resolve their arguments against the length: `v[-2:]`, `reshape(v, (-1,
//!   2))`, `expand_dims`, `v @ w` (a vector becomes a row): with the bound they would select
//!   or shape the wrong elements. Only the user's calls wait ([`Tensor::slice_when_known`]
//!   and its kin): an internal call with dimensions it read from the bound stays refused.
//! * an op the bound does not fit but the real length may (`x[x > 8] + ones(3)`: a bound of
//!   10 does not broadcast with 3, a real length of 1 does): [`Call::Op`], built again as
//!   it is.
//!
//! Until the stage runs, the node's shape is a preview: the call made on stand-ins of the
//! bound's shape, or, when that fails, of a length that fits (1, another operand's length,
//! the size a reshape asks for). A call that fits no length fails now, naming the op.
//!
//! ```text
//!   stage 1:  x ── gt ── mask_select ─▶ v            (v's chunks' real lengths)
//!   stage 2:  fetch(v, exact lengths) ── slice[-2:]  (the call made again on them)
//! ```

use super::{Node, SliceArg, Tensor};
use crate::array::{DType, Shape};
use crate::error::Result;
use crate::ops::{Op, OpArgs};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A call waiting for the lengths of its inputs, with its preview shape and its dtype.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Deferred {
    pub call: Call,
    pub shape: Shape,
    pub dtype: DType,
}

/// The calls that wait.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Call {
    /// An op built again as it is, its arguments independent of the length.
    Op { op: Op, args: OpArgs },
    /// `x[index]`, basic indexing.
    Slice(Vec<SliceArg>),
    /// `reshape(x, shape)`, one dimension possibly `-1`.
    Reshape(Vec<i64>),
    /// `expand_dims(x, axes)`.
    ExpandDims(Vec<i64>),
    /// `a @ b` with NumPy's rules for vectors and stacks.
    Matmul,
}

impl Deferred {
    /// Makes the call on `inputs` (their lengths known by now, or some still
    /// data-dependent: then it waits again).
    pub fn apply(&self, inputs: &[Tensor]) -> Result<Tensor> {
        self.call.apply(inputs)
    }
}

impl Call {
    fn apply(&self, inputs: &[Tensor]) -> Result<Tensor> {
        let arity = match self {
            Call::Op { .. } => inputs.len(),
            Call::Matmul => 2,
            _ => 1,
        };
        if inputs.len() != arity || arity == 0 {
            return Err(crate::error::AresError::arg(
                "wait_for_length",
                format!("{} inputs for a call of {arity}", inputs.len()),
            ));
        }
        let x = &inputs[0];
        match self {
            Call::Op { op, args } => Tensor::new(*op, args.clone(), inputs.to_vec()),
            Call::Slice(index) => x.slice_when_known(index),
            Call::Reshape(shape) => x.reshape_when_known(shape),
            Call::ExpandDims(axes) => x.expand_dims(axes),
            Call::Matmul => x.matmul_nd(&inputs[1]),
        }
    }

    /// Lengths to try the call with in place of the unknown ones, the bound first.
    fn lengths_to_try(&self, inputs: &[Tensor]) -> Vec<Option<usize>> {
        let mut tries = vec![None, Some(1)];
        for t in inputs.iter().filter(|t| !t.length_from_data()) {
            tries.extend(t.shape().iter().map(|d| Some(*d)));
        }
        if let Call::Reshape(dims) = self {
            tries.push(Some(
                dims.iter().filter(|d| **d > 0).product::<i64>() as usize
            ));
        }
        tries
    }
}

/// A tensor of `t`'s dtype and shape, its axis 0 `length` long (`None`: the bound), with no
/// unknown length: what a call is previewed on.
fn stand_in(t: &Tensor, length: Option<usize>) -> Tensor {
    let mut shape = t.0.shape.clone();
    if let (Some(n), true) = (length, t.length_from_data()) {
        shape[0] = n;
    }
    Tensor(Arc::new(Node {
        op: Op::Fetch,
        args: OpArgs::None,
        inputs: Vec::new(),
        shape,
        dtype: t.0.dtype,
        length_from_data: false,
    }))
}

impl Tensor {
    /// `call` on `inputs`, some of them data-dependent, as a node that waits for their
    /// lengths (see the module doc for its preview shape).
    pub(crate) fn wait_for_length(call: Call, inputs: &[Tensor]) -> Result<Tensor> {
        let mut first_error = None;
        for length in call.lengths_to_try(inputs) {
            let stand_ins: Vec<Tensor> = inputs.iter().map(|t| stand_in(t, length)).collect();
            match call.apply(&stand_ins) {
                Ok(preview) => {
                    let deferred = Deferred {
                        call,
                        shape: preview.shape().into(),
                        dtype: preview.dtype(),
                    };
                    return Tensor::new(
                        Op::WaitForLength,
                        OpArgs::Deferred(Box::new(deferred)),
                        inputs.to_vec(),
                    );
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        Err(first_error.expect("the bound is always tried"))
    }

    /// `self[index]`, basic indexing; on a data-dependent tensor it waits for the length
    /// (an index counted from the end, a step, a stop past it all need it).
    pub fn slice_when_known(&self, index: &[SliceArg]) -> Result<Tensor> {
        match self.length_from_data() {
            true => {
                Tensor::wait_for_length(Call::Slice(index.to_vec()), std::slice::from_ref(self))
            }
            false => self.slice(index),
        }
    }

    /// `reshape(self, shape)`; on a data-dependent tensor, unless only the rows' shape
    /// changes, it waits for the length.
    pub fn reshape_when_known(&self, shape: &[i64]) -> Result<Tensor> {
        match self.reshape(shape) {
            Err(_) if self.length_from_data() => {
                Tensor::wait_for_length(Call::Reshape(shape.to_vec()), std::slice::from_ref(self))
            }
            built => built,
        }
    }
}
