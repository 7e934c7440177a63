//! User functions on blocks (issue 31): `map_blocks` and what is built on it (`blockwise`,
//! `map_overlap`, `apply_gufunc`, `reduction` in the Python package).
//!
//! A user's function is opaque bytes to the core ([`call::UserFunction`]); one op,
//! [`Op::MapBlocks`], calls it on one block of each input and checks the block it gets
//! back against the declared shape and dtype. The core cannot call Python itself: a
//! process that can registers a [`runner::ForeignCallRunner`] (the Python package does at
//! import), and a process without one fails such blocks naming where they run. Running a
//! client's code is a privilege: [`uses_code`] is how a supervisor finds graphs that ask
//! for it (`cluster.allow_code`). The op is no function of the expression language (it
//! needs a function value the language does not have).

pub mod call;
pub mod runner;
mod tile;

use crate::error::Result;
use crate::graph::TileableGraph;
use crate::ops::registry::{Function, OpFamily};
use crate::ops::{Family, Op, OpArgs};
use crate::tensor::Tensor;

pub use call::{BlockCall, UserFunction};
pub use runner::{has_runner, register_runner, ForeignCallRunner};

pub struct PythonCall;

impl OpFamily for PythonCall {
    fn name(&self) -> &'static str {
        "python_call"
    }

    fn owns(&self, op: Op) -> bool {
        matches!(op.family(), Family::UserCode)
    }

    fn functions(&self) -> Vec<Function> {
        Vec::new()
    }
}

/// The tensor whose block `b` is `call.function` applied to the inputs' blocks (see
/// [`BlockCall`]).
pub fn map_blocks(call: BlockCall, inputs: Vec<Tensor>) -> Result<Tensor> {
    Tensor::new(Op::MapBlocks, OpArgs::MapBlocks(Box::new(call)), inputs)
}

/// Whether `graph` runs a user's function: the names of the functions it calls, each once.
pub fn uses_code(graph: &TileableGraph) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for node in &graph.nodes {
        if let OpArgs::MapBlocks(call) = &node.args {
            if !names.contains(&call.function.name) {
                names.push(call.function.name.clone());
            }
        }
    }
    names
}

#[cfg(test)]
mod tests;
